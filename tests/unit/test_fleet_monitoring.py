"""Monitoring that notices itself (issue 22): exit codes when collecting or reading fails, output
files refused in a missing directory, and the drift history `fleet collect --out` keeps
(`fleet report --since`). `fleet collect` runs real ansible-playbook: one host over the local
connection, one SSH host on a closed 127.0.0.1 port (unreachable at once)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers.fleet_hosts import DRIVER_24_1_RC1, HostSpec, build_tree

from cannenv.facts import Facts
from cannenv.fleet.collection import Collection, HostResult
from cannenv.fleet.history import keep_previous, parse_since, snapshots

STACK = "a2-cann8.2.rc1-torch2.6.0-py3.11"


def _cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cannenv", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def _facts(spec: HostSpec, tmp: Path) -> str:
    tree = build_tree(spec, tmp / f"tree-{spec.name}")
    proc = _cli("facts", "--json", "--root", str(tree))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _write_collection(
    folder: Path, facts: dict[str, str], finished_at: str, down: tuple[str, ...] = ()
) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    hosts = [HostResult(name=n, status="collected", facts_file=f"{n}.json") for n in facts]
    hosts += [HostResult(name=n, status="unreachable", reason="ssh: Connection refused") for n in down]
    for name, text in facts.items():
        (folder / f"{name}.json").write_text(text)
    manifest = Collection(finished_at=finished_at, hosts=tuple(hosts), root=folder)
    (folder / "collection.json").write_text(manifest.to_json())


# ------------------------------------------------------------------ fleet report exit codes


def test_a_folder_of_unreadable_facts_is_not_a_clean_report(tmp_path: Path) -> None:
    folder = tmp_path / "facts"
    folder.mkdir()
    (folder / "n1.json").write_text("{not json")
    (folder / "n2.json").write_text(json.dumps({**json.loads(Facts().to_json()), "schema_version": 99}))
    proc = _cli("fleet", "report", str(folder), "--json")
    assert proc.returncode == 2, proc.stderr  # the report is still printed whole
    nodes = {n["name"]: n for n in json.loads(proc.stdout)["nodes"]}
    assert {n["collect_status"] for n in nodes.values()} == {"invalid-facts"}
    # one good node beside an unreadable one: still 2 (the monitoring is blind on that node)
    (folder / "n3.json").write_text(Facts().to_json())
    assert _cli("fleet", "report", str(folder)).returncode == 2


def test_a_collection_where_no_host_answered_exits_6(tmp_path: Path) -> None:
    folder = tmp_path / "facts"
    _write_collection(folder, {}, "2026-12-01T08:00:00+00:00", down=("n1", "n2"))
    proc = _cli("fleet", "report", str(folder))
    assert proc.returncode == 6, proc.stdout + proc.stderr
    assert "2 unreachable" in proc.stdout
    # one node answered and passes: the unreachable one alone fails only with --strict
    _write_collection(
        folder, {"n0": _facts(HostSpec("n0"), tmp_path)}, "2026-12-01T09:00:00+00:00", down=("n1",)
    )
    assert _cli("fleet", "report", str(folder), "--check", "driver-installed").returncode == 0
    assert _cli("fleet", "report", str(folder), "--check", "driver-installed", "--strict").returncode == 1


@pytest.mark.parametrize("option", ["--prometheus", "--junit"])
def test_output_files_in_a_missing_directory_are_refused(tmp_path: Path, option: str) -> None:
    folder = tmp_path / "facts"
    folder.mkdir()
    (folder / "n1.json").write_text(Facts().to_json())
    typo = tmp_path / "node-exporter-typo" / "out.file"
    proc = _cli("fleet", "report", str(folder), option, str(typo))
    assert proc.returncode == 2 and option in proc.stderr and "does not exist" in proc.stderr
    assert not typo.parent.exists()  # nothing created
    doctor = _cli("doctor", "--facts", str(folder / "n1.json"), option, str(typo))
    assert doctor.returncode == 2 and option in doctor.stderr and not typo.parent.exists()
    ok = tmp_path / "out.file"
    assert _cli("fleet", "report", str(folder), option, str(ok)).returncode in (0, 1) and ok.is_file()


# ------------------------------------------------------------------ drift history


def test_history_keeps_dated_snapshots_and_report_since_shows_what_changed_when(tmp_path: Path) -> None:
    out = tmp_path / "facts"
    old_driver = _facts(HostSpec("n1", driver=DRIVER_24_1_RC1), tmp_path / "a")
    healthy = _facts(HostSpec("n1"), tmp_path / "b")
    other = _facts(HostSpec("n2"), tmp_path / "c")
    _write_collection(out, {"n1": old_driver, "n2": other}, "2026-11-20T08:00:00+00:00")
    keep_previous(out, keep=2)  # what `fleet collect` does before writing the next collection
    _write_collection(out, {"n1": old_driver, "n2": other}, "2026-11-27T08:00:00+00:00")
    keep_previous(out, keep=2)
    _write_collection(out, {"n1": healthy}, "2026-11-30T08:00:00+00:00", down=("n2",))
    assert [p.name for p in snapshots(out)] == ["20261120T080000Z", "20261127T080000Z"]
    assert sorted(p.name for p in (out / "history" / "20261127T080000Z").iterdir()) == [
        "collection.json",
        "n1.json",
        "n2.json",
    ]
    assert sorted(p.name for p in out.iterdir()) == ["collection.json", "history", "n1.json"]
    proc = _cli("fleet", "report", str(out), "--stack", STACK, "--since", "2026-11-25")
    text = proc.stdout
    assert "changes since 2026-11-25 00:00 UTC: 2 collection(s)" in text, text
    assert "at 2026-11-27 08:00:00 UTC:" in text and "at 2026-11-30 08:00:00 UTC:" in text
    earlier, later = text[: text.index("at 2026-11-30")], text[text.index("at 2026-11-30") :]
    assert "no changes" in earlier  # the same facts a week later
    assert "    driver upgraded: 24.1.rc1 -> 25.0.rc1.1" in later, later
    assert "    fixed fail stack-match: driver: stack" in later
    n2 = later[later.index("  n2: failing -> unreachable") :]
    assert n2.split("\n")[1].startswith("  0 added")  # unreachable: its findings unknown, not fixed
    data = json.loads(_cli("fleet", "report", str(out), "--since", "2026-11-25", "--json").stdout)
    assert [h["at"] for h in data["history"]] == ["2026-11-27T08:00:00+00:00", "2026-11-30T08:00:00+00:00"]
    # a third snapshot: only the newest two are kept
    keep_previous(out, keep=2)
    assert [p.name for p in snapshots(out)] == ["20261127T080000Z", "20261130T080000Z"]
    bad = _cli("fleet", "report", str(out), "--since", "last tuesday")
    assert bad.returncode == 2 and "--since" in bad.stderr


def test_parse_since() -> None:
    import datetime as dt

    now = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.timezone.utc)
    assert parse_since("7d", now) == now - dt.timedelta(days=7)
    assert parse_since("90m", now) == now - dt.timedelta(minutes=90)
    assert parse_since("2026-11-30", now) == dt.datetime(2026, 11, 30, tzinfo=dt.timezone.utc)
    # an offset is honoured and the answer is in UTC, so every comparison with a snapshot is aware
    when = parse_since("2026-11-30T08:00+01:00", now)
    assert when == dt.datetime(2026, 11, 30, 7, 0, tzinfo=dt.timezone.utc)
    assert when.utcoffset() == dt.timedelta(0)


# ------------------------------------------------------------------ fleet collect, real Ansible


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_collect_exit_codes_and_history_with_real_ansible(tmp_path: Path) -> None:
    pytest.importorskip("ansible_runner")
    local = f"here ansible_connection=local ansible_python_interpreter={sys.executable}\n"
    down = f"down ansible_host=127.0.0.1 ansible_port={_closed_port()} ansible_user=nobody\n"
    out = tmp_path / "facts"
    env = {**os.environ, "ANSIBLE_HOST_KEY_CHECKING": "False"}

    def collect(inventory: str) -> subprocess.CompletedProcess[str]:
        inv = tmp_path / "inventory.ini"
        inv.write_text(inventory)
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "cannenv",
                "fleet",
                "collect",
                "-i",
                str(inv),
                "--out",
                str(out),
                "--keep",
                "5",
            ],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
            env=env,
        )

    only_down = collect(down)
    assert only_down.returncode == 6, only_down.stdout + only_down.stderr
    assert "0/1 hosts collected" in only_down.stdout and "1 of 1 hosts not collected" in only_down.stderr
    both = collect(local + down)
    assert both.returncode == 1, both.stdout + both.stderr
    assert "1/2 hosts collected" in both.stdout
    ok = collect(local)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert len(snapshots(out)) == 2 and (out / "here.json").is_file()
    manifests = [json.loads((p / "collection.json").read_text()) for p in snapshots(out)]
    assert [[h["name"] for h in m["hosts"]] for m in manifests] == [["down"], ["down", "here"]]


def test_a_hostile_manifest_never_moves_or_removes_a_file_outside_the_folder(tmp_path: Path) -> None:
    outside = tmp_path / "precious.json"
    outside.write_text("{}")
    out = tmp_path / "facts"
    out.mkdir()
    (out / "n1.json").write_text(Facts().to_json())
    hosts = (
        HostResult(name="n1", status="collected", facts_file="n1.json"),
        HostResult(name="up", status="collected", facts_file="../precious.json"),
    )
    (out / "collection.json").write_text(
        Collection(finished_at="2026-11-30T08:00:00+00:00", hosts=hosts).to_json()
    )
    for keep in (1, 0):
        keep_previous(out, keep=keep)
        assert outside.read_text() == "{}"
        (out / "collection.json").write_text(
            Collection(finished_at="2026-12-01T08:00:00+00:00", hosts=hosts).to_json()
        )
