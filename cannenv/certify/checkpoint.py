"""A local Hugging Face checkpoint given with ``--model DIR``: checked before anything runs,
and recorded in the certificate by its own config and the sha256 of every weight file.

Pure file reading (no torch, no transformers): the folder must hold a ``config.json`` that is a
JSON object and at least one weight file. Reads are bounded: ``config.json`` up to 1 MiB, weight
files streamed through sha256; only regular files are opened. Symbolic links are followed, as
transformers follows them (a Hugging Face cache snapshot links every file into ``blobs/``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cannenv.errors import InputError

CONFIG = "config.json"
MAX_CONFIG_BYTES = 1 << 20
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
"""Weight files transformers loads (``model*.safetensors``, ``pytorch_model*.bin``, ...)."""
INDEX_SUFFIX = ".index.json"
HINT = (
    "give the folder written by `save_pretrained()`: config.json plus model.safetensors "
    "(or pytorch_model.bin, or their shards with the .index.json)"
)


@dataclass(frozen=True)
class Checkpoint:
    path: str
    config: dict[str, Any]
    config_sha256: str
    weights: dict[str, str] = field(default_factory=dict)
    """File name (relative to the folder) -> ``sha256:<hex>``; shard indexes included."""

    def record(self) -> dict[str, Any]:
        """What the certificate stores about the checkpoint."""
        return {
            "path": self.path,
            "config": self.config,
            "config_sha256": self.config_sha256,
            "weights": dict(self.weights),
            "model_type": self.config.get("model_type"),
            "architectures": self.config.get("architectures"),
        }


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return "sha256:" + h.hexdigest()


def inspect(folder: str, *, hash_weights: bool = True) -> Checkpoint:
    """Check ``folder`` is a usable checkpoint (InputError, exit 2, naming what is missing)."""
    root = Path(folder)
    if not root.exists():
        raise InputError(f"--model {folder!r} does not exist", hint=HINT)
    if not root.is_dir():
        raise InputError(f"--model {folder!r} is not a directory", hint=HINT)
    cfg_path = root / CONFIG
    if not cfg_path.is_file():
        raise InputError(f"--model {folder!r}: no {CONFIG} (not a Hugging Face checkpoint folder)", hint=HINT)
    raw = cfg_path.open("rb").read(MAX_CONFIG_BYTES + 1)
    if len(raw) > MAX_CONFIG_BYTES:
        raise InputError(f"{cfg_path}: larger than {MAX_CONFIG_BYTES} bytes; not a model config")
    try:
        config = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{cfg_path}: not valid JSON ({exc})", hint=HINT) from None
    if not isinstance(config, dict):
        raise InputError(f"{cfg_path}: expected a JSON object, got {type(config).__name__}", hint=HINT)
    files = sorted(
        p
        for p in root.iterdir()
        if p.is_file() and (p.name.endswith(WEIGHT_SUFFIXES) or p.name.endswith(INDEX_SUFFIX))
    )
    if not any(p.name.endswith(WEIGHT_SUFFIXES) for p in files):
        raise InputError(
            f"--model {folder!r}: no weight file ({', '.join('*' + s for s in WEIGHT_SUFFIXES)})", hint=HINT
        )
    weights = {p.name: (_sha256_file(p) if hash_weights else "") for p in files}
    return Checkpoint(
        path=str(root.resolve()),
        config=config,
        config_sha256="sha256:" + hashlib.sha256(raw).hexdigest(),
        weights=weights,
    )
