"""NNAL is an opt-in image layer (``--with-nnal``): the vendor publishes no sha256 for its installer,
so by default an image of a shipped stack leaves it out and needs no ``--allow-unpinned``; what the
image records (Dockerfile, environment, labels, image.json, SBOM, lock) says what is installed."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "cann_installer"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))

from click.testing import CliRunner, Result
from fixture_stack import standin_wheel
from make_fixture_installer import FixtureInstaller, make_installers
from shipped_matrix import as_the_vendor_serves, image_args, inject_download_digests

from cannenv import matrix
from cannenv.cli import cli
from cannenv.errors import IntegrityError
from cannenv.image import judge_verify, spec_from_stack
from cannenv.lock import load_lock

SHIPPED = "a2-cann8.5.0-torch2.7.1-py3.11"  # a SHIPPED stack id; its NNAL has no vendor digest
NNAL_RUN = "Ascend-cann-nnal_8.5.0_linux-x86_64.run"


def test_a_spec_names_nnal_only_when_asked() -> None:
    m = matrix.load()
    stack = m.stack(SHIPPED)
    assert stack.version("nnal") == "8.5.0"
    left_out = spec_from_stack(stack, m, arch="x86_64")
    assert [i.component for i in left_out.installers] == ["cann", "ops"]
    assert "nnal" not in left_out.components
    full = spec_from_stack(stack, m, arch="x86_64", nnal=True)
    assert [i.component for i in full.installers] == ["cann", "ops", "nnal"]
    assert full.components["nnal"] == "8.5.0" and full.installers[-1].file == NNAL_RUN


def test_render_of_a_shipped_stack_has_nnal_only_with_the_flag(tmp_path: Path) -> None:
    runner = CliRunner()
    wheel = str(standin_wheel(tmp_path / "w", "cannenv", "0.1.0", "cannenv_standin"))
    args = ["image", "render", SHIPPED, "--arch", "x86_64", "--cannenv-wheel", wheel]
    without = runner.invoke(cli, args)
    assert without.exit_code == 0, without.output
    assert "nnal" not in without.stdout.replace("(no NNAL: `cannenv image ... --with-nnal` adds it)", "")
    assert "ATB_HOME_PATH" not in without.stdout and "/nnal/" not in without.stdout
    note = [line for line in without.stderr.splitlines() if line.startswith("note: NNAL 8.5.0")]
    assert len(note) == 1, without.stderr
    assert (
        "--with-nnal" in note[0]
        and "--allow-unpinned" in note[0]
        and "No vendor manifest gives a sha256" in note[0]
    )
    with_ = runner.invoke(cli, [*args, "--with-nnal"])
    assert with_.exit_code == 0, with_.output
    assert f"bash /tmp/cann-installers/{NNAL_RUN}" in with_.stdout
    # CANN 8.5.0: its own cann-8.5.0/set_env.sh (ascend-toolkit/ paths go after 2026-12-30)
    assert ". /usr/local/Ascend/cann-8.5.0/set_env.sh && bash /tmp/cann-installers/" + NNAL_RUN in (
        with_.stdout
    )
    assert 'ATB_HOME_PATH="/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1"' in with_.stdout
    assert 'cannenv.component.nnal="8.5.0"' in with_.stdout
    assert f'cannenv.installer.nnal="{NNAL_RUN}"' in with_.stdout
    assert "note: NNAL" not in with_.stderr
    # the written context: image.json and the SBOM name no NNAL when it is left out
    assert runner.invoke(cli, [*args, "--out", str(tmp_path / "ctx")]).exit_code == 0
    info = json.loads((tmp_path / "ctx" / "image.json").read_text())
    assert [i["component"] for i in info["installers"]] == ["cann", "ops"]
    assert not [k for k in info["labels"] if "nnal" in k]
    assert "nnal" not in (tmp_path / "ctx" / "sbom.cdx.json").read_text().lower()
    assert not (tmp_path / "ctx" / "installers").exists() or NNAL_RUN not in {
        p.name for p in (tmp_path / "ctx" / "installers").iterdir()
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, FixtureInstaller]:
    return make_installers(tmp_path_factory.mktemp("runs"), "8.5.0", installed_bytes=4096, padding_bytes=4096)


@pytest.fixture(scope="module")
def served(
    runs: dict[str, FixtureInstaller], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, tuple[str, str]]]:
    """What a user downloads: the vendor's zips of toolkit and ops, and the NNAL .run (TEST FIXTURES)."""
    d = tmp_path_factory.mktemp("artifacts")
    return d, as_the_vendor_serves(runs, d)


@pytest.fixture(scope="module")
def downloaded(served: tuple[Path, dict[str, tuple[str, str]]]) -> Path:
    return served[0]


@pytest.fixture(scope="module")
def test_matrix(
    served: tuple[Path, dict[str, tuple[str, str]]], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """A test copy of the shipped matrix with the fixture zips' digests as the vendor's, for toolkit
    and ops only: as in the vendor's manifests, nothing for NNAL."""
    return inject_download_digests(tmp_path_factory.mktemp("m") / "matrices", served[1])


def refused(r: Result) -> bool:
    """The command stopped with an integrity refusal (exit 5), which the CLI boundary maps."""
    return isinstance(r.exception, IntegrityError) and r.exception.exit_code == 5


def lock_args(test_matrix: Path, downloaded: Path, tmp_path: Path) -> list[str]:
    wheel = standin_wheel(tmp_path / "w", "cannenv", "0.1.0", "cannenv_standin")
    # --no-resolve: offline (the Python pins are test_image_pinned.py's)
    return ["image", "lock", *image_args(SHIPPED, test_matrix, downloaded, wheel), "--no-resolve"]


def test_image_lock_of_a_shipped_stack_needs_no_allow_unpinned_and_records_no_nnal(
    runs: dict[str, FixtureInstaller], downloaded: Path, test_matrix: Path, tmp_path: Path
) -> None:
    from cannenv.image.sbom import inputs_from_lock, sbom_json

    args = lock_args(test_matrix, downloaded, tmp_path)
    r = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "l.json")])
    assert r.exit_code == 0, r.output
    lock = load_lock(tmp_path / "l.json")
    assert [(i.component, i.pinned) for i in lock.installers] == [("cann", True), ("ops", True)]
    assert not [n for n in lock.notes if "not pinned" in n]
    assert "nnal" not in sbom_json(inputs_from_lock(lock)).lower()
    assert "note: NNAL 8.5.0 (ATB, for LLM serving) is not in this image" in r.stderr


def test_with_nnal_needs_allow_unpinned_and_is_recorded_unpinned(
    runs: dict[str, FixtureInstaller], downloaded: Path, test_matrix: Path, tmp_path: Path
) -> None:
    args = [*lock_args(test_matrix, downloaded, tmp_path), "--with-nnal"]
    r = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "l.json")])
    assert isinstance(r.exception, IntegrityError) and r.exception.exit_code == 5, r.output
    msg, hint = str(r.exception), r.exception.hint or ""
    assert NNAL_RUN in msg and "NNAL 8.5.0" in msg and "list no NNAL package at all" in msg
    assert "--allow-unpinned" in hint and "drop --with-nnal" in hint
    assert not (tmp_path / "l.json").exists()
    r = CliRunner().invoke(cli, [*args, "--allow-unpinned", "--out", str(tmp_path / "l.json")])
    assert r.exit_code == 0, r.output
    lock = load_lock(tmp_path / "l.json")
    assert [(i.component, i.pinned) for i in lock.installers] == [
        ("cann", True),
        ("ops", True),
        ("nnal", False),
    ]
    assert lock.installers[-1].sha256 == runs["nnal"].sha256 and lock.installers[-1].file == NNAL_RUN
    assert any(n.startswith(f"{NNAL_RUN}: not pinned") for n in lock.notes)


def test_lock_check_flags_whether_nnal_is_included(
    downloaded: Path, test_matrix: Path, tmp_path: Path
) -> None:
    runner = CliRunner()
    args = lock_args(test_matrix, downloaded, tmp_path)
    without, with_ = tmp_path / "without.json", tmp_path / "with.json"
    assert runner.invoke(cli, [*args, "--out", str(without)]).exit_code == 0
    assert runner.invoke(cli, [*args, "--with-nnal", "--allow-unpinned", "--out", str(with_)]).exit_code == 0
    assert runner.invoke(cli, [*args, "--out", str(without), "--check"]).exit_code == 0
    r = runner.invoke(cli, [*args, "--out", str(with_), "--check"])
    assert refused(r) and f"NNAL: the lock includes {NNAL_RUN}, now left out (add --with-nnal)" in str(
        r.exception
    )
    r = runner.invoke(cli, [*args, "--with-nnal", "--allow-unpinned", "--out", str(without), "--check"])
    assert refused(r)
    assert f"NNAL: the lock leaves it out, now {NNAL_RUN} is included (drop --with-nnal)" in str(r.exception)
    # a plain re-lock keeps the contract too; --update records the change and says so
    before = without.read_bytes()
    r = runner.invoke(cli, [*args, "--with-nnal", "--allow-unpinned", "--out", str(without)])
    assert refused(r) and without.read_bytes() == before
    r = runner.invoke(cli, [*args, "--with-nnal", "--allow-unpinned", "--out", str(without), "--update"])
    assert r.exit_code == 0 and "changed: NNAL: the lock leaves it out" in r.stderr
    assert [i.component for i in load_lock(without).installers] == ["cann", "ops", "nnal"]


# ------------------------------------------------------------------------------------- verify


def _doctor_report(tree_root: Path, env: dict[str, str]) -> dict[str, object]:
    """`cannenv doctor --json --no-devices --stack SHIPPED` of a tree laid out as an image is."""
    from cannenv import checks
    from cannenv.checks.stack import choose_target, host_summary
    from cannenv.host import Host
    from cannenv.probes import collect
    from cannenv.report import Report

    facts = collect(Host(tree_root, env, True, 5.0))
    target = replace(choose_target(facts, matrix.load(), stack_id=SHIPPED), no_devices="--no-devices")
    report = Report.build(checks.run(facts, target), host=host_summary(facts), stack=target.choice)
    data: dict[str, object] = json.loads(report.to_json())
    return data


def _nnal_problems(problems: tuple[str, ...]) -> list[str]:
    return [p for p in problems if "nnal" in p.lower()]


def test_verify_accepts_an_image_left_without_nnal_and_still_judges_one_with_it(tmp_path: Path) -> None:
    from tests.helpers import hosts

    t = hosts.HostTree(tmp_path / "without", arch="x86_64").os_release()
    inst = t.cann("8.5.0", ops="910b")
    t.python_stack("2.7.1", "2.7.1.post2").sourced(inst)
    report = _doctor_report(t.root, dict(t.env))
    strict = judge_verify(report)  # as for an image that records an NNAL installer
    assert _nnal_problems(strict.problems), strict.problems  # the stack names NNAL 8.5.0: it is missing
    left_out = judge_verify(report, without_nnal=True)
    assert not _nnal_problems(left_out.problems), left_out.problems
    assert [p for p in strict.problems if p not in _nnal_problems(strict.problems)] == list(left_out.problems)
    assert any(n.startswith("nnal-cann reported 'fail'") for n in left_out.notes), left_out.notes
    assert any(n.startswith("stack-match [nnal]") for n in left_out.notes), left_out.notes
    # an NNAL that is there is judged as usual, whatever the image's labels say
    t = hosts.HostTree(tmp_path / "wrong", arch="x86_64").os_release()
    inst = t.cann("8.5.0", ops="910b")
    t.nnal("8.3.RC1").python_stack("2.7.1", "2.7.1.post2").sourced(inst, nnal_abi=1)
    wrong = judge_verify(_doctor_report(t.root, dict(t.env)), without_nnal=True)
    assert any("nnal-cann [version]" in p and "8.3.RC1" in p for p in wrong.problems), wrong.problems


def test_doctor_with_a_lock_judges_nnal_as_the_lock_built_it(
    downloaded: Path, test_matrix: Path, tmp_path: Path
) -> None:
    """`cannenv doctor --lock LOCK` judges against the stack as its image was built: a lock made
    without --with-nnal does not demand NNAL (nnal-cann skips), one made with it does."""
    from tests.helpers import hosts

    runner = CliRunner()
    args = lock_args(test_matrix, downloaded, tmp_path)
    without, with_ = tmp_path / "without.json", tmp_path / "with.json"
    assert runner.invoke(cli, [*args, "--out", str(without)]).exit_code == 0
    assert runner.invoke(cli, [*args, "--with-nnal", "--allow-unpinned", "--out", str(with_)]).exit_code == 0
    t = hosts.HostTree(tmp_path / "image", arch="x86_64").os_release()
    t.cann("8.5.0", ops="910b")
    t.python_stack("2.7.1", "2.7.1.post2")
    by_lock = {}
    for lock in (without, with_):
        r = runner.invoke(
            cli, ["doctor", "--root", str(t.root), "--lock", str(lock), "--no-devices", "--json"]
        )
        report = json.loads(r.stdout)
        assert report["stack"]["id"] == SHIPPED and report["stack"]["how"] == "lock"
        by_lock[lock] = report
    report = by_lock[without]
    assert "its image leaves NNAL out: built without --with-nnal" in report["stack"]["reason"]
    assert [f["status"] for f in report["findings"] if f["id"] == "nnal-cann"] == ["skip"]
    assert not [f for f in report["findings"] if f["id"] == "stack-match" and f.get("subject") == "nnal"]
    report = by_lock[with_]
    assert "leaves NNAL out" not in report["stack"]["reason"]
    assert [f["status"] for f in report["findings"] if f["id"] == "nnal-cann"] == ["fail"]
    assert [
        f["status"] for f in report["findings"] if f["id"] == "stack-match" and f.get("subject") == "nnal"
    ] == ["fail"]
    # the plan for that lock's target installs no NNAL, and says why
    r = runner.invoke(cli, ["plan", "--root", str(t.root), "--lock", str(without), "--json"])
    steps = [s for s in json.loads(r.stdout)["steps"] if s["component"] == "nnal"]
    assert [(s["action"], s["summary"]) for s in steps] == [
        ("leave", "the lock's image leaves NNAL out (built without --with-nnal)")
    ]
    r = runner.invoke(cli, ["plan", "--root", str(t.root), "--lock", str(with_), "--json"])
    assert [s["action"] for s in json.loads(r.stdout)["steps"] if s["component"] == "nnal"] == ["install"]
