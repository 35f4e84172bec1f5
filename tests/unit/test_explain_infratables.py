"""`cannenv explain`: the infrastructure's own errors — gRPC, MPICH, CMake, Gloo (issue 29).

Each table of matrices/explain/libtables.yaml that ``cannenv.explain.infratables`` imports is read
whole from the project's own source at a commit (tests/data/explain_infra: the files at those
commits): its refresh diff there is empty, every form reads a line of the project's own printed
form, near misses are not read, causes sit only on the reviewed rows, and every form is linear.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from cannenv import linre
from cannenv.explain import infratables, libtables, signatures
from cannenv.records import load_yaml
from tests.helpers.explaining import explain as _explain

TABLE = signatures.shipped()
K = TABLE.knowledge
assert K is not None
TABLES = {t.id: t for t in K.lib_tables}
TREES = Path(__file__).resolve().parents[1] / "data" / "explain_infra"
MINE = ("grpc-status", "grpc-core", "mpich", "cmake-messages", "gloo")


def _top(text: str) -> tuple[str | None, str | None]:
    ex = _explain(text)
    return (ex.causes[0].id, ex.causes[0].signature) if ex.causes else (None, None)


def _mine(text: str) -> list[str]:
    return [m.id for m in _explain(text).matches if m.id.startswith(tuple(f"lib-{t}-" for t in MINE))]


def _shipped_raw() -> dict[str, dict[str, object]]:
    raw = load_yaml(libtables.shipped_path().read_text(encoding="utf-8"))
    return {t["id"]: t for t in raw["tables"]}


# --- the data: whole tables, refreshed to an empty diff --------------------------------------------
@pytest.mark.parametrize("what", sorted(infratables.IMPORTS))
def test_the_refresh_diff_is_empty_at_the_imported_commit(
    what: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert infratables.main(["--import", what, str(TREES / what)]) == 0
    out = capsys.readouterr().out
    heads = [line for line in out.splitlines() if line.startswith("# ")]
    assert heads and all(h.endswith("0 lacks, 0 changed, 0 gone") for h in heads), out
    assert "0 lacks, 0 changed, 0 gone; " in heads[0]


def test_grpc_status_is_the_headers_whole_enum_with_pythons_text() -> None:
    t = TABLES["grpc-status"]
    assert [r.key for r in t.rows] == [str(i) for i in range(17)]
    assert [r.name for r in t.rows][::4] == [
        "OK",
        "DEADLINE_EXCEEDED",
        "RESOURCE_EXHAUSTED",
        "UNIMPLEMENTED",
        "UNAUTHENTICATED",
    ]
    assert "(Python: 'resource exhausted')" in t.rows[8].meaning
    # a code gives a cause only where the header's meaning says so: the caller's invalid argument
    assert {r.name: r.causes for r in t.rows if r.causes} == {"INVALID_ARGUMENT": ("not-a-version-problem",)}


def test_mpich_is_every_message_of_every_errnames_file() -> None:
    names = 0
    for f in (TREES / "mpich").rglob("errnames.txt"):
        names += sum(1 for line in f.read_text().splitlines() if re.match(r"^\s*\*\*[^:]*:", line))
    rows = TABLES["mpich"].rows
    assert len(rows) == names == 1309  # no name is defined twice at this commit
    by_name = {r.name: r for r in rows}
    # a continued line ('\' at its end) is one message; the row cites its file and line
    assert by_name["**rankdup %d %d %d"].meaning.endswith("which is also the value at index %d")
    gh = by_name["**gethostbyname %s %d"]
    assert gh.meaning == "gethostbyname failed, %s (errno %d)" and gh.line == 621
    assert gh.source_id == "mpich-errnames#L621"
    assert (
        by_name["**ch3|ch3_init"].meaning == "channel initialization failed"
        and not by_name["**ch3|ch3_init"].causes
    )
    # causes only on the reviewed names, on all of each name's forms
    reviewed = {r.name.split(" ", 1)[0] for r in rows if r.causes}
    assert reviewed == set(infratables.MPICH_CAUSES)


def test_every_row_and_form_cites_a_source_at_a_commit() -> None:
    for tid in MINE:
        t = TABLES[tid]
        for sid in {r.source for r in t.rows} | {f.source for f in t.forms}:
            assert re.search(r"/blob/[0-9a-f]{40}/", K.sources[sid][1]), (tid, sid)
        assert all(len(r.reason) >= 10 for r in t.rows)


def test_no_source_id_is_another_tables_id() -> None:
    # the sources of all tables share one namespace: a libtables id must not replace a signature's
    ids: set[str] = set()
    for name in ("signatures.yaml", "knowledge.yaml"):
        ids |= set(load_yaml((libtables.shipped_path().parent / name).read_text(encoding="utf-8"))["sources"])
    for what in infratables.IMPORTS:
        assert not set(infratables.sources_for(what, TREES / what)) & ids, what


def test_a_message_table_looks_only_for_the_rows_that_name_a_cause() -> None:
    t = TABLES["mpich"]
    looked = {f.row for f in t.forms}
    assert looked == {r.key for r in t.rows if r.causes}
    assert all(f.anchor in f.regex.replace("\\", "") for f in t.forms)


# --- each form on the project's own printed form ------------------------------------------------------
GRPC_UNAVAILABLE = """\
grpc._channel._InactiveRpcError: <_InactiveRpcError of RPC that terminated with:
\tstatus = StatusCode.UNAVAILABLE
\tdetails = "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:8500: \
Failed to connect to remote host: Connection refused"
\tdebug_error_string = "UNKNOWN:Error received from peer  {grpc_message:"failed to connect to all \
addresses", grpc_status:14}"
>"""

MPICH_STACK = """\
Fatal error in PMPI_Init: Other MPI error, error stack:
MPIR_Init_thread(474)..............:
MPID_Init(190).....................: channel initialization failed
MPID_nem_tcp_init(379).............: gethostbyname failed, node-17 (errno 1)
"""


@pytest.mark.parametrize(
    ("text", "sig", "cause"),
    [
        (
            "CLIENT: Received message larger than max (6291456 vs. 4194304)",
            "lib-grpc-core-received-message-larger-than-max",
            "not-a-version-problem",
        ),
        (
            'details = "Sent message larger than max (5000000 vs. 4194304)"',
            "lib-grpc-core-sent-message-larger-than-max",
            "not-a-version-problem",
        ),
        (GRPC_UNAVAILABLE, "lib-grpc-core-failed-to-connect-to-all-addresses", "not-a-version-problem"),
        (
            "E0413 20:03:08.764913058 122601 byte_stream.cc:40] assertion failed:"
            " slice_buffer->length <= UINT32_MAX\nFatal Python error: Aborted",
            "lib-grpc-core-message-over-uint32-max",
            "not-a-version-problem",
        ),
        ("status = StatusCode.INVALID_ARGUMENT", "lib-grpc-status-invalid-argument", "not-a-version-problem"),
        ("(3, 'invalid argument')", "lib-grpc-status-invalid-argument", "not-a-version-problem"),
        (MPICH_STACK, "lib-mpich-gethostbyname-s-d", "not-a-version-problem"),
        (
            "MPIDU_CH3I_Progress(201)....: gethostbyname failed",
            "lib-mpich-gethostbyname",
            "not-a-version-problem",
        ),
        (
            "MPIDI_CH3I_Sock_connect(44): [ch3:sock] failed to connect to process 10.0.0.7:36001"
            " (Connection refused)",
            "lib-mpich-ch3-sock-connrefused-s-d-s",
            "not-a-version-problem",
        ),
        (
            "PMPI_Comm_rank(106): MPI not initialized. Call MPI_Init or MPI_Init_thread first",
            "lib-mpich-initialized",
            "not-a-version-problem",
        ),
        (
            "CMake Error at cmake/generic.cmake:1:\n  Parse error.  Expected a command name, got unquoted"
            ' argument with text\n  "../x/generic.cmake".',
            "lib-cmake-messages-parse-expected-command-name",
            "not-a-version-problem",
        ),
        (
            "CMake Error at CMakeLists.txt:30 (add_subdirectory):\n  The source directory\n\n"
            "    /src/third_party/json\n\n  does not contain a CMakeLists.txt file.",
            "lib-cmake-messages-no-cmakelists-in-subdirectory",
            "not-a-version-problem",
        ),
        (
            "CMake Error at CMakeLists.txt:9 (add_subdirectory):\n  add_subdirectory given source"
            ' "third_party/x" which is not an existing directory.',
            "lib-cmake-messages-subdirectory-not-a-directory",
            "not-a-version-problem",
        ),
        (
            'CMake Error: The source directory "/home/u/build" does not appear to contain CMakeLists.txt.',
            "lib-cmake-messages-source-dir-without-cmakelists",
            "not-a-version-problem",
        ),
        (
            "CMake Error at CMakeLists.txt:40 (add_library):\n  Cannot find source file:\n\n"
            "    src/kernel.cpp",
            "lib-cmake-messages-cannot-find-source-file",
            "not-a-version-problem",
        ),
        (
            "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:84]"
            " ifa != nullptr. Unable to find address for: eth9",
            "lib-gloo-unable-to-find-address",
            "not-a-version-problem",
        ),
    ],
)
def test_a_printed_form_is_its_row(text: str, sig: str, cause: str) -> None:
    assert _top(text) == (cause, sig)


@pytest.mark.parametrize(
    ("text", "sig"),
    [
        ("MPIR_Comm_create(75)...........: Out of memory", "lib-mpich-nomem"),
        (
            "MPIR_Type_contiguous(10): Out of memory (unable to allocate a 'datatype' of size 1024)",
            "lib-mpich-nomem-s-d",
        ),
    ],
)
def test_mpichs_out_of_memory_is_oom_beside_the_generic_signature(text: str, sig: str) -> None:
    ex = _explain(text)
    assert ex.causes[0].id == "oom" and sig in [m.id for m in ex.matches]


@pytest.mark.parametrize(
    ("text", "sig"),
    [
        ("status = StatusCode.UNAVAILABLE", "lib-grpc-status-unavailable"),
        ("RESOURCE_EXHAUSTED\n(8, 'resource exhausted')", "lib-grpc-status-resource-exhausted"),
        ('debug_error_string = "{"created":"@1.2","grpc_status":4}"', "lib-grpc-status-deadline-exceeded"),
        (
            'CMake Error at x.cmake:3 (foo):\n  Unknown CMake command "cann_add_op".',
            "lib-cmake-messages-unknown-command",
        ),
        (
            '  Could not find a package configuration file provided by "ascendc" with any of\n',
            "lib-cmake-messages-find-package-config-not-found",
        ),
        (
            "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer"
            " [10.1.1.2]:4196",
            "lib-gloo-connection-closed-by-peer",
        ),
    ],
)
def test_a_row_that_names_no_cause_still_matches_and_says_so(text: str, sig: str) -> None:
    ex = _explain(text)
    m = {x.id: x for x in ex.matches}
    assert sig in m and m[sig].note
    assert all(c.signature != sig for c in ex.causes)


@pytest.mark.parametrize(
    "text",
    [
        "dial tcp 10.0.0.1:8080: connect: connection refused",  # Go's, not MPICH's stack
        "Out of memory",  # no stack level before it
        "kernel: Out of memory: Killed process 1234 (python)",
        "MPID_Init(190): channel initialization failed",  # a generic MPICH message: not looked for
        "gethostbyname failed, node-17 (errno 1)",  # outside MPICH's stack
        "JSON Parse error: Expected a command",
        "CMake Warning: Manually-specified variables were not used by the project",
        "Connection closed by peer",  # not Gloo's [FILE:LINE] message
        "StatusCode.NOPE",
        "(8, 'resource exhausted ')",
        "message larger than max (5 vs. 4)",  # neither direction named
    ],
)
def test_near_misses_are_not_the_forms(text: str) -> None:
    assert _mine(text) == [], text


def test_the_tables_rank_below_a_signature_of_the_stack() -> None:
    text = (
        "ImportError: libascendcl.so: cannot open shared object file: No such file or directory\n"
        + MPICH_STACK
    )
    ex = _explain(text)
    assert ex.causes[0].id != "not-a-version-problem"
    assert "lib-mpich-gethostbyname-s-d" in [m.id for m in ex.matches]


# --- hostile input ------------------------------------------------------------------------------
@pytest.mark.parametrize("form", [f for t in MINE for f in TABLES[t].forms], ids=lambda f: f.id)
def test_each_form_is_linear(form: object) -> None:
    assert linre.ambiguity(form.regex, mode="search") is None  # type: ignore[attr-defined]


def test_a_huge_line_of_one_anchor_is_read_in_bounds() -> None:
    line = "MPID_nem_tcp_init(379)......: gethostbyname failed, " * 20_000 + "\n"
    assert _top(line) == ("not-a-version-problem", "lib-mpich-gethostbyname-s-d")
    assert _top("(1, '" * 200_000) == (None, None)


# --- the importer ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "form"),
    [
        ("gethostbyname failed, %s (errno %d)", ("gethostbyname failed, ", "gethostbyname failed, ")),
        ("Out of memory", ("Out of memory", "Out of memory[ \\t]*$")),
        (
            "Out of memory (unable to allocate a '%s' of size %d)",
            (
                "Out of memory (unable to allocate a '",
                "Out of memory \\(unable to allocate a '[^'\\n]{0,300}' of size -?[0-9]{1,20}\\)",
            ),
        ),
        ("Bad rank %d", None),  # no literal of 12 characters
        ("100%% done", None),
    ],
)
def test_a_message_form_is_its_literal_text_with_bounded_arguments(text: str, form: object) -> None:
    assert infratables.message_form(text) == form


def test_the_importer_refuses_a_source_that_lost_a_reviewed_message(tmp_path: Path) -> None:
    shutil.copytree(TREES / "gloo", tmp_path / "gloo")
    pair = tmp_path / "gloo" / "gloo/transport/tcp/pair.cc"
    pair.write_text(pair.read_text().replace('"Read timeout "', '"Receive timeout "'))
    with pytest.raises(ValueError, match="no longer has"):
        infratables.read("gloo", tmp_path / "gloo")


def test_the_importer_refuses_a_reviewed_mpich_name_the_tree_lacks(tmp_path: Path) -> None:
    shutil.copytree(TREES / "mpich", tmp_path / "mpich")
    names = tmp_path / "mpich/src/mpi/errhan/errnames.txt"
    names.write_text(names.read_text().replace("**gethostbyname", "**getaddrinfo"))
    with pytest.raises(ValueError, match=r"\*\*gethostbyname"):
        infratables.read_mpich(tmp_path / "mpich")


def test_write_adds_the_tables_and_their_sources_once(tmp_path: Path) -> None:
    raw = load_yaml(libtables.shipped_path().read_text(encoding="utf-8"))
    raw["tables"] = [t for t in raw["tables"] if t["id"] == "cc"]  # a small file without gloo's table
    used = {r["source"] for r in raw["tables"][0]["rows"]} | {f["source"] for f in raw["tables"][0]["forms"]}
    raw["sources"] = {k: v for k, v in raw["sources"].items() if k in used}
    f = tmp_path / "libtables.yaml"
    f.write_text("# head\n" + yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    rows, forms = infratables.read("gloo", TREES / "gloo")["gloo"]
    sources = {
        k: {"title": t, "url": u} for k, (t, u) in infratables.sources_for("gloo", TREES / "gloo").items()
    }
    header = {"title": "Gloo", "component": "Gloo (torch.distributed's gloo backend)"}
    for _ in range(2):
        libtables.write_rows(f, "gloo", rows, forms=forms, header=header, sources=sources)
    written = yaml.safe_load(f.read_text())
    assert f.read_text().startswith("# head\n")
    assert [t["id"] for t in written["tables"]].count("gloo") == 1
    assert written["tables"][-1]["rows"] == rows and written["tables"][-1]["forms"] == forms
    assert _shipped_raw()["gloo"]["rows"] == rows
    libtables.parse(written, source=str(f))
