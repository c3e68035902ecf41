"""docs/ops/sweep_doc.py: a run stopped by its time limit says so, with how many cases it measured."""

from __future__ import annotations

from doc_scripts import load

from op_benchmark.results import BenchResult, Record


def _records(case: str, providers: list[str]) -> list[Record]:
    return [Record(case=case, api="paddle.nn.functional.rms_norm", provider=p, direction=d, device="gpu",
                   method="events", median_us=10.0) for p in providers for d in ("fwd", "bwd")]


def test_stopped_note_counts_full_and_partial_cases() -> None:
    both = ["torch", "torch-ops"]
    recs = _records("paddle.nn.functional.rms_norm(x=Tensor([4, 8], 'float32'))", both)
    recs += _records("paddle.nn.functional.rms_norm(x=Tensor([2, 8], 'float32'))", both)
    recs += _records("paddle.nn.functional.rms_norm(x=Tensor([3, 8], 'float32'))", ["torch"])
    sweep_doc = load("sweep_doc")
    assert sweep_doc.stopped_note(BenchResult({}, {}, recs, interrupted=True)).endswith("2 in full and 1 in part.")
    assert sweep_doc.stopped_note(BenchResult({}, {}, recs[:8], interrupted=True)).endswith("2 in full.")
