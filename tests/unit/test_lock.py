"""The lock file model: canonical, atomic, and strict when read back (`cannenv doctor --lock`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cannenv.errors import InputError
from cannenv.lock import Lock, LockedInstaller, LockedRequirement, load_lock, write_lock

SHA = "a" * 64


def sample(**over: object) -> Lock:
    fields: dict[str, object] = {
        "stack_id": "a2-cann8.3.rc2-torch2.5.1-py3.11",
        "matrix_digest": "sha256:" + "b" * 64,
        "cannenv_version": "0.1.0",
        "os": "ubuntu22.04",
        "base_image": "ubuntu:22.04@sha256:" + "c" * 64,
        "base_image_digest": "sha256:" + "c" * 64,
        "context_digest": "d" * 64,
        "installers": (
            LockedInstaller(
                component="cann",
                version="8.3.RC2",
                file="Ascend-cann-toolkit_8.3.RC2_linux-x86_64.run",
                sha256=SHA,
                pinned=True,
            ),
        ),
        "python_requirements": (
            LockedRequirement(
                name="torch", version="2.5.1+cpu", hashes=("sha256:" + SHA,), source="wheelhouse"
            ),
        ),
        "driver_range": ">=24.1.rc2",
        "image_id": "sha256:" + "e" * 64,
    }
    fields.update(over)
    return Lock(**fields)


def test_round_trip_and_the_fields_doctor_reads(tmp_path: Path) -> None:
    path = write_lock(tmp_path / "cannenv.lock.json", sample())
    lock = load_lock(path)
    assert lock == sample()
    assert lock.stack_id == "a2-cann8.3.rc2-torch2.5.1-py3.11"
    assert lock.matrix_digest == "sha256:" + "b" * 64


def test_bytes_are_canonical_and_writes_leave_no_temporary_files(tmp_path: Path) -> None:
    p = tmp_path / "l.json"
    write_lock(p, sample())
    first = p.read_bytes()
    write_lock(p, sample())
    assert p.read_bytes() == first and first.endswith(b"\n")
    assert list(json.loads(first)) == sorted(json.loads(first))
    assert [x.name for x in tmp_path.iterdir()] == ["l.json"]


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist") as exc:
        load_lock(tmp_path / "nope.json")
    assert "cannenv image lock" in (exc.value.hint or "")


def test_invalid_json_names_the_line(tmp_path: Path) -> None:
    p = tmp_path / "l.json"
    p.write_text('{\n  "stack_id": "x",\n  oops\n}\n')
    with pytest.raises(InputError, match=r"l\.json:3: not valid JSON"):
        load_lock(p)


def test_a_bad_field_is_named(tmp_path: Path) -> None:
    data = json.loads(sample().to_json())
    data["installers"][0]["sha256"] = "XYZ"
    p = tmp_path / "l.json"
    p.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"field installers\.0\.sha256: .*64 lower-case hex"):
        load_lock(p)


def test_unknown_fields_and_newer_schema_are_refused(tmp_path: Path) -> None:
    p = tmp_path / "l.json"
    data = json.loads(sample().to_json())
    p.write_text(json.dumps({**data, "surprise": 1}))
    with pytest.raises(InputError, match="field surprise"):
        load_lock(p)
    p.write_text(json.dumps({**data, "schema_version": 2}))
    with pytest.raises(InputError, match="schema_version 2 is not supported"):
        load_lock(p)


def test_requirement_hashes_must_be_sha256() -> None:
    with pytest.raises(ValueError, match="sha256"):
        LockedRequirement(name="x", version="1", hashes=("md5:abc",), source="wheelhouse")
