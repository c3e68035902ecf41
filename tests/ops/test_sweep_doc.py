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


def _timed(provider: str, median: float, copy_us: float | None = None, direction: str = "fwd",
           rows: int = 4) -> Record:
    from op_benchmark.stats import Measurement

    r = Record(case=f"paddle.nn.functional.rms_norm(x=Tensor([{rows}, 8], 'float32'))",
               api="paddle.nn.functional.rms_norm", provider=provider, direction=direction, device="gpu",
               method="events", bytes=3_000_000)
    r.set_measurement(Measurement.of([median] * 10), peak_gbps=3000.0)  # the bytes at 3,000 GB/s: 1 us
    r.copy_us = copy_us
    return r


def test_copy_floor_bounds_the_ceiling_where_the_run_timed_it() -> None:
    sweep_doc = load("sweep_doc")
    env = {"peak_bandwidth_gbps": 3000.0}
    plain = BenchResult(env, {}, [_timed("torch-compile", 10.0), _timed("torch-ops", 8.0)])
    summary, cases = sweep_doc.targets(plain)
    # The floor is the run's fastest call (8 us, longer than the bytes' 1 us): 10/8
    assert summary == [["rms_norm", "fwd", "1", "1.25x", "0", "1.25x", "1.25x", "no large case"]]
    assert len(cases[0]) == 8
    # A second case's 2 us calls make the launch floor 2 us; the first case's floor is then the copy's 9 us,
    # shorter than every call of it (the fastest 10): 10 / 9
    short = [_timed("torch-compile", 2.0, rows=2), _timed("torch-ops", 2.0, 2.0, rows=2)]
    copied = BenchResult(env, {"copy_floor": True}, [_timed("torch-compile", 10.0), _timed("torch-ops", 12.0, 9.0),
                                                    *short])
    summary, cases = sweep_doc.targets(copied)
    assert summary[0][6:8] == ["2.24x", "1.05x (1.2x unreachable)"]  # sqrt(10/2 * 2/2), sqrt(10/9 * 2/2)
    assert cases[0][-2:] == ["9.0", "1.11x"]
    text = sweep_doc.render(copied, "x.json")
    assert "--copy-floor" in text and "ceiling by a copy of the bytes" in text
    # A call faster than the copy shows the copy is no bound there: the floor is that call (ours, 8 us)
    beaten = BenchResult(env, {}, [_timed("torch-compile", 10.0), _timed("torch-ops", 8.0, 9.0), *short])
    assert sweep_doc.targets(beaten)[1][1][-2:] == ["9.0", "1.25x"]
    # A copy faster than the other floors never loosens them
    fast_copy = BenchResult(env, {}, [_timed("torch-compile", 10.0), _timed("torch-ops", 8.0, 2.0)])
    assert sweep_doc.targets(fast_copy)[0][0][6:8] == ["1.25x", "1.25x"]


def test_a_case_below_target_is_bounded_by_the_copy_where_the_anchor_beats_the_bytes_floor() -> None:
    sweep_doc = load("sweep_doc")
    env = {"peak_bandwidth_gbps": 3000.0}  # the bytes at 3,000 GB/s: 1 us
    # The anchor moves the bytes faster than the copy bandwidth (0.9 us): a kernel at the copy's speed takes
    # 1 us, 0.90x of it, so ours (1.2 us, 0.75x) is below the target and bounded below it
    bounded = BenchResult(env, {}, [_timed("torch-compile", 0.9), _timed("torch-ops", 1.2, 1.1)])
    summary, cases = sweep_doc.targets(bounded)
    assert summary[0][3:5] == ["0.75x", "1 (1 bounded by the copy)"]
    assert cases[0][-1] == "0.90x"
    # Below the target but reachable: the copy's bound is 1.0x
    reachable = BenchResult(env, {}, [_timed("torch-compile", 1.5), _timed("torch-ops", 2.0, 1.5)])
    assert sweep_doc.targets(reachable)[0][0][3:5] == ["0.75x", "1"]
    assert "`bounded by the copy`" in sweep_doc.render(bounded, "x.json")
