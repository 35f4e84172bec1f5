"""`cannenv explain`: C extensions built for another NumPy or another Python (issue 29).

The import checks' own messages: NumPy's C-API check (``_import_array`` of generate_numpy_api.py,
both NumPy 1.x's and 2.x's wording), Cython's type-size check (``__Pyx_ImportType``), CPython's
refusal of a method table or of a shared object without its init function, and an undefined
CPython C-API symbol (``Py*``/``_Py*``, knowledge.yaml's symbols) — each read as a build for
another NumPy or Python, tested on the checks' own wording, with the NumPy of the log or the
host deciding between CANN's numpy<2 and the extension's build, and on hostile input.
"""

from __future__ import annotations

import time

import pytest

from cannenv.explain import signatures
from tests.helpers.explaining import explain as _explain

TABLE = signatures.shipped()


def _causes(text: str) -> list[tuple[str, str]]:
    return [(c.id, c.status) for c in _explain(text).causes]


TRACE = 'Traceback (most recent call last):\n  File "/home/u/infer.py", line 3, in <module>\n    import cv2\n'


@pytest.mark.parametrize(
    "line",
    [
        # NumPy 2.x's wording (an extension built against NumPy 2, NumPy 1.x installed)
        "RuntimeError: module compiled against ABI version 0x2000000 but this version of numpy is 0x1000009",
        "RuntimeError: module was compiled against NumPy C-API version 0x12 (NumPy 2.0) but the running "
        "NumPy has C-API version 0x10. Check the section C-API incompatibility",
        # NumPy 1.x's wording
        "RuntimeError: module compiled against API version 0x10 but this version of numpy is 0xe",
        "ImportError: numpy._core.multiarray failed to import",
        # Cython's size check of a type defined by another NumPy
        "ValueError: numpy.dtype size changed, may indicate binary incompatibility. Expected 96 from C "
        "header, got 88 from PyObject",
        "ValueError: numpy.ndarray size changed, may indicate binary incompatibility. Expected 16 from C "
        "header, got 96 from PyObject",
    ],
)
def test_numpy_c_api_check_is_the_extension_built_for_another_numpy(line: str) -> None:
    ex = _explain(TRACE + line + "\n")
    assert [m.id for m in ex.matches][:1] == ["numpy-c-api-mismatch"]
    assert [c.id for c in ex.causes][:2] == ["third-party-library", "python-deps"]


def test_a_numpy_2_the_log_prints_makes_it_cann_s_numpy_below_2() -> None:
    """The NumPy the log prints is a fact of its environment: 2.x confirms CANN 8.x's numpy<2."""
    text = (
        "numpy 2.1.3\n"
        + TRACE
        + "ValueError: numpy.dtype size changed, may indicate binary incompatibility.\n"
    )
    assert _causes(text)[0] == ("python-deps", "confirmed")
    text = (
        "numpy 1.26.4\n"
        + TRACE
        + "ValueError: numpy.dtype size changed, may indicate binary incompatibility.\n"
    )
    causes = _causes(text)
    assert causes[0][0] == "third-party-library" and ("python-deps", "ruled-out") in causes, causes


def test_a_size_check_of_another_library_s_type_is_not_numpy_s() -> None:
    """Cython's check names the module: only numpy's types are NumPy's C API."""
    text = "ValueError: sklearn.tree._tree.Tree size changed, may indicate binary incompatibility.\n"
    assert "numpy-c-api-mismatch" not in [m.id for m in _explain(text).matches]


@pytest.mark.parametrize(
    "line",
    [
        "ValueError: module functions cannot set METH_CLASS or METH_STATIC",
        "ImportError: dynamic module does not define module export function (PyInit__C)",
        "ImportError: dynamic module does not define init function (PyInit_ycm_core)",
    ],
)
def test_cpython_refusing_an_extension_is_its_build(line: str) -> None:
    ex = _explain(TRACE + line + "\n")
    assert [c.id for c in ex.causes][:2] == ["third-party-library", "not-a-version-problem"]
    assert ex.causes[0].signature == "cpython-extension-abi"


def test_an_undefined_c_api_symbol_is_a_build_for_another_python() -> None:
    so = "/usr/local/lib/python3.11/site-packages/torch_npu/lib/libtorch_npu.so"
    ex = _explain(f"ImportError: {so}: undefined symbol: _PyThreadState_UncheckedGet\n")
    assert [c.id for c in ex.causes][:1] == ["framework-mismatch"]
    assert "another Python" in ex.causes[0].why
    ex = _explain(
        "ImportError: /opt/ext/_speedups.cpython-39-x86_64-linux-gnu.so: undefined symbol: PyUnicode_AsUTF8\n"
    )
    assert [c.id for c in ex.causes][:1] == ["third-party-library"]
    # a C++ name of torch stays torch's (c10::), not a C-API symbol
    ex = _explain(f"ImportError: {so}: undefined symbol: _ZN3c1010TensorImpl7releaseEv\n")
    assert [c.id for c in ex.causes][:1] != ["third-party-library"]


def test_numpy_2_s_own_message_for_a_numpy_1_build_keeps_cann_s_reading_first() -> None:
    """NumPy 2's message for an extension built for NumPy 1.x ('A module that was compiled using
    NumPy 1.x cannot be run in NumPy 2.x', then '_ARRAY_API not found') is numpy-2's signature:
    NumPy 2 where CANN 8.x needs numpy<2 ranks first, the extension's build second."""
    text = (
        "A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.1 as it may crash.\n"
        + TRACE
        + "AttributeError: _ARRAY_API not found\n"
    )
    assert [c.id for c in _explain(text).causes][:2] == ["python-deps", "third-party-library"]


def test_hostile_lines_stay_linear() -> None:
    """Megabytes of near-miss text: the anchors are literals, the one regex is bounded by its line."""
    t0 = time.process_time()
    _explain("numpy.dtype size changed" * 200_000 + "\n" + "x" * 2_000_000 + " size changed, may indicate\n")
    _explain("module functions cannot set METH_CLASS " * 100_000 + "\n")
    assert time.process_time() - t0 >= 0  # runs to the end; bench_explain.py measures the cost
