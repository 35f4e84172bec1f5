"""Taking a collector's excerpts into the explain corpus by the split's rule, blind.

``python -m tests.helpers.corpus_intake FOLDER…`` reads each collector's staging folder (a
``cases.yaml`` list and one ``.txt`` per entry, tests/data/errors/cases.yaml's fields), checks every
entry, refuses a source seen before, and routes each by the newest round's rule (split.json
``roundN``, N the largest): a held-out excerpt goes to tests/data/errors/heldoutN/, the rest are appended to
cases.yaml. It prints the working entries it took and only the *number* of held-out ones, so the
person running it learns nothing about the held-out set. Running it again takes only what is new.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import yaml

DATA = Path(__file__).resolve().parents[1] / "data" / "errors"
_NUMBERS = sorted(
    int(k.removeprefix("round"))
    for k in json.loads((DATA / "split.json").read_text(encoding="utf-8"))
    if re.fullmatch(r"round\d+", k)
)
ROUND = f"round{_NUMBERS[-1]}"
HELD = DATA / f"heldout{_NUMBERS[-1]}"
EARLIER_HELD = tuple(f"heldout{n}" for n in _NUMBERS[:-1])
FIELDS = {"file", "url", "cause", "established", "trap", "host"}
FIELD_ORDER = ("file", "url", "cause", "established", "trap", "host")
MAX_PER_PAGE = 6
"""Round 5 on: at most this many entries of one page (a thread, a documentation file at any commit,
whatever the anchor), the first met in the collectors' order — one FAQ page of 21 entries would
otherwise be a third of the round. Decided before the intake, blind to the entries' content."""
HOST_FIELDS = ("driver", "cann", "torch", "torch_npu", "numpy")
"""The versions a host tree is built from (tests/unit/test_explain_corpus._host_tree); a thread's
other versions (vllm, triton-ascend …) are left out of ``host``: nothing would be built from them."""


def thread_key(url: str) -> str:
    """A source without its commit: one GitHub thread (issue, PR, discussion: the same number), one
    page entry (a blob path and anchor at any commit), else the URL."""
    m = re.match(r"https://github\.com/([^/]+/[^/]+)/(?:issues|pull|discussions)/(\d+)", url)
    if m:
        return f"{m.group(1).lower()}#{m.group(2)}"
    m = re.match(r"https://github\.com/([^/]+/[^/]+)/blob/[^/]+/([^#?]+)(?:\?[^#]*)?(#.*)?", url)
    if m:
        return f"{m.group(1).lower()}:{m.group(2)}{m.group(3) or ''}"
    return url


def page_key(url: str) -> str:
    """The page an entry comes from: its source without the anchor or query (one FAQ file)."""
    return thread_key(url.split("?", 1)[0].split("#", 1)[0])


TWIN_SHARE = 0.6
"""Round 6 on: an excerpt that shares at least this share of its distinctive lines with an excerpt
taken before (any round, working or held out) is the same error again — a vendor's page and its
translation, two pages quoting one log, a thread and the FAQ made of it — and is refused: a
held-out case with a twin in the working set would be scored on rules written from its twin."""
TWIN_LINE = 25
"""A distinctive line: at least this many characters once spaces are squeezed and case folded."""


def lines_of(text: bytes) -> frozenset[str]:
    """The distinctive lines of an excerpt (spaces squeezed, case folded, at least TWIN_LINE long)."""
    out = (" ".join(line.split()).lower() for line in text.decode("utf-8", "replace").splitlines())
    return frozenset(line for line in out if len(line) >= TWIN_LINE)


def twins(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether two excerpts are one error: TWIN_SHARE of the smaller one's lines are in the other."""
    return bool(a and b) and len(a & b) >= TWIN_SHARE * min(len(a), len(b))


def held_out(file: str, salt: str) -> bool:
    return int(hashlib.sha256((salt + file).encode()).hexdigest(), 16) % 3 == 0


def _load(path: Path) -> list[dict[str, Any]]:
    return yaml.safe_load(path.read_text(encoding="utf-8")) or [] if path.exists() else []


def _problem(entry: Any, folder: Path, causes: set[str]) -> str | None:
    if not isinstance(entry, dict):
        return "not a mapping"
    extra = set(entry) - FIELDS
    if extra:
        return f"unknown fields {sorted(extra)}"
    for key in ("file", "url", "cause", "established"):
        if not isinstance(entry.get(key), str) or not entry[key].strip():
            return f"missing {key}"
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*\.txt", entry["file"]):
        return "file name not [a-z0-9-].txt"
    if not entry["url"].startswith("https://"):
        return "url not https"
    if entry["cause"] not in causes:
        return f"unknown cause {entry['cause']!r}"
    host = entry.get("host", {})
    if not isinstance(host, dict) or not all(isinstance(v, str) for v in host.values()):
        return "host: a mapping of component to version text"
    text = folder / entry["file"]
    if not text.is_file() or text.is_symlink() or not text.read_bytes().strip():
        return "text file missing or empty"
    if text.stat().st_size > 64 << 10:
        return "text larger than 64 KiB"
    return None


def intake(folders: list[Path]) -> dict[str, Any]:
    from cannenv.explain import signatures

    causes = set(signatures.shipped().causes)
    split = json.loads((DATA / "split.json").read_text(encoding="utf-8"))
    salt = split[ROUND]["salt"]
    HELD.mkdir(exist_ok=True)
    cases_path, held_path = DATA / "cases.yaml", HELD / "cases.yaml"
    cases, held = _load(cases_path), _load(held_path)
    earlier = list(cases) + [c for name in EARLIER_HELD for c in _load(DATA / name / "cases.yaml")] + held
    seen_files = {c["file"] for c in earlier}
    folder_of = {c["file"]: DATA for c in cases} | {c["file"]: HELD for c in held}
    folder_of |= {c["file"]: DATA / name for name in EARLIER_HELD for c in _load(DATA / name / "cases.yaml")}
    seen_texts = [
        lines_of((folder_of[f] / f).read_bytes()) for f in seen_files if (folder_of[f] / f).is_file()
    ]
    seen_threads = {thread_key(c["url"]) for c in earlier}
    took_working: list[dict[str, Any]] = []
    took_held: list[dict[str, Any]] = []
    refused: list[str] = []
    refused_held = 0
    per_page: dict[str, int] = {}
    for c in _load(HELD / "cases.yaml") + list(cases)[split[ROUND]["first_index"] :]:
        per_page[page_key(c["url"])] = per_page.get(page_key(c["url"]), 0) + 1
    for folder in folders:
        for entry in _load(folder / "cases.yaml"):
            if isinstance(entry, dict) and entry.get("file") in seen_files:
                continue  # taken before (a second run takes only what is new)
            bound_held = isinstance(entry, dict) and held_out(str(entry.get("file")), salt)
            why = _problem(entry, folder, causes)
            if why is None and thread_key(entry["url"]) in seen_threads:
                why = "a source seen before"
            if why is None and per_page.get(page_key(entry["url"]), 0) >= MAX_PER_PAGE:
                why = f"more than {MAX_PER_PAGE} entries of one page"
            text = lines_of((folder / entry["file"]).read_bytes()) if why is None else frozenset()
            if why is None and any(twins(text, t) for t in seen_texts):
                why = "the same excerpt as one taken before (a twin)"
            if why is not None:
                if bound_held:
                    refused_held += 1
                else:
                    name = entry.get("file") if isinstance(entry, dict) else "?"
                    refused.append(f"{folder.name}/{name}: {why}")
                continue
            entry = {k: entry[k] for k in FIELD_ORDER if k in entry}
            host = {k: entry["host"][k] for k in HOST_FIELDS if k in entry.get("host", {})}
            entry.pop("host", None)
            if host:
                entry["host"] = host
            seen_files.add(entry["file"])
            seen_threads.add(thread_key(entry["url"]))
            seen_texts.append(text)
            per_page[page_key(entry["url"])] = per_page.get(page_key(entry["url"]), 0) + 1
            dest = HELD if bound_held else DATA
            shutil.copyfile(folder / entry["file"], dest / entry["file"])
            (took_held if bound_held else took_working).append(entry)
    dump = {"sort_keys": False, "allow_unicode": True, "width": 100000}
    if took_working:
        with cases_path.open("a", encoding="utf-8") as f:
            f.write(yaml.safe_dump(took_working, **dump))  # type: ignore[call-overload]
    if took_held:
        held_path.write_text(yaml.safe_dump(held + took_held, **dump), encoding="utf-8")  # type: ignore[call-overload]
    return {
        "working": [f"{c['file']} -> {c['cause']}" for c in took_working],
        "held_out": len(took_held),
        "refused": refused,
        "refused_held_out_bound": refused_held,
    }


if __name__ == "__main__":
    print(json.dumps(intake([Path(a) for a in sys.argv[1:]]), indent=2))
