"""Adversarial suite (issue 10): a ``--root`` tree is data, never code, and nothing is read outside it.

Every test here builds a hostile input on disk and runs the real code on it: the CLI in a
subprocess (with an address-space limit and a wall-clock timeout where the attack is about
resources), or the probes in-process on a real tree. Each one fails on the code before issue 10.
See docs/security.md for the threat model these tests hold cannenv to.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cannenv.host import Host
from cannenv.probes import collect
from tests.helpers import hosts
from tests.helpers.unprivileged import as_nobody

REPO = Path(__file__).resolve().parents[2]
SECRET = "OUTSIDE-THE-ROOT-7f3a"
"""Written only into files outside the probed root: it must never appear in the facts."""


def _limits(address_space: int) -> None:  # pragma: no cover - runs in the child
    resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))


def cli(
    *args: str, timeout: float = 120, address_space: int | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``cannenv ARGS`` in a subprocess, optionally under an address-space limit (RLIMIT_AS)."""
    e = {"PATH": os.environ.get("PATH", "/usr/bin"), "NO_COLOR": "1", "PYTHONPATH": str(REPO)}
    e.update(env or {})
    if "CANNENV_CACHE_DIR" in os.environ:
        e["CANNENV_CACHE_DIR"] = os.environ["CANNENV_CACHE_DIR"]
    return subprocess.run(
        [sys.executable, "-m", "cannenv", *args],
        capture_output=True,
        text=True,
        env=e,
        timeout=timeout,
        cwd=REPO,
        preexec_fn=(lambda: _limits(address_space)) if address_space else None,
        check=False,
    )


def _host(tree: hosts.HostTree) -> Host:
    return Host(tree.root, dict(tree.env), True, 5.0)


def _outside(tmp_path: Path) -> Path:
    """A directory beside the root holding files a hostile tree points at."""
    out = tmp_path / "outside"
    (out / "etc").mkdir(parents=True, exist_ok=True)
    (out / "etc/os-release").write_text(f'ID={SECRET}\nPRETTY_NAME="{SECRET}"\n')
    (out / "version.info").write_text(f"Version={SECRET}\npackage_version={SECRET}\n")
    (out / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {SECRET}\nVersion: 6.6.6\n")
    (out / "vendor").write_text("0x19e5\n")
    (out / "device").write_text("0xd802\n")
    return out


# ---------------------------------------------------------------- critical 1: nothing is run


def _trap_tree(tmp_path: Path) -> hosts.HostTree:
    """A healthy-looking tree whose npu-smi, gcc, cmake and python would leave a marker if run."""
    tree = hosts.a2_cann85_new(tmp_path / "tree")
    trap = '#!/bin/sh\ntouch "{marker}"\necho "Version 99.9"\n'
    for exe in ("usr/local/bin/npu-smi", "usr/bin/gcc", "usr/bin/cmake", "usr/bin/python3"):
        p = tree.root / exe
        p.parent.mkdir(parents=True, exist_ok=True)
        p.unlink(missing_ok=True)
        p.write_text(trap.format(marker=tmp_path / f"RAN-{p.name}"))
        p.chmod(0o755)
    return tree


def test_doctor_root_runs_nothing_from_the_tree(tmp_path: Path) -> None:
    tree = _trap_tree(tmp_path)
    env = tree.env_file(tmp_path / "host.env")
    # the tree's PATH points into the tree: which() finds the traps there, and still runs nothing
    for args in (("doctor", "--json"), ("facts", "--json")):
        r = cli(*args, "--root", str(tree.root), "--env-file", str(env))
        assert r.returncode in (0, 1), r.stderr
    assert sorted(p.name for p in tmp_path.glob("RAN-*")) == []
    assert not (tree.root / "NPU-SMI-WAS-RUN").exists()
    facts = json.loads(cli("facts", "--json", "--root", str(tree.root), "--env-file", str(env)).stdout)
    # devices came from the capture the tree carries, gcc/cmake stay unknown (not run)
    assert facts["devices"]["npu_smi"]["message"].startswith("captured output read from")
    assert facts["devices"]["family"] == "a2" and facts["os"]["gcc"] is None


def test_a_tree_link_to_a_host_binary_is_not_run(tmp_path: Path) -> None:
    """``usr/local/bin/npu-smi -> /usr/bin/touch``: resolved inside the tree, and never run."""
    tree = hosts.HostTree(tmp_path / "tree").driver()
    tree.link("/usr/local/bin/npu-smi", "/usr/bin/touch")
    tree.write("/usr/bin/touch", "#!/bin/sh\ntouch " + str(tmp_path / "RAN") + "\n", mode=0o755)
    f = collect(_host(tree))
    assert not (tmp_path / "RAN").exists()
    assert f.devices.npu_smi is not None and f.devices.npu_smi.missing
    assert "--npu-smi-output" in f.devices.npu_smi.message


def test_host_run_refuses_for_a_tree(tmp_path: Path) -> None:
    res = Host(tmp_path, {}, True, 5.0).run(["/bin/touch", str(tmp_path / "RAN")])
    assert res.missing and not res.ok and not (tmp_path / "RAN").exists()


def test_python_option_is_refused_for_a_tree(tmp_path: Path) -> None:
    tree = _trap_tree(tmp_path)
    r = cli("facts", "--root", str(tree.root), "--python", str(tree.root / "usr/bin/python3"))
    assert r.returncode == 2 and "--site-packages" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "RAN-python3").exists()


def test_npu_smi_output_gives_device_facts(tmp_path: Path) -> None:
    tree = hosts.HostTree(tmp_path / "tree").driver()
    info = hosts.NPU_SMI_DATA / "a3_info.txt"
    board = hosts.NPU_SMI_DATA / "a3_board.txt"
    r = cli(
        "facts",
        "--json",
        "--root",
        str(tree.root),
        "--npu-smi-output",
        str(info),
        "--npu-smi-board",
        str(board),
    )
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)["devices"]
    assert d["family"] == "a3" and d["soc"] == "Ascend910_9392" and len(d["chips"]) > 1
    r = cli("facts", "--root", str(tree.root), "--npu-smi-output", str(tmp_path / "nope.txt"))
    assert r.returncode == 4 or "does not exist" in r.stderr
    assert "Traceback" not in r.stderr


def test_plan_takes_the_captured_npu_smi_output_too(tmp_path: Path) -> None:
    """`plan --root` judges devices as the doctor does: from a captured output, never by running."""
    tree = hosts.HostTree(tmp_path / "tree").driver()
    info, board = hosts.NPU_SMI_DATA / "a3_info.txt", hosts.NPU_SMI_DATA / "a3_board.txt"
    args = ["--root", str(tree.root), "--stack", "a3-cann8.5.0-torch2.7.1-py3.11", "--json"]
    r = cli("plan", *args, "--npu-smi-output", str(info), "--npu-smi-board", str(board))
    assert r.returncode in (0, 1), r.stderr
    assert json.loads(r.stdout)["stack"] == "a3-cann8.5.0-torch2.7.1-py3.11"
    both = cli("plan", "--facts", str(info), "--npu-smi-output", str(info), "--stack", "x")
    assert both.returncode == 2 and "saved --facts" in both.stderr and "Traceback" not in both.stderr


# ---------------------------------------------------------------- critical 2: no read leaves the root


def test_links_out_of_the_root_are_resolved_inside_it(tmp_path: Path) -> None:
    out = _outside(tmp_path)
    tree = hosts.a2_cann85_new(tmp_path / "tree")
    depth = "../" * 12
    # absolute targets: re-rooted at the tree (nothing there -> absent)
    tree.link("/etc/os-release", str(out / "etc/os-release"))
    # relative targets climbing out: clamped at the root
    tree.link("/usr/local/Ascend/firmware/version.info", f"{depth}{out.relative_to('/')}/version.info")
    sp = tree.site_packages()
    tree.link(f"{sp}/evil-1.0.dist-info/METADATA", str(out / "METADATA"))
    tree.link(f"{sp}/evil2-1.0.dist-info", f"{depth}{out.relative_to('/')}")
    tree.link("/sys/bus/pci/devices/0000:01:00.0", str(out))
    tree.link("/etc/ld.so.cache", "/etc/ld.so.cache")  # a loop onto itself, never the host's cache
    tree.link("/usr/lib/os-release", f"{depth}etc/os-release")  # the host's own, clamped -> tree's
    f = collect(_host(tree))
    text = f.to_json()
    assert SECRET not in text
    assert "6.6.6" not in text
    assert f.devices.pci == ()  # the outside vendor/device files were not read
    assert f.firmware is None or f.firmware.version != SECRET


def test_absolute_links_inside_the_tree_are_followed_in_the_tree(tmp_path: Path) -> None:
    """A real image: ``latest -> /usr/local/Ascend/...`` means the image's file, not this host's."""
    tree = hosts.a2_cann83_old(tmp_path / "tree")
    real = "/usr/local/Ascend/driver/version.info"
    tree.write("/opt/drv/version.info", (tree.root / real.lstrip("/")).read_text())
    (tree.root / real.lstrip("/")).unlink()
    tree.link(real, "/opt/drv/version.info")  # absolute, inside the image
    f = collect(_host(tree))
    assert f.driver is not None and f.driver.version == "25.3.rc1"
    latest = "/usr/local/Ascend/ascend-toolkit/latest"
    assert Host(tree.root, {}).realpath(latest) == "/usr/local/Ascend/ascend-toolkit/8.3.RC2"


def test_resolve_clamps_dotdot_and_reroots_absolute_targets(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "a/b").mkdir(parents=True)
    (root / "a/b/f").write_text("in")
    (root / "a/up").symlink_to("../../../../..")
    (root / "a/abs").symlink_to("/a/b")
    (root / "a/loop").symlink_to("loop")
    host = Host(root, {})
    assert host.resolve("/a/up/a/b/f")[1] == "/a/b/f"
    assert host.resolve("/../../a/abs/f")[0] == root / "a/b/f"
    assert host.read_bytes("/a/abs/../b/f", 10) == b"in"
    with pytest.raises(OSError, match="too many levels"):
        host.resolve("/a/loop")
    assert not host.exists("/a/loop") and host.lexists("/a/loop") and host.is_symlink("/a/loop")


# ---------------------------------------------------------------- high 3-4: bounded reads, no FIFO hangs


def _fifo(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    os.mkfifo(path)


def _sparse(path: Path, size: int, head: bytes = b"") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    with path.open("wb") as fh:
        fh.write(head)
        fh.truncate(size)


def _tree_with_libs(tmp_path: Path) -> hosts.HostTree:
    tree = hosts.a2_cann85_new(tmp_path / "tree")
    sp = tree.site_packages()
    tree.write(f"{sp}/torch_npu/lib/libtorch_npu.so", b"\x7fELF")
    tree.write(f"{sp}/torch/lib/libc10.so", b"\x7fELF")
    tree.write("/etc/ld.so.cache", b"glibc-ld.so.cache1.1")
    return tree


FIFO_PLACES = (
    "usr/local/Ascend/driver/version.info",
    "usr/local/lib/python3.11/site-packages/torch_npu-2.8.0.post2.dist-info/METADATA",
    "usr/local/lib/python3.11/site-packages/torch_npu/lib/libtorch_npu.so",
    "usr/local/lib/python3.11/site-packages/torch/lib/libc10.so",
    "etc/ld.so.cache",
    "sys/bus/pci/devices/0000:01:00.0/vendor",
    "var/lib/cannenv/npu-smi-info.txt",
)


def test_fifos_never_hang_the_doctor(tmp_path: Path) -> None:
    tree = _tree_with_libs(tmp_path)
    for place in FIFO_PLACES:
        _fifo(tree.root / place)
    env = tree.env_file(tmp_path / "host.env")
    r = cli("facts", "--json", "--root", str(tree.root), "--env-file", str(env), timeout=60)
    assert r.returncode == 0, r.stderr
    issues = {(i["path"], i["kind"]) for i in json.loads(r.stdout)["issues"]}
    assert ("/usr/local/Ascend/driver/version.info", "not-a-file") in issues
    assert ("/var/lib/cannenv/npu-smi-info.txt", "not-a-file") in issues


SPARSE_PLACES = (
    ("usr/local/Ascend/driver/version.info", b"Version=25.3.rc1\n"),
    ("usr/local/lib/python3.11/site-packages/torch_npu-2.8.0.post2.dist-info/METADATA", b""),
    ("usr/local/lib/python3.11/site-packages/torch/lib/libc10.so", b"\x7fELF"),
    ("etc/ld.so.cache", b"glibc-ld.so.cache1.1"),
    ("var/lib/cannenv/npu-smi-info.txt", b""),
    ("etc/os-release", b"ID=x\n"),
)


def test_sparse_gigabyte_files_cost_no_memory(tmp_path: Path) -> None:
    """Each file claims 2 GiB; the doctor runs under a 1 GiB address-space limit."""
    tree = _tree_with_libs(tmp_path)
    for place, head in SPARSE_PLACES:
        _sparse(tree.root / place, 2 << 30, head)
    env = tree.env_file(tmp_path / "host.env")
    r = cli(
        "facts", "--json", "--root", str(tree.root), "--env-file", str(env), address_space=1 << 30, timeout=60
    )
    assert r.returncode == 0, r.stderr
    issues = {(i["path"], i["kind"]) for i in json.loads(r.stdout)["issues"]}
    assert ("/usr/local/Ascend/driver/version.info", "oversized") in issues
    assert ("/etc/ld.so.cache", "oversized") in issues


def test_billion_laughs_matrix_is_bad_input_not_a_hang(tmp_path: Path) -> None:
    lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 10):
        prev, cur = chr(96 + i), chr(97 + i)
        lines.append(f"{cur}: &{cur} [{', '.join(['*' + prev] * 9)}]")
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(lines) + "\n")
    assert bomb.stat().st_size < 1000
    r = cli("matrix", "lint", str(bomb), address_space=1 << 30, timeout=60)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "expands to more than" in r.stderr + r.stdout and "Traceback" not in r.stderr


def test_yaml_alias_bound_and_cycles() -> None:
    from cannenv import records

    assert records.load_yaml("a: &x [1, 2]\nb: *x\n") == {"a": [1, 2], "b": [1, 2]}
    with pytest.raises(records.DocumentTooComplexError, match="cycle"):
        records.load_yaml("a: &x [*x]\n")
    with pytest.raises(records.DocumentTooComplexError, match="expands"):
        records.load_yaml("a: &x [1, 2, 3]\nb: [*x, *x, *x]\n", max_nodes=10)


def test_endless_command_output_is_capped_and_killed(tmp_path: Path) -> None:
    """An npu-smi that writes forever: the capture stops at the cap, under a 512 MiB limit."""
    code = (
        "from cannenv.host import run\n"
        "r = run(['yes', '| 0 910B4 | OK | 93.0 43 0 / 0 |'], timeout=60, max_output=1 << 20)\n"
        "print(r.truncated, r.ok, len(r.stdout))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        preexec_fn=lambda: _limits(512 << 20),
        check=False,
    )
    assert r.returncode == 0, r.stderr
    truncated, ok, size = r.stdout.split()
    assert truncated == "True" and ok == "False" and int(size) <= 1 << 20


def test_a_hung_commands_children_are_killed_with_it(tmp_path: Path) -> None:
    from cannenv.host import run

    pidfile = tmp_path / "child.pid"
    script = tmp_path / "npu-smi"
    script.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {pidfile}\nsleep 300\n")
    script.chmod(0o755)
    # A timeout long enough for the shell to start its child even on a loaded machine.
    res = run([str(script), "info"], timeout=5.0)
    assert res.timed_out
    pid = int(pidfile.read_text())
    status = Path(f"/proc/{pid}/status")

    def alive() -> bool:
        try:
            return "\nState:\tZ" not in status.read_text()
        except OSError:  # gone from /proc: reaped
            return False

    # SIGKILL is delivered asynchronously: give the kernel a moment (bounded) to end the child.
    deadline = time.monotonic() + 10
    while alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(), "the hung npu-smi's child survived the timeout"


@pytest.mark.parametrize(
    ("body", "what"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested deeper"),
        ('{"schema_version": 1, "os": {"glibc": ' + "9" * 5000 + "}}", "digits"),
        ('{"schema_version": 1, "x": ' + "[" * 80 + "]" * 80 + "}", "nested deeper"),
    ],
    ids=["deep-100000", "int-5000-digits", "deep-80"],
)
def test_hostile_facts_file_is_bad_input(tmp_path: Path, body: str, what: str) -> None:
    p = tmp_path / "facts.json"
    p.write_text(body)
    r = cli("doctor", "--facts", str(p))
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert what in r.stderr and "Traceback" not in r.stderr


def _collection(tmp_path: Path, facts_files: dict[str, str]) -> Path:
    from cannenv.fleet.collection import Collection, HostResult

    folder = tmp_path / "coll"
    folder.mkdir(exist_ok=True)
    good = hosts.a2_cann85_new(tmp_path / "good-tree")
    (folder / "good.json").write_text(collect(_host(good)).to_json())
    hosts_ = [HostResult(name="good", status="collected", facts_file="good.json")]
    hosts_ += [HostResult(name=n, status="collected", facts_file=f) for n, f in facts_files.items()]
    (folder / "collection.json").write_text(Collection(hosts=tuple(hosts_), root=folder).to_json())
    return folder


def test_fleet_report_reads_nothing_outside_its_folder(tmp_path: Path) -> None:
    secret = tmp_path / "outside.json"
    good = hosts.a2_cann85_new(tmp_path / "other-tree")
    secret.write_text(collect(_host(good)).to_json().replace('"aarch64"', f'"{SECRET}"'))
    folder = _collection(
        tmp_path,
        {"up": "../outside.json", "abs": str(secret), "zero": "/dev/zero", "link": "link.json"},
    )
    (folder / "link.json").symlink_to(secret)  # an absolute link: resolved inside the folder
    r = cli("fleet", "report", str(folder), "--json", address_space=2 << 30, timeout=120)
    assert r.returncode == 2, r.stderr  # facts that could not be read: the report says so (issue 22)
    assert SECRET not in r.stdout
    nodes = {n["name"]: n for n in json.loads(r.stdout)["nodes"]}
    assert nodes["good"]["status"] != "unreachable"
    for name in ("up", "abs", "zero", "link"):
        assert nodes[name]["collect_status"] == "invalid-facts", nodes[name]


def test_one_bad_facts_file_does_not_stop_the_fleet_report(tmp_path: Path) -> None:
    folder = _collection(tmp_path, {"deep": "deep.json", "huge": "huge.json", "fifo": "fifo.json"})
    (folder / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (folder / "huge.json").write_text('{"schema_version": 1, "root": ' + "1" * 5000 + "}")
    os.mkfifo(folder / "fifo.json")
    r = cli("fleet", "report", str(folder), "--json", timeout=120)
    assert r.returncode == 2, r.stderr  # the report is whole; the exit code says facts were unreadable
    nodes = {n["name"]: n for n in json.loads(r.stdout)["nodes"]}
    assert nodes["good"]["status"] != "unreachable"
    assert {nodes[n]["collect_status"] for n in ("deep", "huge", "fifo")} == {"invalid-facts"}


def test_record_reader_refuses_fifos_devices_and_big_files(tmp_path: Path) -> None:
    """``doctor --facts`` on a FIFO, /dev/zero, a folder and a sparse 1 GiB file: exit 2 at once
    (in a subprocess under a 512 MiB address-space limit and a wall-clock timeout)."""
    os.mkfifo(tmp_path / "fifo")
    _sparse(tmp_path / "big.json", 1 << 30)
    for p, needle in (
        (tmp_path / "fifo", "regular file"),
        (Path("/dev/zero"), "regular file"),
        (tmp_path, "regular file"),
        (tmp_path / "big.json", "at most"),
    ):
        r = cli("doctor", "--facts", str(p), address_space=512 << 20, timeout=60)
        assert r.returncode == 2 and needle in r.stderr, (p, r.returncode, r.stderr)


# ---------------------------------------------------------------- medium 5: secrets


def test_secrets_that_leaked_before_are_redacted() -> None:
    from cannenv.probes.environ import REDACTED, redact_env

    kept, red = redact_env(
        {
            "PIP_INDEX_URL": "https://user:pa/ss@w0rd@mirror.example/simple",
            "ASCEND_MIRROR": "https://mirror.example/cann?token=s3cr3t&arch=aarch64",
            "HCCL_PASS": "hcclpw",
            "ATB_PASSPHRASE": "atbpw",
            "NPU_CREDS": "npucreds",
            "ASCEND_PAT": "ghp_pat",
            "ASCEND_HOME_PATH": "/usr/local/Ascend/ascend-toolkit/latest",
        }
    )
    text = json.dumps(kept)
    for leaked in ("pa/ss", "w0rd", "s3cr3t", "hcclpw", "atbpw", "npucreds", "ghp_pat"):
        assert leaked not in text
    assert {"HCCL_PASS", "ATB_PASSPHRASE", "NPU_CREDS", "ASCEND_PAT"} <= set(red)
    assert kept["ASCEND_HOME_PATH"] == "/usr/local/Ascend/ascend-toolkit/latest"
    assert kept["ASCEND_MIRROR"].endswith(f"token={REDACTED}&arch=aarch64")


_pw = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Zs", "Cc"), blacklist_characters=",;\"'"),
    min_size=4,
    max_size=30,
)


@given(
    user=st.from_regex(r"[a-z]{1,8}", fullmatch=True),
    password=_pw,
    host=st.sampled_from(["m.example", "10.0.0.1:8080"]),
)
@settings(max_examples=300, deadline=None)
def test_no_url_password_survives(user: str, password: str, host: str) -> None:
    from cannenv.probes.environ import redact_env

    kept, _ = redact_env({"ASCEND_URL": f"https://{user}:{password}@{host}/simple"})
    assert f"{user}:{password}" not in kept["ASCEND_URL"]
    assert password not in kept["ASCEND_URL"].replace(host, "").replace("/simple", "").replace("https", "")


@given(
    prefix=st.sampled_from(["HCCL_", "ATB_", "NPU_", "ASCEND_", "ASDOPS_"]),
    word=st.sampled_from(["PASS", "PASSWORD", "PASSPHRASE", "CREDS", "PAT", "TOKEN", "SECRET", "API_KEY"]),
    value=st.text(min_size=6, max_size=20).filter(lambda v: v.strip() and "redacted" not in v),
)
@settings(max_examples=200, deadline=None)
def test_secret_names_under_kept_prefixes_never_keep_their_value(prefix: str, word: str, value: str) -> None:
    from cannenv.probes.environ import REDACTED, redact_env

    kept, red = redact_env({f"{prefix}{word}": value})
    assert kept[f"{prefix}{word}"] == REDACTED and f"{prefix}{word}" in red


# ---------------------------------------------------------------- medium 7: unreadable PATH entries


def test_an_unreadable_path_entry_does_not_hide_the_npu(tmp_path: Path) -> None:
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="cannenv-path-", dir="/tmp"))
    try:
        (base / "private/bin").mkdir(parents=True)
        base.chmod(0o755)
        (base / "private").chmod(0o700)  # like /root/.local/bin for a non-root user
        bindir = base / "pub"
        env = hosts.live_npu_smi(bindir, hosts.NPU_SMI_SCRIPT, "a2")
        base_path = env["PATH"]
        env["PATH"] = f"{base}/private/bin:{base_path}"
        bindir.chmod(0o755)
        for p in bindir.iterdir():
            p.chmod(0o755)
        collect(Host(Path("/"), env, True, 5.0), only=("npu",))  # warm the imports

        def probe() -> object:
            f = collect(Host(Path("/"), env, True, 5.0), only=("os", "npu"))
            return [f.devices.family, [i.kind for i in f.issues]]

        family, kinds = as_nobody(probe)  # type: ignore[misc]
        assert family == "a2" and "probe-crashed" not in kinds
    finally:
        (base / "private").chmod(0o755)
        import shutil

        shutil.rmtree(base, ignore_errors=True)


def test_chmod_000_file_probed_as_unprivileged_user_is_permission_denied() -> None:
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="cannenv-perm-", dir="/tmp"))
    try:
        tree = hosts.HostTree(base).driver()
        for d in [base, *[p for p in base.rglob("*") if p.is_dir()]]:
            d.chmod(0o755)
        drv = base / "usr/local/Ascend/driver/version.info"
        drv.chmod(0)
        collect(_host(tree), only=("driver",))

        def probe() -> object:
            return [[i.kind, i.path] for i in collect(_host(tree), only=("driver",)).issues]

        assert ["permission-denied", "/usr/local/Ascend/driver/version.info"] in as_nobody(probe)  # type: ignore[operator]
    finally:
        shutil.rmtree(base, ignore_errors=True)


# ---------------------------------------------------------------- medium 8: control characters


ESC_TITLE = "\x1b]0;pwned\x07"
SPOOF = "\r\x1b[2K18 pass, 0 warn, 0 fail, 0 skip, 0 error"


def _hostile_version_tree(tmp_path: Path) -> tuple[hosts.HostTree, Path]:
    tree = hosts.a2_cann85_new(tmp_path / "tree")
    drv = tree.root / "usr/local/Ascend/driver/version.info"
    drv.write_text(drv.read_text().replace("25.5.1", f"25.5.1{ESC_TITLE}{SPOOF}\u202e"))
    rel = tree.root / "etc/os-release"
    rel.write_text(rel.read_text().replace("Ubuntu 22.04.4 LTS", f"Ubuntu{ESC_TITLE}{SPOOF}"))
    return tree, tree.env_file(tmp_path / "host.env")


def test_control_characters_never_reach_the_terminal_or_the_xml(tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    tree, env = _hostile_version_tree(tmp_path)
    junit = tmp_path / "doctor.xml"
    r = cli("doctor", "--root", str(tree.root), "--env-file", str(env), "--junit", str(junit), "-v")
    assert r.returncode in (0, 1), r.stderr
    for out in (r.stdout, r.stderr):
        assert "\x1b" not in out and "\r" not in out and "\x07" not in out and "\u202e" not in out
    assert "\\x1b" in r.stdout  # shown, visibly
    ET.parse(junit)  # well-formed
    r = cli("facts", "--root", str(tree.root), "--env-file", str(env))
    assert "\x1b" not in r.stdout
    r = cli("facts", "--json", "--root", str(tree.root), "--env-file", str(env))
    assert "\\u001b" in r.stdout  # JSON stays exact (escaped by JSON itself)


def test_fleet_junit_and_html_stay_clean(tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    tree, env_file = _hostile_version_tree(tmp_path)
    folder = tmp_path / "coll"
    folder.mkdir()
    r = cli("facts", "--json", "--root", str(tree.root), "--env-file", str(env_file))
    (folder / "evil.json").write_text(r.stdout)
    r = cli(
        "fleet", "report", str(folder), "--junit", str(tmp_path / "f.xml"), "--html", str(tmp_path / "f.html")
    )
    assert r.returncode in (0, 1), r.stderr
    assert "\x1b" not in r.stdout and "\r" not in r.stdout
    ET.parse(tmp_path / "f.xml")
    page = (tmp_path / "f.html").read_text()
    assert "\x1b" not in page and "\x07" not in page


@given(st.text())
@settings(max_examples=300, deadline=None)
def test_sanitised_text_has_no_controls_and_xml_parses(value: str) -> None:
    import xml.etree.ElementTree as ET

    from cannenv import sanitize

    shown = sanitize.line(value)
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in shown)
    el = ET.Element("t", message=value)
    el.text = value
    ET.fromstring(sanitize.xml(ET.tostring(el, encoding="unicode")))


# ---------------------------------------------------------------- medium 9: exit 70 only for bugs


def test_output_writers_on_bad_paths_are_bad_input(tmp_path: Path) -> None:
    tree = hosts.bare(tmp_path / "tree")
    (tmp_path / "afile").write_text("x")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere/deeper")
    for junit in (tmp_path / "afile/out.xml", tmp_path / "dangling/out.xml", tmp_path):
        r = cli("doctor", "--root", str(tree.root), "--junit", str(junit))
        assert r.returncode == 2, (junit, r.returncode, r.stderr)
        assert "cannot write" in r.stderr and "Traceback" not in r.stderr
    with Path("/dev/full").open("w") as full:
        r2 = subprocess.run(
            [sys.executable, "-m", "cannenv", "matrix", "list"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env={"PYTHONPATH": str(REPO), "PATH": os.environ.get("PATH", "/usr/bin")},
            timeout=120,
            check=False,
        )
    assert r2.returncode == 2 and "No space left" in r2.stderr, r2.stderr


def test_unknown_ssh_key_type_is_bad_input(tmp_path: Path) -> None:
    pub = tmp_path / "k.pub"
    pub.write_text("ssh-foo AAAAB3NzaC1yc2EAAAADAQABAAABAQ== me@host\n")
    cert = tmp_path / "c.json"
    cert.write_text("{}")
    r = cli("cert", "verify", str(cert), "--pub", str(pub))
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr


# ---------------------------------------------------------------- low 10: strict base64


def test_certificate_base64_low_bits_are_refused(tmp_path: Path) -> None:
    from cannenv.certify import certificate as C

    priv, _ = C.generate_keypair(tmp_path / "key.pem")
    path = tmp_path / "cert.json"
    import tests.unit.test_certificate as tc

    C.write(tc._cert(), path, sign_key=C.load_private_key(priv))
    assert C.verify_file(path).ok
    env = json.loads(path.read_text())
    for field in ("value", "public_key"):
        b64 = env["signature"][field]
        # the last character before the padding carries unused low bits: flip one of them
        i = len(b64.rstrip("=")) - 1
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        flipped = alphabet[alphabet.index(b64[i]) ^ 1]
        forged = dict(env, signature=dict(env["signature"], **{field: b64[:i] + flipped + b64[i + 1 :]}))
        text = C.render(forged)
        res = C.verify_text(text)
        assert not res.ok and any("canonical" in p or "malformed" in p for p in res.problems), res.problems


# ---------------------------------------------------------------- low 12: image render


def _context(tmp_path: Path, installer: Path, digest: str) -> object:
    from cannenv.image import BuildContext

    return BuildContext(
        dockerfile="FROM scratch\n",
        files={"Dockerfile": b"FROM scratch\n"},
        links={"installers/x.run": installer},
        link_digests={"installers/x.run": digest},
        labels={},
        environment=(),
        requirements=(),
        base_image="scratch",
        os="debian",
    )


def test_render_copies_the_verified_bytes_and_is_atomic(tmp_path: Path) -> None:
    import hashlib

    from cannenv.errors import IntegrityError

    inst = tmp_path / "x.run"
    inst.write_bytes(b"verified installer\n")
    digest = hashlib.sha256(inst.read_bytes()).hexdigest()
    out = tmp_path / "ctx"
    _context(tmp_path, inst, digest).write(out)  # type: ignore[attr-defined]
    copied = out / "installers/x.run"
    assert copied.stat().st_ino != inst.stat().st_ino and copied.stat().st_nlink == 1
    inst.write_bytes(b"edited after verification\n")  # a hard link would now change the context
    assert copied.read_bytes() == b"verified installer\n"
    # an artefact changed since verification: refused, and no partial context is left behind
    out2 = tmp_path / "ctx2"
    with pytest.raises(IntegrityError, match="changed after it was verified"):
        _context(tmp_path, inst, digest).write(out2)  # type: ignore[attr-defined]
    assert not out2.exists() and not list(tmp_path.glob(".ctx2.*"))
    # the rerun with the right bytes succeeds into the same path
    inst.write_bytes(b"verified installer\n")
    _context(tmp_path, inst, digest).write(out2)  # type: ignore[attr-defined]
    assert (out2 / "installers/x.run").read_bytes() == b"verified installer\n"


# ---------------------------------------------------------------- low 14: option values


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e20", "-1", "0"])
def test_npu_smi_timeout_must_be_a_finite_number_of_seconds(value: str) -> None:
    r = cli("facts", "--root", "/nonexistent-root", f"--npu-smi-timeout={value}")
    assert r.returncode == 2 and "--npu-smi-timeout" in r.stderr and "Traceback" not in r.stderr


def test_env_file_with_a_nul_byte_is_bad_input(tmp_path: Path) -> None:
    tree = hosts.bare(tmp_path / "tree")
    env = tmp_path / "host.env"
    env.write_bytes(b"ASCEND_HOME_PATH=/usr/local/Ascend\x00/x\n")
    r = cli("facts", "--root", str(tree.root), "--env-file", str(env))
    assert r.returncode == 2 and "NUL" in r.stderr, r.stderr


def test_run_args_image_is_never_shell_code(tmp_path: Path) -> None:
    r = cli("image", "run-args", "--image", f"$(touch {tmp_path}/RAN)")
    assert r.returncode == 2 and not (tmp_path / "RAN").exists()
    r = cli("image", "run-args", "--image", "registry.example/cannenv/a2:8.5.0")
    assert r.returncode == 0 and r.stdout.rstrip().endswith("registry.example/cannenv/a2:8.5.0")


def test_a_driver_version_that_is_not_one_is_a_malformed_file(tmp_path: Path) -> None:
    tree = hosts.HostTree(tmp_path / "tree").driver(
        hosts.DRIVER_25_3_RC1.replace("25.3.rc1", "99.9.9 garbage; rm -rf /")
    )
    f = collect(_host(tree), only=("driver",))
    assert any(i.kind == "malformed" and i.path == "/usr/local/Ascend/driver/version.info" for i in f.issues)


# ---------------------------------------------------------------- wheels and tree METADATA


def _wheel(path: Path, member: str, data: bytes, *, encrypted: bool = False) -> Path:
    import zipfile

    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(member, data)
    if encrypted:  # set the "encrypted" flag bit in both headers: zipfile refuses to read it
        raw = bytearray(path.read_bytes())
        for sig, off in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
            i = raw.find(sig)
            raw[i + off] |= 0x01
        path.write_bytes(bytes(raw))
    return path


@pytest.mark.parametrize(
    ("kind", "needle"),
    [("bomb", "at most"), ("encrypted", "cannot be read"), ("latin1", "UTF-8")],
)
def test_hostile_wheel_members_are_bad_input(tmp_path: Path, kind: str, needle: str) -> None:
    member = "torch_npu-2.8.0.dist-info/METADATA"
    if kind == "bomb":  # ~2 MB on disk, inflates to 2 GiB
        whl = tmp_path / "torch_npu-2.8.0-cp311-none-any.whl"
        import zipfile

        with (
            zipfile.ZipFile(whl, "w", compression=zipfile.ZIP_DEFLATED) as zf,
            zf.open(member, "w", force_zip64=True) as fh,
        ):
            block = b"\0" * (1 << 24)
            for _ in range(128):
                fh.write(block)
        assert whl.stat().st_size < 8 << 20
    elif kind == "encrypted":
        whl = _wheel(tmp_path / "t.whl", member, b"Name: torch_npu\nVersion: 2.8.0\n", encrypted=True)
    else:
        whl = _wheel(
            tmp_path / "t.whl",
            member,
            "Name: torch_npu\nVersion: 2.8.0\nSummary: caf\xe9\n".encode("latin-1"),
        )
    r = cli("matrix", "import-torch-npu", str(whl), address_space=1 << 30, timeout=120)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert needle in r.stderr and "Traceback" not in r.stderr


def test_a_5000_digit_version_in_a_tree_does_not_stop_the_doctor(tmp_path: Path) -> None:
    tree = hosts.a2_cann85_new(tmp_path / "tree")
    meta = next((tree.root / tree.site_packages().lstrip("/")).glob("torch_npu-*.dist-info")) / "METADATA"
    meta.write_text(meta.read_text().replace("Version: 2.8.0.post2", "Version: " + "9" * 5000, 1))
    env = tree.env_file(tmp_path / "host.env")
    r = cli("doctor", "--root", str(tree.root), "--env-file", str(env), "--json")
    assert r.returncode in (0, 1), r.stderr
    issues = json.loads(cli("facts", "--json", "--root", str(tree.root), "--env-file", str(env)).stdout)[
        "issues"
    ]
    assert any(i["kind"] == "malformed" and i["path"].endswith("METADATA") for i in issues)


def test_saved_facts_with_secrets_are_redacted_on_load(tmp_path: Path) -> None:
    """Facts written by another tool (or an old cannenv) may carry secrets: never shown again."""
    from cannenv.facts import Facts

    tree = hosts.a2_cann85_new(tmp_path / "tree")
    raw = json.loads(collect(_host(tree)).to_json())
    raw["env"]["vars"].update(
        {"HCCL_PASS": "hcclpw", "ASCEND_MIRROR": "https://u:p/w@d@m.example/x?token=tok123"}
    )
    p = tmp_path / "facts.json"
    p.write_text(json.dumps(raw))
    text = Facts.load(p).to_json()
    assert "hcclpw" not in text and "p/w@d" not in text and "tok123" not in text
    folder = tmp_path / "coll"
    folder.mkdir()
    (folder / "n.json").write_text(json.dumps(raw))
    r = cli("fleet", "report", str(folder), "--json", "--html", str(tmp_path / "f.html"))
    assert r.returncode in (0, 1), r.stderr
    for out in (r.stdout, (tmp_path / "f.html").read_text()):
        assert "hcclpw" not in out and "tok123" not in out


def test_merge_of_a_version_that_would_break_the_yaml_is_bad_input(tmp_path: Path) -> None:
    meta = (REPO / "tests/data/torch_npu/torch_npu-2.7.1.post2.METADATA").read_text()
    bad = tmp_path / "bad.METADATA"
    bad.write_text(meta.replace("Version: 2.7.1.post2", 'Version: 2.7.1]x{"', 1))
    matrix = tmp_path / "m.yaml"
    before = (
        "schema_version: 1\ntorch_npu:\n"
        '- {torch_npu: "2.0.0", torch: "2.0.0", cann: "8.0.0", table: other, sources: [X]}\n'
        'sources:\n- {id: X, title: "x"}\n'
    )
    matrix.write_text(before)
    r = cli("matrix", "import-torch-npu", str(bad), "--merge", str(matrix))
    assert r.returncode == 2 and "Traceback" not in r.stderr, (r.returncode, r.stderr)
    assert matrix.read_text() == before  # untouched


def test_image_render_out_under_a_file_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    r = cli("image", "render", "a2-cann8.5.0-torch2.8.0-py3.11", "--out", str(tmp_path / "afile/ctx"))
    assert r.returncode == 2 and "cannot write" in r.stderr and "Traceback" not in r.stderr


# ---------------------------------------------------------------- zips: members counted before parsing


def test_a_zip_with_too_many_members_is_refused_from_its_end_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The count a zip declares is read from its tail before zipfile parses the central directory
    (one object per member): a wheel of millions of empty members costs nothing to refuse."""
    import zipfile

    from cannenv import records
    from cannenv.errors import InputError

    def empty_members(path: Path, count: int) -> Path:
        with zipfile.ZipFile(path, "w") as zf:
            for i in range(count):
                zf.writestr(f"m{i}", b"")
        return path

    many = empty_members(tmp_path / "many.whl", 50)
    assert records.zip_entry_count(many) == 50
    with pytest.raises(InputError, match="declares 50 members, more than the 10 read"):
        records.open_zip(many, max_members=10, what="wheel")
    with records.open_zip(many, max_members=50, what="wheel") as zf:
        assert len(zf.infolist()) == 50
    # ZIP64: the 16-bit count says 0xFFFF, the ZIP64 end record has the real one
    big = empty_members(tmp_path / "big.zip", 0x10000)
    assert records.zip_entry_count(big) == 0x10000
    with pytest.raises(InputError, match="declares 65536 members"):
        records.open_zip(big, max_members=1000, what="wheel")
    # not a zip, a FIFO: refused, never parsed or blocked on
    (tmp_path / "no.whl").write_bytes(b"PK\x05\x06 short")
    with pytest.raises(InputError, match="not a readable zip"):
        records.open_zip(tmp_path / "no.whl", max_members=10, what="wheel")
    os.mkfifo(tmp_path / "fifo.whl")
    with pytest.raises(InputError, match="not a regular file"):
        records.open_zip(tmp_path / "fifo.whl", max_members=10, what="wheel")
    # every reader of wheels and vendor zips goes through it (their bounds lowered below 65536)
    from cannenv import torch_npu_import, vendorzip
    from cannenv.matrix import artefact
    from cannenv.model import registry

    monkeypatch.setattr(registry, "MAX_ZIP_MEMBERS", 1000)
    monkeypatch.setattr(torch_npu_import, "MAX_WHEEL_MEMBERS", 1000)
    monkeypatch.setattr(artefact, "MAX_MEMBERS", 1000)
    assert vendorzip.MAX_MEMBERS < 0x10000

    with pytest.raises(InputError, match="declares 65536 members"):
        registry.from_wheel(big)
    with pytest.raises(InputError, match="declares 65536 members"):
        torch_npu_import.read_table(big)
    with pytest.raises(InputError, match="declares 65536 members"):
        vendorzip.extract_member(big, "x.run", tmp_path)
    with pytest.raises(InputError, match="declares 65536 members"):
        artefact.Artefact(big)
