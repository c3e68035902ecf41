"""docs/ops/sweep_doc.py: a run stopped by its time limit says so, with how many cases it measured."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from op_benchmark.results import BenchResult, Record


def _sweep_doc() -> Any:
    path = Path(__file__).resolve().parents[2] / "docs" / "ops" / "sweep_doc.py"
    spec = importlib.util.spec_from_file_location("sweep_doc", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _records(case: str, providers: list[str]) -> list[Record]:
    return [Record(case=case, api="paddle.nn.functional.rms_norm", provider=p, direction=d, device="gpu",
                   method="events", median_us=10.0) for p in providers for d in ("fwd", "bwd")]


def test_stopped_note_counts_full_and_partial_cases() -> None:
    both = ["torch", "torch-ops"]
    recs = _records("paddle.nn.functional.rms_norm(x=Tensor([4, 8], 'float32'))", both)
    recs += _records("paddle.nn.functional.rms_norm(x=Tensor([2, 8], 'float32'))", both)
    recs += _records("paddle.nn.functional.rms_norm(x=Tensor([3, 8], 'float32'))", ["torch"])
    note = _sweep_doc().stopped_note(BenchResult({}, {}, recs, interrupted=True))
    assert note.endswith("2 in full and 1 in part.")
    assert _sweep_doc().stopped_note(BenchResult({}, {}, recs[:8], interrupted=True)).endswith("2 in full.")
