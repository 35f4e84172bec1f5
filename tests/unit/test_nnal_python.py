"""Issue 30: NNAL's Python library (torch_atb) installs only on Python 3.10 and 3.11 for CANN 8.1.RC1 …
9.1.0 (ATB's installer, hicann/ascend-transformer-boost scripts/install.sh on each release branch).
A stack pinning NNAL on another Python is a rule problem unless it excludes torch_atb; the doctor says
what that means on a host."""

from __future__ import annotations

import dataclasses

from click.testing import CliRunner

from cannenv.checks import Target
from cannenv.checks.cann import NNAL_CANN
from cannenv.cli import cli
from cannenv.facts import CannFacts, CannInstall, Facts, NnalFacts, PythonFacts
from cannenv.matrix import load


def test_the_statement_and_its_source() -> None:
    m = load()
    (lim,) = m.python_limits
    assert (lim.component, lim.library, lim.python) == ("nnal", "torch_atb", ("3.10", "3.11"))
    assert "9.0.0" in lim.cann and "9.1.0" in lim.cann and "8.0.0" not in lim.cann
    src = m.sources["ATB-INSTALL"]
    assert "Only Python 3.10, and 3.11 are supported." in src.title
    assert "tag v9.0.0" in (src.where or "") and "br_release_cann_9.1.0_20261223" in (src.where or "")
    assert [r.library for r in m.python_limits_broken("nnal", "9.0.0", "3.12")] == ["torch_atb"]
    assert m.python_limits_broken("nnal", "9.0.0", "3.11") == []
    assert m.python_limits_broken("nnal", "8.0.0", "3.12") == []  # no statement for 8.0.0: nothing said


def test_shipped_py312_stacks_pin_nnal_without_torch_atb_and_lint_would_flag_them_otherwise() -> None:
    m = load()
    flagged = []
    for s in m.stacks:
        nnal = s.components.get("nnal")
        if nnal is None:
            continue
        assert m.stack_problems(s) == [p for p in m.stack_problems(s) if "torch_atb" not in p]
        bare = dataclasses.replace(
            s, components={**s.components, "nnal": dataclasses.replace(nnal, excludes=())}
        )
        if any("torch_atb" in p for p in m.stack_problems(bare)):
            flagged.append(s.id)
            assert "torch_atb" in nnal.excludes
            (note,) = m.python_limit_lines(s)[1]
            assert note.endswith("this stack (Python 3.12) installs nnal without torch_atb")
    assert flagged == ["a2-cann9.0.0-torch2.8.0-py3.12", "a3-cann9.0.0-torch2.9.0-py3.12"]
    res = CliRunner().invoke(cli, ["matrix", "show", "a2-cann9.0.0-torch2.8.0-py3.12"])
    assert (
        "note: nnal 9.0.0's Python library torch_atb installs only on Python 3.10, 3.11 [ATB-INSTALL]"
        in res.output
    )


def test_lint_names_a_stack_that_keeps_torch_atb_on_python_3_12() -> None:
    m = load()
    s = m.stack("a2-cann9.0.0-torch2.8.0-py3.12")
    nnal = s.components["nnal"]
    bare = dataclasses.replace(s, components={**s.components, "nnal": dataclasses.replace(nnal, excludes=())})
    (p,) = [p for p in m.stack_problems(bare) if "torch_atb" in p]
    assert p == (
        "nnal 9.0.0's Python library torch_atb installs only on Python 3.10, 3.11 [ATB-INSTALL]; "
        "the stack pins Python 3.12 (exclude it: `excludes: [torch_atb]` on nnal)"
    )


def _facts(python: str, packages: dict[str, str]) -> Facts:
    inst = CannInstall(path="/usr/local/Ascend/cann-9.0.0", layout="cann", version="9.0.0")
    return Facts(
        cann=CannFacts(
            installs=(inst,),
            active=inst.path,
            nnal=NnalFacts(path="/usr/local/Ascend/nnal/atb", version="9.0.0"),
        ),
        python=PythonFacts(version=python, packages=packages),
    )


def test_doctor_says_what_python_3_12_means_for_nnal() -> None:
    target = Target(matrix=load())
    by = {f.subject: f for f in NNAL_CANN.run(_facts("3.12.3", {}), target)}
    assert by["version"].status == "pass"
    assert by["python"].status == "pass"
    assert (
        "libatb.so is usable" in by["python"].detail
        and "torch_atb installs only on Python 3.10, 3.11" in by["python"].detail
    )
    by = {f.subject: f for f in NNAL_CANN.run(_facts("3.12.3", {"torch-atb": "0.0.1"}), target)}
    assert by["python"].status == "warn" and by["python"].detail.startswith(
        "torch_atb 0.0.1 is installed on Python 3.12.3"
    )
    assert "python" not in {
        f.subject for f in NNAL_CANN.run(_facts("3.11.9", {"torch-atb": "0.0.1"}), target)
    }
