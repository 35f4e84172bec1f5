"""The cached signature table's large parts are unpickled on first use (cannenv.explain.lazy).

A short excerpt must not pay for the thousands of rows it never reads (issue 29, item 5): the
knowledge's code rows, FAQ entries, source messages, sources and HCCL's log messages travel in the
validated-table cache as blobs of their own. These tests hold that the lazy containers behave as
the tuple or mapping they stand for, that a table read back from the cache explains exactly as the
validated one does, and that it reads a part only when the log has something for it.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cannenv.explain import judge, render, signatures
from cannenv.explain.knowledge import LAZY_ROWS, LAZY_TABLES, LAZY_VALUES
from cannenv.explain.lazy import Each, Keyed, Rows, Table, Value
from cannenv.explain.scan import Scanner

DATA = Path(__file__).resolve().parents[1] / "data" / "errors"
values = st.one_of(st.integers(), st.text(max_size=8), st.tuples(st.integers(), st.text(max_size=4)))


@given(st.lists(values, max_size=30))
def test_rows_behave_as_the_tuple_they_stand_for(items: list[Any]) -> None:
    want = tuple(items)
    for r in (Rows(items), pickle.loads(pickle.dumps(Rows(items)))):
        assert len(r) == len(want) and tuple(r) == want and list(iter(r)) == list(want)
        assert r == want and want == r and r == Rows(want) and hash(r) == hash(want)
        assert r[:3] == want[:3] and all(r[i] == want[i] for i in range(-len(want), len(want)))
        assert all(x in r for x in want) and (object() not in r)
        assert r != list(want)  # a tuple's equality: not a list's


@given(st.dictionaries(st.text(max_size=6), values, max_size=30))
def test_tables_behave_as_the_mapping_they_stand_for(items: dict[str, Any]) -> None:
    for t in (Table(items), pickle.loads(pickle.dumps(Table(items)))):
        assert dict(t) == items and t == items and len(t) == len(items) and list(t) == list(items)
        assert all(t[k] == v and t.get(k) == v and k in t for k, v in items.items())
        assert t.get("\x00absent") is None and t.get("\x00absent", 3) == 3 and "\x00absent" not in t


@given(st.lists(values, max_size=30))
def test_each_behaves_as_the_tuple_it_stands_for(items: list[Any]) -> None:
    want = tuple(items)
    for r in (
        Each(items),
        pickle.loads(pickle.dumps(Each(items))),
        pickle.loads(pickle.dumps(Each(items), 5)),
    ):
        assert len(r) == len(want) and tuple(r) == want and list(iter(r)) == list(want)
        assert r == want and want == r and r == Each(want) and r == Rows(want) and hash(r) == hash(want)
        assert r[:3] == want[:3] and r[::-2] == want[::-2]
        assert all(r[i] == want[i] for i in range(-len(want), len(want)))
        assert all(x in r for x in want) and (object() not in r)
        assert r != list(want)


def test_each_reads_back_the_rows_it_is_asked_for() -> None:
    from cannenv.explain.parts import ErrnoPath

    rows = [ErrnoPath(frozenset({n}), f"/p{n % 3}", f"w{n}", (), "why", "src") for n in range(6)]
    r = pickle.loads(pickle.dumps(Each(rows, keys=("contains",)), pickle.HIGHEST_PROTOCOL))
    assert not r.loaded and "0 read" in repr(r)
    assert r.first("contains", "/p1") == rows[1] and r.loaded and "1 read" in repr(r)  # that row alone
    assert r.first("contains", "/p9") is None
    assert r.first("what", "w4") == rows[4] and "5 read" in repr(r)  # no index for it: row by row
    try:
        r[6]
    except IndexError:
        pass
    else:
        raise AssertionError("an index past the end was given a row")
    again = pickle.loads(pickle.dumps(r))  # a read part pickles one blob per row again, its index too
    assert not again.loaded and again.first("contains", "/p2") == rows[2] and again == tuple(rows)


@given(st.dictionaries(st.text(max_size=6), values, max_size=30))
def test_keyed_behaves_as_the_mapping_it_stands_for(items: dict[str, Any]) -> None:
    for t in (Keyed(items), pickle.loads(pickle.dumps(Keyed(items)))):
        assert dict(t) == items and t == items and len(t) == len(items) and list(t) == list(items)
        assert all(t[k] == v and t.get(k) == v and k in t for k, v in items.items())
        assert t.get("\x00absent") is None and t.get("\x00absent", 3) == 3 and "\x00absent" not in t


def test_keyed_reads_back_the_values_asked_for() -> None:
    t = pickle.loads(pickle.dumps(Keyed({"a": (1,), "b": (2,)})))
    assert not t.loaded and "a" in t and len(t) == 2 and not t.loaded  # keys: no value built
    assert t["b"] == (2,) and t.loaded and "1 read" in repr(t)
    try:
        t["c"]
    except KeyError:
        pass
    else:
        raise AssertionError("an absent key was given a value")


def test_a_part_read_back_is_not_built_until_used() -> None:
    r = pickle.loads(pickle.dumps(Rows([1, 2, 3])))
    t = pickle.loads(pickle.dumps(Table({"a": 1})))
    assert not r.loaded and not t.loaded and "not loaded" in repr(r) and "not loaded" in repr(t)
    assert r[1] == 2 and t["a"] == 1
    assert r.loaded and t.loaded and repr(r) == "Rows((1, 2, 3))" and repr(t) == "Table({'a': 1})"
    again = pickle.loads(pickle.dumps(r))  # a loaded part pickles as a blob again
    assert not again.loaded and again == (1, 2, 3)


@given(st.lists(values, max_size=8))
def test_a_value_behaves_as_the_value_it_stands_for(items: list[Any]) -> None:
    want = tuple(items)
    for v in (Value(want), pickle.loads(pickle.dumps(Value(want)))):
        assert v == want and want == v and hash(v) == hash(want) and v == Value(want)
        assert v.count(want[0] if want else 0) == want.count(want[0] if want else 0)  # methods: the value's


def test_a_value_read_back_is_not_built_until_an_attribute_is_read() -> None:
    from cannenv.explain.parts import ErrnoPath

    row = ErrnoPath(frozenset({2}), "/usr/local/Ascend", "the toolkit", ("env-not-sourced",), "why", "src")
    v = pickle.loads(pickle.dumps(Value(row)))
    assert not v.loaded and "not loaded" in repr(v)
    assert v.what == "the toolkit" and v.loaded and v == row and repr(v) == f"Value({row!r})"
    again = pickle.loads(pickle.dumps(v))
    assert not again.loaded and again == row
    try:
        v.__wrapped__  # noqa: B018  # dunder probes (copy, pickle, inspect) are not forwarded
    except AttributeError:
        pass
    else:
        raise AssertionError("a dunder attribute was forwarded to the value")


def _cached() -> signatures.SignatureTable:
    """The shipped table as the cache gives it back (pickled whole, as _cache_write writes it)."""
    table = pickle.loads(pickle.dumps(signatures.shipped(), pickle.HIGHEST_PROTOCOL))
    assert isinstance(table, signatures.SignatureTable)
    return table


def _parts(table: signatures.SignatureTable) -> dict[str, bool]:
    k = table.knowledge
    assert k is not None and k.log_messages is not None
    out = {name: getattr(k, name).loaded for name in (*LAZY_ROWS, *LAZY_TABLES, *LAZY_VALUES)}
    assert k.op_messages is not None
    out["op_messages"] = k.op_messages[0].loaded  # type: ignore[attr-defined]
    return out


def _explain(table: signatures.SignatureTable, text: bytes) -> dict[str, Any]:
    s = Scanner(table, total_hint=len(text))
    s.feed(text)
    s.end_input()
    import json

    return dict(json.loads(render.to_json(judge.explain(table, s.result()))))


def test_the_cache_file_reads_back_the_table_and_refuses_a_damaged_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file holds the pickle and, after it, the lazy parts' blobs (mapped, read when used): the
    table read back explains as the validated one; a file cut short or not ours is not used."""
    monkeypatch.setenv("CANNENV_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("CANNENV_NO_CACHE", raising=False)
    table = signatures.shipped()
    signatures._cache_write("k", table)
    back = signatures._cache_read("k")
    assert back is not None and back.knowledge is not None
    assert not back.knowledge.codes.loaded and not back.knowledge.faq.loaded  # type: ignore[attr-defined]
    assert not back.sources.loaded and not back.patterns.loaded  # type: ignore[attr-defined]
    text = (DATA / "va-5695-561103.txt").read_bytes()
    assert _explain(back, text) == _explain(table, text)
    f = tmp_path / "explain-k.pickle"
    data = f.read_bytes()
    for damaged in (data[:-1], data + b"x", b"", b"not a table", data[:30]):
        f.unlink()  # a new file: the mapping read back above stays valid (the cache never rewrites)
        f.write_bytes(damaged)
        assert signatures._cache_read("k") is None
    assert back == table  # the first table, every part of it read from its mapping


def test_the_cached_table_loads_nothing_until_a_log_needs_it() -> None:
    table = _cached()
    assert not any(_parts(table).values()), _parts(table)
    _explain(table, b"[ERROR] something went wrong\n")
    parts = _parts(table)  # no code, no message: only the residual reading's table (nothing matched)
    assert [name for name, loaded in parts.items() if loaded] == ["residual"], parts
    _explain(table, b"Traceback (most recent call last):\nValueError: the batch is empty\n")
    parts = _parts(table)  # a traceback: whose code raised it (python_code), nothing else
    assert [name for name, loaded in parts.items() if loaded] == ["python_code", "residual"], parts
    _explain(table, (DATA / "va-5695-561103.txt").read_bytes())
    parts = _parts(table)
    assert parts["codes"] and not parts["faq"] and not parts["log_messages"], parts
    assert not parts["op_messages"], parts
    _explain(table, (DATA / "va-5695-561103.txt").read_bytes() + b"\n[ERROR] EZ1001: self not implemented\n")
    assert _parts(table)["op_messages"]  # EZ1001: the aclnn rows are read


def test_the_cached_table_explains_the_corpus_as_the_validated_one() -> None:
    validated = signatures.load(signatures.shipped_path())
    cached = _cached()
    files = sorted(DATA.glob("*.txt"))[::4]  # a quarter of the working set: codes, messages, HCCL, FAQ
    assert len(files) > 50
    for f in files:
        text = f.read_bytes()
        assert _explain(cached, text) == _explain(validated, text), f.name
    assert any(_parts(cached).values())
