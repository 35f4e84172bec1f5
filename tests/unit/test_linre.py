"""Linear time on any text: data-supplied patterns through RE2, our own patterns through the lint.

No timed assertions: RE2 is linear by construction, and the lint (cannenv.linre.ambiguity) proves
a backtracking pattern free of the shapes that make Python's ``re`` super-linear. The lint itself
is checked against patterns known to hang ``re`` (measured once when it was written:
``re.search(r"\\d+\\.\\d+", "1" * 20000)`` took 5.6 s, ``(a|a)*b`` on 25 a's 22 s).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cannenv import linre
from cannenv.errors import InputError
from tests.helpers.patterns import literal_patterns

ROOT = Path(__file__).resolve().parents[2]

# pattern, how it is used, super-linear on Python's re?
KNOWN: list[tuple[str, str, bool]] = [
    (r"(a+)+$", "fullmatch", True),  # exponential
    (r"(a|a)*b", "match", True),
    (r"(a*)*b", "match", True),
    (r"(\w+\s?)+$", "match", True),
    (r"\s*x?\s*=", "match", True),  # \s* around an optional token
    (r"lib\S*\.so[^:]*: cannot open", "search", True),  # the round-3 signature
    (r".*a.*b", "match", True),
    (r"\d+\.\d+", "search", True),  # a search restarts inside the run of digits
    (r"\s+foo", "search", True),
    (r"(?m)^\s*foo", "search", True),  # \s* crosses the newlines ^ starts after
    (r"[?&;][^=&;#\s]*=", "search", True),  # '?' both starts a key and is a key character
    (r"(ab|a)*c", "match", False),
    (r"^\d+\.\d+$", "search", False),
    (r"^\s+foo", "search", False),
    (r"(?m)^[ \t]*foo", "search", False),
    (r"(?<!\d)\d+\.\d+", "search", False),
    (r"\b\w+=", "search", False),
    (r"[^:]*:[^:]*:", "match", False),
    (r"foo=(\S+)", "search", False),
    (r"(?:\.\d+)*", "fullmatch", False),
    (r"(\d+)(?:\.(\d+))*", "fullmatch", False),
    (r"a.{0,80}b", "search", False),  # bounded: at most 80 ways, linear
    (r"[?&;][^=?&;#\s]*=", "search", False),
]


@pytest.mark.parametrize(("pattern", "mode", "slow"), KNOWN)
def test_the_lint_tells_super_linear_patterns(pattern: str, mode: str, slow: bool) -> None:
    why = linre.ambiguity(pattern, mode=mode)
    assert (why is not None) is slow, why


def test_a_backreference_is_not_analysable() -> None:
    assert "not analysable" in (linre.ambiguity(r"(a+)\1") or "")


def test_every_literal_pattern_in_the_package_is_linear() -> None:
    """Each ``re.*(literal)`` in cannenv, in the mode it is used, passes the lint."""
    found, _ = literal_patterns(ROOT / "cannenv")
    assert len(found) > 100  # the scan sees the package
    slow = [
        f"{f.where}: {f.pattern!r} ({f.mode}): {why}"
        for f in found
        if (why := linre.ambiguity(f.pattern, flags=f.flags, mode=f.mode)) is not None
    ]
    assert not slow, "\n".join(slow)


# Calls whose pattern is not a literal, per file, and why each is linear.
DYNAMIC: dict[str, str] = {
    "cannenv/linre.py": "the one door: RE2, or Python's re after the lint",
    "cannenv/explain/signatures.py": "escaped codes only (re.escape); regexes go through linre",
    "cannenv/explain/models.py": "the literal id pattern _ID; data regexes go through linre",
    "cannenv/explain/logsource.py": "re.escape of a C identifier or of a fixed log-call name",
    "cannenv/explain/rtge.py": "an alternation of escaped macro names, re.escape of a C parameter name",
    "cannenv/explain/msascend.py": "an alternation of the fixed MS_LOG levels (source text)",
    "cannenv/matrix/deployer.py": "names built with re.escape from a fixed table",
    "cannenv/certify/perf.py": "the perf thresholds' patterns (shipped data): checked in re's syntax only",
    "cannenv/checks/python.py": "re.escape of a package name",
    "cannenv/hardware.py": "the SoC table's name patterns: linted below (the fleet bundle has no RE2)",
    "cannenv/soc.py": "the SoC table's name patterns: linted below (the fleet bundle has no RE2)",
    "cannenv/values.py": "patterns of our own value types (literals checked where declared)",
}


def test_every_computed_pattern_is_accounted_for() -> None:
    _, dynamic = literal_patterns(ROOT / "cannenv")
    files = {d.rsplit(":", 1)[0] for d in dynamic}
    assert files <= set(DYNAMIC), sorted(files - set(DYNAMIC))


# ------------------------------------------------------------------------------ the data door
def test_data_patterns_run_on_the_linear_engine() -> None:
    rx = linre.compile(r"lib\S*\.so[^:]*: cannot open")
    assert rx.engine == "re2"
    hostile = "lib" + "x.so" * 200_000  # quadratic (cubic in search) on Python's re
    assert rx.search(hostile) is None
    assert rx.search("libhccl.so: cannot open shared object file") is not None


@pytest.mark.parametrize("pattern", [r"(a+)\1", r"(?<!x)y", r"a(?=b)", r"(", ""])
def test_what_the_linear_engine_refuses_is_bad_input(pattern: str) -> None:
    with pytest.raises(InputError) as exc:
        linre.compile(pattern, what="signatures[3].any[0].regex")
    assert exc.value.exit_code == 2
    assert "signatures[3].any[0].regex" in exc.value.message


def test_dollar_is_the_end_of_the_text_not_before_a_newline() -> None:
    assert linre.compile(r"^[a-z]+$").search("name\n") is None
    assert linre.compile(r"^[a-z]+$").fullmatch("name") is not None


def test_without_re2_a_pattern_must_pass_the_lint(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fleet bundle's hosts have no RE2: linre falls back to re, refusing ambiguous patterns."""
    monkeypatch.setattr(linre, "_re2", lambda: None)
    assert linre.engine() == "re+lint"
    assert linre.compile(r"^910B\d", ignorecase=True).match("910b3") is not None
    with pytest.raises(InputError, match="super-linear"):
        linre.compile(r"lib\S*\.so[^:]*: cannot open")


def test_every_shipped_signature_is_compiled_by_the_linear_engine() -> None:
    from cannenv.explain import signatures

    table = signatures.shipped()
    regexes = [p for p in table.patterns if p.regex is not None]
    assert regexes
    assert all(isinstance(p.regex, linre.LinearPattern) and p.regex.engine == "re2" for p in regexes)
    for p in regexes:
        assert p.regex is not None
        # adversarial text derived from the pattern: its anchor and its own characters, repeated,
        # with the tail that fails last. RE2 is linear whatever the text; this runs it to the end.
        body = "".join(ch for ch in p.key if ch.isprintable())
        for hostile in (p.anchor * 5000, (p.anchor + " " + body) * 300, body * 300 + "\n"):
            p.regex.search(hostile[:200_000])


def test_the_soc_tables_name_patterns_pass_the_lint() -> None:
    """soc.py matches them with Python's re on the fleet bundle's hosts (no native RE2 there)."""
    import re

    import yaml

    found: list[str] = []

    def walk(x: object) -> None:
        if isinstance(x, dict):
            for k, v in x.items():
                if "pattern" in str(k) and isinstance(v, list):
                    found.extend(str(p) for p in v)
                else:
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(yaml.safe_load((ROOT / "matrices" / "socs.yaml").read_text()))
    assert found
    slow = [p for p in found if linre.ambiguity(p, flags=re.IGNORECASE, mode="match")]
    assert not slow, slow
