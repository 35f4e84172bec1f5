"""Matrix model and loader: shipped data, bad-input messages with file:line, schema sync, queries."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import jsonschema
import pytest
import yaml

from cannenv import matrix
from cannenv.errors import InputError, NotFoundError
from cannenv.resources import matrices_dir
from cannenv.versions import CannVersion


@pytest.fixture(scope="module")
def m() -> matrix.Matrix:
    return matrix.load()


def _write(tmp_path: Path, text: str, name: str = "bad.yaml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


# -- shipped data -----------------------------------------------------------------------------


def test_shipped_matrix_loads_and_is_consistent(m: matrix.Matrix) -> None:
    assert len(m.torch_npu) > 60
    assert {s.family for s in m.stacks} >= {"a2", "a3", "310p"}
    assert {a for s in m.stacks for a in s.arches} == {"aarch64", "x86_64"}
    assert m.lint_problems() == []


def test_loader_reads_only_top_level_matrix_files(m: matrix.Matrix) -> None:
    names = {p.name for p in m.files}
    assert "schema.json" not in names
    assert all(p.parent == matrices_dir() for p in m.files)
    assert {
        "sources.yaml",
        "socs.yaml",
        "torch_npu.yaml",
        "hdk.yaml",
        "installers.yaml",
        "stacks.yaml",
    } <= names


def test_every_fact_names_a_declared_source(m: matrix.Matrix) -> None:
    rows = [
        *m.torch_npu,
        *m.python_rows,
        *m.wheels,
        *m.hdk,
        *m.installers,
        *m.companions,
        *m.lifecycle,
        *m.stacks,
    ]
    for row in rows:
        assert row.sources and set(row.sources) <= set(m.sources), row


def test_every_research_row_is_present(m: matrix.Matrix) -> None:
    """All torch_npu rows of research §1.1/§1.2 (CANN 5.0.2 ... 9.1.0) are in the data."""
    keys = {(r.torch_npu, r.torch, r.cann) for r in m.torch_npu if r.table in ("active", "historical")}
    assert ("2.12.0", "2.12.0", "9.1.0") in keys
    assert ("2.1.0.post17", "2.1.0", "8.3.RC1") in keys
    assert ("1.5.0.post2", "1.5.0", "5.0.2") in keys
    assert ("1.5.0.post3", "1.8.1", "5.0.3") in keys  # the vendor's "(sic)" row, kept as published
    # 62 research rows + 2.1.0.post3 (PTA 6.0.RC1 notes) + 2.10.0 <-> 9.0.0 (TorchNPU 26.0.0 row, now
    # active) + five TorchNPU 26.1.1 rows (CANN 9.1.X)
    assert ("2.1.0.post3", "2.1.0", "8.0.RC1") in keys
    assert ("2.10.0", "2.10.0", "9.0.0") in keys
    assert len(keys) == 69


def test_conflicts_are_recorded_both_ways(m: matrix.Matrix) -> None:
    rows = m.torch_npu_rows(cann="9.0.0", torch="2.10.0")
    assert {r.torch_npu for r in rows} >= {"2.10.0", "2.10.0.post2"}
    # the TorchNPU 26.0.0 row (2.10.0) is the pairing; README HEAD's 2.10.0.post2 stays a recorded conflict
    by_version = {r.torch_npu: r for r in rows}
    assert by_version["2.10.0"].status == "current" and "PT-COMPAT-FORK-2611" in by_version["2.10.0"].sources
    assert by_version["2.10.0.post2"].status == "conflict"
    superseded = m.torch_npu_rows(cann="9.1.0", torch="2.9.0", include_superseded=True)
    assert {r.torch_npu for r in superseded} == {"2.9.0.post6", "2.9.0.post3", "2.9.0.post8"}


def test_digest_is_stable_and_content_sensitive(m: matrix.Matrix, tmp_path: Path) -> None:
    again = matrix.load([matrices_dir()])
    assert again.digest == m.digest and m.digest.startswith("sha256:")
    for f in m.files:
        (tmp_path / f.name).write_bytes(f.read_bytes())
    p = tmp_path / "stacks.yaml"
    p.write_text(p.read_text().replace("status: published", "status: deprecated", 1))
    assert matrix.load([tmp_path]).digest != m.digest


def test_stack_lookup(m: matrix.Matrix) -> None:
    s = m.stack("a2-cann8.3.rc1-torch2.7.1-py3.11")
    assert s.family == "a2"
    assert (
        s.version("cann") == "8.3.RC1" and s.version("torch_npu") == "2.7.1" and s.version("python") == "3.11"
    )
    art = s.artifact("ops", "aarch64")
    assert (
        art is not None
        and art.file == "Ascend-cann-kernels-910b_8.3.RC1_linux-aarch64.run"
        and art.sha256 is None
    )
    with pytest.raises(NotFoundError) as info:
        m.stack("a2-cann8.3.rc1-torch2.7.2-py3.11")
    assert info.value.hint and "a2-cann8.3.rc1-torch2.7.1-py3.11" in info.value.hint


# -- queries from the issue --------------------------------------------------------------------


def test_which_torch_npu_for_cann_torch_python(m: matrix.Matrix) -> None:
    rows = m.torch_npu_rows(cann="8.3.RC1", torch="2.7.1", python="3.11")
    assert [r.torch_npu for r in rows] == ["2.7.1"]
    # one row, stated by the vendor table and two releases of the vendor installer (version_match.json)
    assert rows[0].branch == "v2.7.1-7.2.0"
    assert rows[0].sources == ("PT-COMPAT", "DEPLOYER-7.3.0", "DEPLOYER-26.0.0")


def test_which_hdk_for_cann_on_a2(m: matrix.Matrix) -> None:
    req = m.driver_requirement("8.2.RC1", "a2")
    assert req is not None
    # two recommended pairings, both recorded: the quick-install table (25.0.RC1) and the vendor's
    # installer manifest (CANN_8.2.RC1.json requires NPU 25.2.0); nothing newer is assumed
    assert (req.minimum, req.range, req.evidence, req.firmware) == (
        "25.0.rc1",
        ">=25.0.rc1,<25.3",
        "recommended",
        "7.7.0.1.231",
    )
    assert req.accepts("25.0.rc1.1") and req.accepts("25.2.0") and not req.accepts("24.1.rc2")
    assert not req.accepts("25.5.0")  # no statement covers it: unknown, not accepted
    # a pre-release uses its release's pairing (8.0.RC3.beta1 -> 8.0.RC3, recommended)
    beta = m.driver_requirement("8.0.RC3.beta1", "a2")
    assert beta is not None and beta.evidence == "recommended" and beta.minimum == "24.1.rc2"
    # 8.3.RC1: the vendor installer pairs 25.3.RC1 (the "25.3.0" of one guide names no driver)
    v = m.driver_requirement("8.3.RC1", "a2")
    assert v is not None and v.evidence == "recommended" and v.minimum == "25.3.rc1"
    assert v.sources[:2] == ("DEPLOYER-7.3.0", "DEPLOYER-26.0.0")
    assert m.driver_requirement("8.5.0", "a3") is not None
    # 310B: only the release notes' family-wide Y/N tables, no pairing: none invented
    other = m.driver_requirement("9.2.0", "310b")
    assert other is not None and other.rows == () and other.evidence == "declared"
    assert other.accepts("26.2.rc1") and not other.accepts("25.2.0")


def test_which_cann_accepts_driver(m: matrix.Matrix) -> None:
    reqs = m.cann_accepting_driver("24.1.rc2", family="a2")
    canns = [r.cann for r in reqs if r.evidence == "recommended"]
    assert canns[0] == "8.1.RC1"
    assert {"8.1.RC1", "8.0.0", "8.0.RC3", "8.0.RC2"} <= set(canns)
    assert "8.2.RC1" not in canns


def test_python_support_keeps_both_statements(m: matrix.Matrix) -> None:
    ps = m.python_support("2.7.1")
    assert ps.current == ("3.9", "3.10", "3.11", "3.12", "3.13")
    assert ("3.9", "3.10", "3.11") in ps.older
    assert m.python_ok("2.2.0", "3.10") and not m.python_ok("2.2.0", "3.11")


def test_wheels_published(m: matrix.Matrix) -> None:
    assert m.wheel_published("2.7.1", "3.12") is False
    assert m.wheel_published("2.7.1.post2", "3.12", arch="aarch64") is True
    assert m.wheel_published("2.2.0", "3.11") is False
    assert m.wheel_published("2.9.0.post9", "3.14") is True
    assert m.wheel_published("2.7.1", "3.10", arch="aarch64") is True
    assert m.wheel_published("2.1.0.post4", "3.10") is False  # listed by one table, never published
    assert m.wheel_published("2.7.1", "3.6") is None  # no data for that Python


def test_ops_package_by_era(m: matrix.Matrix) -> None:
    assert m.ops_package("8.0.RC2", "a2", "aarch64").file == "Ascend-cann-kernels-910b_8.0.RC2_linux.run"
    assert (
        m.ops_package("8.3.RC1", "310p", "x86_64").file == "Ascend-cann-kernels-310p_8.3.RC1_linux-x86_64.run"
    )
    assert m.ops_package("8.5.0", "a2", "aarch64").package == "Ascend-cann-910b-ops"
    assert m.ops_package("8.2.RC1", "a3", "aarch64").file == "Atlas-A3-cann-kernels_8.2.RC1_linux-aarch64.run"
    assert m.ops_package("9.0.0", "a3", "x86_64").file == "Ascend-cann-A3-ops_9.0.0_linux-x86_64.run"
    driver = m.installer_file("driver", "25.0.rc1.1", "a2", "x86_64", cann="8.2.RC1")
    assert driver.file == "Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-x86-64.run"
    with pytest.raises(NotFoundError):
        m.ops_package("8.0.RC1", "a3", "aarch64")


def test_companions(m: matrix.Matrix) -> None:
    assert m.companion_versions("ops", "9.0.0") == ("9.0.0", "8.5.2")
    assert m.companion_versions("ops", "8.3.RC1") == ("8.3.RC1",)
    assert m.companion_versions("nnal", "8.2.RC1") == ("8.2.RC1",)


def test_component_matches_series_and_ranges() -> None:
    assert matrix.component_matches("torch", "2.7", "2.7.1")
    assert not matrix.component_matches("torch", "2.7.1", "2.7.1.post2")
    assert matrix.component_matches("cann", "8.3", "8.3.RC1")
    assert matrix.component_matches("cann", "8.3.rc1", "8.3.RC1")
    assert matrix.component_matches("driver", ">=25.0.rc1", "25.2.0")
    assert matrix.component_matches("python", "3.11", "3.11.4")


# -- loader errors -------------------------------------------------------------------------------


def test_unquoted_python_version_gets_line_and_hint(tmp_path: Path) -> None:
    p = _write(
        tmp_path,
        """\
        schema_version: 1
        python_support:
          - torch: ["2.2.0"]
            python: ["3.8", 3.10]
            sources: [X]
        """,
    )
    with pytest.raises(matrix.MatrixError) as info:
        matrix.load([p])
    (problem,) = info.value.problems
    assert problem.line == 4
    assert problem.entry == "python_support[0] (torch ['2.2.0'])"
    assert problem.path == "python[1]"
    assert "3.1" in problem.message and problem.hint and "quote version numbers" in problem.hint
    assert f"{p}:4" in str(info.value)


def test_all_errors_of_a_file_in_one_pass(tmp_path: Path) -> None:
    p = _write(
        tmp_path,
        """\
        schema_version: 1
        torch_npu:
          - {torch_npu: "2.1.0", torch: "2.1.0", cann: "8.0.RCX", sources: [A]}
          - {torch_npu: "2.1.0", torch: "2.1.0", cann: "8.0.0", sources: [A], colour: red}
          - {torch_npu: "not a version", torch: "2.1.0", cann: "8.0.0", sources: [A]}
        stacks:
          - id: a2-x
            family: a9
            arches: [aarch64]
            status: published
            components: {}
            sources: [A]
        """,
    )
    with pytest.raises(matrix.MatrixError) as info:
        matrix.load([p])
    by_line = {pr.line: pr for pr in info.value.problems}
    assert set(by_line) == {3, 4, 5, 8}
    assert "8.0.RCX" in by_line[3].message and by_line[3].path == "cann"
    assert "unknown key 'colour'" in by_line[4].message
    assert "not a version" in by_line[5].message and by_line[5].path == "torch_npu"
    assert by_line[8].entry == "stacks[0] (id a2-x)" and by_line[8].path == "family"
    assert "'a9'" in by_line[8].message


def test_a_repeated_key_in_an_otherwise_valid_file_is_a_problem(tmp_path: Path) -> None:
    """PyYAML keeps the last of two equal keys without a word; the loader refuses the file."""
    p = _write(
        tmp_path,
        """\
        schema_version: 1
        sources:
          - {id: A, title: a, title: b}
        """,
    )
    with pytest.raises(matrix.MatrixError) as info:
        matrix.load_files([p], use_cache=False)
    (problem,) = info.value.problems
    assert problem.line == 3 and "duplicate key 'title'" in problem.message
    assert "sources[0]" in problem.path
    q = _write(tmp_path, "schema_version: 1\nsources:\n  - {id: A, title: a}\n", name="ok.yaml")
    assert [s.id for s in matrix.load_files([q], use_cache=False).sources.values()] == ["A"]


def test_semantic_errors_have_lines(tmp_path: Path) -> None:
    p = _write(
        tmp_path,
        """\
        schema_version: 1
        sources:
          - {id: A, title: a source}
        stacks:
          - id: s1
            family: a2
            arches: [aarch64]
            status: published
            components:
              driver: {version: "24.1.rcX", sources: [A]}
              cann: {version: "8.0.0", sources: [B]}
            sources: [A]
          - id: s1
            family: a2
            arches: [aarch64]
            status: published
            components: {}
            sources: [A]
        """,
    )
    with pytest.raises(matrix.MatrixError) as info:
        matrix.load([p])
    msgs = {(pr.line, pr.message.split(":")[0]) for pr in info.value.problems}
    lines = {pr.line for pr in info.value.problems}
    assert {10, 11, 13} <= lines, msgs
    text = str(info.value)
    assert "24.1.rcX" in text and "unknown source id 'B'" in text and "already defined" in text


def test_many_semantic_errors_compose_the_yaml_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Lines come from one composed YAML tree per file: a file with many unknown source ids (a
    # renamed source) was composed again for every problem, minutes for a large stacks file.
    stack = (
        "  - {{id: s{}, family: a2, arches: [aarch64], status: published, components: {{}}, sources: [B]}}\n"
    )
    stacks = "".join(stack.format(i) for i in range(20))
    p = _write(tmp_path, "schema_version: 1\nsources:\n  - {id: A, title: a source}\nstacks:\n" + stacks)
    composed: list[str] = []
    real = matrix._line_index

    def counting(text: str) -> dict[tuple[str | int, ...], int]:
        composed.append(text)
        return real(text)

    monkeypatch.setattr(matrix.loader, "_line_index", counting)
    problems = matrix.check_file(p)
    assert [pr.line for pr in problems] == list(range(5, 25))
    assert {(pr.entry, pr.path, pr.message) for pr in problems} == {
        (f"stacks[{i}] (id s{i})", "sources[0]", "unknown source id 'B'") for i in range(20)
    }
    assert len(composed) == 1


def test_bad_version_message_names_the_shapes_once(tmp_path: Path) -> None:
    p = _write(
        tmp_path,
        """\
        schema_version: 1
        torch_npu:
          - {torch_npu: "2.1.0", torch: "2.1.x", cann: "8.0.RCX", sources: [A]}
        """,
    )
    problems = {pr.path: pr.message for pr in matrix.check_file(p)}
    assert problems["cann"] == (
        f"'8.0.RCX' is not a valid cann version; expected a cann version such as {CannVersion.shapes}"
    )
    assert problems["torch"].startswith("'2.1.x' is not a valid PEP 440 version; expected a Python package")


def test_unknown_key_did_you_mean(tmp_path: Path) -> None:
    p = _write(tmp_path, "schema_version: 1\nstacs: []\n")
    (problem,) = matrix.check_file(p)
    assert problem.line == 2 and problem.hint and "stacks" in problem.hint


def test_yaml_syntax_error_has_line(tmp_path: Path) -> None:
    p = _write(tmp_path, "schema_version: 1\ntorch_npu:\n  - {torch: [\n")
    with pytest.raises(matrix.MatrixError) as info:
        matrix.load([p])
    assert info.value.problems[0].line is not None and "invalid YAML" in info.value.problems[0].message


def test_missing_file_is_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        matrix.load([tmp_path / "nope.yaml"])


def test_extras_need_no_code_change(tmp_path: Path) -> None:
    p = _write(
        tmp_path,
        """\
        schema_version: 1
        stacks:
          - id: a2-extra
            family: a2
            arches: [aarch64]
            status: published
            components:
              vllm-ascend: {version: "0.13.0", package: vllm-ascend, sources: [VA-POLICY]}
              mindie: {version: "2.1.RC1", scheme: cann, sources: [X]}
            sources: [VA-POLICY]
        """,
    )
    m = matrix.load([p])
    assert m.stack("a2-extra").version("vllm-ascend") == "0.13.0"


# -- schema ----------------------------------------------------------------------------------


def test_shipped_schema_is_in_sync() -> None:
    shipped = json.loads((matrices_dir() / "schema.json").read_text())
    assert shipped == matrix.json_schema(), "regenerate: cannenv matrix schema --write matrices/schema.json"


def test_every_shipped_file_validates_against_the_schema(m: matrix.Matrix) -> None:
    schema = matrix.json_schema()
    for f in m.files:
        jsonschema.validate(yaml.safe_load(f.read_text()), schema)
