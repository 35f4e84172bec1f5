"""MindIE in the doctor (issue 30): the installed release as its installer records it, judged against
the matrix's MindIE rows (CANN, TorchNPU release, HDK).

The host trees carry the files where the vendor's scripts put them (tests/helpers/hosts.py names the
scripts): ``/usr/local/Ascend/mindie/latest/version.info`` for the MindIE package,
``…/mindie/mindie-llm/latest/version.info`` for the open-source MindIE-LLM package.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from cannenv import checks
from cannenv.checks.components import mindie_release
from cannenv.facts import Facts, MindieFacts
from cannenv.host import Host
from cannenv.matrix import load
from cannenv.probes import collect
from cannenv.probes import mindie as mindie_probe
from tests.helpers.hosts import DRIVER_25_3_RC1, HostTree, driver_like_25_3


def _facts(tree: HostTree) -> Facts:
    return collect(Host(tree.root, dict(tree.env), True, 5.0), only=["driver", "toolkit", "mindie", "python"])


def _judge(facts: Facts) -> list[checks.Finding]:
    return checks.run(facts, checks.Target(matrix=load()), checks.select(["component-stack"]))


def test_the_mindie_package_install_is_read_from_latest_version_info(tmp_path: Path) -> None:
    t = HostTree(tmp_path).mindie("2.1.RC2.B080")
    m = _facts(t).mindie
    assert m == MindieFacts(
        path="/usr/local/Ascend/mindie",
        version_file="/usr/local/Ascend/mindie/latest/version.info",
        version="2.1.RC2.B080",
        parts={
            "mindie-rt": "2.1.RC2.B080",
            "mindie-torch": "2.1.RC2.B080",
            "mindie-service": "2.1.RC2.B080",
            "mindie-llm": "2.1.RC2.B080",
            "mindie-sd": "2.1.RC2.B080",
        },
    )
    bare = _facts(HostTree(tmp_path / "bare").mindie("1.0.0", named=False)).mindie
    assert bare is not None and bare.version == "1.0.0"
    assert mindie_release("2.1.RC2.B080") == "2.1.RC2" and mindie_release("2.0.T3") == "2.0.T3"


def test_a_non_root_install_under_home(tmp_path: Path) -> None:
    t = HostTree(tmp_path)
    t.env["HOME"] = "/home/alice"
    t.mindie("2.2.RC1", base="/home/alice/Ascend/mindie")
    m = _facts(t).mindie
    assert m is not None and m.path == "/home/alice/Ascend/mindie" and m.version == "2.2.RC1"


def test_the_mindie_llm_package_names_no_mindie_release(tmp_path: Path) -> None:
    t = HostTree(tmp_path).mindie_llm("1.0.0")
    facts = _facts(t)
    assert facts.mindie is not None and facts.mindie.layout == "mindie-llm"
    assert facts.mindie.version is None and facts.mindie.parts == {"mindie-llm": "1.0.0"}
    (f,) = _judge(facts)
    assert f.status == "skip" and "names no MindIE release" in f.detail and "mindie-llm 1.0.0" in f.detail


def test_no_mindie_no_fact(tmp_path: Path) -> None:
    t = HostTree(tmp_path).driver()
    t.mkdir("/usr/local/Ascend/mindie")  # an empty base: nothing recorded
    assert _facts(t).mindie is None


def test_hostile_version_files_are_issues_not_crashes(tmp_path: Path) -> None:
    t = HostTree(tmp_path)
    t.write("/usr/local/Ascend/mindie/latest/version.info", "x" * (mindie_probe.MAX_VERSION_INFO + 1))
    facts = _facts(t)
    assert facts.mindie is None and any(i.kind == "oversized" and i.probe == "mindie" for i in facts.issues)
    t2 = HostTree(tmp_path / "2")
    t2.write("/usr/local/Ascend/mindie/latest/version.info", "Platform : aarch64\nmindie-llm: 1.0.0\n")
    facts = _facts(t2)
    assert facts.mindie is not None and facts.mindie.version is None
    assert any(i.kind == "malformed" for i in facts.issues)
    t3 = HostTree(tmp_path / "3")
    t3.write("/usr/local/Ascend/mindie/latest/version.info", "Ascend-mindie : rm -rf / ; echo\n")
    m = _facts(t3).mindie
    assert m is not None and m.version is None  # not one token: not a version
    # a link out of the root is followed inside the root only
    t4 = HostTree(tmp_path / "4")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "version.info").write_text("Ascend-mindie : MindIE 9.9.9\n", encoding="utf-8")
    t4.link("/usr/local/Ascend/mindie/latest", str(outside))
    m = _facts(t4).mindie
    assert m is None or m.version != "9.9.9"


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("Ascend-mindie:MIE .0123456789RCBT\n\t:=#")), max_size=2000))
def test_the_version_info_parser_never_raises(text: str) -> None:
    version, parts = mindie_probe.parse_version_info(text)
    assert version is None or (" " not in version and len(version) <= 64)
    assert all(k.startswith("mindie-") for k in parts)


def test_doctor_judges_mindie_against_its_rows(tmp_path: Path) -> None:
    # MindIE 2.1.RC1's release note: CANN 8.2.RC1, TorchNPU 7.1.0, HDK 25.2.0 / 25.0.RC1 / 24.1.0 / …
    t = HostTree(tmp_path).driver(driver_like_25_3("25.2.0"))
    t.toolkit("8.2.RC1")
    t.python_stack("2.1.0", "2.1.0.post13")  # a TorchNPU 7.1.0 build (branch v2.1.0-7.1.0)
    t.mindie("2.1.RC1.B020")
    (f,) = _judge(_facts(t))
    assert f.subject == "mindie 2.1.RC1" and f.status == "pass", f.detail
    assert "CANN 8.2.RC1" in f.detail and "TorchNPU release 7.1.0" in f.detail and "HDK 25.2.0" in f.detail
    # the same MindIE on another HDK and CANN: each value it does not name is said, with the statement
    t2 = HostTree(tmp_path / "2").driver(DRIVER_25_3_RC1)
    t2.toolkit("8.3.RC1")
    t2.python_stack("2.1.0", "2.1.0.post13")
    t2.mindie("2.1.RC1")
    (f,) = _judge(_facts(t2))
    assert f.status == "warn"
    assert "CANN 8.3.RC1 is not what mindie 2.1.RC1 names: 8.2.RC1" in f.detail
    assert "HDK 25.3.rc1 is not what mindie 2.1.RC1 names" in f.detail and "25.2.0" in f.detail
    # a test build no statement names
    t3 = HostTree(tmp_path / "3").mindie("2.0.T3.B010")
    (f,) = _judge(_facts(t3))
    assert f.status == "skip" and "no statement" in f.detail and "2.1.RC1" in f.detail


def test_mindie_rows_stated_as_prose_are_never_compared() -> None:
    # MindIE 3.0.0's table names "the HDK of CANN 8.5.0" (no version): only CANN and TorchNPU judge it
    facts = Facts(mindie=MindieFacts(path="/usr/local/Ascend/mindie", version_file="x", version="3.0.0"))
    (f,) = _judge(facts)
    assert f.status == "skip" and "none of the versions it names is on this host" in f.detail


def test_mindie_facts_round_trip(tmp_path: Path) -> None:
    facts = _facts(HostTree(tmp_path).mindie("2.2.RC1.B050"))
    assert facts.mindie is not None
    assert Facts.from_json(facts.to_json()) == facts
