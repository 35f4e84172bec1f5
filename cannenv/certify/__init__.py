"""Certification stages: smoke kernels, LLM forward pass, performance, certificates."""
