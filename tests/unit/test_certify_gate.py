"""Certification as a CI gate (issue 16): exit codes by outcome, device modes, the records a
certificate keeps (checkpoint, stack choice, setup), error paths, quiet output, `cert diff` and
`cert replay`. Everything through the real CLI entry point or the real modules; no mocks."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from cannenv.certify import certificate as C
from cannenv.certify.stages import (
    EXIT_CODES,
    OUTCOMES,
    StagePlan,
    StageResult,
    exit_code,
    outcome,
    skipped,
)
from cannenv.cli import main

REPO = Path(__file__).resolve().parents[2]
A2 = REPO / "examples/hosts/a2-cann8.5-new-layout"


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(args)
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def _plan(sid: str) -> StagePlan:
    return StagePlan(id=sid, title=sid, level=3, needs="n")


def _res(sid: str, status: str, *, ran: bool = False) -> StageResult:
    """A result; a skip is decided before running unless ``ran``."""
    if status == "skip":
        return skipped(_plan(sid), "why", ran=ran)
    return StageResult(id=sid, title=sid, status=status, summary=status)  # type: ignore[arg-type]


# One run per outcome, built from real stage results.
RUNS: dict[str, list[StageResult]] = {
    "certified": [_res("a", "pass"), _res("b", "pass")],
    "partial": [_res("a", "pass"), _res("b", "skip")],
    "failed": [_res("a", "pass"), _res("b", "fail"), _res("c", "skip")],
    "not-certified": [_res("a", "skip", ran=True), _res("b", "skip")],
    "nothing-runnable": [_res("a", "skip"), _res("b", "skip")],
}


def _docs_table() -> dict[str, tuple[int, int]]:
    """The outcome -> exit table of docs/certify.md."""
    text = (REPO / "docs/certify.md").read_text(encoding="utf-8")
    section = text[text.index("### Outcome and exit code") :]
    rows = {}
    for m in re.finditer(r"^\| `([a-z-]+)` \|[^|]*\| (\d+) \| (\d+) \|$", section, re.M):
        rows[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return rows


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("name", OUTCOMES)
def test_outcome_exit_table_matches_the_docs(name: str, strict: bool) -> None:
    results = RUNS[name]
    assert outcome(results) == name
    documented = _docs_table()[name][1 if strict else 0]
    assert exit_code(results, strict=strict) == documented == EXIT_CODES[name][1 if strict else 0]


def test_docs_table_lists_every_outcome_and_nothing_certified_is_never_zero() -> None:
    table = _docs_table()
    assert set(table) == set(OUTCOMES)
    for name in ("not-certified", "nothing-runnable"):
        assert 0 not in table[name]
    # `cannenv certify --help` says the same.
    from cannenv.commands.certify import certify

    helped = dict(re.findall(r"([a-z-]+) (\d/\d)", certify.help or ""))
    assert {k: tuple(int(x) for x in v.split("/")) for k, v in helped.items()} == table


def test_nothing_runnable_through_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    """`certify perf --device npu` without an NPU: every stage skips before running -> exit 4."""
    if Path("/dev/davinci_manager").exists():
        pytest.skip("an NPU is present")
    for strict in ([], ["--strict"]):
        code, out, _ = _run(["certify", "perf", "--device", "npu", *strict], capsys)
        assert code == 4, out
        assert "outcome: nothing-runnable (exit 4" in out


def test_partial_through_the_cli_with_and_without_strict(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    args = ["certify", "llm", "--device", "cpu", "--dtype", "fp32"]
    code, out, _ = _run(args, capsys)
    assert code == 0 and "outcome: partial (exit 0)" in out
    code, out, _ = _run([*args, "--strict"], capsys)
    assert code == 1 and "outcome: partial (exit 1, --strict)" in out


# ---------------------------------------------------------------------------------------------
# Device mode and the doctor stage


def _cpu_only_tree(tmp_path: Path) -> Path:
    """The healthy A2 example host as a CPU-only CI runner: toolkit, NNAL, torch and torch_npu,
    but no driver, no firmware, no npu-smi and no /dev/davinci* nodes."""
    host = tmp_path / "cpu-only"
    shutil.copytree(A2, host, symlinks=True)
    tree = host / "tree"
    for rel in ("dev", "usr/local/Ascend/driver", "usr/local/Ascend/firmware", "usr/local/bin/npu-smi"):
        p = tree / rel
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        elif p.exists() or p.is_symlink():
            p.unlink()
    return host


def test_level1_cpu_passes_on_a_cpu_only_host_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    host = _cpu_only_tree(tmp_path)
    where = ["--root", str(host / "tree"), "--env-file", str(host / "host.env")]
    out_file = tmp_path / "c.json"
    # As the docs write it: CANNENV_NO_DEVICES=1 cannenv certify --level 1 --device cpu
    monkeypatch.setenv("CANNENV_NO_DEVICES", "1")
    code, out, _ = _run(
        ["certify", "--level", "1", "--device", "cpu", *where, "--out", str(out_file)], capsys
    )
    assert code == 0, out
    cert = C.load(out_file)
    assert cert.outcome == "certified" and cert.certified_stages == ("doctor",)
    doctor = cert.stages[0]
    assert doctor.metrics["device_checks"].startswith("skipped: --no-devices")
    # --device cpu alone skips the device checks as well.
    monkeypatch.delenv("CANNENV_NO_DEVICES")
    code, out, _ = _run(["certify", "--level", "1", "--device", "cpu", *where], capsys)
    assert code == 0, out
    # With an NPU expected (the default), the missing driver is a failure, as before.
    code, out, _ = _run(["certify", "--level", "1", *where], capsys)
    assert code == 1 and "driver-installed" in out


def test_stack_records_the_doctor_choice_and_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_file = tmp_path / "c.json"
    where = ["--root", str(A2 / "tree"), "--env-file", str(A2 / "host.env")]
    code, out, _ = _run(["certify", "--level", "1", *where, "--out", str(out_file)], capsys)
    assert code == 0, out
    cert = C.load(out_file)
    assert cert.stack.id == "a2-cann8.5.0-torch2.8.0-py3.11"
    assert cert.stack.how == "best-match" and "cann 8.5.0" in (cert.stack.reason or "")
    assert cert.stack.versions["cann"] == "8.5.0" and cert.stack.pins["cann"].version == "8.5.0"
    assert cert.host.versions["cann"] == "8.5.0" and cert.host.digest
    assert f"stack: {cert.stack.id} (best-match" in out
    # --stack: recorded as given.
    code, _, _ = _run(
        ["certify", "--level", "1", *where, "--stack", cert.stack.id, "--out", str(out_file)], capsys
    )
    assert C.load(out_file).stack.how == "option"


# ---------------------------------------------------------------------------------------------
# Error paths: bad input is exit 2 before anything runs


def test_missing_sign_key_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(["certify", "perf", "--sign-key", str(tmp_path / "none.pem")], capsys)
    assert code == 2 and "plan:" not in out and "does not exist" in err


def test_out_with_missing_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "no" / "such" / "cert.json"
    code, out, err = _run(["certify", "perf", "--out", str(target)], capsys)
    assert code == 2 and "plan:" not in out and "does not exist" in err
    assert not (tmp_path / "no").exists()  # never created


@pytest.mark.parametrize("content", [None, "config-only", "weights-only"])
def test_model_folder_without_a_checkpoint_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None
) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    if content == "config-only":
        (folder / "config.json").write_text('{"model_type": "llama"}')
    if content == "weights-only":
        (folder / "model.safetensors").write_bytes(b"x")
    code, out, err = _run(["certify", "llm", "--device", "cpu", "--model", str(folder)], capsys)
    assert code == 2 and "plan:" not in out
    assert ("no config.json" in err) if content != "config-only" else ("no weight file" in err)


def test_unsigned_certificate_with_pub_says_never_signed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, _ = _run(["cert", "keygen", str(tmp_path / "k.pem")], capsys)
    cert = tmp_path / "c.json"
    C.write(C.Certificate.build([_res("a", "pass")], command="certify", started_at=C.now()), cert)
    code, _, err = _run(["cert", "verify", str(cert), "--pub", str(tmp_path / "k.pem.pub")], capsys)
    assert code == 5
    assert "never signed" in err and "changed after it was written" not in err
    code, _, err = _run(["cert", "verify", str(cert), "--pub", str(tmp_path / "missing.pub")], capsys)
    assert code == 2


# ---------------------------------------------------------------------------------------------
# The checkpoint record (pure part; the end-to-end run is below, marked slow)


def test_checkpoint_record_has_its_config_and_weight_digests(tmp_path: Path) -> None:
    import hashlib

    from cannenv.certify.checkpoint import inspect

    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama", "vocab_size": 512}))
    (tmp_path / "model-00001-of-00002.safetensors").write_bytes(b"one")
    (tmp_path / "model-00002-of-00002.safetensors").write_bytes(b"two")
    (tmp_path / "model.safetensors.index.json").write_text("{}")
    (tmp_path / "README.md").write_text("not a weight")
    rec = inspect(str(tmp_path)).record()
    assert rec["config"]["vocab_size"] == 512 and rec["model_type"] == "llama"
    assert (
        rec["weights"]["model-00001-of-00002.safetensors"] == "sha256:" + hashlib.sha256(b"one").hexdigest()
    )
    assert set(rec["weights"]) == {
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
        "model.safetensors.index.json",
    }


@pytest.mark.slow
def test_model_certificate_records_the_checkpoint_and_output_is_quiet(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("transformers")
    from tests.helpers.checkpoints import tiny_llama

    tiny_llama(tmp_path / "ckpt")
    capfd.readouterr()
    out_file = tmp_path / "c.json"
    with pytest.raises(SystemExit) as exc:
        main(["certify", "llm", "--device", "cpu", "--model", str(tmp_path / "ckpt"), "--out", str(out_file)])
    out, err = capfd.readouterr()
    assert exc.value.code == 0, out + err
    assert "it/s" not in out + err and "Loading weights" not in out + err  # no progress bars
    assert (out + err).count("hint: run with --device npu") == 1  # a shared hint once
    cert = C.load(out_file)
    stage = next(s for s in cert.stages if s.id == "llm-model")
    rec = stage.metrics["checkpoint"]
    assert rec["config"]["vocab_size"] == 512  # the checkpoint's, not the built-in model's 1024
    assert set(rec["weights"]) == {"model.safetensors"} and rec["weights"]["model.safetensors"].startswith(
        "sha256:"
    )
    assert "config" not in stage.metrics and stage.metrics["input"]["seq_len"] == 64
    t = stage.metrics["timings"]
    assert {"worker_wall_s", "reference_s", "load_s", "first_forward_s"} <= set(t)
    llm = next(s for s in cert.stages if s.id == "llm")
    assert llm.metrics["config"]["vocab_size"] == 1024 and llm.duration_s != stage.duration_s


# ---------------------------------------------------------------------------------------------
# Quiet output, cert diff, replay


def test_shared_hint_is_printed_once(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["certify", "llm", "--device", "npu"], capsys)
    if Path("/dev/davinci_manager").exists():
        pytest.skip("an NPU is present")
    assert code == 4
    assert out.count("hint: run on an Atlas host") == 1 and out.count("SKIP") == 4


def test_cert_diff_summarises_before_details(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = [
        StageResult(id="llm", title="t", status="pass", summary="s", metrics={"logits": {"cosine": 0.9999}}),
        _res("kernels", "skip"),
    ]
    extra = [
        StageResult(id="llm", title="t", status="pass", summary="s", metrics={"logits": {"cosine": 0.999}}),
        _res("kernels", "pass"),
        StageResult(
            id="perf-bandwidth",
            title="t",
            status="skip",
            summary="s",
            metrics={f"m{i}": i for i in range(40)},
        ),
    ]
    C.write(C.Certificate.build(base, command="certify", started_at=C.now()), tmp_path / "a.json")
    C.write(C.Certificate.build(extra, command="certify", started_at=C.now()), tmp_path / "b.json")
    code, out, _ = _run(["cert", "diff", str(tmp_path / "a.json"), str(tmp_path / "b.json")], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "outcome: partial  →  partial"
    assert lines[1] == "stages only in A (0): -"
    assert lines[2] == "stages only in B (1): perf-bandwidth"
    assert lines[3] == "stages changed (1): kernels skip → pass"
    assert lines[4] == "stages with other differences (1): llm"
    assert "stages[llm].metrics.logits.cosine" in out
    assert "stages[perf-bandwidth]" not in out  # a one-sided stage is named once, not field by field
    assert len(lines) < 20
    code, out, _ = _run(
        ["cert", "diff", "--json", str(tmp_path / "a.json"), str(tmp_path / "b.json")], capsys
    )
    data = json.loads(out)
    assert data["summary"]["only_in_b"] == ["perf-bandwidth"] and data["summary"]["changed"] == {
        "kernels": ["skip", "pass"]
    }


def test_replay_lists_the_recorded_setup_and_plans_a_new_machine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "c.json"
    where = ["--root", str(A2 / "tree"), "--env-file", str(A2 / "host.env")]
    code, out, _ = _run(["certify", "--level", "1", *where, "--out", str(out_file)], capsys)
    assert code == 0, out
    # The record: every pin in install order, each file with its sha256 or "not in the matrix".
    code, out, _ = _run(["cert", "replay", str(out_file)], capsys)
    assert code == 0, out
    assert "stack: a2-cann8.5.0-torch2.8.0-py3.11 (best-match" in out
    steps = [ln for ln in out.splitlines() if re.match(r"^  \d+\. ", ln)]
    names = [ln.split()[1] for ln in steps]
    assert names.index("driver") < names.index("cann") < names.index("torch") < names.index("torch_npu")
    cert = C.load(out_file)
    arch = cert.host.summary["arch"]
    pinned = [p.artifacts[arch] for p in cert.stack.pins.values() if arch in p.artifacts]
    assert pinned and all(a.file in out for a in pinned)
    assert all((a.sha256 or "sha256 not in the matrix") in out for a in pinned)
    code, out, _ = _run(["cert", "replay", str(out_file), "--json"], capsys)
    data = json.loads(out)
    assert data["stack_id"] == cert.stack.id and data["steps"][0]["component"] in ("firmware", "driver")
    # The plan (cannenv.plan): the certified host itself needs nothing ...
    code, out, _ = _run(["cert", "replay", str(out_file), "--plan", *where], capsys)
    assert code == 0 and "nothing to do" in out, out
    # ... an older host needs the toolkit, then the Python packages (the plan module's order).
    old = REPO / "examples/hosts/a2-cann8.3-old-layout"
    code, out, _ = _run(
        [
            "cert",
            "replay",
            str(out_file),
            "--plan",
            "--root",
            str(old / "tree"),
            "--env-file",
            str(old / "host.env"),
        ],
        capsys,
    )
    assert code == 1, out
    assert f"the stack certificate {out_file} certifies" in out
    assert out.index(" cann ") < out.index(" python-packages ")
    # A changed certificate is not replayed.
    out_file.write_text(out_file.read_text().replace('"best-match"', '"option"'))
    code, _, _ = _run(["cert", "replay", str(out_file), "--plan"], capsys)
    assert code == 5


def test_lock_is_recorded_whole_and_its_digests_win_in_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cannenv.lock import Lock, LockedInstaller, write_lock
    from cannenv.matrix import load

    matrix = load()
    sid = "a2-cann8.5.0-torch2.8.0-py3.11"
    toolkit = matrix.stack(sid).components["cann"]
    digest = "ab" * 32
    lock = Lock(
        stack_id=sid,
        matrix_digest=matrix.digest,
        cannenv_version="test",
        os="ubuntu22.04",
        base_image="ubuntu:22.04",
        context_digest="cd" * 32,
        installers=(
            LockedInstaller(
                component="cann",
                version=toolkit.version,
                file="Ascend-cann-toolkit.run",
                sha256=digest,
                pinned=False,
            ),
        ),
        driver_range=">=25.0",
    )
    write_lock(tmp_path / "lock.json", lock)
    out_file = tmp_path / "c.json"
    where = ["--root", str(A2 / "tree"), "--env-file", str(A2 / "host.env")]
    code, out, _ = _run(
        ["certify", "--level", "1", *where, "--lock", str(tmp_path / "lock.json"), "--out", str(out_file)],
        capsys,
    )
    assert code == 0, out
    cert = C.load(out_file)
    assert cert.stack.how == "lock" and cert.stack.lock == lock.model_dump(mode="json")
    code, out, _ = _run(["cert", "replay", str(out_file)], capsys)
    assert f"cann {toolkit.version} (Ascend-cann-toolkit): Ascend-cann-toolkit.run sha256 {digest}" in out
    code, _, err = _run(
        ["certify", "--level", "1", "--lock", str(tmp_path / "lock.json"), "--stack", sid], capsys
    )
    assert code == 2 and "either --stack or --lock" in err


def test_a_certificate_with_malformed_pins_does_not_verify(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Pins come from a file anyone may write: a digest-consistent certificate whose pins are not
    the documented shape is refused with the field named (exit 5), never a traceback."""
    cert = C.Certificate.build([_res("a", "pass")], command="certify", started_at=C.now())
    body = cert.model_dump(mode="json")
    body["stack"]["pins"] = {"cann": {"version": "8.5.0", "artifacts": "not-a-dict"}}
    env = {"certificate": body, "sha256": C.digest_of(body), "signature": None}
    (tmp_path / "c.json").write_text(C.render(env))
    code, _, err = _run(["cert", "replay", str(tmp_path / "c.json")], capsys)
    assert code == 5 and "stack.pins.cann.artifacts" in err
