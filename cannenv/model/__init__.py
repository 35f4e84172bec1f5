"""Model readiness before any NPU is touched (`cannenv model ops|memory|check`).

config.py     reading a model's config.json (bounded, JSON only; no torch)
registry.py   the operators a torch_npu build registers, from the yaml its wheel ships (no torch)
trace.py      the model built on the meta device, its ATen operators recorded (imports torch, transformers)
coverage.py   native / composite / CPU fallback / unsupported, rewrites, fused-operator patterns (pure)
memory.py     weights, KV cache, activations, reserve against HBM per device and TP (pure)
ops.yaml      fused-operator patterns and rewrites, each with its source

docs/model.md has every rule and formula with its source.
"""
