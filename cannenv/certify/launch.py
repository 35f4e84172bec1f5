"""Host-side checks of every smoke-kernel launch, against the SoC's on-chip buffers, before launch.

A kernel launched with parameters it cannot handle does not fail cleanly: ``vector_add`` with
``tile_length`` 0 never advances its loop and hangs the device; ``matmul``'s host program divides
by ``block_dim``; a tile larger than the Unified Buffer or a matrix larger than L0A/L0B/L0C
overwrites neighbouring buffers and gives wrong numbers, not an error. So each case of each kernel
is checked here, in plain Python, from the manifest and the SoC table
(``smoke_kernels/socs.yaml``, ``buffers``), and a case that would not fit is an ``error`` with a
message that names the parameter, the value, the limit and where the limit comes from — the
kernel is then neither built nor launched.

The rules mirror what each kernel's source allocates (``pipe_.InitBuffer`` per queue and buffer
count) and the instruction limits it relies on (``LoadData`` 2D ``repeatTimes`` is 8-bit: 1..255,
per the Ascend C ``LoadData2DParams`` reference). They are pure functions of
(kernel name, case, buffers); the C++ host programs repeat the zero checks as a second line.
"""

from __future__ import annotations

from collections.abc import Callable

from cannenv.certify.kernel_data import DTYPE_SIZES, KernelCase, OnChipBuffers

UINT32_MAX = 2**32 - 1
REPEAT_TIMES_MAX = 255
"""``LoadData2DParams.repeatTimes`` is a uint8_t, valid 1..255 (Ascend C API reference, LoadData:
https://www.hiascend.com/doc_center/source/zh/canncommercial/700/operatordev/Ascendcopdevg/atlasascendc_api_07_0135.html)."""
BLOCK_BYTES = 32
"""DataCopy moves whole 32-byte blocks; UB and L1 addresses are 32-byte aligned."""
FRACTAL = 16


def _kib(n: int) -> str:
    return f"{n} B ({n / 1024:g} KiB)"


class _Checker:
    def __init__(
        self, case: KernelCase, buffers: OnChipBuffers | None, family: str | None, source: str | None
    ) -> None:
        self.case = case
        self.buffers = buffers
        self.family = family
        self.source = source
        self.problems: list[str] = []
        self.unchecked: set[str] = set()

    def param(self, name: str) -> int:
        value = self.case.params().get(name)
        if value is None:
            self.problems.append(f"{name} is missing from the case's tiling")
            return 0
        return value

    def positive(self, *names: str) -> bool:
        ok = True
        for name in names:
            value = self.case.params().get(name)
            if value is None:
                self.problems.append(f"{name} is missing from the case's tiling")
                ok = False
            elif value <= 0:
                self.problems.append(f"{name} is {value}: it must be at least 1 (a 0 never advances a loop)")
                ok = False
            elif value > UINT32_MAX:
                self.problems.append(f"{name} is {value}: it must fit a uint32 kernel argument")
                ok = False
        return ok

    def multiple(self, what: str, value: int, of: int, why: str) -> None:
        if value % of:
            self.problems.append(f"{what} is {value}: it must be a multiple of {of} ({why})")

    def fits(self, buffer: str, need: int, what: str) -> None:
        size = getattr(self.buffers, buffer) if self.buffers is not None else None
        if size is None:
            self.unchecked.add(buffer)
            return
        if need > size:
            where = f"{self.family or 'this'} SoC's {buffer.upper()}"
            src = f"smoke_kernels/socs.yaml: {self.source}" if self.source else "smoke_kernels/socs.yaml"
            self.problems.append(
                f"{what} needs {_kib(need)} of {buffer.upper()}, more than the {where} of {_kib(size)} "
                f"({src})"
            )

    def repeat_times(self, what: str, value: int) -> None:
        if not 1 <= value <= REPEAT_TIMES_MAX:
            self.problems.append(
                f"{what}: LoadData repeatTimes would be {value}, "
                f"outside 1..{REPEAT_TIMES_MAX} (an 8-bit field)"
            )


def _elem(case: KernelCase) -> int:
    return DTYPE_SIZES[case.inputs[0].dtype]


def _toolchain_probe(c: _Checker) -> None:
    if not c.positive("length"):
        return
    n = c.param("length")
    c.multiple("length", n, BLOCK_BYTES // 2, "whole 32-byte blocks of fp16")
    # in_ and out_: one buffer each of length fp16 values
    c.fits("ub", 2 * n * 2, f"the copy of {n} fp16 values (2 queues x 1 buffer)")


def _vector_add(c: _Checker) -> None:
    if not c.positive("total_length", "tile_length"):
        return
    elem = _elem(c.case)
    tile = c.param("tile_length")
    if (tile * elem) % BLOCK_BYTES:
        c.problems.append(
            f"tile_length is {tile}: {tile} x {elem} B is not a whole number of 32-byte blocks "
            f"(use a multiple of {BLOCK_BYTES // elem})"
        )
    if c.case.inputs[0].shape[0] != c.param("total_length"):
        c.problems.append(
            f"total_length is {c.param('total_length')} but input {c.case.inputs[0].name} has "
            f"{c.case.inputs[0].shape[0]} elements"
        )
    # inX_, inY_, outZ_: 3 queues x 2 buffers (double buffering) of tile_length elements
    c.fits("ub", 3 * 2 * tile * elem, f"tile_length {tile} ({3 * 2} buffers of {tile * elem} B)")


def _matmul(c: _Checker) -> None:
    if not c.positive("m", "k", "n"):
        return
    m, k, n, cores = c.param("m"), c.param("k"), c.param("n"), c.case.block_dim
    if cores <= 0:
        return  # reported by check_case; the rows per core cannot be computed
    if m % cores:
        c.problems.append(f"m is {m}: it must split evenly over block_dim {cores} cores")
        return
    rows = m // cores
    c.multiple(f"m / block_dim ({m} / {cores})", rows, FRACTAL, "16 x 16 fractals")
    c.multiple("k", k, FRACTAL, "16 x 16 fractals")
    c.multiple("n", n, FRACTAL, "16 x 16 fractals")
    c.fits("l1", (rows * k + k * n) * 2, f"A ({rows} x {k}) and B ({k} x {n}) fp16 in L1")
    c.fits("l0a", rows * k * 2, f"A ({rows} x {k}) fp16 in L0A")
    c.fits("l0b", k * n * 2, f"B ({k} x {n}) fp16 in L0B")
    c.fits("l0c", rows * n * 4, f"C ({rows} x {n}) fp32 in L0C")
    c.repeat_times(f"A's rows of fractals (k / 16 = {k} / 16)", -(-k // FRACTAL))
    c.repeat_times(f"B's rows of fractals (n / 16 = {n} / 16)", -(-n // FRACTAL))


def _row_softmax(c: _Checker) -> None:
    if not c.positive("rows", "cols"):
        return
    cols = c.param("cols")
    c.multiple("cols", cols, BLOCK_BYTES // 2, "32-byte blocks of fp16")
    # in_ and out_ (2 buffers each, fp16), values_ and work_ (fp32), reduced_ (32 B)
    need = 2 * 2 * cols * 2 + 2 * cols * 4 + BLOCK_BYTES
    c.fits("ub", need, f"a row of {cols} columns (fp16 in/out double-buffered, two fp32 work rows)")


RULES: dict[str, Callable[[_Checker], None]] = {
    "toolchain_probe": _toolchain_probe,
    "vector_add": _vector_add,
    "matmul": _matmul,
    "row_softmax": _row_softmax,
}


def check_case(
    kernel: str,
    case: KernelCase,
    buffers: OnChipBuffers | None,
    *,
    family: str | None = None,
    source: str | None = None,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(problems, buffers not checked) of one launch; ``source`` names where the buffer sizes come
    from (readable titles, shown in a message). A kernel without rules is only checked for a
    positive ``block_dim`` (cannenv ships rules for every smoke kernel; a test keeps it so)."""
    c = _Checker(case, buffers, family, source)
    if case.block_dim <= 0:
        c.problems.append(f"block_dim is {case.block_dim}: it must be at least 1")
    rule = RULES.get(kernel)
    if rule is not None:
        rule(c)
    return tuple(f"case {case.id}: {p}" for p in c.problems), tuple(sorted(c.unchecked))
