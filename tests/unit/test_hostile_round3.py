"""Hostile inputs, round 3 (issue 33): each class of defect on every surface it reaches.

No timed assertions. Super-linear regexes are excluded by construction (tests/unit/test_linre.py:
RE2 for data patterns, the lint for ours); here the parsers are run on generated hostile text for
what they must do (no crash but a named InputError), and the bounds are checked by what is
counted (bytes inflated, digests kept), never by the clock.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cannenv import archive, redact
from cannenv.errors import InputError
from cannenv.fleet.collection import MANIFEST_NAME

ROOT = Path(__file__).resolve().parents[2]

# ------------------------------------------------------------------------- 1. linear parsers
HOSTILE_PIECES = [
    " ",
    "\t",
    "\n",
    "\r",
    ":",
    "=",
    "/",
    ".",
    "1",
    "a",
    "-",
    "*",
    '"',
    "'",
    "?",
    "&",
    "lib",
    ".so",
    "ipaddr",
    "link status",
    "##",
    "- CANN",
    "Bearer ",
    "token=",
    "https://",
    "\x1b[",
    "é",
    "\udcff",
]
hostile_text = st.lists(
    st.tuples(st.sampled_from(HOSTILE_PIECES), st.integers(min_value=1, max_value=400)), max_size=12
).map(lambda parts: "".join(p * n for p, n in parts))


def _parsers() -> list[tuple[str, object]]:
    from cannenv.matrix import vllm_ascend
    from cannenv.probes import _common, hccn
    from cannenv.versions import parse_version

    return [
        ("hccn_output", hccn.parse_hccn_output),
        ("hccn_conf", hccn.parse_hccn_conf),
        ("listening_ports", hccn.listening_ports),
        ("parse_kv", _common.parse_kv),
        ("release_notes", lambda t: vllm_ascend.parse_release_notes(t, None)),  # type: ignore[arg-type]
        ("requires", vllm_ascend.parse_requires),
        ("redact_text", redact.redact_text),
        ("redact_value", redact.redact_value),
        ("version", lambda t: parse_version("cann", t)),
    ]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=hostile_text)
def test_every_parser_takes_any_text(text: str) -> None:
    """Each parser of captured or downloaded text returns, or refuses with a named InputError."""
    for _name, parse in _parsers():
        with contextlib.suppress(InputError):
            parse(text)  # type: ignore[operator]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=hostile_text)
def test_every_shipped_signature_pattern_takes_any_text(text: str) -> None:
    from cannenv.explain import signatures

    for p in signatures.shipped().patterns:
        if p.regex is not None:
            p.regex.search(text)


def test_hccn_captures_are_parsed_line_by_line() -> None:
    from cannenv.probes.hccn import parse_hccn_output

    capture = "\n" * 50_000 + "   ipaddr:192.168.1.8\nnetmask : 255.255.255.0\nlink status: UP\n"
    assert parse_hccn_output(capture) == {"ip": "192.168.1.8", "ip_netmask": "255.255.255.0", "link": "UP"}
    # a key later in a line is not the line's key (the ^ of the old re.M patterns)
    assert "ip" not in parse_hccn_output("x ipaddr:10.0.0.1\n")


def test_release_notes_dependency_lines() -> None:
    from cannenv.matrix.vllm_ascend import parse_release_notes

    text = "## v0.9.0\n- **CANN**: 8.1.RC1.\n-  Ascend HDK :  **25.0.rc1\n## v0.8.0\n- CANN: see 8.0\n"
    (row,) = parse_release_notes(text, None)  # type: ignore[arg-type]
    assert (row.release, row.cann, row.hdk) == ("v0.9.0", "8.1.RC1", "25.0.rc1")


# ------------------------------------------------------------------------- 2. counts an input controls
def test_rank_table_checks_are_linear_in_the_ranks() -> None:
    """150,000 ranks with duplicates: Counter and sets, not list.count per element."""
    from cannenv.fleet import ranktable

    ids = [*range(150_000), 7, 7]
    found = ranktable._Found()
    ranktable._check_ranks([(r, "s0") for r in ids], ["s0"], found)
    assert any("twice: 7" in f.detail for f in found.items)
    assert ranktable._in_runs(["a", "a", "b", "b"]) and not ranktable._in_runs(["a", "b", "a"])


# ------------------------------------------------------------------------- 3. archives and long lines
def _targz(path: Path, members: list[tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def test_a_skipped_tar_member_counts_against_the_bytes_inflated(tmp_path: Path) -> None:
    big = bytes(8 << 20)  # compresses to a few KB, inflates to 8 MiB
    path = _targz(tmp_path / "a.tar.gz", [("top/huge.bin", big), ("top/PKG-INFO", b"Name: x\n")])
    wanted = lambda name: name.endswith("PKG-INFO")  # noqa: E731
    with pytest.raises(InputError, match="inflates past"):
        list(archive.tar_members(path, wanted, what="sdist", max_member=1 << 20, max_total=1 << 20))


def test_reading_stops_once_what_is_wanted_is_read(tmp_path: Path) -> None:
    big = bytes(8 << 20)
    path = _targz(tmp_path / "a.tar.gz", [("top/PKG-INFO", b"Name: x\n"), ("top/huge.bin", big)])
    got = list(
        archive.tar_members(
            path,
            lambda n: n.endswith("PKG-INFO"),
            what="sdist",
            max_member=1 << 20,
            max_total=1 << 20,
            stop_after=1,
        )
    )
    assert [(m.name, m.data) for m in got] == [("top/PKG-INFO", b"Name: x\n")]


def test_the_vllm_ascend_importer_reads_through_the_bounded_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cannenv.matrix import vllm_ascend

    monkeypatch.setattr(vllm_ascend, "MAX_INFLATED", 1 << 20)
    path = _targz(
        tmp_path / "vllm_ascend-0.1.tar.gz",
        [("vllm_ascend-0.1/bomb.bin", bytes(8 << 20)), ("vllm_ascend-0.1/PKG-INFO", b"Name: x\n")],
    )
    with pytest.raises(InputError, match="inflates past"):
        vllm_ascend.read_sdist(path)


def test_tar_names_that_leave_the_archive_and_links_are_never_yielded(tmp_path: Path) -> None:
    path = tmp_path / "t.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        for name in ("../evil", "/abs", "ok/file"):
            info = tarfile.TarInfo(name)
            info.size = 1
            tf.addfile(info, io.BytesIO(b"x"))
        link = tarfile.TarInfo("ok/link")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        tf.addfile(link)
    names = [m.name for m in archive.tar_members(path, lambda n: True, what="t", max_member=10)]
    assert names == ["ok/file"]


def test_explain_remembers_digests_not_lines() -> None:
    from cannenv.explain import signatures
    from cannenv.explain.scan import Scanner

    s = Scanner(signatures.shipped(), total_hint=1 << 30)  # large: examined around errors
    line = b"x" * 3000 + b" error %d libhccl.so: cannot open shared object file " + b"y" * 3000 + b"\n"
    s.feed(b"".join(line % i for i in range(900)))  # one 5.5 MB region of long distinct lines
    s.end_input()
    assert len(s._seen) >= 900 and all(len(k) == 16 for k in s._seen)  # digests, not 6 KB lines


# ------------------------------------------------------------------------- 4. secrets in every form
SECRET_KEYS = [
    "token",
    "api_key",
    "apiKey",
    "api-key",
    "X-Api-Key",
    "password",
    "passwd",
    "secret",
    "client_secret",
    "access_token",
    "accessToken",
    "refresh_token",
    "HF_TOKEN",
    "aws_secret_access_key",
    "Authorization",
    "private_key",
    "session_id",
    "cookie",
    "credentials",
]
FORMS = [
    '"{k}": "{v}"',
    '"{k}":"{v}"',
    "'{k}': '{v}'",
    "{{'{k}': '{v}', 'n': 1}}",
    "{k}={v}",
    "{k} = {v}",
    '{k}="{v}"',
    "{k}: {v}",
    "--{k} {v}",
    "--{k}={v}",
    "{k} => {v}",
    "'{k}': b'{v}'",
]
AUTH = [
    "Authorization: Bearer {v}",
    "'Authorization': 'token {v}'",
    '"Authorization": "Basic {v}"',
    "authorization: bearer {v}",
    "Proxy-Authorization: Basic {v}",
    "headers={{'Authorization': 'Bearer {v}'}}",
    "curl -H 'Authorization: token {v}' https://api.github.com",
    "https://user:{v}@registry.example.com/simple",
    "https://example.com/x?token={v}&a=1",
    'Authorization: Digest username="u", response="{v}"',
]
value = st.text(
    alphabet="ABCDEFGHJKMNPQRSTUVWXYZabcdefghjkmnpqrstuvwxyz0123456789_+/=", min_size=10, max_size=40
)
noise = st.sampled_from(["", "INFO ", "[rank0]: ", "requests: ", "ERROR 500001 ", "x=1 "])


@settings(max_examples=200, deadline=None)
@given(
    key=st.sampled_from(SECRET_KEYS),
    form=st.sampled_from(FORMS + AUTH),
    v=value,
    before=noise,
    after=st.sampled_from(["", " done", ", retry=3", "}"]),
)
def test_a_secret_in_any_common_form_is_redacted(
    key: str, form: str, v: str, before: str, after: str
) -> None:
    secret = "Zq9" + v  # never a word of the surrounding text
    line = before + form.format(k=key, v=secret) + after
    out = redact.redact_text(line)
    assert secret not in out, (line, out)
    assert redact.REDACTED in out


@pytest.mark.parametrize(
    "token",
    [
        "AKIAIOSFODNN7EXAMPLE",
        "ghp_" + "a1" * 18,
        "github_pat_" + "A1_" * 10,
        "hf_" + "aB3" * 10,
        "sk-" + "proj_" + "x9" * 12,
        "xoxb-1234567890-abcdefghij",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTYifQ.SflKxwRJSMeKKF2QT4fwpMe",
    ],
)
def test_tokens_recognisable_by_shape_are_redacted_anywhere(token: str) -> None:
    assert token not in redact.redact_text(f"downloading with {token} failed")


@pytest.mark.parametrize(
    "line",
    [
        "the token is missing",
        "unexpected token function",
        "error code is 561103",
        "libhccl.so: cannot open shared object file",
        "key=value of the config",
    ],
)
def test_prose_and_errors_are_kept(line: str) -> None:
    assert redact.redact_text(line) == line or "key" in line


def test_secret_names_in_every_spelling() -> None:
    for name in ("apiKey", "api-key", "X-Api-Key", "accessToken", "client.secret", "HF_TOKEN"):
        assert redact.is_secret_name(name), name
    for name in ("PATH", "PWD", "hostname", "monkey", "keyboard"):
        assert not redact.is_secret_name(name), name


SECRET_LOG = (
    "requests: {'Authorization': 'token ghp_AAAAbbbbCCCCddddEEEEffff0000'} "
    'libhccl.so: cannot open shared object file {"api_key": "Zq9SECRETvalue1"} password=Zq9hunter2\n'
)


@pytest.mark.parametrize("fmt", ["text", "json", "junit"])
def test_explain_never_prints_a_secret(tmp_path: Path, fmt: str) -> None:
    log = tmp_path / "train.log"
    log.write_text(SECRET_LOG)
    args = {"text": [], "json": ["--json"], "junit": ["--junit", str(tmp_path / "out.xml")]}[fmt]
    r = subprocess.run(
        [sys.executable, "-m", "cannenv", "explain", "--no-host", "--log", str(log), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode in (0, 1), r.stderr
    out = r.stdout + r.stderr + ((tmp_path / "out.xml").read_text() if fmt == "junit" else "")
    assert "libhccl" in out  # the line is quoted, its secrets are not
    for secret in ("ghp_AAAAbbbb", "Zq9SECRETvalue1", "Zq9hunter2"):
        assert secret not in out, fmt


# ------------------------------------------------------------------------- 5. links out of the folder
def _collection(folder: Path, facts_target: Path) -> Path:
    folder.mkdir()
    (folder / "node1.json").symlink_to(facts_target)
    manifest = {
        "schema_version": 1,
        "hosts": [{"name": "node1", "status": "collected", "facts_file": "node1.json"}],
    }
    (folder / MANIFEST_NAME).write_text(json.dumps(manifest))
    return folder


def test_fleet_diff_reads_facts_only_inside_the_folder(tmp_path: Path) -> None:
    from cannenv.facts import Facts
    from cannenv.fleet import diff
    from cannenv.fleet.collection import load_collection

    outside = tmp_path / "secret-host.json"
    outside.write_text(Facts().to_json())
    folder = _collection(tmp_path / "c", outside)
    # an absolute link is resolved inside the collection folder, where nothing is: not read
    assert diff._versions(load_collection(folder)) == {"node1": None}
    # the same file inside the folder is read
    (folder / "node1.json").unlink()
    (folder / "node1.json").write_text(Facts().to_json())
    assert diff._versions(load_collection(folder))["node1"] is not None


def test_a_linked_manifest_is_refused(tmp_path: Path) -> None:
    from cannenv.fleet.collection import load_collection

    real = tmp_path / "elsewhere"
    real.mkdir()
    (real / MANIFEST_NAME).write_text('{"schema_version": 1, "hosts": []}')
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / MANIFEST_NAME).symlink_to(real / MANIFEST_NAME)
    with pytest.raises(InputError):
        load_collection(folder)


def test_fleet_diff_prints_a_hostile_name_on_its_own_line(tmp_path: Path) -> None:
    """A facts file named with a newline and an escape sequence: its node is one line in the diff
    a person reviews, the newline and ESC shown, never a line of its own."""
    from cannenv.facts import Facts

    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    for d in (old, new):
        (d / "n1.json").write_text(Facts().to_json())
    (old / "evil\nINJECTED all compliant\x1b[2K.json").write_text(Facts().to_json())
    r = subprocess.run(
        [sys.executable, "-m", "cannenv", "fleet", "diff", str(old), str(new)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert "evil\\nINJECTED all compliant\\x1b[2K: removed" in r.stdout, r.stdout
    assert not any(line.startswith("INJECTED") for line in r.stdout.splitlines()) and "\x1b" not in r.stdout


# ------------------------------------------------------------------------- 6. bad input is exit 2
def test_no_isdigit_in_the_package() -> None:
    """``str.isdigit`` accepts ``²`` that ``int()`` refuses (exit 70): isdecimal is int's own set."""
    hits = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in sorted((ROOT / "cannenv").rglob("*.py"))
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if ".isdigit()" in line
    ]
    assert not hits, hits


def test_a_manifest_time_past_the_calendar_falls_back_to_the_folder_time(tmp_path: Path) -> None:
    from cannenv.fleet import history

    (tmp_path / MANIFEST_NAME).write_text(
        json.dumps({"schema_version": 1, "hosts": [], "finished_at": "9999-12-31T23:59:59-23:00"})
    )
    when = history.collection_time(tmp_path)
    assert when.year < 9999 and when.utcoffset() is not None
    with pytest.raises(InputError):
        history.parse_since("9999-12-31T23:59:59-23:00")


@pytest.mark.parametrize(
    "argv",
    [
        ["provision", "--timeout", "-5"],
        ["provision", "--forks", "0"],
        ["fleet", "collect", "--timeout", "-5"],
    ],
)
def test_negative_counts_and_timeouts_are_bad_input(argv: list[str]) -> None:
    from click.testing import CliRunner

    from cannenv.cli import cli

    r = CliRunner().invoke(cli, argv)
    assert r.exit_code == 2, r.output
    assert f"Invalid value for '{argv[-2]}'" in r.output


def test_ansible_beside_an_unactivated_venv_is_found_and_a_missing_one_is_exit_4(tmp_path: Path) -> None:
    """A venv never activated: ansible-playbook/-inventory lie beside its interpreter, not on PATH.
    They are used from there; where they are nowhere, a missing tool is exit 4, never 70."""
    import os

    beside = Path(sys.executable).parent
    if not (beside / "ansible-inventory").is_file():
        pytest.skip(f"ansible-core's commands are not beside {sys.executable}")
    inv = tmp_path / "inv.ini"
    inv.write_text(f"h1 ansible_connection=local ansible_python_interpreter={sys.executable}\n")
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    args = ["-m", "cannenv", "fleet", "collect", "-i", str(inv), "--out", str(tmp_path / "facts"), "--quiet"]
    ok = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=300)
    assert ok.returncode == 0 and (tmp_path / "facts" / "h1.json").is_file(), ok.stdout + ok.stderr
    # the same interpreter through a link in a folder without Ansible: its commands are nowhere
    alone = tmp_path / "bin"
    alone.mkdir()
    (alone / "python").symlink_to(Path(sys.executable).resolve())
    gone = subprocess.run(
        [str(alone / "python"), *args], capture_output=True, text=True, env=env, timeout=300
    )
    assert gone.returncode == 4, gone.stdout + gone.stderr
    assert "ansible-inventory not found on PATH nor beside" in gone.stderr
    assert "internal error" not in gone.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["explain", "--no-host", "--log"],
        ["explain", "--no-host", "--json", "--log"],
        ["explain", "--no-host", "--verbose", "--log"],
    ],
)
def test_a_file_name_that_is_not_utf8_reaches_a_strict_terminal_escaped(
    tmp_path: Path, argv: list[str]
) -> None:
    """Such a name reaches Python as a lone surrogate; a strict UTF-8 stream refused it (exit 70).
    Text shows it escaped; JSON carries the same value as its escape."""
    import os

    logs = tmp_path / "logs"
    logs.mkdir()
    name = os.fsencode(logs) + b"/\xffrank0.log"
    Path(os.fsdecode(name)).write_bytes(
        b"ImportError: libhccl.so: cannot open shared object file: No such file or directory\n"
    )
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict", "LC_ALL": "C.UTF-8"}
    r = subprocess.run(
        [sys.executable, "-m", "cannenv", *argv, str(logs)], capture_output=True, env=env, timeout=300
    )
    out = r.stdout.decode("utf-8") + r.stderr.decode("utf-8")  # strict: every byte is UTF-8
    assert r.returncode != 70 and "internal error" not in out, out
    assert "\\udcffrank0.log" in out, out
    if "--json" in argv:
        assert os.fsdecode(name) in json.loads(r.stdout)["input"]["sources"], r.stdout


# ------------------------------------------------------------------------- 7. validation at the edges
def test_a_digest_is_64_hex_digits_and_nothing_after() -> None:
    from cannenv.lock import is_digest_ref

    good = "registry.example.com/cannenv@sha256:" + "a" * 64
    assert is_digest_ref(good)
    for bad in (good + "\n", "repo@sha256:latest", "repo:tag", good[:-1], good + "x"):
        assert not is_digest_ref(bad), bad


def test_identifiers_do_not_accept_a_trailing_newline() -> None:
    from cannenv import lock
    from cannenv.fleet import k8s
    from cannenv.image import spec

    assert spec.SHA256.match("a" * 64) and not spec.SHA256.match("a" * 64 + "\n")
    assert k8s._DNS_LABEL.match("node-1") and not k8s._DNS_LABEL.match("node-1\n")
    assert lock._SHA256.match("b" * 64) and not lock._SHA256.match("b" * 64 + "\n")


def test_validation_patterns_end_at_the_end_of_the_text() -> None:
    """``re.match(r"^…$")`` accepts ``value\\n``: in every module (the validators of names, digests
    and paths, and the parsers of what hosts, wheels and importers give) a pattern that is not
    multi-line ends at ``\\Z`` (or is a fullmatch)."""
    import re as _re

    from tests.helpers.patterns import literal_patterns

    found, _ = literal_patterns(ROOT / "cannenv")
    loose = [
        f"{f.where}: {f.pattern!r}"
        for f in found
        if f.mode != "fullmatch"
        and f.pattern.endswith("$")
        and not f.pattern.endswith("\\$")
        and not f.flags & _re.MULTILINE
    ]
    assert not loose, loose


_KEYS = [
    "server_id",
    "device",
    "device_id",
    "rank_id",
    "device_ip",
    "super_device_id",
    "super_pod_id",
    "server_list",
    "rank_list",
    "server_count",
    "super_pod_list",
    "device_port",
    "host_port",
]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 70_000) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=5),
    max_leaves=15,
)


@settings(max_examples=150, deadline=None)
@given(
    doc=st.fixed_dictionaries(
        {"version": st.sampled_from(["1.0", "1.2", "2.0", 5]), "server_list": json_values},
        optional={"super_pod_list": json_values, "rank_list": json_values, "server_count": json_values},
    )
)
def test_a_rank_table_of_any_json_shape_is_judged(doc: dict[str, object]) -> None:
    """Ints or lists where objects are expected are findings, never exit 70."""
    from cannenv.fleet import ranktable

    assert ranktable.check_table(doc, [])


def test_a_folder_of_many_logs_is_a_few_lines(tmp_path: Path) -> None:
    """A plog folder past the file limit: the files not read are one line with their count, and the
    text names the first few sources (every one with --verbose and in --json)."""
    from cannenv.explain.inputs import MAX_DIR_FILES

    logs = tmp_path / "plog"
    logs.mkdir()
    for i in range(MAX_DIR_FILES + 50):
        (logs / f"plog-{i}.log").write_text("hello\n")
    args = [sys.executable, "-m", "cannenv", "explain", "--no-host", "--quiet", "--log", str(logs)]
    text = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert text.returncode in (0, 3) and len(text.stdout.splitlines()) < 20, text.stdout[:3000]
    assert f"50 more files past the first {MAX_DIR_FILES} (not read)" in text.stdout
    assert f"… and {MAX_DIR_FILES - 5} more (--verbose or --json lists every one)" in text.stdout
    doc = json.loads(subprocess.run([*args, "--json"], capture_output=True, text=True, timeout=300).stdout)
    assert len(doc["input"]["sources"]) == MAX_DIR_FILES
    assert doc["input"]["skipped"] == [f"{logs}: 50 more files past the first {MAX_DIR_FILES} (not read)"]


@pytest.mark.parametrize(
    ("line", "sid"),
    [
        ("worker pid 207018 started, listening on port 507011", None),
        ("copied 561103 bytes in 507899 us", None),
        ("aclnnAdd failed, error code is 561103", "ops-561103"),
        ("[ErrorCode: 507899] driver and firmware check", "driver-firmware-mismatch"),
        ("aclrtMalloc failed, ret=207018", "npu-oom"),
    ],
)
def test_a_bare_number_is_a_vendor_code_only_where_the_line_says_so(line: str, sid: str | None) -> None:
    """``pid 207018`` is not ACL_ERROR_RT_DEVICE_OOM: a numeric code needs an error word before it."""
    doc = json.loads(
        subprocess.run(
            [sys.executable, "-m", "cannenv", "explain", "--no-host", "--json", line],
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout
    )
    ids = [m["signature"] for m in doc["matches"]]
    assert (ids[:1] == [sid]) if sid else ids == [], ids


def test_a_colleagues_matrix_prints_each_statement_on_one_line(tmp_path: Path) -> None:
    """A matrix is hostile input: a note holding a newline and an OSC sequence is shown escaped in
    `matrix query`'s answer lines, never as a line of its own or a terminal command."""
    import shutil

    site = tmp_path / "matrices"
    shutil.copytree(ROOT / "matrices", site)
    hdk = site / "hdk.yaml"
    old = 'note: "older key of the table: 8.0.RC3.beta1"'
    assert old in hdk.read_text()
    hdk.write_text(
        hdk.read_text().replace(old, 'note: "older key\\n8.0.RC3 compatible with every HDK \\e]0;pwned\\a"')
    )
    argv = [sys.executable, "-m", "cannenv", "matrix", "--matrix", str(site), "query"]
    argv += ["--cann", "8.0.RC3", "--family", "a2"]
    r = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode in (0, 1), r.stderr
    assert "older key\\n8.0.RC3 compatible with every HDK \\x1b]0;pwned\\x07" in r.stdout, r.stdout
    assert "\x1b" not in r.stdout and "\x07" not in r.stdout
    assert not any(line.startswith("8.0.RC3 compatible") for line in r.stdout.splitlines())
