"""Reading a model's ``config.json`` (``--model DIR`` or ``--config FILE``); no torch here.

The file is user input: read bounded, only as a regular file, parsed with the bounded JSON reader
(never executed), and validated before anything is built from it (:data:`RULES`,
``cannenv/model/config_rules.yaml``): every size an integer within a sane ceiling, head counts that
divide, a layer count that stays cheap to build. A bad value is exit 2 naming the field.
A config with ``"model_type": "cannenv_tiny"`` names cannenv's own tiny decoder
(:class:`cannenv.certify.llm.TinyConfig` fields), so the certification model can be planned too.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from cannenv.errors import InputError

if TYPE_CHECKING:
    from cannenv.certify.llm import TinyConfig

MAX_CONFIG_BYTES = 4 << 20
TINY_TYPE = "cannenv_tiny"
NESTED = ("text_config",)
"""nested configs whose sizes are validated like the top level (Gemma-3, Llama-4, Qwen-VL)"""


@dataclass(frozen=True)
class ModelConfig:
    origin: str
    """the file read, for messages"""
    raw: dict[str, Any]
    tiny: TinyConfig | None = None

    @property
    def model_type(self) -> str:
        return str(self.raw.get("model_type", "?"))


class _Bound(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    min: int
    max: int


class Rules(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    schema_version: int
    integers: dict[str, _Bound]
    max_layer_modules: int
    common_keys: list[str]


@cache
def rules() -> Rules:
    from cannenv import records
    from cannenv.resources import model_config_rules_file

    path = model_config_rules_file()
    doc = records.load_yaml(path.read_text(encoding="utf-8"))
    return records.validate(Rules, doc, source=str(path))


def _read(path: Path) -> bytes:
    from cannenv import records

    return records.read_bytes(
        path, what="model config", hint="a model config is a few KB", max_bytes=MAX_CONFIG_BYTES
    )


# JSON has no NaN/Infinity; Python's json reads them. Name the field that carries one.
_CONSTANT = re.compile(r'"([^"\\]{1,80})"\s*:\s*(-?(?:NaN|Infinity))\b')


def load(model_dir: str | None = None, config: str | None = None) -> ModelConfig:
    """The config of ``--model DIR`` (its ``config.json``) or ``--config FILE``, validated."""
    from cannenv import records

    if (model_dir is None) == (config is None):
        raise InputError("give exactly one of --model DIR or --config config.json")
    path = Path(model_dir) / "config.json" if model_dir is not None else Path(str(config))
    if model_dir is not None and not Path(model_dir).is_dir():
        raise InputError(
            f"--model {model_dir}: not a folder",
            hint="--model takes a checkpoint folder; use --config for a file",
        )
    data = _read(path)
    text = data.decode("utf-8", errors="replace")
    m = _CONSTANT.search(text)
    if m is not None:
        raise InputError(f"{path}: {m.group(1)}: {m.group(2)} is not a number a config can hold")
    raw = records.parse_json(text, source=str(path), hint="a model's config.json is a JSON object")
    if not isinstance(raw, dict):
        raise InputError(f"{path}: expected a JSON object (a model config)")
    return from_dict(raw, str(path))


def _int_field(origin: str, where: str, key: str, value: Any, lo: int, hi: int) -> None:
    name = f"{where}{key}"
    if isinstance(value, bool) or not isinstance(value, int):
        shown = repr(value)[:40]
        raise InputError(
            f"{origin}: {name}: {shown} is not an integer",
            hint=f"{key} is a count or a size: a JSON integer such as {max(lo, 1)}",
        )
    if not lo <= value <= hi:
        what = "below" if value < lo else "above"
        raise InputError(
            f"{origin}: {name}: {value} is {what} what a model can have ({lo}..{hi:,})",
            hint="cannenv validates sizes before building anything (cannenv/model/config_rules.yaml)",
        )


def _first(raw: dict[str, Any], *keys: str) -> tuple[str, Any]:
    for k in keys:
        if raw.get(k) is not None:
            return k, raw[k]
    return "", None


def validate(raw: dict[str, Any], origin: str) -> None:
    """Refuse what no model can be (InputError naming the field): checked before any build."""
    r = rules()
    arch = raw.get("architectures")
    if arch is not None and (
        not isinstance(arch, list)
        or len(arch) > 16
        or not all(isinstance(a, str) and len(a) <= 200 for a in arch)
    ):
        raise InputError(f"{origin}: architectures: expected a list of class names")
    scopes: list[tuple[str, dict[str, Any]]] = [("", raw)]
    for key in NESTED:
        sub = raw.get(key)
        if isinstance(sub, dict):
            scopes.append((f"{key}.", sub))
        elif sub is not None:
            raise InputError(f"{origin}: {key}: expected an object")
    for where, scope in scopes:
        for key, bound in r.integers.items():
            if key in scope and scope[key] is not None:
                _int_field(origin, where, key, scope[key], bound.min, bound.max)
        _relations(origin, where, scope, r)


def _relations(origin: str, where: str, c: dict[str, Any], r: Rules) -> None:
    hk, heads = _first(c, "num_attention_heads", "n_head", "num_heads")
    kk, kv = _first(c, "num_key_value_heads", "num_kv_heads")
    if heads and kv:
        if kv > heads:
            raise InputError(f"{origin}: {where}{kk}: {kv} KV heads for {heads} attention heads ({hk})")
        if heads % kv:
            raise InputError(
                f"{origin}: {where}{kk}: {kv} KV heads do not divide {heads} attention heads ({hk})",
                hint="grouped-query attention shares each KV head among heads/kv query heads",
            )
    sk, hidden = _first(c, "hidden_size", "n_embd", "d_model")
    _, head_dim = _first(c, "head_dim", "d_kv", "kv_lora_rank")
    if heads and hidden and not head_dim and hidden % heads:
        raise InputError(
            f"{origin}: {where}{sk}: {hidden} is not a multiple of {heads} heads ({hk})"
            " and no head_dim is set",
            hint="the head dimension is hidden_size / num_attention_heads unless head_dim says otherwise",
        )
    ek, experts = _first(c, "num_local_experts", "num_experts", "n_routed_experts")
    _, top_k = _first(c, "num_experts_per_tok")
    if experts and top_k and top_k > experts:
        raise InputError(f"{origin}: {where}num_experts_per_tok: {top_k} routed of {experts} experts ({ek})")
    lk, layers = _first(c, "num_hidden_layers", "num_layers", "n_layer", "num_decoder_layers")
    types = c.get("layer_types")
    if types is not None:
        if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
            raise InputError(f"{origin}: {where}layer_types: expected a list of strings")
        if layers and len(types) != layers:
            raise InputError(f"{origin}: {where}layer_types: {len(types)} entries for {layers} layers ({lk})")
    if layers and layers * ((experts or 0) + 1) > r.max_layer_modules:
        raise InputError(
            f"{origin}: {where}{lk}: {layers} layers x {experts} experts is more than cannenv builds "
            f"({r.max_layer_modules:,} layer modules)"
        )


def key_warnings(raw: dict[str, Any], known: Iterable[str]) -> list[str]:
    """Unknown keys that look like a typo of a known one ("did you mean"); transformers would
    silently take its default for the key meant."""
    known_set = set(known) | set(rules().common_keys) | set(rules().integers)
    out: list[str] = []
    for key in sorted(raw):
        if key in known_set:
            continue
        close = difflib.get_close_matches(key, sorted(known_set), n=1, cutoff=0.85)
        if close and close[0] not in raw:
            out.append(
                f"{key}: not a key of this model's config; did you mean {close[0]}?"
                f" (as written it is ignored and {close[0]} takes its default)"
            )
    return out


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
            err = exc.errors()[0]
            field = ".".join(str(x) for x in err.get("loc", ())) or "?"
            raise InputError(f"{origin}: {field}: bad {TINY_TYPE} config: {err['msg']}") from None
    validate(raw, origin)
    return ModelConfig(origin, raw)
