"""Performance probes: matmul throughput and memory bandwidth as a ratio to the device's peak.

Pure part (no torch): the platform ini parser and the peak formula for Ascend SoCs, the table of
published CUDA peaks (``matrices/certify/perf.yaml``), and the judgement of a measurement. The
measuring functions import torch lazily and run inside the device worker.

NPU compute peak, from the installed toolkit's ``<arch>-linux/data/platform_config/<SoC>.ini``
(kernels.md §6): ``cube cores × m·n·k × 2 × cube_freq``. ``cube_core_cnt`` is missing from
older layouts such as Ascend310P3.ini, where ``ai_core_cnt`` counts the (cube-bearing) AI cores.
The ini has no HBM bandwidth (``ddr_rate`` is bytes/cycle/core, not a spec), so NPU bandwidth
peaks come from the data file and are marked unverified there.
"""

from __future__ import annotations

import configparser
import math
import re
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from cannenv.errors import InputError
from cannenv.resources import matrices_dir

if TYPE_CHECKING:
    from cannenv.host import Host

PerfDtype = Literal["bf16", "fp16", "fp32"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# ---------------------------------------------------------------------------------------------
# Platform ini (Ascend toolkit)


class PlatformIni(_Frozen):
    """The parts of ``platform_config/<SoC>.ini`` that decide the compute peak."""

    soc_version: str
    short_soc_version: str | None = None
    ai_core_cnt: int | None = None
    cube_core_cnt: int | None = None
    vector_core_cnt: int | None = None
    cube_freq_mhz: float
    cube_mnk: tuple[int, int, int]
    """``[AICoreSpec] cube_m/n/k_size``."""
    dtype_mkn: dict[str, tuple[int, int, int]] = Field(default_factory=dict)
    """``[DtypeMKN]``: ``Default`` and per-dtype fractal shapes (``DT_INT8`` ...)."""
    memory_size: int | None = None
    l2_size: int | None = None
    supports_bf16: bool = False
    """Whether any intrinsic in the ini handles bf16 (none does on 310P: fp16 only)."""
    source: str = "<ini>"

    @property
    def cube_cores(self) -> int:
        cores = self.cube_core_cnt if self.cube_core_cnt is not None else self.ai_core_cnt
        if cores is None:
            raise InputError(f"{self.source}: neither cube_core_cnt nor ai_core_cnt in [SoCInfo]")
        return cores


def _int(parser: configparser.ConfigParser, section: str, key: str, source: str) -> int | None:
    if not parser.has_option(section, key):
        return None
    raw = parser.get(section, key).strip()
    if raw == "":
        return None
    try:
        return int(raw)
    except ValueError as exc:
        raise InputError(f"{source}: [{section}] {key}={raw!r} is not an integer") from exc


def _mnk(raw: str, where: str) -> tuple[int, int, int]:
    parts = [p.strip() for p in raw.split(",")]
    if len(parts) != 3 or not all(p.isdecimal() for p in parts):
        raise InputError(f"{where}: expected three integers 'm,n,k', got {raw!r}")
    return int(parts[0]), int(parts[1]), int(parts[2])


def parse_platform_ini(text: str, *, source: str = "<ini>") -> PlatformIni:
    """Parse a platform ini text laid out as the toolkit ships it (``#`` comments, ``key=value``)."""
    parser = configparser.ConfigParser(interpolation=None, strict=False, comment_prefixes=("#", ";"))
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    try:
        parser.read_string(text, source=source)
    except configparser.Error as exc:
        raise InputError(f"{source}: not a platform ini file: {exc}") from exc
    for section in ("SoCInfo", "AICoreSpec"):
        if not parser.has_section(section):
            raise InputError(
                f"{source}: section [{section}] is missing",
                hint="expected a CANN toolkit file <arch>-linux/data/platform_config/<SoC>.ini",
            )
    soc = parser.get("version", "SoC_version", fallback="").strip() or Path(source).stem
    freq_raw = parser.get("AICoreSpec", "cube_freq", fallback="").strip()
    try:
        freq = float(freq_raw)
    except ValueError as exc:
        raise InputError(f"{source}: [AICoreSpec] cube_freq={freq_raw!r} is not a number (MHz)") from exc
    sizes = []
    for key in ("cube_m_size", "cube_n_size", "cube_k_size"):
        value = _int(parser, "AICoreSpec", key, source)
        if value is None:
            raise InputError(f"{source}: [AICoreSpec] {key} is missing")
        sizes.append(value)
    dtype_mkn: dict[str, tuple[int, int, int]] = {}
    if parser.has_section("DtypeMKN"):
        for key, raw in parser.items("DtypeMKN"):
            dtype_mkn[key] = _mnk(raw, f"{source}: [DtypeMKN] {key}")
    bf16 = any(
        "bf16" in value.lower() or "bfloat16" in value.lower()
        for section in parser.sections()
        if section.endswith("intrinsicDtypeMap")
        for _, value in parser.items(section)
    )
    return PlatformIni(
        soc_version=soc,
        short_soc_version=parser.get("version", "Short_SoC_version", fallback=None),
        ai_core_cnt=_int(parser, "SoCInfo", "ai_core_cnt", source),
        cube_core_cnt=_int(parser, "SoCInfo", "cube_core_cnt", source),
        vector_core_cnt=_int(parser, "SoCInfo", "vector_core_cnt", source),
        cube_freq_mhz=freq,
        cube_mnk=(sizes[0], sizes[1], sizes[2]),
        dtype_mkn=dtype_mkn,
        memory_size=_int(parser, "SoCInfo", "memory_size", source),
        l2_size=_int(parser, "SoCInfo", "l2_size", source),
        supports_bf16=bf16,
        source=source,
    )


_INI_DTYPE_KEYS: dict[str, tuple[str, ...]] = {"fp16": ("DT_FLOAT16",), "bf16": ("DT_BF16",)}


def npu_matmul_peak(ini: PlatformIni, dtype: PerfDtype) -> float | None:
    """Dense matmul peak in FLOP/s: cube cores × m·n·k × 2 × cube_freq (kernels.md §6).

    None for dtypes the cube does not run at this rate (fp32 goes through other paths; bf16 is
    absent on SoCs whose ini lists no bf16 intrinsic).
    """
    if dtype == "fp32" or (dtype == "bf16" and not ini.supports_bf16):
        return None
    mnk = next((ini.dtype_mkn[k] for k in _INI_DTYPE_KEYS[dtype] if k in ini.dtype_mkn), None)
    mnk = mnk or ini.dtype_mkn.get("Default") or ini.cube_mnk
    return float(ini.cube_cores * mnk[0] * mnk[1] * mnk[2] * 2 * ini.cube_freq_mhz * 1e6)


TOOLKIT_ROOTS_ENV = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME")
TOOLKIT_ROOTS = ("/usr/local/Ascend/ascend-toolkit/latest", "/usr/local/Ascend/cann")


_SOC_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}\Z")
MAX_INI_BYTES = 1 << 20
"""A platform ini is a few KB."""


def find_platform_ini(host: Host, soc: str) -> str | None:
    """The host path of the toolkit's ini for ``soc``: under $ASCEND_HOME_PATH / $ASCEND_TOOLKIT_HOME
    first, then the default install roots (≤ 8.3 ``ascend-toolkit/latest``, ≥ 8.5 ``cann``;
    versions.md §3.3); ``<root>/<arch>-linux/data/...`` before ``<root>/data/...``. Everything is
    looked up through ``host`` (a --root tree's links resolve inside it); a SoC name that is not a
    plain name (it comes from npu-smi) finds nothing."""
    if not _SOC_NAME.match(soc):
        return None
    roots = [host.getenv(v) for v in TOOLKIT_ROOTS_ENV]
    for root in [*(r for r in roots if r), *TOOLKIT_ROOTS]:
        try:
            arches = [e for e in host.listdir(root) if e.endswith("-linux")]
        except OSError:
            continue
        for sub in [*(f"{a}/" for a in arches), ""]:
            candidate = f"{root.rstrip('/')}/{sub}data/platform_config/{soc}.ini"
            if host.is_file(candidate):
                return candidate
    return None


def read_platform_ini(host: Host, path: str) -> PlatformIni:
    """Parse the ini at host path ``path`` (a regular file of at most :data:`MAX_INI_BYTES`)."""
    from cannenv.host import FileTooLargeError, NotRegularFileError

    try:
        data = host.read_bytes(path, MAX_INI_BYTES)
    except (FileTooLargeError, NotRegularFileError, OSError) as exc:
        raise InputError(f"platform ini {path} cannot be read: {exc}") from None
    return parse_platform_ini(data.decode("utf-8", errors="replace"), source=path)


# ---------------------------------------------------------------------------------------------
# Data file: thresholds, shapes, published peaks


class Thresholds(_Frozen):
    warn_below_ratio: float = Field(gt=0, le=1)
    fail_below_ratio: float = Field(ge=0, le=1)


class Shapes(_Frozen):
    matmul_n: int = Field(gt=0)
    copy_mib: int = Field(gt=0)
    dtypes: tuple[PerfDtype, ...]


class Timing(_Frozen):
    warmup: int = Field(ge=1)
    min_seconds: float = Field(gt=0)
    max_iters: int = Field(ge=1)


class PublishedPeak(_Frozen):
    """One device's published dense peaks (never sparsity figures)."""

    name: str
    match: str
    """Regular expression searched in the device name the framework reports."""
    tflops: dict[PerfDtype, float]
    """Dense tensor-core TFLOP/s per dtype."""
    bandwidth_gbs: float | None = None
    verified: bool = True
    """False when the figure is not from the vendor (then the ratio is reported, never judged)."""
    source: str

    @field_validator("match")
    @classmethod
    def _regex(cls, v: str) -> str:
        try:
            re.compile(v)
        except re.error as exc:
            raise ValueError(f"bad regular expression {v!r}: {exc}") from exc
        return v


class PerfData(_Frozen):
    schema_version: Literal[1]
    thresholds: Thresholds
    timing: Timing
    shapes: dict[Literal["npu", "cuda", "cpu"], Shapes]
    cuda_peaks: tuple[PublishedPeak, ...]
    npu_bandwidth: tuple[PublishedPeak, ...] = ()


def load_perf_data(path: Path | None = None) -> PerfData:
    p = path or matrices_dir() / "certify" / "perf.yaml"
    return _load_perf(str(p))


@cache
def _load_perf(path: str) -> PerfData:
    from cannenv.certify.kernel_data import load_yaml_model

    return load_yaml_model(
        Path(path),
        PerfData,
        what="perf data",
        hint="fix the data file (schema: cannenv.certify.perf.PerfData)",
    )


def published_peak(table: tuple[PublishedPeak, ...], device_name: str) -> PublishedPeak | None:
    """The first table row whose ``match`` is found in ``device_name`` (order: specific first)."""
    for row in table:
        if re.search(row.match, device_name):
            return row
    return None


# ---------------------------------------------------------------------------------------------
# Judgement


class Judgement(_Frozen):
    status: Literal["pass", "fail", "skip"]
    ratio: float | None
    reason: str
    warning: str | None = None


def judge(
    measured: float,
    peak: float | None,
    thresholds: Thresholds,
    *,
    what: str,
    unit: str,
    peak_source: str,
    verified: bool = True,
) -> Judgement:
    """Hold one measurement against its peak. No peak, or an unverified one, is a skip."""
    if peak is None or peak <= 0:
        return Judgement(
            status="skip", ratio=None, reason=f"{what}: {measured:.4g} {unit}; no peak known ({peak_source})"
        )
    ratio = measured / peak
    text = f"{what}: {measured:.4g} {unit} = {ratio:.1%} of peak {peak:.4g} {unit} ({peak_source})"
    if not verified:
        return Judgement(status="skip", ratio=ratio, reason=f"{text}; peak unverified, not judged")
    if ratio < thresholds.fail_below_ratio:
        return Judgement(
            status="fail", ratio=ratio, reason=f"{text}: below {thresholds.fail_below_ratio:.0%}"
        )
    warning = None
    if ratio < thresholds.warn_below_ratio:
        warning = (
            f"{text}: below {thresholds.warn_below_ratio:.0%} of peak "
            "(thermal throttling, another job, clocks?)"
        )
    return Judgement(status="pass", ratio=ratio, reason=text, warning=warning)


# ---------------------------------------------------------------------------------------------
# Measuring (runs in the device worker; torch imported lazily)


def _timed(fn: Callable[[], Any], sync: Callable[[], None], timing: Timing) -> tuple[float, int]:
    """Warm up, size the loop to ``min_seconds``, then time it between device synchronisations."""
    for _ in range(timing.warmup):
        fn()
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    one = max(time.perf_counter() - t0, 1e-9)
    iters = int(min(timing.max_iters, max(3, math.ceil(timing.min_seconds / one))))
    sync()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    sync()
    return time.perf_counter() - t0, iters


def measure_matmul(
    device: Any, dtype_name: PerfDtype, n: int, timing: Timing, sync: Callable[[], None]
) -> dict[str, Any]:
    """Throughput of an n×n×n matmul in TFLOP/s (2·n³ flops each)."""
    import torch

    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype_name]
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=gen).to(device=device, dtype=dtype)
    b = torch.randn(n, n, generator=gen).to(device=device, dtype=dtype)
    out = torch.empty(n, n, device=device, dtype=dtype)
    seconds, iters = _timed(lambda: torch.matmul(a, b, out=out), sync, timing)
    tflops = 2.0 * n**3 * iters / seconds / 1e12
    return {"dtype": dtype_name, "n": n, "iters": iters, "seconds": seconds, "tflops": tflops}


def measure_copy(device: Any, mib: int, timing: Timing, sync: Callable[[], None]) -> dict[str, Any]:
    """Device memory bandwidth of a large copy in GB/s (bytes read + bytes written).

    Random bytes, not zeros, so that no memory compression flatters the figure (kernels.md §6).
    """
    import torch

    nbytes = mib * 1024 * 1024
    gen = torch.Generator().manual_seed(0)
    src = torch.randint(0, 256, (nbytes,), dtype=torch.uint8, generator=gen).to(device)
    dst = torch.empty_like(src)
    seconds, iters = _timed(lambda: dst.copy_(src), sync, timing)
    gbs = 2.0 * nbytes * iters / seconds / 1e9
    return {"mib": mib, "iters": iters, "seconds": seconds, "gbs": gbs}


# ---------------------------------------------------------------------------------------------
# Profiles: top operators by device time


class OpTime(_Frozen):
    name: str
    calls: int
    time_us: float
    clock: Literal["device", "cpu"]
    """Which clock ``time_us`` was read from (CPU runs have no device clock)."""


def top_ops_from_kernel_details(text: str, *, limit: int = 10) -> list[OpTime]:
    """Top operators from torch_npu's profiler ``kernel_details.csv`` (kernels.md §7).

    Columns (renamed from msprof op_summary): ``Name``, ``Type``, ``Accelerator Core``,
    ``Duration(us)``. Kernels are grouped by ``Type`` (falling back to ``Name``) and summed.
    """
    import csv
    import io

    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames is None or "Duration(us)" not in reader.fieldnames:
        raise InputError("kernel_details.csv: no 'Duration(us)' column", hint="is this a torch_npu profile?")
    totals: dict[str, tuple[int, float]] = {}
    for row in reader:
        key = (row.get("Type") or row.get("Name") or "?").strip()
        try:
            dur = float(row["Duration(us)"])
        except (TypeError, ValueError):
            continue
        calls, total = totals.get(key, (0, 0.0))
        totals[key] = (calls + 1, total + dur)
    ranked = sorted(totals.items(), key=lambda kv: kv[1][1], reverse=True)[:limit]
    return [OpTime(name=k, calls=c, time_us=t, clock="device") for k, (c, t) in ranked]
