"""`cannenv explain`: signatures as data, the scan, causes decided by the doctor's facts, outputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from cannenv.cli import cli
from cannenv.errors import InputError
from cannenv.explain import signatures
from cannenv.explain.scan import Scanner, normalise, redact
from cannenv.resources import matrices_dir
from tests.helpers import hosts

TABLE = signatures.shipped()


def _run(*args: str, stdin: bytes | None = None) -> tuple[int, str]:
    r = CliRunner().invoke(cli, ["explain", *args], input=stdin, standalone_mode=False)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        if isinstance(r.exception, InputError):
            return 2, str(r.exception)
        raise r.exception
    return int(r.return_value or 0), r.output


def _json(*args: str) -> dict[str, Any]:
    code, out = _run(*args, "--json")
    doc = json.loads(out)
    assert doc["exit_code"] == code
    return dict(doc)


def _cannenv(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANNENV_")}
    return subprocess.run(
        [sys.executable, "-m", "cannenv", "explain", *args],
        input=stdin,
        capture_output=True,
        timeout=120,
        env=env,
        check=False,
    )


# --- the data ---------------------------------------------------------------------------------
def test_shipped_schema_is_in_sync() -> None:
    shipped = json.loads((matrices_dir() / "explain" / "schema.json").read_text())
    assert shipped == signatures.json_schema(), (
        "regenerate: python -m cannenv.explain.signatures --schema > matrices/explain/schema.json"
    )


def test_stable_cause_ids_and_every_reference_resolves() -> None:
    assert set(signatures.REQUIRED_CAUSES) <= set(TABLE.causes)
    for sig in TABLE.signatures:
        for c in sig.causes:
            assert c.id in TABLE.causes and c.sources
            assert all(TABLE.sources[s].url.startswith("https://") for s in c.sources)


def test_every_cause_id_is_used_by_a_signature() -> None:
    used = {c.id for s in TABLE.signatures for c in s.causes}
    assert set(signatures.REQUIRED_CAUSES) <= used


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda d: d["signatures"][0]["any"][0].update(regex="(unclosed"), "does not compile on the linear"),
        (lambda d: d["signatures"][0]["causes"][0].update(id="no-such-cause"), "unknown cause"),
        (lambda d: d["signatures"][0]["causes"][0].update(sources=["nope"]), "unknown source"),
        (lambda d: d["causes"].pop("oom"), "stable cause ids are missing: oom"),
        (lambda d: d["causes"]["oom"].update(checks=["no-check"]), "unknown check"),
        (lambda d: d["signatures"][0]["any"][0].pop("anchor"), "needs an anchor"),
    ],
)
def test_a_bad_signature_file_names_the_problem(tmp_path: Path, edit: Any, field: str) -> None:
    import yaml

    doc = yaml.safe_load(signatures.shipped_path().read_text())
    edit(doc)
    p = tmp_path / "sig.yaml"
    p.write_text(yaml.safe_dump(doc))
    with pytest.raises(InputError) as e:
        signatures.load(p)
    assert field in str(e.value) and str(p) in str(e.value)


# --- the scan ---------------------------------------------------------------------------------
def _scan(text: str | bytes) -> Any:
    s = Scanner(TABLE, total_hint=len(text))
    s.feed(text.encode() if isinstance(text, str) else text)
    s.end_input()
    return s.result()


def test_normalise_strips_ansi_and_splits_escaped_newlines() -> None:
    lines = normalise(b'\x1b[31mRuntimeError\x1b[0m: {"detail":"a\\nerror code is 561103\\nb"}\rX')
    assert lines == ['RuntimeError: {"detail":"a', "error code is 561103", 'b"}', "X"]


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("pip install --index-url https://bob:hunter2@mirror.example/simple", "hunter2"),
        ("HF_TOKEN=hf_abcdefghijklmnop error code is 561103", "hf_abcdefghijklmnop"),
        ("export AWS_SECRET_ACCESS_KEY='wJalrXUtnFEMI' EL0004", "wJalrXUtnFEMI"),
        ("GET https://x.example/a?token=s3cr3t&x=1 failed", "s3cr3t"),
        ("Authorization: Bearer abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz"),
    ],
)
def test_secrets_in_lines_are_redacted(line: str, secret: str) -> None:
    assert secret not in redact(line)


def test_codes_match_as_whole_words() -> None:
    assert "code:561103" in _scan("error code is 561103\n").hits
    assert "code:561103" not in _scan("request id 5611031 took 561103999 ns\n").hits


def test_large_input_is_examined_around_errors_and_repetition_costs_once(tmp_path: Path) -> None:
    info = b"INFO 01-30 18:03:36 [launcher.py:44] Route: /v1/models, Methods: GET\n"
    err = b"RuntimeError: call aclnnInplaceZero failed, error code is 561103\n"
    body = info * 60_000 + err * 50_000 + info * 60_000
    s = Scanner(TABLE, total_hint=len(body))
    for i in range(0, len(body), 1 << 20):
        s.feed(body[i : i + (1 << 20)])
    s.end_input()
    r = s.result()
    assert r.mode == "around-errors" and r.bytes_read == len(body)
    assert r.hits["code:561103"].lines == ["RuntimeError: call aclnnInplaceZero failed, error code is 561103"]


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=3000))
def test_any_bytes_scan_without_raising(data: bytes) -> None:
    r = _scan(data + b"\nerror code is 561103")
    assert "code:561103" in r.hits


# --- explaining, with and without host facts ---------------------------------------------------
def test_no_host_explains_and_names_what_would_decide() -> None:
    doc = _json("--no-host", "RuntimeError: call aclnnInplaceZero failed, error code is 561103")
    assert doc["exit_code"] == 0 and doc["host"]["source"] == "none"
    assert [m["signature"] for m in doc["matches"]] == ["ops-561103"]
    top = doc["causes"][0]
    assert top["id"] == "ops-package-missing-or-wrong" and top["status"] == "undecided"
    assert any("ops/kernels package" in d for d in top["decide"])
    assert top["sources"][0]["url"].startswith("https://github.com/vllm-project/vllm-ascend/issues/")


def test_a_cause_confirmed_on_the_host_gives_the_doctors_remedy(tmp_path: Path) -> None:
    t = hosts.kernels_wrong(tmp_path)
    env = tmp_path / "host.env"
    env.write_text("".join(f"{k}={v}\n" for k, v in t.env.items()))
    doc = _json("--root", str(t.root), "--env-file", str(env), "error code is 561103")
    assert doc["exit_code"] == 1 and doc["host"]["source"] == "root"
    top = doc["causes"][0]
    assert (top["id"], top["status"]) == ("ops-package-missing-or-wrong", "confirmed")
    assert "Ascend-cann-kernels-910b_8.3.RC2" in top["remedy"]
    assert any(b.startswith("doctor toolkit-ops: fail") for b in top["basis"])


def _tree(tmp_path: Path, driver: str) -> tuple[str, str]:
    t = hosts.HostTree(tmp_path / driver).os_release().driver(hosts.driver_like_25_3(driver)).npu_smi("a2")
    t.dev_nodes(2)
    inst = t.cann("8.5.0", ops="910b")
    t.nnal("8.5.0").python_stack("2.8.0", "2.8.0.post2").sourced(inst, nnal_abi=1)
    env = tmp_path / f"{driver}.env"
    env.write_text("".join(f"{k}={v}\n" for k, v in t.env.items()))
    return str(t.root), str(env)


TRAP = (
    "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):  88%|8/8\n"
    "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.96 GiB total capacity)\n"
)


def test_trap_memory_error_of_an_old_driver_is_decided_by_the_driver(tmp_path: Path) -> None:
    root, env = _tree(tmp_path, "25.2.0")
    doc = _json("--root", root, "--env-file", env, TRAP)
    assert doc["causes"][0]["id"] == "driver-too-old" and doc["causes"][0]["status"] == "confirmed"
    assert "25.5.1" in doc["causes"][0]["remedy"]
    root, env = _tree(tmp_path, "25.5.1")
    doc = _json("--root", root, "--env-file", env, TRAP)
    assert doc["causes"][0]["id"] == "oom" and doc["exit_code"] == 0
    assert {c["id"]: c["status"] for c in doc["causes"]}["driver-too-old"] == "ruled-out"


def test_nothing_matched_is_exit_3_and_blames_no_version() -> None:
    code, out = _run("--no-host", "the job stopped; see above")
    assert code == 3
    assert "No known signature" in out
    doc = _json("--no-host", "an error somewhere")
    assert doc["matches"] == [] and doc["causes"] == [] and doc["verdict"] == "no known signature matched"


def test_a_failure_no_signature_reads_is_the_residual_reading_still_exit_3() -> None:
    """A failure line no signature knows, naming nothing of another cause: read as not a version
    problem, undecided, with the line quoted; exit 3 all the same (no known signature matched)."""
    code, out = _run("--no-host", "Traceback (most recent call last):\nKeyError: 'model.layers.0'")
    assert code == 3
    assert "No known signature" in out and "KeyError" in out and "not-a-version-problem" in out
    doc = _json("--no-host", "KeyError: 'x' error")
    assert [m["signature"] for m in doc["matches"]] == ["residual-no-installation-sign"]
    assert [(c["id"], c["status"]) for c in doc["causes"]] == [("not-a-version-problem", "undecided")]
    assert doc["exit_code"] == 3 and doc["verdict"].startswith("no known signature matched; ")


def test_a_host_with_no_ascend_software_is_named_in_the_verdict() -> None:
    """The shipped bare example (FIXTURE tree, nothing Ascend installed): every cause's doctor checks
    skip, so the verdict names the host's state itself (the doctor's ascend-software finding) and
    its remedy, not "undecided" alone; cause ids and the exit code (0: nothing confirmed) are kept."""
    bare = Path("examples/hosts/bare-no-ascend")
    args = ("--root", str(bare / "tree"), "--env-file", str(bare / "host.env"))
    log = "tests/data/errors/xoscar-4-libhccl.txt"
    code, out = _run(*args, "--log", log)
    first = out.splitlines()[0]
    assert (
        first.startswith("cannenv explain: no Ascend software at all under ") and "install it first" in first
    )
    assert "remedy: install first the NPU driver" in out
    doc = _json(*args, "--log", log)
    assert code == doc["exit_code"] == 0
    assert [c["id"] for c in doc["causes"]] == ["env-not-sourced", "device-not-visible"]
    assert doc["verdict"].startswith("no Ascend software at all")


def test_an_empty_log_is_said_to_be_empty_with_exit_3(tmp_path: Path) -> None:
    """Nothing to match in 0 bytes: still exit 3 (nothing matched, docs/explain.md), but the answer
    says the input was empty instead of "no signature matches this text"."""
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    res = _cannenv("--no-host", "--log", str(empty))
    assert res.returncode == 3
    out = res.stdout.decode()
    assert out.startswith("cannenv explain: the input is empty (0 bytes read)")
    assert "The input holds no text" in out and "No known signature matches this text" not in out


def test_stdin_and_log_file_and_plog_folder(tmp_path: Path) -> None:
    code, out = _run(
        "--no-host",
        "-",
        stdin=b"EI0005: The arguments for collective communication are inconsistent between ranks\n",
    )
    assert code == 0 and "hccl-consistency" in out
    plog = tmp_path / "plog"
    (plog / "sub").mkdir(parents=True)
    (plog / "sub" / "plog-1.log").write_text(
        "[ERROR] HCCL(1,python):EI0019: listen on ip[10.0.0.1] and specific port[16666] fail\n"
    )
    (plog / "link").symlink_to("/etc/passwd")
    doc = _json("--no-host", "--log", str(plog))
    assert doc["causes"][0]["id"] == "hccl-port"
    assert any("a link" in s for s in doc["input"]["skipped"])


def test_bad_input_is_exit_2(tmp_path: Path) -> None:
    assert _run("--no-host")[0] == 2
    assert _run("--no-host", "--log", str(tmp_path / "missing.log"))[0] == 2
    assert _run("--no-host", "--facts", "x.json", "oops")[0] == 2


def test_junit_and_json_are_well_formed_with_hostile_text(tmp_path: Path) -> None:
    junit = tmp_path / "e.xml"
    text = "error code is 561103 \x1b]0;owned\x07 \x00\x08 \u202e"
    code, out = _run("--no-host", "--junit", str(junit), text)
    assert code == 0 and "\x1b" not in out and "\x00" not in out and "\u202e" not in out
    root = ET.parse(junit).getroot()
    case = root.find("testsuite/testcase")
    assert case is not None and case.get("name") == "ops-package-missing-or-wrong"


# --- hostile logs, through the real entry point (no traceback, exit 0/2) --------------------------
def test_hostile_logs(tmp_path: Path) -> None:
    binary = tmp_path / "bin.log"
    binary.write_bytes(bytes(range(256)) * 64 + b"\nerror code is 561103\n" + os.urandom(4096))
    r = _cannenv("--no-host", "--log", str(binary))
    assert r.returncode == 0 and b"Traceback" not in r.stderr and b"ops-561103" in r.stdout

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    r = _cannenv("--no-host", "--log", str(fifo))
    assert r.returncode == 2 and b"regular file" in r.stderr and b"Traceback" not in r.stderr

    root = tmp_path / "root"
    (root / "var/log").mkdir(parents=True)
    (root / "var/log/app.log").symlink_to("/etc/hostname")
    r = _cannenv("--root", str(root), "--log", str(root / "var/log/app.log"))
    assert r.returncode == 2 and b"inside --root" in r.stderr and b"Traceback" not in r.stderr


def test_a_100_mb_single_line_with_ansi(tmp_path: Path) -> None:
    big = tmp_path / "one-line.log"
    chunk = b"\x1b[32mINFO\x1b[0m step=1 loss=0.5 " * 1024
    with big.open("wb") as fh:
        for _ in range(100 * 1024 * 1024 // len(chunk)):
            fh.write(chunk)
        fh.write(b"RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB")
    r = _cannenv("--no-host", "--json", "--log", str(big))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["causes"][0]["id"] == "oom" and doc["input"]["mode"] == "around-errors"
    assert all(len(x) <= 302 for m in doc["matches"] for e in m["evidence"] for x in e["lines"])


def test_docs_list_every_signature_from_the_data() -> None:
    from cannenv.explain.render import DOC_BEGIN, DOC_END, render_signature_doc

    page = (Path(__file__).resolve().parents[2] / "docs" / "explain.md").read_text()
    section = page[page.index(DOC_BEGIN) : page.index(DOC_END) + len(DOC_END)] + "\n"
    assert section == render_signature_doc(TABLE), "regenerate: python -m cannenv.explain.render"
    for sig in TABLE.signatures:  # the knowledge tables' signatures are summarised, not listed
        assert sig.derived or f"`{sig.id}`" in section


# --- where users already are: doctor --log, fleet report --logs ------------------------------------
def _facts_json(tmp_path: Path, tree: hosts.HostTree, name: str) -> Path:
    env = tmp_path / f"{name}.env"
    env.write_text("".join(f"{k}={v}\n" for k, v in tree.env.items()))
    r = CliRunner().invoke(
        cli, ["facts", "--json", "--root", str(tree.root), "--env-file", str(env)], standalone_mode=False
    )
    assert r.exception is None, r.output
    out = tmp_path / "collection" / f"{name}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(r.output)
    return out


def test_doctor_log_adds_the_explained_cause_under_its_root_cause(tmp_path: Path) -> None:
    t = hosts.kernels_wrong(tmp_path / "h")
    env = tmp_path / "host.env"
    env.write_text("".join(f"{k}={v}\n" for k, v in t.env.items()))
    log = tmp_path / "job.log"
    log.write_text("RuntimeError: call aclnnInplaceZero failed, error code is 561103\n")
    r = CliRunner().invoke(
        cli,
        ["doctor", "--json", "--root", str(t.root), "--env-file", str(env), "--log", str(log)],
        standalone_mode=False,
    )
    assert r.exception is None, r.output
    doc = json.loads(r.output)
    explained = [f for f in doc["findings"] if f["id"] == "explained-error"]
    assert explained[0]["subject"] == "ops-package-missing-or-wrong" and explained[0]["status"] == "fail"
    assert explained[0]["caused_by"] == "toolkit-ops"
    log.write_text("KeyError: 'model.layers.0'\n")
    r = CliRunner().invoke(
        cli,
        ["doctor", "--json", "--root", str(t.root), "--env-file", str(env), "--log", str(log)],
        standalone_mode=False,
    )
    doc = json.loads(r.output)
    assert [f["status"] for f in doc["findings"] if f["id"] == "explained-error"] == ["skip"]


def test_fleet_report_groups_nodes_by_explained_error(tmp_path: Path) -> None:
    _facts_json(tmp_path, hosts.kernels_wrong(tmp_path / "n1"), "node1")
    _facts_json(tmp_path, hosts.kernels_wrong(tmp_path / "n2"), "node2")
    _facts_json(tmp_path, hosts.a2_cann85_new(tmp_path / "n3"), "node3")
    logs = tmp_path / "logs"
    (logs / "node2").mkdir(parents=True)
    (logs / "node1.log").write_text("error code is 561103\n")
    (logs / "node2" / "plog-1.log").write_text("[ERROR] call aclnnAdd failed, error code is 561103\n")
    (logs / "node3.log").write_text("RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\n")
    r = CliRunner().invoke(
        cli,
        ["fleet", "report", str(tmp_path / "collection"), "--logs", str(logs), "--json"],
        standalone_mode=False,
    )
    assert r.exception is None, r.output
    groups = json.loads(r.output)["explained"]
    assert groups[0] == {
        "signature": "ops-561103",
        "cause": "ops-package-missing-or-wrong",
        "status": "confirmed",
        "nodes": ["node1", "node2"],
    }
    assert groups[1]["cause"] == "oom" and groups[1]["nodes"] == ["node3"]


def test_saved_facts_decide_too(tmp_path: Path) -> None:
    facts = _facts_json(tmp_path, hosts.kernels_wrong(tmp_path / "h"), "node")
    doc = _json("--facts", str(facts), "EZ9999: Parse dynamic kernel config fail.")
    assert doc["host"]["source"] == "facts" and doc["exit_code"] == 1
    assert (doc["causes"][0]["id"], doc["causes"][0]["status"]) == (
        "ops-package-missing-or-wrong",
        "confirmed",
    )


def test_secrets_never_reach_any_output(tmp_path: Path) -> None:
    log = tmp_path / "env-dump.log"
    log.write_text(
        "HF_TOKEN=hf_supersecretvalue123 HCCL_PASSWORD=p4ss error code is 561103\n"
        "pip download https://alice:s3cret-pw@mirror.example/simple torch_npu: error code is 561103\n"
    )
    junit = tmp_path / "e.xml"
    code, out = _run("--no-host", "--log", str(log), "--junit", str(junit))
    _, js = _run("--no-host", "--log", str(log), "--json")
    for text in (out, js, junit.read_text()):
        assert "hf_supersecretvalue123" not in text and "p4ss" not in text and "s3cret-pw" not in text
    assert code == 0 and "<redacted>" in out


def test_text_names_the_host_versions_it_decided_on() -> None:
    """The text view says which driver/CANN/torch_npu decided the causes (the JSON's `host`), not only
    "the facts of the tree under --root"; found explaining an excerpt against examples/hosts."""
    repo = Path(__file__).resolve().parents[2]
    host = repo / "examples" / "hosts" / "broken-kernels-wrong-chip"
    code, out = _run(
        "--root",
        str(host / "tree"),
        "--env-file",
        str(host / "host.env"),
        "RuntimeError: call aclnnInplaceZero failed, error code is 561103",
    )
    assert code == 1
    [line] = [x for x in out.splitlines() if x.startswith("host: ")]
    assert line.startswith("host: the facts of the tree under --root: ")
    assert "driver 25.3.rc1" in line and "CANN 8.3.RC2" in line and "torch_npu 2.7.1" in line
    _, bare = _run("--no-host", "EI0005")
    assert "host: no host facts (--no-host)\n" in bare


def test_an_hccl_error_is_decided_with_the_multinode_checks(tmp_path: Path) -> None:
    """EI0006 on a node whose device link is DOWN: the error itself says the host runs multi-node jobs,
    so hccn-link decides `hccl-link` (it said "skip: single node" before, leaving it undecided);
    --multinode / --hccn-output are accepted as for the doctor (docs/multinode.md)."""
    from tests.helpers.multinode import Dev, NodeSpec, build_node

    tree = build_node(
        NodeSpec("n", {0: Dev("192.168.1.8"), 1: Dev("192.168.1.9", link="DOWN")}), tmp_path / "t"
    )
    repo = Path(__file__).resolve().parents[2]
    log = repo / "tests" / "data" / "errors" / "va-9447-ei0006-a3-two-nodes.txt"
    doc = _json("--root", str(tree.root), "--log", str(log))
    [link] = [c for c in doc["causes"] if c["id"] == "hccl-link"]
    assert link["status"] == "confirmed" and doc["exit_code"] == 1, link
    assert any("hccn-link: fail" in b for b in link["basis"])
    code, _ = _run("--root", str(tree.root), "--multinode", "--log", str(log))
    assert code == 1


def test_hccl_consistency_points_at_fleet_job() -> None:
    """Which ranks run another CANN is what `fleet job` judges (job-cann names each side); `fleet diff`
    compares two collections in time, not the nodes of one job."""
    cause = TABLE.causes["hccl-consistency"]
    assert "cannenv fleet job" in (cause.remedy or "") and "fleet diff" not in (cause.remedy or "")
    assert any("cannenv fleet job" in f for f in cause.facts)
