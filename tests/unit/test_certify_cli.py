"""`cannenv certify ...` and `cannenv cert ...` through the real CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cannenv.certify import runner
from cannenv.cli import main
from cannenv.host import Host


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(args)
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def test_levels_plan() -> None:
    ids = [p.id for p in runner.plan(runner.CertifyOptions(level=1))]
    assert ids == ["doctor"]
    assert [p.id for p in runner.plan(runner.CertifyOptions(level=2))] == ["doctor", "kernels"]
    three = [p.id for p in runner.plan(runner.CertifyOptions(level=3))]
    assert three[:3] == ["doctor", "kernels", "llm"]
    assert {"fused-attention", "perf-matmul-bf16", "perf-matmul-fp16", "perf-bandwidth"} <= set(three)


def test_certify_llm_cpu_signed_then_verify_and_tamper(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("torch")
    code, out, _ = _run(["cert", "keygen", str(tmp_path / "k.pem")], capsys)
    assert code == 0
    cert = tmp_path / "cert.json"
    code, out, _ = _run(
        [
            "certify",
            "llm",
            "--device",
            "cpu",
            "--dtype",
            "fp32",
            "--out",
            str(cert),
            "--sign-key",
            str(tmp_path / "k.pem"),
        ],
        capsys,
    )
    assert code == 0, out
    assert out.index("plan:") < out.index("PASS")  # the plan is printed first
    assert "certified: llm" in out
    code, out, _ = _run(["cert", "verify", str(cert), "--pub", str(tmp_path / "k.pem.pub")], capsys)
    assert code == 0 and "matches --pub" in out
    text = cert.read_text()
    cert.write_text(text.replace('"fp32"', '"bf16"', 1))
    code, _, err = _run(["cert", "verify", str(cert)], capsys)
    assert code == 5 and "error:" in err


def test_certify_json_and_strict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(["certify", "perf", "--device", "npu", "--json"], capsys)
    env = json.loads(out)  # stdout is only the certificate; the plan went to stderr
    assert "plan:" in err
    stages = env["certificate"]["stages"]
    if not Path("/dev/davinci_manager").exists():
        assert code == 4  # nothing could run here: never exit 0
        assert all(s["status"] == "skip" for s in stages)
        assert env["certificate"]["outcome"] == "nothing-runnable"
        assert env["certificate"]["certified_stages"] == []
        code, _, _ = _run(
            ["certify", "perf", "--device", "npu", "--strict", "--out", str(tmp_path / "c.json")], capsys
        )
        assert code == 4
        assert (tmp_path / "c.json").exists()  # written whatever the outcome


def test_unknown_stack_is_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["certify", "llm", "--stack", "no-such-stack"], capsys)
    assert code == 3 and "no stack" in err


def test_bad_sign_key_fails_before_running(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = tmp_path / "k.pem"
    key.write_text("junk")
    code, out, _err = _run(["certify", "perf", "--sign-key", str(key)], capsys)
    assert code == 2 and "plan:" not in out


def test_cert_diff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cannenv.certify import certificate as C
    from cannenv.certify.stages import StageResult

    def make(cos: float, path: Path) -> None:
        st = StageResult(id="llm", title="t", status="pass", summary="s", metrics={"logits": {"cosine": cos}})
        C.write(C.Certificate.build([st], command="certify", started_at=C.now()), path)

    make(0.9999, tmp_path / "a.json")
    make(0.9990, tmp_path / "b.json")
    code, out, _ = _run(["cert", "diff", str(tmp_path / "a.json"), str(tmp_path / "b.json")], capsys)
    assert code == 0 and "stages[llm].metrics.logits.cosine" in out and "0.9999" in out
    code, out, _ = _run(["cert", "diff", str(tmp_path / "a.json"), str(tmp_path / "a.json")], capsys)
    assert "no differences" in out


def test_image_info(tmp_path: Path) -> None:
    from cannenv.certify.setup import image_info

    host = Host(root=tmp_path, env={}, allow_commands=False)
    assert image_info({}, host) is None
    (tmp_path / "etc/cannenv").mkdir(parents=True)
    (tmp_path / "etc/cannenv/image.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "labels": {"cannenv.stack": "a2-x", "cannenv.requires.driver": ">=24"},
            }
        )
    )
    info = image_info({"CANNENV_IMAGE_DIGEST": "sha256:abc"}, host)
    assert info is not None and info.stack == "a2-x" and info.digest == "sha256:abc"
    assert info.labels["cannenv.requires.driver"] == ">=24"


def test_missing_reference_packages_are_a_skip(monkeypatch: pytest.MonkeyPatch) -> None:
    """No numpy/torch here (the optional `llm` extra): a skip that says what to install, not a failure."""
    from cannenv.certify import worker

    monkeypatch.setattr(worker, "REFERENCE_MODULES", ("numpy", "cannenv_no_such_module"))
    options = runner.CertifyOptions(device="cpu")
    plans = [p for p in runner.plan(options) if p.id == "llm" or p.id.startswith("perf-")]
    results = runner.run(plans, options, Host(root=Path("/"), env={}, allow_commands=False))
    assert results and all(r.status == "skip" for r in results)
    assert all("cannenv_no_such_module not installed" in r.reasons[0] for r in results)
    assert all(r.hint and "cannenv[llm]" in r.hint for r in results)


def test_doctor_stage_with_nothing_judged_is_a_skip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cannenv import checks
    from cannenv.report import Finding

    skipped = Finding(id="driver-version", status="skip", severity="info", title="t", detail="no driver")
    monkeypatch.setattr(checks, "run", lambda facts, target: [skipped])
    options = runner.CertifyOptions(level=1)
    ctx = runner.RunContext(options, Host(root=tmp_path, env={}, allow_commands=False))
    (result,) = runner.run(runner.plan(options), options, context=ctx)
    assert result.status == "skip" and not result.certified
    assert "no doctor check could run here" in result.reasons[0]


def test_a_skip_shows_the_reasons_its_summary_does_not_name() -> None:
    from cannenv.certify.stages import StagePlan, StageResult, skipped
    from cannenv.commands.certify import _ResultRenderer

    _render_result = _ResultRenderer()
    plan = StagePlan(id="kernels", title="t", level=2, needs="n")
    one = _render_result(skipped(plan, "no CANN toolkit"))
    assert "no CANN toolkit" in one and "reason:" not in one  # said once, in the summary
    many = StageResult(
        id="kernels",
        title="t",
        status="skip",
        summary="skipped: no kernel ran",
        reasons=("matmul skipped: written for a2, a3; Ascend950 is family 950",),
    )
    assert "reason: matmul skipped: written for a2, a3" in _render_result(many)
