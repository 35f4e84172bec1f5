"""examples/hosts is exactly what the host-tree builder makes, also in a fresh clone of the repo."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import hosts

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "hosts"


def _snapshot(root: Path) -> dict[str, str | bytes]:
    out: dict[str, str | bytes] = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_symlink():
            out[rel] = f"-> {p.readlink()}"
        elif p.is_file():
            out[rel] = p.read_bytes()
        elif p.is_dir():
            out[rel] = "dir"
    return out


def test_examples_match_the_builder(tmp_path: Path) -> None:
    assert hosts.main([str(tmp_path)]) == 0
    fresh = {name: _snapshot(tmp_path / name) for name in hosts.SCENARIOS}
    shipped = {name: _snapshot(EXAMPLES / name) for name in hosts.SCENARIOS}
    for name in hosts.SCENARIOS:
        missing = sorted(set(fresh[name]) - set(shipped[name]))
        extra = sorted(set(shipped[name]) - set(fresh[name]))
        both = set(fresh[name]) & set(shipped[name])
        changed = sorted(k for k in both if fresh[name][k] != shipped[name][k])
        assert not (missing or extra or changed), (
            f"examples/hosts/{name} is stale (regenerate: python -m tests.helpers.hosts examples/hosts): "
            f"missing {missing[:5]}, extra {extra[:5]}, changed {changed[:5]}"
        )


def test_no_example_directory_is_empty() -> None:
    """git keeps no empty directory: one would vanish from a clone and change what the doctor sees."""
    dirs = (p for p in EXAMPLES.rglob("*") if p.is_dir() and not p.is_symlink())
    empty = [str(p) for p in dirs if not any(p.iterdir())]
    assert not empty, empty
