"""Reading a model's ``config.json`` (``--model DIR`` or ``--config FILE``); no torch here.

The file is user input: read bounded, only as a regular file, parsed as JSON (never executed).
A config with ``"model_type": "cannenv_tiny"`` names cannenv's own tiny decoder
(:class:`cannenv.certify.llm.TinyConfig` fields), so the certification model can be planned too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cannenv.errors import InputError

if TYPE_CHECKING:
    from cannenv.certify.llm import TinyConfig

MAX_CONFIG_BYTES = 4 << 20
TINY_TYPE = "cannenv_tiny"


@dataclass(frozen=True)
class ModelConfig:
    origin: str
    """the file read, for messages"""
    raw: dict[str, Any]
    tiny: TinyConfig | None = None

    @property
    def model_type(self) -> str:
        return str(self.raw.get("model_type", "?"))


def _read(path: Path) -> str:
    from cannenv import records

    data = records.read_bytes(
        path, what="model config", hint="a model config is a few KB", max_bytes=MAX_CONFIG_BYTES
    )
    return data.decode("utf-8", errors="replace")


def load(model_dir: str | None = None, config: str | None = None) -> ModelConfig:
    """The config of ``--model DIR`` (its ``config.json``) or ``--config FILE``."""
    if (model_dir is None) == (config is None):
        raise InputError("give exactly one of --model DIR or --config config.json")
    path = Path(model_dir) / "config.json" if model_dir is not None else Path(str(config))
    if model_dir is not None and not Path(model_dir).is_dir():
        raise InputError(
            f"--model {model_dir}: not a folder",
            hint="--model takes a checkpoint folder; use --config for a file",
        )
    text = _read(path)
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path} line {exc.lineno} column {exc.colno}: not valid JSON ({exc.msg})") from None
    if not isinstance(raw, dict):
        raise InputError(f"{path}: expected a JSON object (a model config)")
    return from_dict(raw, str(path))


def from_dict(raw: dict[str, Any], origin: str) -> ModelConfig:
    model_type = raw.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise InputError(f'{origin}: no "model_type"', hint="a Hugging Face config.json names its model_type")
    if model_type == TINY_TYPE:
        from pydantic import ValidationError

        from cannenv.certify.llm import TinyConfig

        fields = {k: v for k, v in raw.items() if k != "model_type"}
        try:
            return ModelConfig(origin, raw, TinyConfig(**fields))
        except ValidationError as exc:
            raise InputError(f"{origin}: bad {TINY_TYPE} config: {exc.errors()[0]['msg']}") from None
    return ModelConfig(origin, raw)
