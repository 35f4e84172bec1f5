"""Hostile inputs, round 2: plans, provisioning and the fleet controller (issue 21).

A host, a matrix or a tree may say anything; none of it may steer the controller. The Ansible
tests run the real ``ansible-playbook`` (``ansible_connection=local``, every path the role writes
inside the test's temporary folder) and assert that no marker file appears.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

PWN = "{{ lookup('pipe', 'touch %s') }}"


def _ansible() -> Any:
    if shutil.which("ansible-playbook") is None:
        pytest.skip("ansible-playbook not installed (pip install 'cannenv[fleet]')")
    from cannenv.fleet.collect import import_ansible_runner

    return import_ansible_runner()


def _local_inventory(tmp_path: Path, host: str = "h") -> Path:
    inv = tmp_path / "inv.ini"
    inv.write_text(
        f"{host} ansible_connection=local ansible_python_interpreter={sys.executable}"
        f" cannenv_step_dir={tmp_path / 'step'} cannenv_step_failed_marker={tmp_path / 'failed-marker'}"
        " cannenv_step_become=false\n"
    )
    return inv


def _run_local(ansible_runner: Any, tmp_path: Path, plans: dict[str, Any], art: Path) -> Any:
    """The provision playbook over one local-connection host ``h``, as ``provision`` runs it."""
    from cannenv.plan.provision import _run_playbook

    return _run_playbook(
        ansible_runner,
        _local_inventory(tmp_path),
        plans,
        art,
        tmp_path / "work",
        forks=1,
        reboot=False,
        step_timeout=60,
        connect_timeout=10,
    )


def test_plan_text_from_a_host_is_never_an_ansible_template(tmp_path: Path) -> None:
    """Item 1: every string of a step (summary, commands, file names, versions) reaches
    ansible-playbook tagged ``!unsafe``: a host whose driver version is ``{{ lookup('pipe', …) }}``
    runs nothing on the controller."""
    ansible_runner = _ansible()
    from cannenv.plan.provision import classify

    markers = [tmp_path / f"pwned-{i}" for i in range(4)]
    art = tmp_path / "artifacts"
    art.mkdir()
    payload = b"an installer\n"
    (art / "inst.run").write_bytes(payload)
    out = tmp_path / "ran.txt"
    step = {
        "index": 1,
        "component": "driver",
        "action": "install",
        "summary": "install the NPU driver " + PWN % markers[0],
        "commands": [f"printf '%s\\n' {_sq(PWN % markers[1])} > {out}"],
        "reboot": False,
        "files": [{"name": "inst.run", "sha256": hashlib.sha256(payload).hexdigest()}],
        "version": PWN % markers[2],
        "{% raw %}": PWN % markers[3],
    }
    events = _run_local(ansible_runner, tmp_path, {"h": [step]}, art)
    seen = classify(events)
    assert [m for m in markers if m.exists()] == []
    assert seen["h"]["failure"] is None and seen["h"]["done"] == [1], seen
    assert out.read_text() == PWN % markers[1] + "\n"


def test_a_host_written_failure_marker_is_not_a_template(tmp_path: Path) -> None:
    """The half-installed marker is read back from the host: its text is module output, never rendered."""
    ansible_runner = _ansible()
    from cannenv.plan.provision import classify

    marker = tmp_path / "pwned"
    (tmp_path / "failed-marker").write_text(PWN % marker)
    art = tmp_path / "artifacts"
    art.mkdir()
    step = {"index": 1, "component": "driver", "action": "install", "summary": "s", "commands": ["true"]}
    events = _run_local(ansible_runner, tmp_path, {"h": [{**step, "reboot": False, "files": []}]}, art)
    assert not marker.exists()
    assert classify(events)["h"]["failure"][0] == "half-installed"


def _sq(text: str) -> str:
    import shlex

    return shlex.quote(text)


# -- item 3: plan --shell ---------------------------------------------------------------------------

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "hosts"


def _facts(name: str) -> Any:
    from cannenv.gather import read_env_file
    from cannenv.host import Host
    from cannenv.probes import collect

    d = EXAMPLES / name
    env = read_env_file(str(d / "host.env")) if (d / "host.env").exists() else {}
    return collect(Host((d / "tree").resolve(), env, True, 5.0), python=None, site_packages=())


def _hostile_shell_plan(tmp_path: Path) -> Any:
    """A plan whose every host-controlled string tries to end a comment or a quoted word and run
    ``: > PWN-<where>`` (a redirection: bash needs no program for it)."""
    from dataclasses import replace

    from cannenv import matrix as matrix_mod
    from cannenv.checks.stack import choose_target
    from cannenv.facts import CannInstall
    from cannenv.plan import compute_plan

    f = _facts("broken-driver-too-old")
    nl = "\n: > PWN-{}\n"
    breakout = '8.2.RC1" >&2; exit 1; }; : > PWN-guard; { echo "'
    other = CannInstall(
        path=f"/usr/local/Ascend/ascend-toolkit/{breakout}", layout="toolkit", version="8.2.RC1"
    )
    env = {**f.env.vars, "ASCEND_HOME_PATH": "/opt/x" + nl.format("env") + "\x1b[2K"}
    f = replace(
        f,
        hostname="node" + nl.format("hostname"),
        driver=replace(f.driver, version="24.1.rc1" + nl.format("driver")),
        python=replace(f.python, interpreter="/usr/bin/python3" + nl.format("python"), version="3.11.4"),
        cann=replace(f.cann, installs=(*f.cann.installs, other)),
        env=replace(f.env, vars=env),
    )
    m = matrix_mod.load()
    target = choose_target(f, m, stack_id="a2-cann8.5.0-torch2.8.0-py3.11")
    plan = compute_plan(f, target, cann_policy="replace", offline=True, hdk="auto")
    assert any(s.action == "remove" for s in plan.actions), plan.actions
    # the profile the environment step writes, moved into the test's folder
    # a matrix url that ends its comment line (urls are free text in anyone's matrix)
    steps = tuple(
        replace(
            s,
            commands=tuple(c.replace("/etc/profile.d/", f"{tmp_path}/") for c in s.commands),
            installers=tuple(replace(i, url="https://x.example/a\n: > PWN-url\n") for i in s.installers),
        )
        for s in plan.steps
    )
    return replace(plan, steps=steps)


def test_plan_shell_runs_nothing_a_host_wrote(tmp_path: Path) -> None:
    """Item 3: the script of ``plan --shell`` (and ``doctor --plan --shell``), run by bash line by
    line (``set``/``exit`` made no-ops so every line runs; no program on PATH but a ``readlink``
    that echoes its argument), creates no ``PWN-*`` file: newlines in the host's strings stay
    inside comments or quoted words, and the ``--cann-policy replace`` guard quotes its paths."""
    from cannenv.plan import render_shell

    script = render_shell(_hostile_shell_plan(tmp_path))
    stubs = tmp_path / "bin"
    stubs.mkdir()
    (stubs / "readlink").write_text('#!/bin/sh\nfor a; do last=$a; done; echo "$last"\n')
    (stubs / "readlink").chmod(0o755)
    (tmp_path / "plan.sh").write_text(script)
    run = tmp_path / "run"
    run.mkdir()
    proc = subprocess.run(
        ["/bin/bash", "-c", f"set() {{ :; }}; exit() {{ :; }}; source {tmp_path / 'plan.sh'}"],
        cwd=run,
        env={"PATH": str(stubs), "CANNENV_ARTIFACTS": str(tmp_path / "artifacts")},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert sorted(p.name for p in run.iterdir()) == [], proc.stdout + proc.stderr
    assert "\x1b" not in script and "PWN-hostname" in script and "PWN-url" in script


def test_shell_word_round_trips_through_bash() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from cannenv.sanitize import shell_word

    @settings(max_examples=60, deadline=None)
    @given(
        st.text(
            alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40
        )
    )
    def check(value: str) -> None:
        word = shell_word(value)
        assert "\n" not in word and "\x1b" not in word
        out = subprocess.run(
            ["/bin/bash", "-c", f"printf %s {word}"], capture_output=True, timeout=30, check=True
        ).stdout
        assert out == value.encode("utf-8", "surrogatepass")

    check()


def test_cann_policy_replace_guard_quotes_the_old_path(tmp_path: Path) -> None:
    """Item 3: a CANN directory named ``8.2.RC1" >&2; exit 1; }; : > PWN-guard; { echo "`` cannot
    leave the guard's message (``provision`` runs this guard as root)."""
    plan = _hostile_shell_plan(tmp_path)
    (remove,) = [s for s in plan.actions if s.action == "remove" and "PWN-guard" in s.commands[0]]
    stubs = tmp_path / "bin"
    stubs.mkdir()
    (stubs / "readlink").write_text('#!/bin/sh\nfor a; do last=$a; done; echo "$last"\n')
    (stubs / "readlink").chmod(0o755)
    run = tmp_path / "run"
    run.mkdir()
    proc = subprocess.run(
        ["/bin/bash", "-c", "set -eu\n" + remove.commands[0]],
        cwd=run,
        env={"PATH": str(stubs)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0 and list(run.iterdir()) == [], proc.stderr


# -- item 2 and 11: installer names and links ------------------------------------------------------

_STACK_YAML = """schema_version: 1
sources:
  - {{id: S, title: a source}}
stacks:
  - id: evil-stack
    family: a2
    arches: [aarch64]
    status: verified
    sources: [S]
    components:
      cann:
        version: 8.5.0
        sources: [S]
        artifacts:
          aarch64: {{file: "{file}", sha256: "{sha}"}}
"""


@pytest.mark.parametrize(
    "text",
    [
        _STACK_YAML.format(file="../../../secret.txt", sha="0" * 64),
        _STACK_YAML.format(file="/etc/shadow", sha="0" * 64),
        _STACK_YAML.format(file="..", sha="0" * 64),
        _STACK_YAML.format(file="a\\nb.run", sha="0" * 64),
        "schema_version: 1\nsources:\n  - {id: S, title: a source}\ninstallers:\n"
        '  - {component: cann, package: p, pattern: "../{version}.run", sources: [S]}\n',
        "schema_version: 1\nsources:\n  - {id: S, title: a source}\ndownloads:\n"
        f'  - {{file: "../x.zip", component: cann, version: 8.5.0, sha256: "{"0" * 64}", sources: [S]}}\n',
    ],
    ids=[
        "artifact-dotdot",
        "artifact-absolute",
        "artifact-dotdot-only",
        "artifact-newline",
        "pattern",
        "download",
    ],
)
def test_matrix_file_names_must_be_plain_names(tmp_path: Path, text: str) -> None:
    """Item 2: one file-name rule for every matrix file field, checked when the matrix loads."""
    from cannenv import matrix as matrix_mod
    from cannenv.errors import InputError

    p = tmp_path / "evil.yaml"
    p.write_text(text)
    with pytest.raises(InputError) as exc:
        matrix_mod.load([str(p)])
    assert "evil.yaml" in exc.value.message


def test_provision_refuses_a_plan_file_name_that_leaves_artifacts(tmp_path: Path) -> None:
    """Item 2, the second check where files are copied: a plan (e.g. read back from JSON) naming
    ``../secret.txt`` stops the host before anything is copied."""
    from cannenv.plan.model import Installer, Plan, Step
    from cannenv.plan.provision import role_steps

    art = tmp_path / "artifacts"
    art.mkdir()
    (tmp_path / "secret.txt").write_text("controller secret")
    step = Step(
        index=1,
        component="cann",
        action="install",
        summary="s",
        installers=(Installer(file="../secret.txt", sha256="0" * 64),),
        commands=("true",),
    )
    steps, refused = role_steps(Plan(host="h", steps=(step,)), art, allow_unpinned=False)
    assert steps == [] and "not a plain file name" in refused[0][1]


def test_a_link_in_artifacts_that_leaves_it_is_refused(tmp_path: Path) -> None:
    """Item 11: ``--artifacts`` is trusted, but a wheel that is a link out of it would ship a
    controller file: refused."""
    from cannenv.plan.model import Installer, Plan, Step
    from cannenv.plan.provision import role_steps

    art = tmp_path / "artifacts"
    art.mkdir()
    (tmp_path / "secret.txt").write_text("controller secret")
    (art / "inst.run").symlink_to(tmp_path / "secret.txt")
    (art / "inside.run").write_text("ok")
    (art / "alias.run").symlink_to("inside.run")
    step = Step(
        index=1,
        component="cann",
        action="install",
        summary="s",
        installers=(Installer(file="inst.run", sha256="0" * 64),),
        commands=("true",),
    )
    steps, refused = role_steps(Plan(host="h", steps=(step,)), art, allow_unpinned=False)
    assert steps == [] and "a link that leaves the folder" in refused[0][1]
    ok = replace_installer(step, "alias.run")  # a link inside the folder is fine (its digest is judged)
    steps, refused = role_steps(Plan(host="h", steps=(ok,)), art, allow_unpinned=False)
    assert steps == [] and "alias.run in --artifacts has sha256" in refused[0][1]


def replace_installer(step: Any, name: str) -> Any:
    from dataclasses import replace

    from cannenv.plan.model import Installer

    return replace(step, installers=(Installer(file=name, sha256="0" * 64),))


def test_the_step_role_refuses_a_path_before_copying_or_removing(tmp_path: Path) -> None:
    """Item 2 in the role itself (plain playbook users pass their own plans): ``../victim.txt`` is
    refused before the copy, the checksum removal and the clean-up can touch ``victim.txt``."""
    ansible_runner = _ansible()
    from cannenv.plan.provision import classify

    art = tmp_path / "artifacts"
    art.mkdir()
    (tmp_path / "step").mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    step = {
        "index": 1,
        "component": "cann",
        "action": "install",
        "summary": "s",
        "commands": ["true"],
        "reboot": False,
        "files": [{"name": "../victim.txt", "sha256": "0" * 64}],
    }
    events = _run_local(ansible_runner, tmp_path, {"h": [step]}, art)
    failure = classify(events)["h"]["failure"]
    assert failure is not None and failure[0] == "bad-file-name", failure
    assert victim.read_text() == "keep me"


# -- facts: template markers and lone surrogates ----------------------------------------------------


def _saved_facts(tmp_path: Path, name: str, **changes: Any) -> Path:
    import json

    doc = json.loads(_facts("a2-cann8.5-new-layout").to_json())
    for dotted, v in changes.items():
        node = doc
        *head, last = dotted.split("__")
        for k in head:
            node = node[k]
        node[last] = v
    p = tmp_path / f"{name}.json"
    p.write_text(json.dumps(doc))  # ensure_ascii: a lone surrogate is written as \ud800
    return p


def test_facts_with_a_template_marker_are_bad_input(tmp_path: Path) -> None:
    """Item 1, at load: no host reports ``{{``/``{%``/``{#``; a facts file holding one is exit 2
    naming the field (so provision never plans from it)."""
    from tests.helpers.cli import cannenv

    p = _saved_facts(tmp_path, "evil", driver__version=PWN % (tmp_path / "pwned"))
    r = cannenv("doctor", "--facts", str(p))
    assert r.returncode == 2, r.stderr
    assert "driver.version" in r.stderr and "template marker" in r.stderr
    assert not (tmp_path / "pwned").exists()


def test_a_lone_surrogate_marks_one_node_invalid_not_the_fleet(tmp_path: Path) -> None:
    """Item 8: ``"\\ud800"`` in one facts file: ``doctor --facts`` is exit 2; ``fleet report``
    marks that node ``invalid-facts`` and judges the others."""
    import json

    from cannenv.fleet.collection import Collection, HostResult
    from tests.helpers.cli import cannenv

    folder = tmp_path / "coll"
    folder.mkdir()
    _saved_facts(folder, "good")
    bad = _saved_facts(folder, "bad", hostname="node\ud800")
    assert "\\ud800" in bad.read_text()
    r = cannenv("doctor", "--facts", str(bad))
    assert r.returncode == 2 and "surrogate" in r.stderr, r.stderr
    hosts_ = tuple(HostResult(name=n, status="collected", facts_file=f"{n}.json") for n in ("good", "bad"))
    (folder / "collection.json").write_text(Collection(hosts=hosts_, root=folder).to_json())
    r = cannenv("fleet", "report", str(folder), "--json")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr  # 2: a facts file was unreadable
    nodes = {n["name"]: n for n in json.loads(r.stdout)["nodes"]}
    assert nodes["bad"]["collect_status"] == "invalid-facts"
    assert nodes["good"]["collect_status"] != "invalid-facts"
    out = tmp_path / "out"
    r = cannenv(
        "fleet",
        "report",
        str(folder),
        "--html",
        f"{out}.html",
        "--junit",
        f"{out}.xml",
        "--node-metrics",
        str(out),
    )
    assert r.returncode == 2, r.stderr
    assert "bad" in r.stdout and Path(f"{out}.html").is_file()


# -- item 4: inventory names ------------------------------------------------------------------------


def test_fleet_collect_refuses_host_names_that_are_paths_before_running(tmp_path: Path) -> None:
    """Item 4: a host named ``../../x`` would write its facts two levels above ``--out`` (and remove
    ``../../x.json`` when it fails): refused, exit 2, before any host is contacted."""
    _ansible()
    from tests.helpers.cli import cannenv

    victim = tmp_path / "x.json"
    victim.write_text("keep me")
    inv = tmp_path / "inv.ini"
    inv.write_text(
        f"good ansible_connection=local ansible_python_interpreter={sys.executable}\n"
        f"../../x ansible_connection=local ansible_python_interpreter={sys.executable}\n"
    )
    out = tmp_path / "a" / "b"
    r = cannenv("fleet", "collect", "-i", str(inv), "--out", str(out), "--no-bundle")
    assert r.returncode == 2, r.stderr
    assert "'../../x'" in r.stderr and "not a plain file name" in r.stderr
    assert victim.read_text() == "keep me" and not out.exists()


def test_the_facts_role_refuses_such_a_host_name_too(tmp_path: Path) -> None:
    """Item 4 for plain playbook users: the role fails that host before it fetches anything."""
    exe = shutil.which("ansible-playbook")
    if exe is None:
        pytest.skip("ansible-playbook not installed (pip install 'cannenv[fleet]')")
    from cannenv.fleet.collect import playbook_path

    dest = tmp_path / "dest"
    dest.mkdir()
    inv = tmp_path / "inv.ini"
    inv.write_text(f"../x ansible_connection=local ansible_python_interpreter={sys.executable}\n")
    r = subprocess.run(
        [exe, "-i", str(inv), str(playbook_path()), "-e", f"cannenv_facts_dest={dest}"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={"PATH": "/usr/bin:/bin:" + str(Path(sys.executable).parent), "ANSIBLE_NOCOLOR": "1"},
    )
    assert r.returncode != 0 and "bad-host-name" in r.stdout, r.stdout[-2000:]
    assert list(tmp_path.glob("*.json")) == [] and list(dest.iterdir()) == []


# -- item 6: wheel read budgets ---------------------------------------------------------------------


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    import zipfile

    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_a_torch_npu_wheel_of_many_big_operator_yamls_is_refused_before_reading(tmp_path: Path) -> None:
    """Item 6: operator yaml members just under the per-member limit, many of them: the count and
    the declared total are checked before a byte is inflated."""
    from cannenv.errors import InputError
    from cannenv.model import registry

    aten = "torch_npu/csrc/aten/npu_native_functions{}.yaml"
    many = _zip(tmp_path / "many.whl", {aten.format(f"_{i}"): b"supported: []\n" for i in range(40)})
    with pytest.raises(InputError, match="reads at most 16"):
        registry.from_wheel(many)
    big = b"#" * (15 << 20)
    heavy = _zip(tmp_path / "heavy.whl", {aten.format(f"_{i}"): big for i in range(4)})
    assert heavy.stat().st_size < 1 << 20
    with pytest.raises(InputError, match="declare 62914560 bytes together"):
        registry.from_wheel(heavy)
    ok = _zip(tmp_path / "ok.whl", {aten.format(""): b"supported:\n  - mm\n"})
    assert registry.from_wheel(ok).sections("aten::mm") == ("supported",)


def test_an_importer_artefact_has_a_total_read_budget(tmp_path: Path) -> None:
    """Item 6 for the matrix importers: every member read counts against one budget per artefact."""
    from cannenv.errors import InputError
    from cannenv.matrix.artefact import MAX_MEMBER, MAX_TOTAL, Artefact

    wheel = _zip(tmp_path / "x.whl", {"pkg/big.json": b" " * (MAX_MEMBER - 1)})
    with Artefact(wheel) as art, pytest.raises(InputError, match="in all"):
        for _ in range(MAX_TOTAL // MAX_MEMBER + 2):
            art.read("pkg/big.json")


# -- items 7 and 8: certificates ---------------------------------------------------------------------


def _forged_cert(tmp_path: Path, name: str, edit: Any) -> Path:
    """An unsigned certificate, edited and made self-consistent again (its digest recomputed):
    verification passes, as it would for anyone who rewrites an unsigned file."""
    import json

    import tests.unit.test_certificate as tc
    from cannenv.certify import certificate as C

    path = tmp_path / f"{name}.json"
    C.write(tc._cert(), path)
    env = json.loads(path.read_text())
    edit(env["certificate"])
    env["sha256"] = C.digest_of(env["certificate"])
    path.write_text(C.render(env))
    return path


def test_cert_replay_cannot_print_a_fake_install_line(tmp_path: Path) -> None:
    """Item 7: a forged version ``2.8.0\\n  8. rm -rf / (certified)`` stays on its own line,
    escapes visible."""
    from tests.helpers.cli import cannenv

    def edit(body: dict[str, Any]) -> None:
        body["stack"]["versions"] = {"torch": "2.8.0\n  8. rm -rf / (certified)\x1b]0;title\x07"}
        body["stack"]["pins"] = {"torch": {"version": "2.8.0\n  8. rm -rf / (certified)"}}
        body["host"]["versions"] = {"torch": "\x1b[2K2.8.0"}

    cert = _forged_cert(tmp_path, "forged", edit)
    r = cannenv("cert", "replay", str(cert))
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stdout and "\x07" not in r.stdout
    assert not any(line.lstrip().startswith("8. rm") for line in r.stdout.splitlines()), r.stdout
    assert "\\n  8. rm -rf /" in r.stdout
    plain = _forged_cert(tmp_path, "plain", lambda body: None)
    r = cannenv("cert", "diff", str(plain), str(cert))
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stdout and not any(
        line.lstrip().startswith("8. rm") for line in r.stdout.splitlines()
    )


def test_cert_diff_of_a_deeply_nested_certificate_is_not_a_crash(tmp_path: Path) -> None:
    """Item 8: a self-consistent certificate nested 400 deep is refused by the bounded reader (exit
    5: it does not verify as a cannenv certificate), never exit 70."""
    from tests.helpers.cli import cannenv

    def edit(body: dict[str, Any]) -> None:
        deep: Any = "x"
        for _ in range(400):
            deep = {"k": deep}
        body["options"] = {"deep": deep}

    plain = _forged_cert(tmp_path, "plain", lambda body: None)
    deep = _forged_cert(tmp_path, "deep", edit)
    for args in (("diff", str(plain), str(deep)), ("replay", str(deep)), ("verify", str(deep))):
        r = cannenv("cert", *args)
        assert r.returncode == 5, (args, r.returncode, r.stderr[-500:])
        assert "Traceback" not in r.stderr and "nested deeper than 64" in r.stderr


# -- items 7 and 8: importer strings on the terminal -------------------------------------------------


def test_importer_strings_are_never_rich_markup(tmp_path: Path) -> None:
    """Items 7 and 8: a METADATA cell ``[/x]`` was a Rich MarkupError (exit 70); ``[link=…]`` a
    hyperlink; ESC a terminal sequence. Printed as text now."""
    from tests.helpers.cli import cannenv

    src = Path(__file__).resolve().parents[1] / "data" / "torch_npu" / "torch_npu-2.7.1.post2.METADATA"
    text = src.read_text(encoding="utf-8").replace("v2.6.0-7.3.0   ", "[/x]\x1b]0;t\x07  ", 1)
    for cell in ("[link=https://evil.example]v2.6[/link]", "[/x]"):
        meta = tmp_path / "METADATA"
        meta.write_text(text.replace("[/x]", cell, 1), encoding="utf-8")
        r = cannenv("matrix", "import-torch-npu", str(meta))
        assert r.returncode == 0, r.stderr[-800:]
        assert cell.split("]")[0] + "]" in r.stdout
        assert "\x1b" not in r.stdout and "\x07" not in r.stdout


# -- item 10: the k8s agent and a hostile API server ------------------------------------------------


@pytest.mark.parametrize("kind", ["endless", "slow"])
def test_k8s_label_bounds_the_api_servers_reply(tmp_path: Path, kind: str) -> None:
    """Item 10: an endless body is read up to a bound, then refused (exit 6); a server sending one
    byte a second is abandoned once the request's whole time is spent."""
    import threading
    import time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from cannenv.errors import ExternalError
    from cannenv.fleet.k8s import apply_labels

    stop = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_PATCH(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            try:
                while not stop.is_set():
                    if kind == "endless":
                        self.wfile.write(b" " * (1 << 16))
                    else:
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        time.sleep(0.5)
            except OSError:
                pass

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(ExternalError, match="larger than" if kind == "endless" else "no complete reply"):
            apply_labels(
                "node-1",
                {"metadata": {"labels": {}}},
                api=f"http://127.0.0.1:{server.server_port}",
                token="t",
                timeout=3,
            )
    finally:
        stop.set()
        server.shutdown()


# -- item 9: a driver version that is not one --------------------------------------------------------


def test_a_driver_version_that_is_not_one_never_passes(tmp_path: Path) -> None:
    """Item 9: ``Version=99.9.9 garbage``: ``driver-installed`` is an error (not a pass) and
    ``probe-files`` names the file and the line."""
    import json

    from tests.helpers import hosts
    from tests.helpers.cli import cannenv

    tree = hosts.HostTree(tmp_path / "tree").driver(
        hosts.DRIVER_25_3_RC1.replace("25.3.rc1", "99.9.9 garbage")
    )
    r = cannenv("doctor", "--root", str(tree.root), "--json")
    findings = {f["id"]: f for f in json.loads(r.stdout)["findings"]}
    assert findings["driver-installed"]["status"] == "error", findings["driver-installed"]
    n = next(
        i for i, ln in enumerate(hosts.DRIVER_25_3_RC1.splitlines(), 1) if ln.startswith("package_version=")
    )
    assert f"/usr/local/Ascend/driver/version.info:{n}: '99.9.9 garbage'" in findings["probe-files"]["detail"]


# -- items 12 and 13: lock fields, image push --to, --node-selector ------------------------------------


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (("python_requirements", 0, "name"), "../../etc/passwd", "python_requirements.0.name"),
        (("python_requirements", 0, "version"), "1.0/../../x", "python_requirements.0.version"),
        (("image_digest",), "registry.example/team/cann@latest", "image_digest"),
        (("image_digest",), "registry.example/team/cann:latest", "image_digest"),
        (("installers", 0, "file"), "../secret.run", "installers.0.file"),
    ],
)
def test_lock_fields_that_would_leave_their_place_are_bad_input(
    tmp_path: Path, path: tuple[Any, ...], value: str, field: str
) -> None:
    """Item 12: a requirement name became ``pkg:pypi/../../…``; ``REPO@latest`` made
    ``pull --locked`` fetch a moving tag. Both are refused when the lock is read (exit 2, the field)."""
    import json

    from cannenv.errors import InputError
    from cannenv.lock import load_lock, write_lock
    from tests.unit.test_lock import sample

    good = write_lock(tmp_path / "good.json", sample(image_digest="r.example/t/c@sha256:" + "a" * 64))
    assert load_lock(good).image_digest
    doc = json.loads(good.read_text())
    node = doc
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=field.replace(".", r"\.")):
        load_lock(bad)


def test_image_push_to_says_what_is_wrong_without_dockerfile_talk() -> None:
    """Item 13: ``--to`` is a registry reference; no Dockerfile is involved."""
    from tests.helpers.cli import cannenv

    r = cannenv("image", "push", "img", "--to", "Bad Repo!:x")
    assert r.returncode == 2, r.stderr
    assert "not a registry repository" in r.stderr and "Dockerfile" not in r.stderr


@pytest.mark.parametrize("value", ["a" * 64, "-x", "x y", "x/y", "ok."])
def test_node_selector_values_follow_kubernetes_label_rules(value: str) -> None:
    """Item 13: values Kubernetes would reject are refused before a manifest is written."""
    from cannenv.errors import InputError
    from cannenv.fleet.k8s import render_manifest

    with pytest.raises(InputError, match="not a label value"):
        render_manifest("img:1", stack_id="s1", node_selector={"node.kubernetes.io/npu": value})
    render_manifest("img:1", stack_id="s1", node_selector={"node.kubernetes.io/npu": "910b.x_1"})


# -- item 8: one bounded JSON reader everywhere -------------------------------------------------------

_DEEP = "[" * 100_000 + "]" * 100_000
_HUGE = '{"schema_version": 1, "n": ' + "9" * 5000 + "}"


@pytest.mark.parametrize("body", [_DEEP, _HUGE], ids=["deep", "5000-digits"])
def test_importer_json_is_read_by_the_bounded_reader(tmp_path: Path, body: str) -> None:
    """Item 8: deployer manifests and index listings were plain ``json.loads`` (exit 70 on a
    100,000-deep array or a 5,000-digit integer): bad input now, exit 2 naming the file."""
    from tests.helpers.cli import cannenv

    src = Path(__file__).resolve().parents[1] / "data" / "ascend_deployer_releases" / "6.0.0"
    release = tmp_path / "release"
    shutil.copytree(src, release)
    (release / "ascend_deployer/downloader/software/CANN_8.0.0.json").write_text(body)
    r = cannenv("matrix", "import-deployer", str(release))
    assert r.returncode == 2 and "CANN_8.0.0.json" in r.stderr and "Traceback" not in r.stderr, r.stderr
    listing = tmp_path / "listing.json"
    listing.write_text(body)
    r = cannenv("matrix", "import-index", "--listing", str(listing))
    assert r.returncode == 2 and "listing.json" in r.stderr and "Traceback" not in r.stderr, r.stderr
    matrix_json = tmp_path / "m.json"
    matrix_json.write_text(body)
    r = cannenv("matrix", "--matrix", str(matrix_json), "list")
    assert r.returncode == 2 and "m.json" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_a_5000_digit_version_in_saved_facts_is_not_a_crash(tmp_path: Path) -> None:
    """Item 8: versions are strings in JSON, so the reader lets them through; the version parser
    refuses more than 128 characters (Python's int-digits limit made it exit 70)."""
    from tests.helpers.cli import cannenv

    big = "9" * 5000
    p = _saved_facts(tmp_path, "big", driver__version=big, python__version="3." + big)
    for args in (("doctor", "--facts", str(p)), ("plan", "--facts", str(p))):
        r = cannenv(*args)
        assert r.returncode in (1, 2) and "Traceback" not in r.stderr, (args, r.returncode, r.stderr[-600:])
        assert "internal error" not in r.stderr


def test_provision_stops_only_the_host_whose_facts_hold_a_template(tmp_path: Path) -> None:
    """Item 1 at the fleet level: the refused facts make that host ``not-collected`` with the reason;
    the other hosts are planned."""
    from cannenv.fleet.collection import Collection, HostResult
    from cannenv.plan.provision import _load_facts

    folder = tmp_path / "before"
    folder.mkdir()
    _saved_facts(folder, "good")
    _saved_facts(folder, "evil", driver__version=PWN % (tmp_path / "pwned"))
    hosts_ = tuple(HostResult(name=n, status="collected", facts_file=f"{n}.json") for n in ("good", "evil"))
    (folder / "collection.json").write_text(Collection(hosts=hosts_, root=folder).to_json())
    facts, missing = _load_facts(folder)
    assert set(facts) == {"good"} and "template marker" in missing["evil"]
