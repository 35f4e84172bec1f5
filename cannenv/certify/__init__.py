"""Certification: smoke kernels, LLM forward pass, performance probes, certificates.

Modules (no imports here: torch and the toolchain are loaded only by the stages that need them):

* :mod:`~cannenv.certify.stages`      stage plan/result models, outcome, exit codes
* :mod:`~cannenv.certify.runner`      options, plan per level, the run loop, doctor and kernels stages
* :mod:`~cannenv.certify.worker`      the door to the device worker: start, bound, interpret; prechecks
* :mod:`~cannenv.certify.forward`     ``llm``, ``llm-model``, ``fused-*`` (reference alongside the worker)
* :mod:`~cannenv.certify.perf_stage`  ``perf-*`` stages: peaks and judging
* :mod:`~cannenv.certify.checkpoint`  a ``--model`` folder: checked first, recorded by config and digests
* :mod:`~cannenv.certify.setup`       the setup a certificate records (stack, pins, host); ``cert replay``
* :mod:`~cannenv.certify.llm`         the tiny Llama-style decoder (plain PyTorch, seeded weights)
* :mod:`~cannenv.certify.llm_worker`  the device-side subprocess (``python -m cannenv.certify.llm_worker``)
* :mod:`~cannenv.certify.metrics`     precision metrics, thresholds, layer-by-layer localisation
* :mod:`~cannenv.certify.perf`        platform-ini peaks, published peaks, throughput/bandwidth probes
* :mod:`~cannenv.certify.certificate` canonical JSON, sha256, ed25519 signature, verify, diff
* :mod:`~cannenv.certify.kernels`     Ascend C smoke kernels (kernel_build/_compare/_data/_render/_toolkit;
                                      launch: launch parameters checked against the SoC before launch)
"""
