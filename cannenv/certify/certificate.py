"""The certificate: a canonical JSON record of a certification run, its digest and a signature.

File layout (UTF-8, keys sorted, two-space indent, one trailing newline)::

    {
      "certificate": { ...what was certified, see Certificate... },
      "sha256": "<hex sha256 of canonical(certificate)>",
      "signature": null | {"algorithm": "ed25519", "public_key": "<base64 raw 32 bytes>",
                           "key_fingerprint": "sha256:<hex of the raw key>", "value": "<base64>"}
    }

``canonical(x)`` is ``json.dumps(x, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
allow_nan=False)`` encoded as UTF-8; non-finite numbers never appear (metrics spell them as
strings). The signature is ed25519 (``cryptography``) over exactly those canonical bytes.

:func:`verify_text` re-derives everything: the file must be the deterministic rendering of its own
content (so a change of any byte, whitespace included, is caught), the digest must match, and the
signature, when present, must verify — against ``--pub`` when given. An unsigned certificate only
detects accidental change (anyone can recompute a sha256); proof of origin needs a signature.

A skipped stage is recorded as ``skip`` and listed under ``not_certified``; ``certified_stages``
names only the stages that passed, so nothing skipped can ever read as certified.
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import json
import math
import numbers
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cannenv.certify.stages import Outcome, StageResult, outcome
from cannenv.errors import InputError, IntegrityError
from cannenv.fsutil import atomic_write_text


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ArtifactPin(_Frozen):
    """An installer or wheel file of a pinned component, for one architecture."""

    file: str
    sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")
    url: str | None = None


class ComponentPin(_Frozen):
    """One component of the certified stack, as the matrix pins it."""

    version: str
    package: str | None = None
    artifacts: dict[str, ArtifactPin] = Field(default_factory=dict)


class StackInfo(_Frozen):
    id: str | None = None
    matrix_digest: str | None = None
    """``sha256:…`` of the matrix the stack came from (cannenv.matrix.Matrix.digest)."""
    versions: dict[str, str] = Field(default_factory=dict)
    """Component versions the stack pins, as the matrix spells them."""
    how: str | None = None
    """How the stack was chosen, as the doctor chooses it: ``option`` (--stack), ``lock``,
    ``best-match``, ``nearest`` or ``none``."""
    reason: str | None = None
    """Why that stack (or why none)."""
    pins: dict[str, ComponentPin] = Field(default_factory=dict)
    """Every component the stack pins: version, package and, per architecture, the installer or
    wheel file with its sha256 and URL where the matrix knows them (what `cert replay` installs)."""
    lock: dict[str, Any] | None = None
    """The lock file given with ``--lock`` (``cannenv image lock``), whole."""


class HostInfo(_Frozen):
    summary: dict[str, Any] = Field(default_factory=dict)
    digest: str | None = None
    """``sha256:…`` of the canonical JSON of the full facts (``cannenv facts --json``)."""
    source: str = ""
    versions: dict[str, str] = Field(default_factory=dict)
    """The exact versions found on the host, by component (the doctor's spelling)."""


class ImageInfo(_Frozen):
    """The cannenv image this ran in, when it did (see :func:`image_info`)."""

    ref: str | None = None
    id: str | None = None
    digest: str | None = None
    stack: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    sources: tuple[str, ...] = ()


class Certificate(_Frozen):
    kind: Literal["cannenv-certificate"] = "cannenv-certificate"
    schema_version: Literal[1] = 1
    cannenv_version: str
    command: str
    level: int | None = None
    started_at: str
    finished_at: str
    stack: StackInfo = StackInfo()
    host: HostInfo = HostInfo()
    image: ImageInfo | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    stages: tuple[StageResult, ...] = ()
    outcome: Outcome
    certified_stages: tuple[str, ...] = ()
    """Ids of the stages that passed — the only ones this certificate certifies."""
    not_certified: dict[str, str] = Field(default_factory=dict)
    """Every other stage id and its status (``skip``, ``fail``, ``error``)."""

    @classmethod
    def build(
        cls,
        stages: Sequence[StageResult],
        *,
        command: str,
        started_at: str,
        level: int | None = None,
        stack: StackInfo | None = None,
        host: HostInfo | None = None,
        image: ImageInfo | None = None,
        options: Mapping[str, Any] | None = None,
        finished_at: str | None = None,
    ) -> Certificate:
        from cannenv import __version__

        clean = tuple(s.model_copy(update={"metrics": jsonable(s.metrics)}) for s in stages)
        return cls(
            cannenv_version=__version__,
            command=command,
            level=level,
            started_at=started_at,
            finished_at=finished_at or now(),
            stack=stack or StackInfo(),
            host=host or HostInfo(),
            image=image,
            options=jsonable(dict(options or {})),
            stages=clean,
            outcome=outcome(clean),
            certified_stages=tuple(s.id for s in clean if s.certified),
            not_certified={s.id: s.status for s in clean if not s.certified},
        )

    def certifies(self, stage_id: str) -> bool:
        """True only when the stage is recorded and passed."""
        return any(s.id == stage_id and s.certified for s in self.stages)


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def jsonable(value: Any) -> Any:
    """Plain JSON values: numpy scalars to Python, non-finite floats to strings, tuples to lists."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        f = float(value)
        if math.isnan(f):
            return "nan"
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return f
    if isinstance(value, BaseModel):
        return jsonable(value.model_dump(mode="json"))
    return str(value)


def canonical(value: Any) -> bytes:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def digest_of(value: Any) -> str:
    return hashlib.sha256(canonical(value)).hexdigest()


def render(envelope: Mapping[str, Any]) -> str:
    """The one textual form of a certificate file."""
    return json.dumps(envelope, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


# ---------------------------------------------------------------------------------------------
# Keys


MAX_CERT_FILE = 16 << 20
"""A certificate is a few KB, a key a few hundred bytes."""


def _read(path: str | os.PathLike[str], what: str) -> bytes:
    """A regular file of at most :data:`MAX_CERT_FILE` (a FIFO or /dev/zero is bad input). A file
    named on the command line that is not there is bad input (exit 2), as the docs' exit-code
    table says; NotFoundError (3) is for ids that match nothing."""
    from cannenv import records

    return records.read_bytes(path, what=what, max_bytes=MAX_CERT_FILE)


def b64decode_strict(value: object) -> bytes:
    """Base64 that decodes to exactly one byte string: the alphabet only, padding required, and the
    unused low bits of the last character zero (re-encoding gives the same text). Otherwise a
    certificate could be changed in those bits and still verify. Raises ValueError."""
    if not isinstance(value, str):
        raise ValueError("expected a base64 string")
    raw = base64.b64decode(value, validate=True)
    if base64.b64encode(raw).decode("ascii") != value:
        raise ValueError("base64 is not in canonical form (unused bits set, or extra padding)")
    return raw


def load_private_key(path: str | os.PathLike[str]) -> Any:
    """An ed25519 private key from a PEM (PKCS#8) or OpenSSH file, unencrypted."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    data = _read(path, "signing key")
    key: Any
    try:
        if b"OPENSSH PRIVATE KEY" in data:
            key = serialization.load_ssh_private_key(data, password=None)
        else:
            key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise InputError(
            f"signing key {str(path)!r}: not an unencrypted PEM or OpenSSH private key ({exc})",
            hint="create one with `cannenv cert keygen KEYFILE` "
            "or `openssl genpkey -algorithm ed25519 -out key.pem`",
        ) from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise InputError(
            f"signing key {str(path)!r} is a {type(key).__name__}, not ed25519",
            hint="certificates are signed with ed25519 keys (`cannenv cert keygen KEYFILE`)",
        )
    return key


def load_public_key(path: str | os.PathLike[str]) -> Any:
    """An ed25519 public key from PEM (SubjectPublicKeyInfo) or an OpenSSH ``ssh-ed25519`` line."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    data = _read(path, "public key")
    key: Any
    try:
        if data.lstrip().startswith(b"ssh-"):
            key = serialization.load_ssh_public_key(data.strip())
        else:
            key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise InputError(
            f"public key {str(path)!r}: not a PEM public key or an OpenSSH ssh-ed25519 line ({exc})",
            hint="use the .pub file written by `cannenv cert keygen`",
        ) from exc
    if not isinstance(key, Ed25519PublicKey):
        raise InputError(f"public key {str(path)!r} is a {type(key).__name__}, not ed25519")
    return key


def _raw_public(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    raw: bytes = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return raw


def fingerprint(public_key: Any) -> str:
    return "sha256:" + hashlib.sha256(_raw_public(public_key)).hexdigest()


def generate_keypair(private_path: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write a new ed25519 key (PEM PKCS#8, mode 0600) and its public half (``<file>.pub``, PEM)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    priv = Path(private_path)
    pub = priv.with_name(priv.name + ".pub")
    if priv.exists():
        raise InputError(
            f"{str(priv)!r} already exists", hint="choose another file name; keys are never overwritten"
        )
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    pub_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    atomic_write_text(priv, pem.decode("ascii"), mode=0o600)
    atomic_write_text(pub, pub_pem.decode("ascii"))
    return priv, pub


# ---------------------------------------------------------------------------------------------
# Writing and verifying


def envelope(cert: Certificate, *, sign_key: Any | None = None) -> dict[str, Any]:
    body = cert.model_dump(mode="json")
    payload = canonical(body)
    signature: dict[str, str] | None = None
    if sign_key is not None:
        pub = sign_key.public_key()
        signature = {
            "algorithm": "ed25519",
            "public_key": base64.b64encode(_raw_public(pub)).decode("ascii"),
            "key_fingerprint": fingerprint(pub),
            "value": base64.b64encode(sign_key.sign(payload)).decode("ascii"),
        }
    return {"certificate": body, "sha256": hashlib.sha256(payload).hexdigest(), "signature": signature}


def write(cert: Certificate, path: str | os.PathLike[str], *, sign_key: Any | None = None) -> Path:
    """Write the certificate atomically (readers see the old file or the whole new one)."""
    return atomic_write_text(path, render(envelope(cert, sign_key=sign_key)))


class Verification(_Frozen):
    ok: bool
    problems: tuple[str, ...] = ()
    sha256: str | None = None
    signed: bool = False
    key_fingerprint: str | None = None
    certificate: Certificate | None = None


def verify_text(text: str, *, public_key: Any | None = None, source: str = "<certificate>") -> Verification:
    """Check a certificate's text; every problem found is listed (none → ``ok``)."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from cannenv import records
    from cannenv.errors import InputError

    try:  # the one bounded JSON reader: depth, integer digits, NaN, lone surrogates
        env = records.parse_json(text, source=source)
    except InputError as exc:
        return Verification(ok=False, problems=(f"not a cannenv certificate: {exc.message}",))
    if not isinstance(env, dict) or set(env) != {"certificate", "sha256", "signature"}:
        return Verification(
            ok=False,
            problems=(f"{source}: not a cannenv certificate (expected keys certificate, sha256, signature)",),
        )
    problems: list[str] = []
    try:
        same = render(env) == text
    except (ValueError, RecursionError):
        same = False
    if not same:
        problems.append(f"{source}: the file is not in canonical form (edited by hand or damaged)")
    body = env["certificate"]
    try:
        actual = digest_of(body)
    except (TypeError, ValueError, RecursionError) as exc:
        return Verification(
            ok=False, problems=(*problems, f"{source}: content cannot be canonicalised: {exc}")
        )
    recorded = env["sha256"]
    if recorded != actual:
        problems.append(f"{source}: sha256 mismatch: recorded {recorded}, content hashes to {actual}")
    cert: Certificate | None = None
    try:
        cert = Certificate.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        problems.append(
            f"{source}: certificate field {'.'.join(str(p) for p in first['loc'])!r}: {first['msg']}"
        )
    sig = env["signature"]
    fp: str | None = None
    if sig is None:
        if public_key is not None:
            problems.append(
                f"{source}: was never signed (no signature block), so it cannot be verified against "
                f"the given public key {fingerprint(public_key)}"
            )
    else:
        try:
            if not isinstance(sig, dict) or sig.get("algorithm") != "ed25519":
                raise ValueError("unsupported signature block (expected algorithm ed25519)")
            embedded = Ed25519PublicKey.from_public_bytes(b64decode_strict(sig["public_key"]))
            fp = fingerprint(embedded)
            if sig.get("key_fingerprint") != fp:
                problems.append(f"{source}: key_fingerprint does not match the embedded public key")
            if public_key is not None and _raw_public(public_key) != _raw_public(embedded):
                problems.append(
                    f"{source}: signed by key {fp}, not by the given public key {fingerprint(public_key)}"
                )
            verifier = public_key if public_key is not None else embedded
            verifier.verify(b64decode_strict(sig["value"]), canonical(body))
        except InvalidSignature:
            problems.append(f"{source}: signature does not verify: content or signature changed")
        except (KeyError, TypeError, ValueError) as exc:
            problems.append(f"{source}: malformed signature block: {exc}")
    return Verification(
        ok=not problems,
        problems=tuple(problems),
        sha256=actual,
        signed=sig is not None,
        key_fingerprint=fp,
        certificate=cert,
    )


def verify_file(
    path: str | os.PathLike[str], *, public_key_path: str | os.PathLike[str] | None = None
) -> Verification:
    raw = _read(path, "certificate")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Verification(ok=False, problems=(f"{path}: not UTF-8 text ({exc})",))
    key = load_public_key(public_key_path) if public_key_path is not None else None
    return verify_text(text, public_key=key, source=str(path))


def load(path: str | os.PathLike[str]) -> Certificate:
    """A verified certificate's content (IntegrityError when it does not verify)."""
    result = verify_file(path)
    if not result.ok or result.certificate is None:
        raise IntegrityError(
            "; ".join(result.problems), hint="the certificate was changed after it was written"
        )
    return result.certificate


# ---------------------------------------------------------------------------------------------
# Diff


class Difference(_Frozen):
    path: str
    a: Any = None
    b: Any = None
    change: str = ""


VOLATILE = ("started_at", "finished_at", "duration_s", "seconds", "iters", "timings")


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list) and value and all(isinstance(v, dict) and "id" in v for v in value):
        for v in value:
            _flatten({k: x for k, x in v.items() if k != "id"}, f"{prefix}[{v['id']}]", out)
    elif isinstance(value, list) and value and all(isinstance(v, dict) and "name" in v for v in value):
        for v in value:
            _flatten({k: x for k, x in v.items() if k != "name"}, f"{prefix}[{v['name']}]", out)
    else:
        out[prefix] = value


def diff(a: Certificate, b: Certificate, *, include_volatile: bool = False) -> list[Difference]:
    """What differs between two certificates (stack, versions, host, stage results, metrics).

    Stages and per-layer rows are matched by id/name, not position. Timestamps, durations and
    loop counts are left out unless ``include_volatile``.
    """
    fa: dict[str, Any] = {}
    fb: dict[str, Any] = {}
    _flatten(a.model_dump(mode="json"), "", fa)
    _flatten(b.model_dump(mode="json"), "", fb)
    out: list[Difference] = []
    for key in sorted(set(fa) | set(fb)):
        leaf = key.rsplit(".", 1)[-1]
        if not include_volatile and any(leaf == v or f".{v}." in f".{key}." for v in VOLATILE):
            continue
        va, vb = fa.get(key), fb.get(key)
        if va == vb:
            continue
        change = ""
        if key not in fa:
            change = "only in B"
        elif key not in fb:
            change = "only in A"
        elif isinstance(va, (int, float)) and isinstance(vb, (int, float)) and not isinstance(va, bool):
            change = f"{vb - va:+.4g}" + (f" ({(vb - va) / abs(va):+.1%})" if va else "")
        out.append(Difference(path=key, a=va, b=vb, change=change))
    return out


def stage_summary(a: Certificate, b: Certificate, diffs: Sequence[Difference] = ()) -> dict[str, Any]:
    """The short answer of `cert diff`: outcomes, stages only in A / only in B, stages whose status
    changed, and stages with the same status whose other fields differ (from ``diffs``)."""
    sa = {s.id: s.status for s in a.stages}
    sb = {s.id: s.status for s in b.stages}
    both = [sid for sid in sa if sid in sb]
    changed = {sid: [sa[sid], sb[sid]] for sid in both if sa[sid] != sb[sid]}
    differ = [
        sid for sid in both if sid not in changed and any(d.path.startswith(f"stages[{sid}]") for d in diffs)
    ]
    return {
        "outcome": [a.outcome, b.outcome],
        "only_in_a": [sid for sid in sa if sid not in sb],
        "only_in_b": [sid for sid in sb if sid not in sa],
        "changed": changed,
        "differ": differ,
    }
