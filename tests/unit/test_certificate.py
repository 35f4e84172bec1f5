"""Certificates: canonical form, signing, verification, tamper detection, skip semantics, diff."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cannenv.certify import certificate as C
from cannenv.certify.stages import StagePlan, StageResult, exit_code, outcome, skipped
from cannenv.errors import InputError, IntegrityError


def _stages() -> list[StageResult]:
    plan = StagePlan(id="perf-bandwidth", title="bw", level=3, needs="x")
    return [
        StageResult(
            id="llm",
            title="LLM",
            status="pass",
            summary="ok",
            metrics={"logits": {"cosine": 0.99998, "max_rel_error": 0.009, "nonfinite": 0}},
        ),
        skipped(plan, "no NPU", hint="run on an Atlas host"),
    ]


def _cert(**kw: object) -> C.Certificate:
    return C.Certificate.build(
        _stages(),
        command="certify",
        started_at="2026-01-01T00:00:00+00:00",
        finished_at="2026-01-01T00:01:00+00:00",
        **kw,
    )  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def keypair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("keys")
    return C.generate_keypair(d / "sign.pem")


def test_skipped_stage_is_never_certified() -> None:
    cert = _cert()
    assert cert.outcome == "partial"
    assert cert.certified_stages == ("llm",)
    assert cert.not_certified == {"perf-bandwidth": "skip"}
    assert cert.certifies("llm") and not cert.certifies("perf-bandwidth") and not cert.certifies("kernels")
    all_skip = [skipped(StagePlan(id="x", title="x", level=3, needs="n"), "why")]
    assert outcome(all_skip) == "nothing-runnable" and outcome([]) == "nothing-runnable"
    assert exit_code(all_skip) == 4 and exit_code(all_skip, strict=True) == 4
    failed = [*_stages(), StageResult(id="f", title="f", status="error", summary="e")]
    assert outcome(failed) == "failed" and exit_code(failed) == 1


def test_canonical_form_is_sorted_compact_and_nan_free() -> None:
    assert C.canonical({"b": 1, "a": [1.5, "é"]}) == '{"a":[1.5,"é"],"b":1}'.encode()
    with pytest.raises(ValueError):
        C.canonical({"x": float("nan")})
    cert = C.Certificate.build(
        [StageResult(id="s", title="s", status="fail", summary="nan", metrics={"cos": float("nan")})],
        command="c",
        started_at="t",
    )
    assert cert.stages[0].metrics == {"cos": "nan"}
    C.canonical(cert.model_dump(mode="json"))


def test_write_and_verify_unsigned(tmp_path: Path) -> None:
    path = C.write(_cert(), tmp_path / "cert.json")
    v = C.verify_file(path)
    assert v.ok and not v.signed and v.certificate is not None
    assert v.certificate.certified_stages == ("llm",)
    env = json.loads(path.read_text())
    assert env["sha256"] == C.digest_of(env["certificate"])


def test_signed_verify_and_wrong_key(tmp_path: Path, keypair: tuple[Path, Path]) -> None:
    priv, pub = keypair
    path = C.write(_cert(), tmp_path / "cert.json", sign_key=C.load_private_key(priv))
    v = C.verify_file(path, public_key_path=pub)
    assert v.ok and v.signed and v.key_fingerprint == C.fingerprint(C.load_public_key(pub))
    _other, other_pub = C.generate_keypair(tmp_path / "other.pem")
    bad = C.verify_file(path, public_key_path=other_pub)
    assert not bad.ok and any("not by the given public key" in p for p in bad.problems)
    unsigned = C.write(_cert(), tmp_path / "u.json")
    assert not C.verify_file(unsigned, public_key_path=pub).ok


def test_content_edit_with_recomputed_digest_breaks_signature(
    tmp_path: Path, keypair: tuple[Path, Path]
) -> None:
    priv, _ = keypair
    path = C.write(_cert(), tmp_path / "cert.json", sign_key=C.load_private_key(priv))
    env = json.loads(path.read_text())
    env["certificate"]["not_certified"] = {}
    env["certificate"]["certified_stages"] = ["llm", "perf-bandwidth"]
    env["sha256"] = C.digest_of(env["certificate"])  # a careful forger recomputes the digest...
    v = C.verify_text(C.render(env))
    assert not v.ok and any("signature does not verify" in p for p in v.problems)  # ...but cannot sign


@pytest.fixture(scope="module")
def signed_text(tmp_path_factory: pytest.TempPathFactory, keypair: tuple[Path, Path]) -> str:
    path = tmp_path_factory.mktemp("c") / "cert.json"
    C.write(_cert(), path, sign_key=C.load_private_key(keypair[0]))
    return path.read_text()


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_any_flipped_byte_fails(signed_text: str, data: st.DataObject) -> None:
    raw = bytearray(signed_text.encode())
    pos = data.draw(st.integers(0, len(raw) - 1))
    bit = data.draw(st.integers(0, 7))
    raw[pos] ^= 1 << bit
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return  # verify_file reports non-UTF-8 as a problem too (tested below)
    assert not C.verify_text(text).ok


def test_every_single_byte_position_unsigned(tmp_path: Path) -> None:
    path = C.write(_cert(), tmp_path / "c.json")
    raw = path.read_bytes()
    for pos in range(0, len(raw), 7):
        flipped = bytearray(raw)
        flipped[pos] ^= 0x01
        try:
            text = flipped.decode("utf-8")
        except UnicodeDecodeError:
            continue
        assert not C.verify_text(text).ok, pos
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff" + raw)
    assert not C.verify_file(bad).ok


def test_load_raises_integrity_error(tmp_path: Path) -> None:
    path = C.write(_cert(), tmp_path / "c.json")
    path.write_text(path.read_text().replace('"partial"', '"certified"'))
    with pytest.raises(IntegrityError):
        C.load(path)


def test_keys(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.asymmetric.rsa import generate_private_key

    priv, _pub = C.generate_keypair(tmp_path / "k.pem")
    assert priv.stat().st_mode & 0o777 == 0o600
    with pytest.raises(InputError, match="already exists"):
        C.generate_keypair(priv)
    key = Ed25519PrivateKey.generate()
    ssh_priv = tmp_path / "id_ed25519"
    ssh_priv.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
        )
    )
    ssh_pub = tmp_path / "id_ed25519.pub"
    ssh_pub.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    )
    path = C.write(_cert(), tmp_path / "c.json", sign_key=C.load_private_key(ssh_priv))
    assert C.verify_file(path, public_key_path=ssh_pub).ok
    rsa = tmp_path / "rsa.pem"
    rsa.write_bytes(
        generate_private_key(65537, 2048).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    with pytest.raises(InputError, match="not ed25519"):
        C.load_private_key(rsa)
    junk = tmp_path / "junk.pem"
    junk.write_text("hello")
    with pytest.raises(InputError, match="not an unencrypted PEM"):
        C.load_private_key(junk)


def test_diff() -> None:
    a = _cert(stack=C.StackInfo(id="a2-x", versions={"cann": "8.1.RC1"}))
    stages = _stages()
    stages[0] = stages[0].model_copy(
        update={"metrics": {"logits": {"cosine": 0.999, "max_rel_error": 0.009, "nonfinite": 0}}}
    )
    b = C.Certificate.build(
        stages,
        command="certify",
        started_at="2027-01-01T00:00:00+00:00",
        stack=C.StackInfo(id="a2-y", versions={"cann": "8.2.RC1"}),
    )
    diffs = {d.path: d for d in C.diff(a, b)}
    assert diffs["stack.id"].a == "a2-x" and diffs["stack.id"].b == "a2-y"
    assert diffs["stack.versions.cann"].b == "8.2.RC1"
    assert "stages[llm].metrics.logits.cosine" in diffs
    assert "started_at" not in diffs and "finished_at" not in diffs
    assert "started_at" in {d.path for d in C.diff(a, b, include_volatile=True)}
    assert C.diff(a, a) == []
