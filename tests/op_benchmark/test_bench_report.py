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
                                                              "2.00x", "0.50x", "8.00x", "1"]


def test_failed_records_are_left_out():
    bad = Record(case="a", api="paddle.lerp", provider="torch-ops", direction="fwd", device="gpu",
                 method="events", status="error", error="x")
    assert report.speedups([ok("a", "torch", 1.0), bad]) == []
    assert "No provider pair" in report.markdown([])


def test_candidate_speedups_against_paddle_and_the_fastest_anchor_per_case():
    recs = [ok("a", "paddle", 100), ok("a", "torch", 60), ok("a", "torch-compile", 40), ok("a", "paddle-ops", 20),
            ok("b", "paddle", 10), ok("b", "torch", 80), ok("b", "paddle-ops", 20),
            ok("c", "torch", 10), ok("c", "paddle-ops", 20)]  # no Paddle record: only vs best
    rows = {(r.baseline, r.direction): r for r in report.candidate_speedups(recs)}
    before, best = rows[("paddle", "fwd")], rows[(report.BEST, "fwd")]
    assert before.provider == "paddle-ops" and before.cases == 2 and before.below == 1 and before.slower == 1
    assert before.geomean == pytest.approx((5.0 * 0.5) ** 0.5)
    assert best.cases == 3 and best.min == 0.5 and best.max == 4.0 and best.below == 1  # 40/20, 80/20, 10/20


def test_pr_section_has_the_summary_the_chart_and_every_case(tmp_path):
    from op_benchmark.results import BenchResult

    recs = [ok("a", "paddle", 100), ok("a", "torch", 60), ok("a", "paddle-ops", 20)]
    env = {"device": "cpu", "cpu": {"model": "Some CPU", "threads": 2}, "git_commit": "abc1234",
           "frameworks": {"paddle": {"version": "3.3.1"}, "torch": None}, "time": "2026-01-01T00:00:00+00:00"}
    text = report.pr_section(BenchResult(env, {}, recs), chart="speedups.png")
    assert text.startswith("## Performance\n")
    assert "CPU Some CPU, 2 threads" in text and "paddle 3.3.1" in text and "commit abc1234" in text
    assert "| `paddle.lerp` | paddle-ops vs paddle" in text and "paddle-ops vs industry best" in text
    assert "Cases slower than Paddle's kernel beyond the noise: none." in text
    no_paddle = report.pr_section(BenchResult(env, {}, [ok("a", "torch", 60), ok("a", "torch-ops", 20)]))
    assert "Paddle's kernel was not measured" in no_paddle
    assert "![speedups](speedups.png)" in text and "### Every case" in text and "5.00x" in text


def test_report_cli_writes_the_section_and_the_chart(tmp_path, capsys):
    from op_benchmark.results import BenchResult, write_json
    from opbench.cli import main

    path = tmp_path / "run.json"
    write_json(BenchResult({"device": "cpu"}, {}, [ok("a", "paddle", 100), ok("a", "paddle-ops", 50)]), path)
    md, png = tmp_path / "pr" / "perf.md", tmp_path / "pr" / "img" / "speedups.png"
    png.parent.mkdir(parents=True)
    assert main(["report", str(path), "--markdown", str(md), "--png", str(png)]) == 0
    assert "![speedups](img/speedups.png)" in md.read_text()
    assert png.stat().st_size > 0
    assert main(["report", str(path), "--baselines", "paddle"]) == 0  # the plain pairwise summary
    assert "paddle-ops vs paddle" in capsys.readouterr().out


def test_per_anchor_rows_and_the_cases_below_the_best():
    recs = [ok("paddle.lerp(a)", "torch", 60), ok("paddle.lerp(a)", "torch-compile", 40),
            ok("paddle.lerp(a)", "torch-ops", 50),  # 1.2x of eager, 0.8x of compile
            ok("paddle.lerp(b)", "torch", 30), ok("paddle.lerp(b)", "torch-compile", 90),
            ok("paddle.lerp(b)", "torch-ops", 20)]  # 1.5x of the best (eager)
    rows = {(r.baseline, r.direction): r for r in report.candidate_speedups(recs, per_anchor=True)}
    assert set(rows) == {(report.BEST, "fwd"), ("torch", "fwd"), ("torch-compile", "fwd")}
    assert rows[("torch", "fwd")].min == pytest.approx(1.2) and rows[("torch-compile", "fwd")].below == 1
    assert {r.baseline for r in report.candidate_speedups(recs)} == {report.BEST}
    below = report.below_best(recs)
    assert [(d, round(x, 2), p) for _, d, x, p in below] == [("fwd", 0.8, "torch-compile")]
