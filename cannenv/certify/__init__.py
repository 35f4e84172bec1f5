"""Certification: smoke kernels, LLM forward pass, performance probes, certificates.

Modules (no imports here: torch and the toolchain are loaded only by the stages that need them):

* :mod:`~cannenv.certify.stages`      stage plan/result models (pass | fail | skip | error), verdicts
* :mod:`~cannenv.certify.runner`      plan per level, run stage groups, judge the device worker's output
* :mod:`~cannenv.certify.llm`         the tiny Llama-style decoder (plain PyTorch, seeded weights)
* :mod:`~cannenv.certify.llm_worker`  the device-side subprocess (``python -m cannenv.certify.llm_worker``)
* :mod:`~cannenv.certify.metrics`     precision metrics, thresholds, layer-by-layer localisation
* :mod:`~cannenv.certify.perf`        platform-ini peaks, published peaks, throughput/bandwidth probes
* :mod:`~cannenv.certify.certificate` canonical JSON, sha256, ed25519 signature, verify, diff
* :mod:`~cannenv.certify.kernels`     Ascend C smoke kernels (with kernel_build/_compare/_data/_toolkit)
"""
