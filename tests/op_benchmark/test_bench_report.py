import pytest

from op_benchmark import report
from op_benchmark.results import Record
from op_benchmark.stats import Measurement


def ok(case, provider, median, direction="fwd", api="paddle.lerp"):
    r = Record(case=case, api=api, provider=provider, direction=direction, device="gpu", method="events")
    r.set_measurement(Measurement.of([median] * 10))
    return r


def test_speedups_geomean_min_max_per_op_pair_and_direction():
    recs = [ok("a", "torch", 100), ok("a", "torch-ops", 50),  # 2x
            ok("b", "torch", 100), ok("b", "torch-ops", 200),  # 0.5x
            ok("c", "torch", 100), ok("c", "torch-ops", 12.5),  # 8x
            ok("a", "torch", 10, "bwd"), ok("a", "torch-ops", 10, "bwd"),
            ok("m", "torch", 10, api="paddle.matmul")]  # no pair: no row
    rows = {(r.api, r.provider, r.baseline, r.direction): r for r in report.speedups(recs)}
    assert set(rows) == {("paddle.lerp", "torch-ops", "torch", "fwd"), ("paddle.lerp", "torch-ops", "torch", "bwd")}
    fwd = rows[("paddle.lerp", "torch-ops", "torch", "fwd")]
    assert fwd.cases == 3 and fwd.geomean == pytest.approx(2.0) and fwd.min == 0.5 and fwd.max == 8.0
    assert rows[("paddle.lerp", "torch-ops", "torch", "bwd")].geomean == pytest.approx(1.0)
    md = report.markdown(report.speedups(recs))
    row = next(line for line in md.splitlines() if "| fwd " in line)
    assert [c.strip() for c in row.strip("|").split("|")] == ["`paddle.lerp`", "torch-ops vs torch", "fwd", "3",
                                                              "2.00x", "0.50x", "8.00x"]


def test_failed_records_are_left_out():
    bad = Record(case="a", api="paddle.lerp", provider="torch-ops", direction="fwd", device="gpu",
                 method="events", status="error", error="x")
    assert report.speedups([ok("a", "torch", 1.0), bad]) == []
    assert "No provider pair" in report.markdown([])
