"""`cannenv doctor`, `facts`, `env` end to end through the CLI, in subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import hosts

REPO = Path(__file__).resolve().parents[2]


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    e = {"PATH": os.environ.get("PATH", "/usr/bin"), "NO_COLOR": "1", "PYTHONPATH": str(REPO)}
    e.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "cannenv", *args], capture_output=True, text=True, env=e, timeout=120, cwd=REPO
    )


def _tree(tmp_path: Path, build: object) -> tuple[Path, Path]:
    tree = build(tmp_path / "tree")  # type: ignore[operator]
    return tree.root, tree.env_file(tmp_path / "host.env")


def test_doctor_never_imports_torch_or_docker_and_warm_never_pydantic(tmp_path: Path) -> None:
    """torch and docker: never. pydantic (and rich, PyYAML): not on a warm run, whose matrix comes
    from the validated-matrix cache — the doctor's path is plain dataclasses (cannenv/values.py);
    pydantic validates only data read from outside (a cold cache validates the shipped matrix)."""
    root, env = _tree(tmp_path, hosts.a2_cann85_new)
    code = (
        "import sys, runpy\n"
        f"sys.argv=['cannenv','doctor','--json','--root',{str(root)!r},'--env-file',{str(env)!r}]\n"
        "from cannenv.cli import main\n"
        "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
        "tops = ('torch','docker','torch_npu','pydantic','pydantic_core','rich','yaml')\n"
        "bad = sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in tops})\n"
        "print('IMPORTED', bad, file=sys.stderr)\n"
    )
    run_env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(REPO),
        "CANNENV_CACHE_DIR": str(tmp_path / "cache"),
    }
    imported = []
    for _ in ("cold", "warm"):
        p = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120, env=run_env
        )
        assert "IMPORTED [" in p.stderr, p.stderr[-2000:]
        imported.append(p.stderr.split("IMPORTED ", 1)[1].splitlines()[0])
        assert json.loads(p.stdout)["summary"]["fail"] == 0
    cold, warm = imported
    assert "torch" not in cold and "docker" not in cold, cold
    assert warm == "[]", warm


def test_healthy_tree_exit_0_and_json_schema(tmp_path: Path) -> None:
    root, env = _tree(tmp_path, hosts.a2_cann85_new)
    p = _cli("doctor", "--json", "--root", str(root), "--env-file", str(env))
    assert p.returncode == 0, p.stdout + p.stderr
    doc = json.loads(p.stdout)
    assert doc["stack"]["id"] == "a2-cann8.5.0-torch2.8.0-py3.11" and doc["stack"]["how"] == "best-match"
    assert doc["host"]["cann"] == "8.5.0" and doc["host"]["soc"] == "Ascend910B4"


def test_broken_tree_exit_1_junit_and_table(tmp_path: Path) -> None:
    root, env = _tree(tmp_path, hosts.driver_too_old)
    junit = tmp_path / "out" / "doctor.xml"
    junit.parent.mkdir()  # an output file's directory must exist (issue 22: a typo is refused)
    # driver 24.1.rc2.2 with CANN 8.2.RC1: no vendor statement covers it -> a warning, which
    # --strict turns into exit 1 (before the vendor-rules rework it was a plain failure)
    p = _cli("doctor", "--strict", "--root", str(root), "--env-file", str(env), "--junit", str(junit))
    assert p.returncode == 1
    assert (
        "install the recommended Ascend HDK" in p.stdout.replace("\n", " ").replace("│", " ")
        or "driver-cann" in p.stdout
    )
    assert "\x1b[" not in p.stdout
    assert "cannenv.doctor.driver-cann" in junit.read_text()


def test_check_subset_list_and_unknown_check(tmp_path: Path) -> None:
    root, env = _tree(tmp_path, hosts.driver_too_old)
    p = _cli("doctor", "--json", "--check", "firmware-driver", "--root", str(root), "--env-file", str(env))
    ids = {f["id"] for f in json.loads(p.stdout)["findings"]}
    assert ids == {"firmware-driver"} and p.returncode == 0  # firmware outside range is a warning ...
    s = _cli("doctor", "--check", "firmware-driver", "--strict", "--root", str(root), "--env-file", str(env))
    assert s.returncode == 1  # ... which fails with --strict
    listing = _cli("doctor", "--list")
    assert listing.returncode == 0 and "driver-cann" in listing.stdout and "abi-preflight" in listing.stdout
    bad = _cli("doctor", "--check", "no-such-check")
    assert bad.returncode == 3 and "Traceback" not in bad.stderr


def test_facts_round_trip_and_doctor_on_saved_facts(tmp_path: Path) -> None:
    root, env = _tree(tmp_path, hosts.torch_npu_mismatch)
    p = _cli("facts", "--json", "--root", str(root), "--env-file", str(env))
    assert p.returncode == 0
    saved = tmp_path / "host.json"
    saved.write_text(p.stdout)
    d = _cli("doctor", "--json", "--strict", "--facts", str(saved))
    assert d.returncode == 1  # torch_npu 2.8.0 (TorchNPU 7.2.0) on CANN 8.5.0: unknown -> warning
    tnc = [f for f in json.loads(d.stdout)["findings"] if f["id"] == "torch-npu-cann"]
    assert tnc[0]["remedy"] == "pip install torch-npu==2.8.0.post2"


def test_bad_inputs_are_errors_not_tracebacks(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": 1, "driver": {"path": 3}}')
    p = _cli("doctor", "--facts", str(bad))
    assert p.returncode == 2 and "driver" in p.stderr and "Traceback" not in p.stderr
    assert _cli("doctor", "--root", str(tmp_path / "nope")).returncode == 3
    assert _cli("doctor", "--stack", "a2-cann8.3.rc1-torch2.7", "--root", str(tmp_path)).returncode == 3
    envf = tmp_path / "e.env"
    envf.write_text("NOT A LINE\n")
    e = _cli("doctor", "--root", str(tmp_path), "--env-file", str(envf))
    assert e.returncode == 2 and "e.env:1" in e.stderr


def test_lock_file_selects_the_stack(tmp_path: Path) -> None:
    root, env = _tree(tmp_path, hosts.a2_cann85_new)
    lock = tmp_path / "lock.yaml"
    lock.write_text("stack_id: a2-cann8.5.0-torch2.7.1-py3.11\nmatrix_digest: sha256:" + "0" * 64 + "\n")
    p = _cli("doctor", "--json", "--lock", str(lock), "--root", str(root), "--env-file", str(env))
    doc = json.loads(p.stdout)
    assert doc["stack"]["how"] == "lock" and doc["stack"]["id"] == "a2-cann8.5.0-torch2.7.1-py3.11"
    assert p.returncode == 1  # torch 2.8.0 installed, the locked stack pins 2.7.1: an explicit target fails


def test_env_both_layouts_and_shells(tmp_path: Path) -> None:
    old = hosts.a2_cann83_old(tmp_path / "old")
    p = _cli("env", "--root", str(old.root))
    assert p.returncode == 0
    assert "export ASCEND_HOME_PATH=/usr/local/Ascend/ascend-toolkit/latest" in p.stdout
    assert "export ASCEND_OPP_PATH=/usr/local/Ascend/ascend-toolkit/latest/opp" in p.stdout
    assert "/usr/local/Ascend/driver/lib64/driver" in p.stdout
    new = hosts.a2_cann85_new(tmp_path / "new")
    q = _cli("env", "--root", str(new.root), "--shell", "fish")
    assert "set -gx ASCEND_HOME_PATH /usr/local/Ascend/cann-8.5.0" in q.stdout
    assert "set -gx ATB_HOME_PATH /usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1" in q.stdout
    # the sh output is valid sh and sets what it says
    r = subprocess.run(
        ["sh", "-c", p.stdout + '\necho "$ASCEND_TOOLKIT_HOME|$LD_LIBRARY_PATH"'],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
        check=True,
    )
    home, ld = r.stdout.strip().split("|")
    assert home == "/usr/local/Ascend/ascend-toolkit/latest" and ld.startswith(home + "/tools/aml/lib64")
    assert _cli("env", "--root", str(tmp_path)).returncode == 3
