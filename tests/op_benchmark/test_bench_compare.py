import numpy as np
import pytest

from op_benchmark.compare import AMBIGUOUS, FASTER, SAME, SLOWER, agree, compare_records, decide, markdown, summarize
from op_benchmark.results import Record
from op_benchmark.stats import Measurement


def rec(samples, provider="torch", case="c", status="ok"):
    r = Record(case=case, api="paddle.x", provider=provider, direction="fwd", device="gpu", method="events",
               status=status)
    if status == "ok":
        r.set_measurement(Measurement.of(samples))
    else:
        r.error = "boom"
    return r


def dist(median, rel_noise, n=200, seed=0):
    return list(np.random.default_rng(seed).normal(median, median * rel_noise, n))


def verdict(base, new, **kw):
    return compare_records([rec(base)], [rec(new)], **kw)[0]


def test_clearly_faster():
    c = verdict(dist(100, 0.01), dist(80, 0.01, seed=1))
    assert c.verdict == FASTER and c.ratio == pytest.approx(0.8, rel=0.01)
    assert c.ci_low < c.ratio < c.ci_high < 1


def test_clearly_slower_trips_the_gate():
    c = verdict(dist(100, 0.01), dist(110, 0.01, seed=1))
    assert c.verdict == SLOWER and c.regressed(5.0)
    assert not c.regressed(15.0)


def test_same_distribution_is_same():
    c = verdict(dist(100, 0.01), dist(100, 0.01, seed=1))
    assert c.verdict == SAME and not c.regressed(5.0)


def test_noisy_runs_are_not_called_slower():
    # 8% slower median but 40% noise and few samples: the interval straddles 1, the drift is large.
    c = verdict(dist(100, 0.4, n=15), dist(108, 0.4, n=15, seed=1))
    assert c.verdict in (AMBIGUOUS, SAME) and c.detectable_pct > 8
    assert c.ci_low < 1 < c.ci_high
    assert not c.regressed(5.0)


def rounds(medians, rel_noise=0.005, n=100, seed=0):
    """A record made of passes whose medians are ``medians`` (run-to-run drift between passes)."""
    samples = [s for i, m in enumerate(medians) for s in dist(m, rel_noise, n, seed + i)]
    r = rec(samples)
    r.round_medians = [float(np.median(dist(m, rel_noise, n, seed + i))) for i, m in enumerate(medians)]
    return r


def test_a_shift_within_the_runs_drift_is_not_called():
    # Each run's passes wander by ~2%: a 3% shift between runs is what a rerun of the same build does.
    base = rounds([100, 102, 98])
    new = rounds([103, 105, 101], seed=10)
    c = compare_records([base], [new])[0]
    assert c.verdict != SLOWER and c.detectable_pct > 3
    # The same shift between steady runs (passes within 0.2%) is called.
    c2 = compare_records([rounds([100, 100.2, 99.9])], [rounds([103, 103.1, 102.9], seed=10)])[0]
    assert c2.verdict == SLOWER and c2.detectable_pct < 3


def test_drift_falls_back_to_blocks_of_samples():
    from op_benchmark.compare import drift

    steady = rec(dist(100, 0.001, n=300))
    drifting = rec(list(np.linspace(95, 105, 300)))  # samples creep up over the run
    assert drift(steady) < 0.001 < 0.02 < drift(drifting)


def test_small_significant_change_below_threshold_is_same():  # threshold given explicitly
    assert decide(1.01, 1.005, 1.015, threshold_pct=2) == SAME
    assert decide(1.03, 1.01, 1.05, threshold_pct=2) == SLOWER
    assert decide(0.97, 0.95, 0.99, threshold_pct=2) == FASTER
    assert decide(1.0, 0.9, 1.1, threshold_pct=2) == AMBIGUOUS


def test_new_failures_and_missing_records():
    out = compare_records([rec([1.0] * 10), rec([1.0] * 10, provider="paddle")],
                          [rec([], status="error"), rec([1.0] * 10, provider="torch-ops")])
    by = {c.provider: c for c in out}
    assert by["torch"].verdict == "NEW FAILURE" and by["torch"].regressed(5.0)
    assert by["paddle"].verdict == "MISSING" and by["torch-ops"].verdict == "MISSING"
    assert not by["paddle"].regressed(5.0)


def test_row_to_row_spread_between_runs_sets_the_floor():
    # Steady passes inside each run, but rows land up to ~3% apart between the runs (memory placement,
    # clocks): a shift of that size is not called; one row 15% slower still is.
    base = [rounds([100.0] * 3, seed=i) for i in range(20)]
    shifts = np.random.default_rng(3).permutation(np.linspace(-0.02, 0.02, 20))  # a 1% spread, up to 2%
    new = [rounds([100.0 * (1 + s)] * 3, seed=100 + i) for i, s in enumerate(shifts)]
    for i, (b, n) in enumerate(zip(base, new, strict=True)):
        b.case = n.case = f"c{i}"
    new[0] = rounds([115.0] * 3, seed=999)
    new[0].case = "c0"
    out = {c.case: c for c in compare_records(base, new)}
    assert out["c0"].verdict == SLOWER
    assert all(c.verdict not in (SLOWER, FASTER) for k, c in out.items() if k != "c0")
    assert min(c.detectable_pct for c in out.values()) > 2.5


def test_summary_per_api_and_direction():
    # Two APIs: a's rows 0.8x and 1.25x (geomean 1.0), b's one row 0.5x; a failed row has no ratio and is left out.
    def r(api, case, direction, median, seed, status="ok"):
        x = rec(dist(median, 0.002, seed=seed), case=case, status=status)
        x.api, x.direction = api, direction
        return x

    base = [r("a", "a1", "fwd", 100, 1), r("a", "a2", "fwd", 100, 2), r("b", "b1", "bwd", 100, 3),
            r("b", "b2", "bwd", 100, 4)]
    new = [r("a", "a1", "fwd", 80, 5), r("a", "a2", "fwd", 125, 6), r("b", "b1", "bwd", 50, 7),
           r("b", "b2", "bwd", 100, 8, status="error")]
    comparisons = compare_records(base, new)
    groups = {(g.api, g.direction): g for g in summarize(comparisons)}
    a, b = groups[("a", "fwd")], groups[("b", "bwd")]
    assert (a.rows, a.faster, a.slower) == (2, 1, 1)
    assert a.geomean == pytest.approx(1.0, rel=0.01)
    assert (a.lowest, a.highest) == (pytest.approx(0.8, rel=0.01), pytest.approx(1.25, rel=0.01))
    assert (b.rows, b.faster, b.slower) == (1, 1, 0) and b.geomean == pytest.approx(0.5, rel=0.01)
    text = markdown(comparisons)
    assert "Per API, provider and direction:" in text
    assert "| `a`   | torch      | fwd         | 2      | 1.000" in text


def test_summary_absent_without_ratios():
    text = markdown(compare_records([rec([1.0] * 10)], [rec([], status="error")]))
    assert "NEW FAILURE" in text and "Per API" not in text


def test_agree_keeps_only_verdicts_both_orders_give():
    # Two comparisons of the same builds (the second timed new first): a row 20% faster in both stays FASTER, a
    # row slower in one and the same in the other (a run-to-run swing) is AMBIGUOUS and does not trip the gate,
    # a row slower in both does; a new failure in either is kept.
    def pair(new_medians, seed):
        base = [rec(dist(100, 0.005, seed=seed + i), case=f"c{i}") for i in range(4)]
        new = [rec(dist(m, 0.005, seed=seed + 10 + i), case=f"c{i}") if m else rec([], case=f"c{i}", status="error")
               for i, m in enumerate(new_medians)]
        return compare_records(base, new)

    first, second = pair([80, 110, 110, 100], 0), pair([80, 100, 110, None], 100)
    assert [c.verdict for c in first] == [FASTER, SLOWER, SLOWER, SAME]
    out = {c.case: c for c in agree(first, second)}
    assert out["c0"].verdict == FASTER and out["c0"].ratio == pytest.approx(0.8, rel=0.01)
    assert out["c1"].verdict == AMBIGUOUS and out["c1"].note == "SLOWER then SAME" and not out["c1"].regressed(5.0)
    assert out["c1"].ratio == pytest.approx((1.1 * 1.0) ** 0.5, rel=0.01)
    assert out["c1"].ci_low < 1.0 < 1.05 < out["c1"].ci_high
    assert out["c2"].verdict == SLOWER and out["c2"].regressed(5.0)
    assert out["c3"].verdict == "NEW FAILURE" and out["c3"].regressed(5.0)


def test_compare_again_on_the_command_line(tmp_path, capsys):
    # opbench compare BASE NEW --again BASE2 NEW2: one table of the verdicts both pairs give.
    from op_benchmark.results import BenchResult, write_json
    from opbench.cli import main

    def run(name, median, seed):
        path = tmp_path / f"{name}.json"
        write_json(BenchResult(env={}, config={}, records=[rec(dist(median, 0.005, seed=seed))]), path)
        return str(path)

    base, new = run("base", 100, 0), run("new", 110, 1)
    new2, base2 = run("new2", 100, 2), run("base2", 100, 3)
    assert main(["compare", base, new]) == 1  # alone, the first pair calls it 10% slower
    assert main(["compare", base, new, "--again", base2, new2]) == 0
    assert "SLOWER then SAME" in capsys.readouterr().out


def _timed_twice(shifts, seed):
    """base, new, base2, new2 of 40 rows, each run's rows within 0.5% of their build's: new moves row i by
    shifts[i] (a fraction)."""
    rng = np.random.default_rng(seed)

    def run(build_shifts, s):
        out = []
        for i, sh in enumerate(build_shifts):
            r = rec(dist(100 * (1 + sh) * (1 + rng.normal(0, 0.005)), 0.002, n=60, seed=s + i), case=f"c{i}")
            out.append(r)
        return out

    zeros = [0.0] * len(shifts)
    return run(zeros, seed), run(shifts, seed + 100), run(zeros, seed + 200), run(shifts, seed + 300)


def test_builds_timed_twice_take_the_spread_between_one_builds_runs():
    # A change that moves 40% of the rows by 5-14% (and the rest not at all) widens log(new / base)'s spread
    # over rows far past what two runs differ by: estimated from it, the smallest callable shift hides most
    # of those rows. One build's two runs (base and base2, new and new2) measure run-to-run spread alone.
    from op_benchmark.compare import same_build_between

    shifts = [-0.05 - 0.09 * i / 15 for i in range(16)] + [0.0] * 24
    base, new, base2, new2 = _timed_twice(shifts, 0)
    spread = same_build_between(base, base2, new, new2)
    assert spread < 0.015
    plain = compare_records(base, new)
    assert min(c.detectable_pct for c in plain) > 5.0  # the change's own spread sets the floor
    sharp = {c.case: c for c in compare_records(base, new, between=spread)}
    assert all(sharp[f"c{i}"].verdict == FASTER for i in range(16))
    assert all(sharp[f"c{i}"].verdict == SAME for i in range(16, 40))
    assert sum(c.verdict == FASTER for c in plain) < 16


def test_compare_again_takes_the_same_build_spread(tmp_path, capsys):
    # On the command line, --again gives compare each build's two runs: the rows the change moved are FASTER in
    # both orders, where the pair alone would not call them.
    from op_benchmark.results import BenchResult, write_json
    from opbench.cli import main

    shifts = [-0.05 - 0.09 * i / 15 for i in range(16)] + [0.0] * 24
    runs = dict(zip(("base", "new", "base2", "new2"), _timed_twice(shifts, 7), strict=True))
    paths = {}
    for name, records in runs.items():
        paths[name] = str(tmp_path / f"{name}.json")
        write_json(BenchResult(env={}, config={}, records=records), paths[name])
    assert main(["compare", paths["base"], paths["new"], "--markdown", str(tmp_path / "alone.md")]) == 0
    alone = (tmp_path / "alone.md").read_text()
    assert main(["compare", paths["base"], paths["new"], "--again", paths["base2"], paths["new2"],
                 "--markdown", str(tmp_path / "both.md")]) == 0
    both = (tmp_path / "both.md").read_text()
    capsys.readouterr()
    assert "FASTER: 16" in both and "FASTER: 16" not in alone
