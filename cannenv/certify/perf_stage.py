"""Level 3 performance stages (``perf-matmul-<dtype>``, ``perf-bandwidth``): the worker measures,
this module finds the peaks (the toolkit's platform ini, the published tables of
``matrices/certify/perf.yaml``) and judges. A figure with no peak to judge it against is a skip
that ran (``ran=True``): the measurement is in the metrics, but nothing is certified.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from cannenv.certify.stages import StagePlan, StageResult, skipped, stage_result
from cannenv.certify.worker import call_worker, not_ok, precheck

if TYPE_CHECKING:
    from cannenv.certify.context import RunContext
    from cannenv.host import Host


def perf_group(plans: list[StagePlan], ctx: RunContext) -> list[StageResult]:
    pre = precheck(plans, ctx)
    if pre:
        return pre
    with tempfile.TemporaryDirectory(prefix="cannenv-perf-") as tmp:
        w = call_worker(ctx.options, ctx.host, "perf", Path(tmp))
    if w.status != "ok" or w.result is None:
        return [not_ok(p, w) for p in plans]
    return judge_perf(plans, w.result, ctx.options.device, ctx.host)


class Peaks(NamedTuple):
    """The peaks a device's figures are judged against, where each comes from, and whether it is
    a vendor figure (an unverified peak is reported as a ratio but never judged)."""

    tflops: dict[str, float | None]
    """Matmul TFLOP/s per dtype."""
    bandwidth_gbs: float | None
    source: str
    bandwidth_source: str
    bandwidth_verified: bool = True
    tflops_verified: bool = True


def peaks_for(device: str, name: str, host: Host) -> Peaks:
    from cannenv.certify.perf import (
        find_platform_ini,
        load_perf_data,
        npu_matmul_peak,
        published_peak,
        read_platform_ini,
    )

    data = load_perf_data()
    if device == "cuda":
        row = published_peak(data.cuda_peaks, name)
        if row is None:
            why = f"{name!r} is not in the published-peak table (matrices/certify/perf.yaml)"
            return Peaks({}, None, why, why)
        return Peaks(
            {k: v for k, v in row.tflops.items()},
            row.bandwidth_gbs,
            row.source,
            row.source,
            row.verified,
            row.verified,
        )
    if device == "npu":
        bw_row = published_peak(data.npu_bandwidth, name)
        bw, bw_src, bw_ok = (
            (bw_row.bandwidth_gbs, bw_row.source, bw_row.verified)
            if bw_row
            else (None, f"no bandwidth figure for {name} (not in the platform ini)", True)
        )
        ini_path = find_platform_ini(host, name)
        if ini_path is None:
            why = f"no platform_config/{name}.ini under $ASCEND_HOME_PATH or the default toolkit roots"
            return Peaks({}, bw, why, bw_src, bw_ok)
        ini = read_platform_ini(host, ini_path)
        tf: dict[str, float | None] = {}
        dtypes: tuple[Literal["bf16", "fp16"], ...] = ("bf16", "fp16")
        for dt in dtypes:
            peak = npu_matmul_peak(ini, dt)
            tf[dt] = None if peak is None else peak / 1e12
        src = (
            f"{ini_path}: {ini.cube_cores} cube cores × "
            f"{'·'.join(map(str, ini.cube_mnk))} × 2 × "
            f"{ini.cube_freq_mhz:g} MHz"
        )
        return Peaks(tf, bw, src, bw_src, bw_ok)
    cpu = "CPU: no peak is judged, figures only"
    return Peaks({}, None, cpu, cpu)


def judge_perf(plans: list[StagePlan], result: dict[str, Any], device: str, host: Host) -> list[StageResult]:
    from cannenv.certify.perf import judge, load_perf_data

    data = load_perf_data()
    dev = result.get("device") or {}
    name = str(dev.get("name", ""))
    peaks = peaks_for(device, name, host)
    matmul = {m["dtype"]: m for m in result.get("matmul", [])}
    out: list[StageResult] = []
    for p in plans:
        if p.id == "perf-bandwidth":
            copy = result.get("copy") or {}
            j = judge(
                float(copy.get("gbs", 0.0)),
                peaks.bandwidth_gbs,
                data.thresholds,
                what="copy bandwidth",
                unit="GB/s",
                peak_source=peaks.bandwidth_source,
                verified=peaks.bandwidth_verified,
            )
            metrics = {
                **copy,
                "peak_gbs": peaks.bandwidth_gbs,
                "peak_source": peaks.bandwidth_source,
                "ratio": j.ratio,
                "device": dev,
            }
        else:
            dt = p.id.removeprefix("perf-matmul-")
            m = matmul.get(dt)
            if m is None or "skip" in m:
                out.append(skipped(p, str((m or {}).get("skip", f"{dt} matmul was not measured"))))
                continue
            peak = peaks.tflops.get(dt)
            j = judge(
                float(m["tflops"]),
                peak,
                data.thresholds,
                what=f"{dt} matmul",
                unit="TFLOP/s",
                peak_source=peaks.source,
                verified=peaks.tflops_verified,
            )
            metrics = {**m, "peak_tflops": peak, "peak_source": peaks.source, "ratio": j.ratio, "device": dev}
        own_s = float(metrics.get("stage_s") or 0.0)
        if j.status == "skip":
            out.append(skipped(p, j.reason, ran=True, **metrics).model_copy(update={"duration_s": own_s}))
            continue
        out.append(
            stage_result(
                p,
                j.status,
                j.reason,
                reasons=(j.reason,) if j.status == "fail" else (),
                warnings=(j.warning,) if j.warning else (),
                metrics=metrics,
            ).model_copy(update={"duration_s": own_s})
        )
    return out
