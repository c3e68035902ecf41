"""The accuracy gate: ``opbench accuracy`` checks a subject (Paddle, our ops) against a reference (PyTorch).

Modules: tolerances (per-dtype table, overrides), compare (figures), outcomes, check (one case),
gpu_cache (device input cache), workers (isolation), results (JSONL), summary (markdown, CSV),
stages (stage profile), plugins (test providers), cli.
"""
