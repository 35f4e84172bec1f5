"""How processes die (``deaths`` and the death extractors of knowledge.yaml; cannenv/explain/judge.py).

Each report of a child killed by a signal, in the wording of the program that prints it (bash's
jobs.c with glibc's strsignal texts, CPython's subprocess/multiprocessing/faulthandler, PyTorch's
elastic agent, spawn and DataLoader, an exit status of 128+N), through the real scanner and judge:
every one resolves to signal(7)'s row; a death is a fact of the explanation; SIGKILL points to host
memory but stays undecided until the kernel's OOM-killer line ties it (then confirmed by that line);
SIGSEGV/SIGABRT name no cause, never outrank another signature and are never the program's own bug.
Traps: a ``Killed`` or a segmentation fault beside a real version error leaves the version error
first, over the whole working corpus. Hostile inputs: a line of megabytes, a hundred thousand deaths.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from cannenv import linre
from cannenv.errors import InputError
from cannenv.explain import judge, render, signatures
from cannenv.explain.knowledge import parse_knowledge, shipped_path
from cannenv.explain.scan import MAX_EVIDENCE, Scanner, ScanResult

TABLE = signatures.shipped()
assert TABLE.knowledge is not None and TABLE.knowledge.deaths is not None
DEATHS = TABLE.knowledge.deaths
DATA = Path(__file__).resolve().parents[1] / "data" / "errors"
SITE = "/usr/local/lib/python3.11/site-packages"


def _scan(text: str) -> ScanResult:
    data = text.encode()
    s = Scanner(TABLE, total_hint=len(data))
    s.feed(data)
    s.end_input()
    return s.result()


def _explain(text: str, **kw: Any) -> judge.Explanation:
    return judge.explain(TABLE, _scan(text), **kw)


def _died(ex: judge.Explanation) -> list[str | None]:
    return [d.name for d in ex.deaths]


# --- the table is signal(7)'s, its texts glibc's ------------------------------------------------
@pytest.mark.skipif(sys.platform != "linux", reason="signal(7) and glibc's strsignal are Linux's")
def test_the_signal_table_is_this_linux_hosts_own() -> None:
    """Every standard signal whose default action ends a process is a row, numbered as this host's
    C library numbers it, its first text what strsignal() prints for it (what bash prints)."""
    ends = {
        s
        for s in signal.Signals
        if s.value < 32
        and s.name
        not in ("SIGCHLD", "SIGCONT", "SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG", "SIGWINCH")
    }
    assert {x.name for x in DEATHS.signals} == {s.name for s in ends}
    for x in DEATHS.signals:
        assert signal.Signals[x.name].value == x.number, x
        if x.texts:
            assert x.texts[0] == signal.strsignal(x.number), x
    assert [x.name for x in DEATHS.signals if x.reading is not None] == ["SIGKILL"]


def test_a_signal_is_found_by_number_name_or_text() -> None:
    for said in ("9", "-9", "SIGKILL", "KILL", "Killed"):
        assert (x := DEATHS.signal(said)) is not None and x.name == "SIGKILL", said
    assert DEATHS.signal("Segmentation fault") is DEATHS.signal("11")
    assert DEATHS.signal("ABORT instruction") is DEATHS.signal("SIGABRT")  # bash's own list
    assert DEATHS.signal("Floating-point exception") is DEATHS.signal("8")  # faulthandler's spelling
    assert DEATHS.signal("19") is None and DEATHS.signal("SIGSTOP") is None  # stops, does not end
    assert DEATHS.signal("Killed process") is None


# --- each printer's wording ------------------------------------------------------------------------
REPORTS = [
    ("Killed", "SIGKILL"),
    ("Segmentation fault (core dumped)", "SIGSEGV"),
    ("Segmentation fault", "SIGSEGV"),
    ("  Aborted (core dumped)", "SIGABRT"),
    ("Bus error (core dumped)", "SIGBUS"),
    ("Illegal instruction (core dumped)", "SIGILL"),
    ("Floating point exception (core dumped)", "SIGFPE"),
    ("Terminated", "SIGTERM"),
    ("Trace/breakpoint trap (core dumped)", "SIGTRAP"),
    ("./run_train.sh: line 42: 31337 Killed                  python3 train.py --config a.yaml", "SIGKILL"),
    ("/bin/bash: line 1:   137 Illegal instruction     (core dumped) ./flow_server", "SIGILL"),
    ("[1]+  Killed                  nohup python3 serve.py", "SIGKILL"),
    (
        "subprocess.CalledProcessError: Command '['python3', 'x.py']' died with <Signals.SIGKILL: 9>.",
        "SIGKILL",
    ),
    ("<Process name='Process-1' pid=4242 parent=1 stopped exitcode=-SIGSEGV>", "SIGSEGV"),
    ("<Process(Process-1, stopped[SIGABRT])>", "SIGABRT"),
    ("  exitcode  : -9 (pid: 12345)", "SIGKILL"),
    ("  traceback : Signal 6 (SIGABRT) received by PID 1799", "SIGABRT"),
    (
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -11) local_rank: 0 "
        "(pid: 77) of binary: /usr/bin/python3",
        "SIGSEGV",
    ),
    (
        "torch.multiprocessing.spawn.ProcessExitedException: process 3 terminated with signal SIGKILL",
        "SIGKILL",
    ),
    ("RuntimeError: DataLoader worker (pid 2417) is killed by signal: Killed. ", "SIGKILL"),
    ("RuntimeError: DataLoader worker (pid 2417) is killed by signal: Bus error. ", "SIGBUS"),
    ("Fatal Python error: Segmentation fault", "SIGSEGV"),
    ("Fatal Python error: Floating-point exception", "SIGFPE"),
    ("test-job-0 exited with code 137", "SIGKILL"),
    ("    Exit Code:    139", "SIGSEGV"),
    ("        exitCode: 137", "SIGKILL"),
    ("subprocess.CalledProcessError: Command 'bash run.sh' returned non-zero exit status 134.", "SIGABRT"),
]


@pytest.mark.parametrize(("line", "name"), REPORTS)
def test_each_report_of_a_death_names_its_signal(line: str, name: str) -> None:
    ex = _explain(f"step 100 loss 2.31\n{line}\n")
    assert _died(ex) == [name], line
    d = ex.deaths[0]
    assert d.signal == signal.Signals[name].value if sys.platform == "linux" else d.signal
    assert d.line == line.strip() and d.sources and d.action in ("Term", "Core")


@pytest.mark.parametrize(
    "line",
    [
        "Killed process 4242 (python3)",  # not the shell's report, not the kernel's (no total-vm)
        "Killed by the user after 3 epochs",
        "Task Terminated successfully",
        "Aborted: the request was cancelled",
        "exit code 1",
        "exited with code 0",
        "exit status 255",
        "process exited with code 200",
        "exitcode=-1 (not a signal name)",
        "Fatal Python error: Py_Initialize: unable to load the file system codec",
        "Command 'ls' returned non-zero exit status 2.",
    ],
)
def test_words_that_are_not_a_death_are_not_read_as_one(line: str) -> None:
    assert _explain(f"{line}\n").deaths == (), line


def test_a_pools_worker_that_died_is_a_death_without_a_signal() -> None:
    text = (
        "concurrent.futures.process.BrokenProcessPool: A process in the process pool was terminated "
        "abruptly while the future was running or pending.\n"
    )
    ex = _explain(text)
    assert [(d.name, d.signal) for d in ex.deaths] == [(None, None)]
    assert not ex.matches and ex.exit_code == 3


# --- SIGKILL: host memory, tied only by the kernel's OOM killer ---------------------------------------
def test_a_sigkill_alone_points_to_host_memory_undecided() -> None:
    for text in ("Killed\n", "  exitcode  : -9 (pid: 12345)\n", "container exited with code 137\n"):
        for findings in (None, ()):  # with or without the doctor's findings: no host fact ties it
            ex = _explain(text, findings=findings)
            assert [m.id for m in ex.matches] == ["process-killed-sigkill"], text
            (c,) = ex.causes
            assert (c.id, c.status, c.tie) == ("oom", "undecided", None)
            assert "dmesg" in " ".join(c.decide) and "npu-smi" not in " ".join(c.decide)
            assert c.remedy is not None and "RAM" in c.remedy and "not the NPU" in c.remedy
            assert ex.exit_code == 0


KERNEL = [
    "[ 4711.3] Out of memory: Killed process 31337 (python3) total-vm:98765432kB, anon-rss:61234567kB, "
    "file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:123456kB oom_score_adj:0",
    "[ 4711.3] Memory cgroup out of memory: Killed process 31337 (python3) total-vm:1kB, anon-rss:1kB",
    "Out of memory: Kill process 31337 (python3) score 912 or sacrifice child",
    "Killed process 31337 (python3) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB",
    "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,task=python3,pid=31337",
    "[ 4711.2] python3 invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0",
    "[ 4711.4] oom_reaper: reaped process 31337 (python3), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB",
    "      Reason:       OOMKilled",
]


@pytest.mark.parametrize("line", KERNEL)
def test_the_kernels_oom_killer_confirms_host_memory_by_its_own_line(line: str) -> None:
    ex = _explain(f"./run.sh: line 3: 31337 Killed   python3 train.py\n{line}\n")
    top = ex.causes[0]
    assert (top.id, top.status, top.signature) == ("oom", "confirmed", "kernel-oom-killer")
    assert top.tie is not None and top.tie.startswith(judge.LOG_TIE) and line.strip() in top.tie
    assert top.remedy is not None and "RAM" in top.remedy
    assert _died(ex) == ["SIGKILL"] and ex.exit_code == 1
    doc = json.loads(render.to_json(ex))
    assert doc["causes"][0]["tie"] == top.tie and doc["deaths"][0]["name"] == "SIGKILL"
    assert "tied to this error by: the log shows the kernel's OOM killer" in render.render_text(
        ex, verbose=True
    )


def test_the_kernels_out_of_memory_line_is_not_read_as_the_devices() -> None:
    kernel = KERNEL[0] + "\n"
    ids = [m.id for m in _explain(kernel).matches]
    assert ids == ["kernel-oom-killer"]  # the generic 'out of memory' reading (device memory) is decided
    npu = "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\n"
    assert "out-of-memory-generic" in [m.id for m in _explain(npu).matches]
    assert "out-of-memory-generic" in [m.id for m in _explain(npu + kernel).matches]  # it read its own line


def test_a_death_decides_the_helpers_parent_gone_reading() -> None:
    helper = "[Error] TBE Subprocess[task_distribute] raise error[], main process disappeared!\n"
    assert [c.id for c in _explain(helper).causes] == ["not-a-version-problem"]
    ex = _explain("Killed\n" + helper)
    assert [m.id for m in ex.matches] == ["process-killed-sigkill"] and ex.causes[0].id == "oom"
    ex = _explain("Segmentation fault (core dumped)\n" + helper)  # names no cause: the helper's reading stays
    assert [m.id for m in ex.matches] == ["worker-parent-exited"] and _died(ex) == ["SIGSEGV"]


# --- SIGSEGV, SIGABRT …: facts, never a cause, never the program's own bug ----------------------------
def test_a_crash_signal_alone_names_no_cause() -> None:
    for text, name in (
        ("Segmentation fault (core dumped)\n", "SIGSEGV"),
        (
            "terminate called after throwing an instance of 'std::length_error'\nAborted (core dumped)\n",
            "SIGABRT",
        ),
    ):
        ex = _explain(text)
        assert not ex.matches and not ex.causes and ex.exit_code == 3
        assert _died(ex) == [name] and name in ex.verdict and "names no cause" in ex.verdict
        out = render.render_text(ex)
        assert f"a process died: {name}" in out and "a symptom" in out
        assert json.loads(render.to_json(ex))["deaths"][0]["name"] == name


def test_a_traceback_cut_by_a_death_is_not_the_programs_own_bug() -> None:
    frames = "".join(
        f'  File "/work/app/{m}.py", line {n}, in {f}\n    {f}()\n'
        for m, n, f in (("train", 10, "main"), ("loop", 52, "step"), ("model", 7, "forward"))
    )
    tb = "Traceback (most recent call last):\n" + frames
    assert [m.id for m in _explain(tb).matches] == ["program-code-cut-traceback"]  # the reading exists
    for death in ("Segmentation fault (core dumped)", "Killed", "Fatal Python error: Aborted"):
        ex = _explain(tb + death + "\n")
        assert "program-code-cut-traceback" not in [m.id for m in ex.matches], death
        assert "not-a-version-problem" not in [c.id for c in ex.causes], death


def test_a_crash_beside_another_signature_does_not_outrank_it() -> None:
    text = (DATA / "pt-7-init-env-failed.txt").read_text(encoding="utf-8")  # EH9999 … Aborted (core dumped)
    assert "Aborted (core dumped)" in text
    before = [c.id for c in _explain(text.replace("Aborted (core dumped)", "")).causes]
    ex = _explain(text)
    assert [c.id for c in ex.causes] == before and before and _died(ex) == ["SIGABRT"]


# --- traps: the real error wins over the death beside it --------------------------------------------
CASES: list[dict[str, Any]] = yaml.safe_load((DATA / "cases.yaml").read_text(encoding="utf-8"))
SPLIT: dict[str, Any] = json.loads((DATA / "split.json").read_text(encoding="utf-8"))


def _version_cases() -> list[tuple[str, str]]:
    held = set(SPLIT["held_out"])
    out = []
    for c in CASES:
        if c["file"] in held or not TABLE.causes[c["cause"]].version_problem:
            continue
        ex = _explain((DATA / c["file"]).read_text(encoding="utf-8", errors="replace"))
        if ex.causes and ex.causes[0].id == c["cause"]:
            out.append((c["file"], c["cause"]))
    return out


def test_killed_beside_a_real_version_error_leaves_the_version_error_first() -> None:
    """The trap over the whole working corpus: every version/installation excerpt explained right
    stays explained right with a SIGKILL, a segmentation fault or an exit status 137 beside it."""
    cases = _version_cases()
    assert len(cases) >= 60
    for file, cause in cases:
        text = (DATA / file).read_text(encoding="utf-8", errors="replace")
        for death in ("Killed", "Segmentation fault (core dumped)", "  exitcode  : -9 (pid: 4242)"):
            for placed in (f"{text}\n{death}\n", f"{death}\n{text}"):
                ex = _explain(placed)
                assert ex.causes[0].id == cause, (file, death)
                ids = [c.id for c in ex.causes]
                if "Segmentation" not in death and cause != "oom":
                    assert "oom" in ids[1:], (file, death)  # the death is shown, ranked below
    numpy2 = "A module that was compiled using NumPy 1.x cannot be run in NumPy 2.0.1 as it may crash.\n"
    ex = _explain(numpy2 + "Killed\n")
    assert ex.causes[0].id == "python-deps" and ex.causes[-1].id == "oom"


# --- hostile inputs -------------------------------------------------------------------------------
def test_a_line_of_megabytes_and_a_hundred_thousand_deaths_stay_bounded() -> None:
    lines = [f"./run.sh: line {i}: {10000 + i} Killed   python3 w{i}.py" for i in range(50_000)]
    lines += ["Segmentation fault (core dumped)", "Killed"] * 25_000
    lines += [f"  exitcode  : -{(i % 31) + 1} (pid: {i})" for i in range(25_000)]
    ex = _explain("\n".join(lines) + "\n")  # over FULL_SCAN_BYTES: around the error-looking places
    assert ex.scan.bytes_read > 4 << 20
    assert 1 <= len(ex.deaths) <= judge.MAX_DEATHS and "SIGKILL" in _died(ex)
    assert all(len(m.evidence[0].lines) <= MAX_EVIDENCE for m in ex.matches)
    huge = "Killed " * 700_000 + "x" * (1 << 20) + " died with <Signals." * 50_000
    ex = _explain(huge + "\nSegmentation fault (core dumped)\n")  # found past 4 MiB by '(core dumped)'
    assert _died(ex) == ["SIGSEGV"]  # the megabytes line is no shell report; the last line is
    oom = ("Out of memory: Killed process 1 (" + "(" * 100_000 + "\n") * 3 + KERNEL[0] + "\n"
    assert _explain(oom).causes[0].status == "confirmed"


def test_every_death_pattern_is_linear() -> None:
    """Each death extractor's pattern (the per-text one once per text) compiles on the linear engine and
    has no two loops that can read the same text (the lint for when RE2 is absent)."""
    assert TABLE.knowledge is not None
    ids = {
        e.id
        for e in TABLE.knowledge.extractors
        if e.kind in ("signal", "exit-status", "oom-kill", "process-died")
    }
    pats = [p for p in TABLE.patterns if p.capture in ids]
    assert len(pats) >= len(ids) + 20  # the per-text extractor made once per text of the table
    for p in pats:
        assert p.rx is not None and p.anchor
        linre.compile(p.rx, what="regex")
        assert linre.ambiguity(p.rx) is None, p.rx


# --- the data is validated -----------------------------------------------------------------------
def _raw() -> dict[str, Any]:
    raw: dict[str, Any] = yaml.safe_load(shipped_path().read_text(encoding="utf-8"))
    return raw


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda r: r["deaths"]["signals"].append(dict(r["deaths"]["signals"][0])), "listed twice"),
        (lambda r: r["deaths"]["signals"][0].update(source="nowhere"), "unknown source"),
        (
            lambda r: next(e for e in r["extractors"] if e.get("each")).update(regex="^(Killed)$"),
            "places the text",
        ),
        (lambda r: r["extractors"][0].update(source="nowhere"), "unknown source"),
        (lambda r: r["deaths"]["signals"][0].update(action="Stop"), "action"),
    ],
)
def test_a_bad_death_row_is_refused(change: Any, problem: str) -> None:
    raw = _raw()
    change(raw)
    with pytest.raises(InputError, match=problem):
        parse_knowledge(raw, source="knowledge.yaml")
