"""Build a model from its config on the ``meta`` device and record every ATen operator it calls.

Imports torch and transformers (only ``cannenv model`` commands import this module). The model is
built on ``meta`` (shapes, no storage: a 70B config costs nothing), then a prefill and one decode
step run under two dispatch-level recorders:

* a **pre-dispatch** mode (torch's ``PreDispatch`` key, above autograd, reached through the Python
  dispatcher) sees each operator as the model calls it, before torch decomposes
  ``CompositeImplicitAutograd`` operators (``aten::linear``, ``aten::scaled_dot_product_attention``).
  That is the level a backend sees first: torch_npu registers kernels for some of these composites
  (``scaled_dot_product_attention``), which then never decompose on the NPU;
* a plain ``TorchDispatchMode`` (the ``Python`` key, just above the backend) sees what each of them
  decomposed into: the parts reported for a composite operator.

Operators with a ``CompositeExplicitAutograd`` kernel (registered for every backend: views,
``_safe_softmax``) are expanded once more with torch's own decomposition table where it has one.
Nothing here judges: :mod:`cannenv.model.coverage` classifies the result against a registry.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import inspect
import os
import re
import sys
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

# torch_npu must not load itself into torch (autoload): without CANN that breaks `import torch`, and
# the composite kernels are traced on the NPU's dispatch key, which must hold only torch's kernels.
os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"


def _block_torch_npu() -> bool:
    """Keep torch_npu out of this process; True when it is installed here (and so was blocked).

    transformers imports torch_npu when it finds it (``is_torch_npu_available``), and without CANN
    that import fails (``libhccl.so: cannot open shared object file``). A ``None`` entry in
    ``sys.modules`` makes ``importlib.util.find_spec`` answer None and ``import torch_npu`` raise
    ModuleNotFoundError, which transformers reads as "not installed". The registry is read from
    torch_npu's files, never from the module.
    """
    if "torch_npu" in sys.modules:
        return sys.modules["torch_npu"] is not None
    try:
        present = importlib.util.find_spec("torch_npu") is not None
    except (ImportError, ValueError):
        present = False
    sys.modules["torch_npu"] = None  # type: ignore[assignment]
    return present


TORCH_NPU_BLOCKED = _block_torch_npu()


import torch  # noqa: E402
from torch import nn  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from cannenv.errors import InputError  # noqa: E402
from cannenv.model.config import ModelConfig  # noqa: E402
from cannenv.model.coverage import OpRecord, Trace  # noqa: E402

KERNEL_KEYS = (
    "CompositeImplicitAutograd",
    "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
    "CPU",
)
"""dispatch keys whose kernels decide how an operator without an NPU kernel runs"""

DTYPES: dict[str, torch.dtype] = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
_SHORT = {
    torch.bfloat16: "bf16",
    torch.float16: "fp16",
    torch.float32: "fp32",
    torch.float64: "fp64",
    torch.int64: "i64",
    torch.int32: "i32",
    torch.int16: "i16",
    torch.int8: "i8",
    torch.uint8: "u8",
    torch.bool: "bool",
}
MAX_MODULES = 6
"""module paths kept per operator (the rest are counted)"""


def op_name(func: Any) -> str:
    overload = func._overloadname
    base = f"{func.namespace}::{func._opname}"
    return base if overload == "default" else f"{base}.{overload}"


def _dtypes(args: Any, kwargs: Any) -> tuple[str, ...]:
    from torch.utils._pytree import tree_leaves

    seen: list[str] = []
    for leaf in tree_leaves((args, kwargs)):
        if isinstance(leaf, torch.Tensor):
            short = _SHORT.get(leaf.dtype, str(leaf.dtype).replace("torch.", ""))
            if short not in seen:
                seen.append(short)
    return tuple(seen)


_LAYER_INDEX = re.compile(r"(?<=\.)\d+(?=\.|$)")


@dataclass
class _Acc:
    count: int = 0
    modules: Counter[str] = field(default_factory=Counter)
    parts: Counter[str] = field(default_factory=Counter)
    steps: set[str] = field(default_factory=set)


class _Recorder:
    """State shared by the two modes and the module hooks."""

    def __init__(self) -> None:
        self.modules: list[str | None] = [None]
        """innermost module first at the end; None outside the model (our own glue: argmax, slicing)"""
        self.step = "prefill"
        self.calls: dict[tuple[str, tuple[str, ...]], _Acc] = {}
        self.current: list[_Acc] = []
        self.seen: dict[str, Any] = {}
        self.examples: dict[str, tuple[Any, Any]] = {}

    def top(self, func: Any, args: Any, kwargs: Any) -> _Acc:
        module = self.modules[-1]
        if module is None:
            return _Acc()  # not the model's call: recorded nowhere
        name = op_name(func)
        self.seen.setdefault(name, func)
        acc = self.calls.setdefault((name, _dtypes(args, kwargs)), _Acc())
        acc.count += 1
        acc.modules[module] += 1
        acc.steps.add(self.step)
        return acc

    def leaf(self, func: Any, args: Any, kwargs: Any) -> None:
        if self.modules[-1] is None:
            return
        name = op_name(func)
        self.seen.setdefault(name, func)
        if self.current:
            self.current[-1].parts[name] += 1
        if name not in self.examples and (
            _has(name, "CompositeExplicitAutograd") or _has(name, "CompositeExplicitAutogradNonFunctional")
        ):
            self.examples[name] = (args, kwargs)


def _has(name: str, key: str) -> bool:
    try:
        return bool(torch._C._dispatch_has_kernel_for_dispatch_key(name, key))
    except RuntimeError:
        return False


def _pre_dispatch_mode(rec: _Recorder) -> TorchDispatchMode:
    # torch lets only its own mode classes sit on the PreDispatch key (torch._ops
    # _set_mode_pre_dispatch); SchemaCheckMode is the one without side effects of its own, and
    # we override all it does.
    from torch._subclasses.schema_check_mode import SchemaCheckMode

    class PreDispatch(SchemaCheckMode):  # type: ignore[misc, no-untyped-call, unused-ignore]
        def __init__(self) -> None:
            TorchDispatchMode.__init__(  # type: ignore[no-untyped-call, unused-ignore]
                self, _dispatch_key=torch._C.DispatchKey.PreDispatch
            )

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            rec.current.append(rec.top(func, args, kwargs))
            try:
                return func(*args, **kwargs)
            finally:
                rec.current.pop()

    return PreDispatch()


class _LeafMode(TorchDispatchMode):  # type: ignore[no-untyped-call, unused-ignore]
    def __init__(self, rec: _Recorder) -> None:
        super().__init__()  # type: ignore[no-untyped-call, unused-ignore]
        self.rec = rec

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        self.rec.leaf(func, args, kwargs)
        return func(*args, **kwargs)


@contextlib.contextmanager
def _recording(rec: _Recorder, model: nn.Module) -> Iterator[None]:
    from torch._dispatch.python import enable_python_dispatcher
    from torch.utils._python_dispatch import _pop_mode, _push_mode

    names = {id(m): _LAYER_INDEX.sub("*", name) for name, m in model.named_modules()}

    def pre(module: nn.Module, args: Any) -> None:
        # a module the model does not register (one a library makes at call time, as transformers 5
        # wraps a function such as the rotary embedding in a module of its own) is reported at the
        # registered module that calls it: the model's own layout, whatever the library's release
        # (outside the model, None: not recorded, as any glue of ours)
        rec.modules.append(names.get(id(module), rec.modules[-1]))

    def post(module: nn.Module, args: Any, out: Any) -> None:
        if len(rec.modules) > 1:
            rec.modules.pop()

    from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

    h1 = register_module_forward_pre_hook(pre)
    h2 = register_module_forward_hook(post)
    try:
        with torch.no_grad(), enable_python_dispatcher(), _LeafMode(rec):
            _push_mode(_pre_dispatch_mode(rec))
            try:
                yield
            finally:
                _pop_mode(torch._C.DispatchKey.PreDispatch)
    finally:
        h1.remove()
        h2.remove()


# ---------------------------------------------------------------------------------------------
# Building the model


@contextlib.contextmanager
def _default_dtype(dtype: torch.dtype) -> Iterator[None]:
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


def build(cfg: ModelConfig, dtype: torch.dtype, device: str = "meta") -> nn.Module:
    """The model of ``cfg`` on ``device`` (``meta``: no storage) in ``dtype``."""
    with _default_dtype(dtype), torch.device(device), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if cfg.tiny is not None:
            from cannenv.certify.llm import TinyDecoder

            model: nn.Module = TinyDecoder(cfg.tiny)
        else:
            model = _build_hf(cfg)
    return model.eval()


def _known_type(cfg: ModelConfig) -> None:
    """Exit 2 for a model_type transformers does not ship (its code would be the checkpoint's)."""
    import transformers
    from transformers import CONFIG_MAPPING

    # transformers logs advice meant for training scripts (missing optional kernels, deprecated
    # arguments) through its own logger: keep the command's output to what it reports.
    transformers.logging.set_verbosity_error()
    if cfg.model_type not in CONFIG_MAPPING:
        remote = cfg.raw.get("auto_map")
        raise InputError(
            f"{cfg.origin}: model_type: {cfg.model_type!r} is not a model transformers "
            f"{transformers.__version__} knows"
            + (" (its code would come from the checkpoint: auto_map)" if remote else ""),
            hint="cannenv never runs a checkpoint's own code; a newer transformers may know it, or set "
            "model_type and architectures to the known model it derives from in a copy of config.json",
        )


_BOOL_TYPES = frozenset({"bool", "bool|None", "Optional[bool]", "typing.Optional[bool]"})


def _declared_bools(cls: Any) -> set[str]:
    """The fields a transformers config class declares ``bool`` (dataclass configs, transformers
    5); empty for the classes of older releases, which declare nothing and check nothing."""
    import dataclasses

    if not dataclasses.is_dataclass(cls):
        return set()
    return {
        f.name
        for f in dataclasses.fields(cls)
        if f.type is bool or str(f.type).replace(" ", "") in _BOOL_TYPES
    }


def saved_ints_as_bools(model_type: str, raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``raw`` with integers read as booleans where this transformers declares a boolean field.

    Configs saved by an older transformers hold integers there (Llama-4 as saved by 4.51:
    ``attn_temperature_tuning: 4``; the model tests it for truth), which transformers 5's strict
    config classes refuse. The value's truth is what both releases use, so the plan is the same
    under either; each such reading is returned as a note."""
    from transformers import CONFIG_MAPPING

    if model_type not in CONFIG_MAPPING:
        return raw, []
    cls = CONFIG_MAPPING[model_type]
    bools = _declared_bools(cls)
    out, notes = dict(raw), []
    for key in sorted(bools & set(raw)):
        value = raw[key]
        if isinstance(value, int) and not isinstance(value, bool):
            out[key] = bool(value)
            notes.append(
                f"{key}: {value} read as {str(bool(value)).lower()} (a boolean in this transformers)"
            )
    for name, sub in (getattr(cls, "sub_configs", None) or {}).items():
        nested = raw.get(name)
        sub_type = getattr(sub, "model_type", None)
        if isinstance(nested, dict) and isinstance(sub_type, str) and sub_type:
            fixed, more = saved_ints_as_bools(str(nested.get("model_type") or sub_type), nested)
            out[name] = fixed
            notes += [f"{name}.{n}" for n in more]
    return out, notes


def hf_config(cfg: ModelConfig) -> Any:
    """transformers' config object for ``cfg`` (its own code only: ``auto_map`` is never followed)."""
    import transformers

    _known_type(cfg)
    raw, _ = saved_ints_as_bools(cfg.model_type, dict(cfg.raw))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return transformers.AutoConfig.for_model(**raw)
    except Exception as exc:  # transformers' own validation of a config it knows: bad input
        raise InputError(
            f"{cfg.origin}: transformers {transformers.__version__} cannot read this config: "
            f"{type(exc).__name__}: {str(exc)[:300]}",
        ) from None


def config_warnings(cfg: ModelConfig) -> list[str]:
    """Keys that look like typos of the model's keys, and remote code that is not run."""
    from cannenv.model import config as config_mod

    if cfg.tiny is not None:
        return []
    _known_type(cfg)
    from transformers import CONFIG_MAPPING, PretrainedConfig

    cls = CONFIG_MAPPING[cfg.model_type]
    known: set[str] = set()
    for c in (PretrainedConfig, cls):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # a config class that needs arguments: its signature still names its keys
            with contextlib.suppress(Exception):
                known |= set(c().to_dict())
        known |= set(getattr(c, "attribute_map", {}) or {})
        known |= set(inspect.signature(c.__init__).parameters)
    out = config_mod.key_warnings(cfg.raw, known)
    out += saved_ints_as_bools(cfg.model_type, dict(cfg.raw))[1]
    import transformers

    for arch in cfg.raw.get("architectures") or []:
        if not isinstance(getattr(transformers, str(arch), None), type):
            out.append(
                f"architectures: {arch} is not a transformers {transformers.__version__} class; the model "
                f"is built with the Auto class for {cfg.model_type} instead (its own code is never run)"
            )
    if cfg.raw.get("auto_map") is not None:
        out.append(
            f"auto_map: ignored; the model is built with transformers' own {cfg.model_type} code "
            "(cannenv never runs a checkpoint's code)"
        )
    return out


def _build_hf(cfg: ModelConfig) -> nn.Module:
    import transformers

    hf_cfg = hf_config(cfg)
    classes: list[Any] = []
    for arch in hf_cfg.architectures or []:
        cls = getattr(transformers, str(arch), None)
        if isinstance(cls, type):
            classes.append(cls)
    auto = (
        [transformers.AutoModelForSeq2SeqLM]
        if getattr(hf_cfg, "is_encoder_decoder", False)
        else [transformers.AutoModelForCausalLM, transformers.AutoModel]
    )
    errors: list[str] = []
    for cls in classes:
        try:
            return cls(hf_cfg)  # type: ignore[no-any-return]
        except Exception as exc:  # a model class that rejects the config: try the next
            errors.append(f"{cls.__name__}: {exc}")
    for auto_cls in auto:
        try:
            return auto_cls.from_config(hf_cfg)  # type: ignore[no-any-return]
        except Exception as exc:  # transformers rejects the config: bad input, named below
            errors.append(f"{auto_cls.__name__}: {exc}")
    raise InputError(
        f"{cfg.origin}: no transformers model class builds this config", hint="; ".join(errors)[:500]
    )


# ---------------------------------------------------------------------------------------------
# Running: prefill, then one decode step


def _cache_of(out: Any) -> Any:
    for attr in ("cache", "past_key_values", "cache_params"):
        value = getattr(out, attr, None)
        if value is not None:
            return value
    return None


class _NoCache(Exception):
    """The prefill returned no cache: there is no decode step to run (an encoder)."""


def _steps(model: nn.Module, batch: int, seq_len: int, device: str) -> list[tuple[str, Callable[[], Any]]]:
    """The calls to make: ``prefill`` and, where the model has a cache, one ``decode`` step."""
    ids = torch.zeros(batch, seq_len, dtype=torch.long, device=device)
    cfg = getattr(model, "config", None)
    if cfg is None:  # our own tiny decoder: no cache, the decode step is a one-token forward
        return [("prefill", lambda: model(ids)), ("decode", lambda: model(ids[:, :1]))]
    params = inspect.signature(model.forward).parameters
    cache_kw = next((k for k in ("cache", "past_key_values", "cache_params") if k in params), None)
    state: dict[str, Any] = {}

    def prefill() -> Any:
        kwargs: dict[str, Any] = {}
        if getattr(cfg, "is_encoder_decoder", False):
            kwargs["decoder_input_ids"] = ids[:, :1]
        if "use_cache" in params:
            kwargs["use_cache"] = True
        out = model(input_ids=ids, **kwargs)
        state["out"] = out
        return out

    def decode() -> Any:
        out = state["out"]
        cache = _cache_of(out)
        if cache is None:
            raise _NoCache
        logits = getattr(out, "logits", None)
        nxt = logits[:, -1:].argmax(-1) if logits is not None else ids[:, :1]
        kwargs: dict[str, Any] = {"use_cache": True, cache_kw: cache} if cache_kw else {}
        if "cache_position" in params:
            kwargs["cache_position"] = torch.tensor([seq_len], device=device)
        if getattr(cfg, "is_encoder_decoder", False):
            kwargs["encoder_outputs"] = (out.encoder_last_hidden_state,)
            return model(decoder_input_ids=nxt, **kwargs)
        return model(input_ids=nxt, **kwargs)

    steps: list[tuple[str, Callable[[], Any]]] = [("prefill", prefill)]
    if cache_kw is not None and getattr(cfg, "use_cache", True):
        steps.append(("decode", decode))
    return steps


def record(cfg: ModelConfig, *, dtype: str = "bf16", batch: int = 1, seq_len: int = 16) -> Trace:
    """Build ``cfg`` on ``meta``, run a prefill and one decode step, return every operator called."""
    if dtype not in DTYPES:
        raise InputError(f"--dtype {dtype!r}: operators are recorded in " + ", ".join(DTYPES))
    return record_model(build(cfg, DTYPES[dtype]), cfg.origin, batch=batch, seq_len=seq_len)


def record_model(model: nn.Module, origin: str, *, batch: int = 1, seq_len: int = 16) -> Trace:
    """Record a model already built on ``meta`` (a Hugging Face model, or any module taking ids)."""
    rec = _Recorder()
    ran: list[str] = []
    notes: list[str] = []
    steps = _steps(model, batch, seq_len, "meta")
    with _recording(rec, model), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for step, call in steps:
            rec.step = step
            try:
                call()
            except _NoCache:
                break
            except (RuntimeError, NotImplementedError, TypeError, ValueError) as exc:
                if step == "prefill":
                    raise InputError(
                        f"{origin}: the model cannot run on the meta device: {type(exc).__name__}: {exc}",
                        hint="a model whose control flow reads tensor values needs real weights; "
                        "report the model to cannenv",
                    ) from None
                notes.append(f"decode step not run: {type(exc).__name__}: {str(exc)[:200]}")
                break
            ran.append(step)
    if "decode" not in ran and not notes:
        notes.append("no decode step: the model returns no cache (an encoder)")
    decomps, partial = _decompose(rec)
    names = set(rec.seen) | {p for parts in decomps.values() for p in parts}
    kernels = {n: tuple(k for k in KERNEL_KEYS if _has(n, k)) for n in sorted(names)}
    ops = []
    for (name, dts), acc in sorted(rec.calls.items()):
        modules = tuple(m or "(model)" for m, _ in acc.modules.most_common(MAX_MODULES))
        parts = tuple(sorted(acc.parts)) or (name,)
        ops.append(OpRecord(name, dts, acc.count, modules, parts, tuple(s for s in ran if s in acc.steps)))
    from cannenv.model.env import version

    return Trace(
        type(model).__name__,
        origin,
        tuple(ran),
        tuple(ops),
        kernels,
        decomps,
        tuple(notes),
        partial,
        torch=torch.__version__,
        transformers=version("transformers") or "",
        kernels_from=f"the installed torch {torch.__version__}",
    )


def _parts_of(call: Callable[[], Any], name: str) -> tuple[tuple[str, ...], bool, dict[str, Any]]:
    """The operators ``call`` dispatches (not ``name`` itself, no prims), and whether it completed."""
    sub = _Recorder()
    sub.modules = ["(kernel)"]
    sub.current.append(_Acc())
    complete = True
    try:
        with torch.no_grad(), _LeafMode(sub):
            call()
    except Exception:  # the kernel reads tensor values (a host copy): meta tensors have none
        complete = False
    parts = tuple(sorted(p for p in sub.current[0].parts if p != name and not p.startswith("prims::")))
    return parts, complete, sub.seen


def _decompose(rec: _Recorder) -> tuple[dict[str, tuple[str, ...]], tuple[str, ...]]:
    """Parts of operators with a composite kernel for every backend, and those only partly traced.

    The kernel is run for real: redispatched to the ``PrivateUse1`` key (the NPU's, where nothing
    is registered without torch_npu, so the dispatcher's table holds torch's composite kernel
    there) on the recorded meta arguments, under the leaf recorder. torch's Python decomposition
    table is the second choice when that kernel needs tensor values.
    """
    from torch._decomp import decomposition_table

    keyset = torch._C.DispatchKeySet(torch._C.DispatchKey.PrivateUse1)
    out: dict[str, tuple[str, ...]] = {}
    partial: list[str] = []
    for name, (args, kwargs) in sorted(rec.examples.items()):
        func = rec.seen[name]
        parts, complete, seen = _parts_of(functools.partial(func.redispatch, keyset, *args, **kwargs), name)
        if not complete:
            fn = decomposition_table.get(func)
            if fn is not None:
                alt, ok, alt_seen = _parts_of(functools.partial(fn, *args, **kwargs), name)
                if ok and alt:
                    parts, complete, seen = alt, True, alt_seen
        if not complete:
            partial.append(name)
        if parts:
            out[name] = parts
            for p, f in seen.items():
                rec.seen.setdefault(p, f)
    return out, tuple(partial)


def parameter_bytes(model: nn.Module) -> int:
    """Bytes of the model's parameters as allocated: unique storages (tied weights once)."""
    seen: set[int] = set()
    total = 0
    for p in model.parameters():
        storage = p.untyped_storage()
        key = storage.data_ptr() if p.device.type != "meta" else id(p)
        if key in seen:
            continue
        seen.add(key)
        total += storage.nbytes()
    return total


# ---------------------------------------------------------------------------------------------
# The shape the memory plan needs


def _get(cfg: Any, *names: str, default: Any = None) -> Any:
    for n in names:
        v = getattr(cfg, n, None) if not isinstance(cfg, dict) else cfg.get(n)
        if v is not None:
            return v
    return default


_ATTN = {
    "self_attn",
    "attn",
    "attention",
    "self_attention",
    "cross_attn",
    "encdecattention",
    "crossattention",
    "mixer",
}
_MLP = {"mlp", "feed_forward", "ffn", "densereludense", "intermediate", "output"}
_REPLICATED_ATTN = ("kv_a_proj_with_mqa", "q_a_proj")
"""MLA's down-projections: ReplicatedLinear in vLLM's DeepSeek-V2/V3 (small, every rank holds them)"""


def _role(path: tuple[str, ...], module: nn.Module, param: torch.Tensor, experts_child: bool) -> str:
    low = [p.lower() for p in path]
    leaf = low[-1] if low else ""
    kind = type(module).__name__.lower()
    if "norm" in kind or "norm" in leaf or leaf.startswith("ln"):
        return "norm"
    if any("shared_expert" in p for p in low):
        return "router" if leaf == "shared_expert_gate" else "shared_expert"
    if "experts" in low or kind.endswith("experts"):
        return "expert"
    if "router" in kind or "router" in leaf or "moegate" in kind or (leaf == "gate" and experts_child):
        return "router"
    if any(p in _ATTN for p in low):
        return "attention"
    if any(p in _MLP or p.startswith("mlp") for p in low):
        return "mlp"
    return "other"


def _weights(model: nn.Module, skip: tuple[str, ...], kv_heads: int) -> tuple[Any, ...]:
    """Every parameter (tied ones once) by role and TP split; matrices a scheme may quantise."""
    from cannenv.model.memory import QUANTISED_ROLES, Weights

    anymodel: Any = model
    emb = anymodel.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    head = anymodel.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    emb_w = getattr(emb, "weight", None)
    head_w = getattr(head, "weight", None)
    modules = dict(model.named_modules())
    seen: set[int] = set()
    groups: dict[tuple[str, str, bool], dict[str, Any]] = {}
    for name, p in model.named_parameters():  # unique: a tied weight appears once
        if id(p) in seen:
            continue
        seen.add(id(p))
        mod_path, _, pname = name.rpartition(".")
        module = modules.get(mod_path, model)
        path = tuple(mod_path.split(".")) if mod_path else ()
        parent = modules.get(mod_path.rpartition(".")[0]) if mod_path else None
        experts_child = parent is not None and hasattr(parent, "experts")
        if p is emb_w or isinstance(module, nn.Embedding):
            role = "embedding"
        elif p is head_w:
            role = "head"
        else:
            role = _role(path, module, p, experts_child)
        leaf = path[-1] if path else ""
        if role in ("embedding", "head"):
            split = "tp"
        elif role == "expert":
            split = "expert"
        elif role in ("attention", "mlp", "shared_expert") and p.dim() >= 2 and leaf not in _REPLICATED_ATTN:
            split = "kv" if role == "attention" and leaf in ("k_proj", "v_proj") else "tp"
        else:
            split = "replicated"
        skipped = any(s and (s in mod_path.split(".") or mod_path.endswith(s) or s in mod_path) for s in skip)
        matrix = role in QUANTISED_ROLES and p.dim() in (2, 3) and pname != "bias" and not skipped
        g = groups.setdefault((role, split, matrix), {"params": 0, "shapes": Counter()})
        g["params"] += p.numel()
        if matrix:
            shp = tuple(int(x) for x in p.shape)
            if type(module).__name__ == "Conv1D":  # GPT-2: a linear with an [in, out] weight
                g["shapes"][(shp[1], shp[0])] += 1
            elif len(shp) == 3:  # fused experts [E, out, in] (transformers 5)
                g["shapes"][(shp[1], shp[2])] += shp[0]
            else:
                g["shapes"][(shp[0], shp[1])] += 1
    return tuple(
        Weights(
            role,  # type: ignore[arg-type]
            split,  # type: ignore[arg-type]
            g["params"],
            tuple(sorted((o, i, n) for (o, i), n in g["shapes"].items())),
            kv_heads if split == "kv" else 0,
        )
        for (role, split, _), g in sorted(groups.items())
    )


def _eager_layers(hf: Any, n_layers: int) -> tuple[int, str | None]:
    """Layers whose attention runs eager, and why (None: every layer fused)."""
    impl = getattr(hf, "_attn_implementation", None) or getattr(hf, "attn_implementation", None)
    cap = _get(hf, "attn_logit_softcapping")
    if cap:
        return n_layers, (
            f"attn_logit_softcapping {cap}: the fused kernels (SDPA, npu_fusion_attention) cannot soft-cap"
            " the scores, so transformers runs attention eager"
        )
    if impl == "eager":
        return n_layers, "attn_implementation is eager"
    return 0, None


def shape(cfg: ModelConfig, model: nn.Module | None = None, *, skip: tuple[str, ...] = ()) -> Any:
    """A :class:`cannenv.model.memory.Shape`, parameters counted exactly on the meta model.

    ``skip``: modules the checkpoint's quantization keeps unquantised (its ignore list).
    """
    from cannenv.model.memory import AttnKind, Layer, Shape

    model = model if model is not None else build(cfg, torch.bfloat16)
    params = sum(p.numel() for p in model.parameters())  # unique: tied weights once
    anymodel: Any = model
    emb: Any = (
        anymodel.get_input_embeddings()
        if hasattr(model, "get_input_embeddings")
        else getattr(model, "embed", None)
    )
    head: Any = (
        anymodel.get_output_embeddings()
        if hasattr(model, "get_output_embeddings")
        else getattr(model, "lm_head", None)
    )
    tied = emb is not None and head is not None and head.weight is emb.weight
    hf = getattr(model, "config", None) or cfg.raw
    # a multimodal config keeps the decoder's sizes in its text config (Gemma-3, Mistral-3, Qwen-VL)
    if hasattr(hf, "get_text_config"):
        hf = hf.get_text_config()
    elif isinstance(hf, dict) and isinstance(hf.get("text_config"), dict):
        hf = hf["text_config"]
    if cfg.tiny is not None:
        t = cfg.tiny
        hidden, heads, inter, vocab, n_layers = (
            t.hidden_size,
            t.num_heads,
            t.intermediate_size,
            t.vocab_size,
            t.num_layers,
        )
        kv_heads, head_dim = t.num_kv_heads, t.head_dim
    else:
        hidden = int(_get(hf, "hidden_size", "d_model", "n_embd", default=0))
        heads = int(_get(hf, "num_attention_heads", "num_heads", "n_head", default=0) or 0)
        inter = int(_get(hf, "intermediate_size", "d_ff", "n_inner", default=4 * hidden) or 4 * hidden)
        vocab = int(_get(hf, "vocab_size", default=0))
        n_layers = int(
            _get(hf, "num_decoder_layers", "num_hidden_layers", "num_layers", "n_layer", default=0)
        )
        kv_heads = int(_get(hf, "num_key_value_heads", "num_kv_heads", default=heads) or heads)
        head_dim = int(_get(hf, "head_dim", "d_kv", default=(hidden // heads) if heads else 0) or 0)
    weights = _weights(model, skip, kv_heads)
    notes: list[str] = []
    model_type = cfg.model_type
    layers: list[Layer] = []
    cross: list[Layer] = []
    encoder_only = False
    kind: AttnKind = "mqa" if kv_heads == 1 and heads > 1 else ("gqa" if kv_heads < heads else "mha")
    if cfg.tiny is None and model_type in ("mamba", "mamba2"):
        d_inner = int(_get(hf, "intermediate_size", default=2 * hidden))
        state = int(_get(hf, "state_size", default=16))
        conv = int(_get(hf, "conv_kernel", default=4))
        layers = [Layer("ssm", state_elems=d_inner * (state + conv))] * n_layers
        inter, heads = d_inner, 0
        notes.append("state-space model: a fixed state per sequence, no KV cache")
    elif cfg.tiny is None and _get(hf, "kv_lora_rank") is not None:
        latent = int(_get(hf, "kv_lora_rank")) + int(_get(hf, "qk_rope_head_dim", default=0))
        layers = [Layer("mla", latent=latent)] * n_layers
        notes.append(
            "MLA: the cache holds kv_lora_rank + qk_rope_head_dim per token and layer,"
            " replicated across TP ranks"
        )
    elif (
        cfg.tiny is None
        and not _get(hf, "is_decoder", "is_encoder_decoder", default=False)
        and model_type in ("bert", "roberta", "xlm-roberta", "distilbert", "electra", "deberta", "deberta-v2")
    ):
        layers = [Layer("none")] * n_layers
        notes.append("encoder: no KV cache")
        encoder_only = True
    else:
        layers = _attention_layers(hf, cfg, n_layers, kind, kv_heads, head_dim, notes)
        if _get(hf, "is_encoder_decoder", default=False):
            cross = [Layer(kind, kv_heads, head_dim)] * n_layers
            notes.append(
                "encoder-decoder: cross-attention K/V cached over the encoder length (taken = seq_len)"
            )
    experts = top_k = 0
    if cfg.tiny is None:
        experts = int(_get(hf, "num_local_experts", "num_experts", "n_routed_experts", default=0) or 0)
        top_k = int(_get(hf, "num_experts_per_tok", "num_experts_per_token", default=0) or 0)
        if experts and top_k:
            moe_i = int(_get(hf, "moe_intermediate_size", default=0) or 0) or inter
            shared = int(_get(hf, "shared_expert_intermediate_size", default=0) or 0)
            shared += int(_get(hf, "n_shared_experts", default=0) or 0) * moe_i
            dense_layers = int(_get(hf, "first_k_dense_replace", default=0) or 0)
            moe_width = top_k * moe_i + shared
            inter = max(moe_width, inter if dense_layers else 0)
            notes.append(
                f"MoE: {experts} experts, activations counted for {top_k} routed x {moe_i}"
                + (f" + shared {shared}" if shared else "")
                + " per token"
            )
    eager, why = _eager_layers(hf, len(layers)) if cfg.tiny is None and heads else (0, None)
    if why:
        notes.append(f"eager attention: {why}; activations include the seq x seq scores")
    return Shape(
        type(model).__name__,
        params,
        tied,
        hidden,
        heads,
        inter,
        vocab,
        tuple(layers),
        tuple(cross),
        tuple(notes),
        weights,
        experts,
        eager,
        top_k if experts else 0,
        encoder_only=encoder_only,
        rules=f"transformers {_transformers_version()} (meta build)",
    )


def _transformers_version() -> str:
    import transformers

    return str(transformers.__version__)


def _attention_layers(
    hf: Any, cfg: ModelConfig, n_layers: int, kind: Any, kv_heads: int, head_dim: int, notes: list[str]
) -> list[Any]:
    """Per layer: full or sliding-window attention, from whatever the config sets.

    ``layer_types`` decides where present (Gemma-2/3, Qwen3 hybrids); else a ``sliding_window``
    applies to every layer unless ``use_sliding_window`` is false (Qwen2/Qwen3: then only layers
    from ``max_window_layers`` on would slide) - Mistral, Mixtral, Phi-3 (2047) all set it.
    """
    from cannenv.model.memory import Layer

    types = _get(hf, "layer_types")
    window = _get(hf, "sliding_window")
    use_sw = _get(hf, "use_sliding_window", default=True)
    max_window_layers = _get(hf, "max_window_layers")
    layers = []
    for i in range(n_layers):
        if isinstance(types, (list, tuple)) and i < len(types):
            sliding = "sliding" in str(types[i])
        elif not window or use_sw is False:
            sliding = False
        elif isinstance(max_window_layers, int) and "use_sliding_window" in cfg.raw:
            sliding = i >= max_window_layers
        else:
            sliding = True
        layers.append(Layer(kind, kv_heads, head_dim, int(window) if sliding and window else None))
    if window and any(lay.window for lay in layers):
        notes.append(f"sliding window {window}: those layers cache at most {window} tokens")
    return layers
