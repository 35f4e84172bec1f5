"""The packages' real file lists (matrices/explain/filelists.yaml) and the library table they refresh.

Fixtures in tests/data/filelists/ are the vendor's own files at the commit the shipped list names:
hicann/runtime 681ef76 (scripts/package/runtime/runtime.xml and its block module/ascend/RuntimeSo.xml),
hicann/ascend-transformer-boost ddcc8b6 (src/CMakeLists.txt, src/torch_atb/CMakeLists.txt).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from cannenv.explain import filelists, judge, signatures
from cannenv.explain.scan import Scanner
from cannenv.explain.tables import shipped

DATA = Path(__file__).resolve().parents[1] / "data" / "filelists"
LISTS = filelists.load(filelists.shipped_path())
K = shipped()


def _list(list_id: str) -> filelists.FileList:
    return next(x for x in LISTS if x.id == list_id)


def test_a_cann_package_xml_gives_every_shared_object_of_its_blocks() -> None:
    func, files = filelists.package_xml(
        (DATA / "runtime.xml").read_text(), {"RuntimeSo": (DATA / "RuntimeSo.xml").read_text()}
    )
    assert func == "npu-runtime"
    assert "$(TARGET_ENV)/lib64/libacl_rt.so" in files and "$(TARGET_ENV)/lib64/libtsdclient.so" in files
    assert "$(TARGET_ENV)/lib64/libascend_protobuf.so.3.13.0.0" in files
    assert not any(f.endswith((".a", ".o", ".h")) for f in files)  # static archives, kernels, headers
    # the shipped list is what the importer reads from these files
    assert tuple(files) == _list("files-npu-runtime").files


def test_a_cmake_project_gives_the_shared_libraries_it_installs() -> None:
    files = filelists.cmake_installs(
        {
            "src/CMakeLists.txt": (DATA / "atb-src-CMakeLists.txt").read_text(),
            "src/torch_atb/CMakeLists.txt": (DATA / "atb-torch_atb-CMakeLists.txt").read_text(),
        }
    )
    assert files == ["lib/libatb.so", "lib/libatb_train.so"]  # the static targets and the _C module are not
    assert set(files) <= set(_list("files-atb").files)


def test_filelists_schema_is_in_sync() -> None:
    shipped_schema = json.loads((filelists.shipped_path().parent / "filelists.schema.json").read_text())
    assert shipped_schema == filelists.json_schema(), (
        "regenerate: python -m cannenv.explain.filelists --schema > matrices/explain/filelists.schema.json"
    )


def test_every_list_names_a_package_of_the_table_and_its_source_at_a_commit() -> None:
    for fl in LISTS:
        assert fl.package in {lib.package for lib in K.libraries} | {"mindspore"}, fl.id
        assert K.sources[fl.id] == (fl.title, fl.url), f"knowledge.yaml lacks source {fl.id}"
        assert "/blob/" in fl.url or "/tree/" in fl.url or fl.url.startswith("https://pypi.org/"), fl.url


def test_the_library_table_is_in_sync_with_the_lists() -> None:
    assert filelists.diff(LISTS, K) == [], "python -m cannenv.explain.filelists --diff"


def test_the_refresh_diff_names_what_the_table_lacks_and_what_moved() -> None:
    kept = tuple(lib for lib in K.libraries if lib.name not in ("libcann_kb", "libtsdclient"))
    moved = tuple(
        dataclasses.replace(lib, package="driver") if lib.name == "libtsdclient" else lib
        for lib in K.libraries
    )
    lacks = filelists.diff(LISTS, dataclasses.replace(K, libraries=kept))
    assert {(c.kind, c.name, c.package) for c in lacks} == {
        ("lacks", "libcann_kb", "cann-toolkit"),
        ("lacks", "libtsdclient", "cann-toolkit"),
    }
    (change,) = filelists.diff(LISTS, dataclasses.replace(K, libraries=moved))
    assert (change.kind, change.name, change.table_package, change.lists) == (
        "moved",
        "libtsdclient",
        "driver",
        ("files-npu-runtime",),
    )
    assert filelists.main(["--diff"]) == 0


def test_libraries_map_to_the_package_whose_list_ships_them() -> None:
    assert K.library("libcann_kb.so").package == "cann-toolkit"  # type: ignore[union-attr]
    assert K.library("libmindspore_ascend.so.2").package == "mindspore"  # type: ignore[union-attr]
    # MindSpore's own HCCL plugin, not CANN's libhccl (the libhccl prefix row)
    assert K.library("libhccl_plugin.so").package == "mindspore"  # type: ignore[union-attr]
    assert K.library("libhccl.so").package == "cann-toolkit"  # type: ignore[union-attr]
    assert K.library("libmki.so").package == "nnal"  # type: ignore[union-attr]
    assert K.library("libopapi_nn.so").package == "cann-ops"  # type: ignore[union-attr]
    assert K.library("libascend_protobuf.so.3.13.0.0").package == "cann-toolkit"  # type: ignore[union-attr]
    assert K.library("libmindie_llm_manager.so").package == "mindie"  # type: ignore[union-attr]
    # the OpenSSL and grpc copies MindIE carries are not MindIE's libraries
    assert "lib/libcrypto.so" in _list("files-mindie-service").bundled
    assert K.library("libcrypto.so.3") is None and K.library("libgrpc.so.37") is None
    assert K.library("libopencv_core.so.4.5") is None  # nor is the opencv copy MindSpore carries


def _explain(text: str) -> judge.Explanation:
    table = signatures.shipped()
    s = Scanner(table, total_hint=len(text))
    s.feed(text.encode())
    s.end_input()
    return judge.explain(table, s.result())


def test_a_cann_library_missing_under_mindspore_is_the_toolkit_not_a_third_party_library() -> None:
    # MindOCR's FAQ (Q2): a CANN library missing when MindSpore loads its Ascend plugin
    line = (
        "Load dynamic library: libmindspore_ascend.so.2 failed. libge_runner.so: cannot open shared object "
        "file: No such file or directory"
    )
    e = _explain(line)
    assert e.matches[0].id == "library-libge_runner"
    assert e.causes[0].id == "env-not-sourced"


def test_an_undefined_symbol_of_a_third_party_extension_points_to_its_build() -> None:
    # DeepSpeed#7894 (https://github.com/deepspeedai/DeepSpeed/pull/7894), the PR's own error text
    line = (
        "ImportError: /.../async_io.so: undefined symbol: "
        "_ZN21deepspeed_io_handle_t18_create_io_op_descEbRKN2at6TensorEiPKcbl"
    )
    e = _explain(line)
    assert e.matches[0].id == "symbol-third-party-extension"
    assert [c.id for c in e.causes[:2]] == ["not-a-version-problem", "third-party-library"]
    # the stack's namespaces still decide first: a c10_npu symbol in an extension is a framework mismatch
    e = _explain(
        "ImportError: ascend_extension.so: undefined symbol: "
        "_ZN7c10_npu3acl20AclrtPeekAtLastErrorE17aclrtLastErrLevel"
    )
    assert e.causes[0].id == "framework-mismatch"
    # a library of the stack is never read as an extension
    e = _explain("libtorch_npu.so: undefined symbol: _ZN9unknownns3fooEv")
    assert not any(m.id == "symbol-third-party-extension" for m in e.matches)


def test_a_cann_package_xml_gives_the_headers_of_the_toolkits_include_folder() -> None:
    # hicann/metadef 786891c: metadef.xml and its block module/ascend/MetadefInc.xml
    headers = filelists.package_headers(
        (DATA / "metadef.xml").read_text(), {"MetadefInc": (DATA / "MetadefInc.xml").read_text()}
    )
    assert "register/tilingdata_base.h" in headers and "exe_graph/runtime/tiling_context.h" in headers
    assert all("/" in h and h.endswith((".h", ".hpp")) for h in headers)
    assert not any(h.startswith(("$(", "pkg_inc/")) for h in headers)  # only the include folder, relative
    # the shipped list is what the importer reads from these files
    assert tuple(headers) == _list("files-metadef").headers
    # the shared objects are read as before from the same files
    assert not any(h.endswith(".so") for h in headers)


def test_every_header_of_a_list_is_the_toolkits_and_reaches_the_table() -> None:
    for fl in LISTS:
        for h in fl.headers:
            assert K.headers[h][0] == fl.package or h in {
                x for other in LISTS if other.id != fl.id for x in other.headers
            }
    assert K.headers["acl/acl.h"] == ("cann-toolkit", "files-npu-runtime")
    assert K.headers["register/tilingdata_base.h"] == ("cann-toolkit", "files-metadef")
