"""``opbench compare``: two result files, per case, provider and direction, a ratio with a CI.

The ratio is ``median(new) / median(base)`` with a 95% bootstrap interval over both runs'
raw samples. That interval measures the noise *inside* a run; two runs of the same build
also differ *between* runs (clocks, memory placement, what else the GPU did), by more.
Two estimates of it come from the runs themselves:

- within each run: a run is several passes over the suite (``opbench bench --rounds``),
  minutes apart, and the spread of a record's pass medians is how far that row wanders
  (pooled with the run's median over rows, since three passes make a noisy estimate);
- between the two runs: the spread over all rows of ``log(new / base)`` around its median
  (a robust standard deviation). Rows a change did not touch differ only by what two runs
  differ by; a change that slows every row alike moves the median, not the spread. A change
  that moves many rows by different amounts widens it, though (an H100 A/B of 192 norm calls,
  45 of them 5-14% faster: 3.5%, so nothing under 10% was called), so where each build was
  timed twice (``--again``) the spread is taken between one build's two runs instead
  (``same_build_between``: 0.5% there), which no change can widen.

The smallest shift a row can call is ``DRIFT_SIGMAS`` times the larger of the two, and
never under ``threshold`` (2.5% by default); the table shows it. Verdicts:

- FASTER / SLOWER: the whole interval is below / above 1 and the ratio is beyond that shift;
- SAME: the whole interval lies within that shift;
- AMBIGUOUS: anything else (the interval is too wide to tell): never a gate failure.

Files without pass medians (one round) estimate drift from three chronological blocks of
their samples. The gate fails only on SLOWER by more than ``fail_pct``. ``summarize`` gives the
overall effect per API, provider and direction (geometric mean of the ratios, FASTER/SLOWER counts).

Two builds timed twice, base then new and then new then base, give two comparisons; ``agree`` keeps
a row's verdict where both give it. A run-to-run swing of a small row (up to 7% under 6 us on an
H100 between two one-round runs; commit 0598158's message) seldom repeats in the other order; a
change's effect does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from tabulate import tabulate

from op_benchmark.results import Record
from op_benchmark.stats import bootstrap_ratio_ci, geometric_mean

FASTER, SLOWER, SAME, AMBIGUOUS = "FASTER", "SLOWER", "SAME", "AMBIGUOUS"
#: The smallest shift ever called: on an H100, consecutive runs of one build moved single rows of
#: the lerp suite by up to 2.4% while each run's own passes agreed within 0.2% (a row's memory
#: placement and launch timing differ between processes; docs/op_benchmark/compare_validation.md).
DEFAULT_THRESHOLD_PCT = 2.5
DEFAULT_FAIL_PCT = 5.0
#: How many standard deviations of run-to-run drift a shift must exceed to be called.
DRIFT_SIGMAS = 3.0
#: A row's pass medians give a 2-degree-of-freedom estimate of its drift; it is pooled with its
#: run's typical drift as if that were this many more degrees of freedom, so one noisy estimate
#: neither hides a real change nor lets a noisy row through.
PRIOR_DOF = 4.0


@dataclass(frozen=True)
class Comparison:
    case: str
    provider: str
    direction: str
    base_us: float | None
    new_us: float | None
    ratio: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    verdict: str = AMBIGUOUS
    note: str = ""
    detectable_pct: float | None = None  # the smallest shift this row can call
    api: str = ""  # the case's API (its record's; set wherever there is a ratio), for summarize

    @property
    def key(self) -> tuple[str, str, str]:
        """(case, provider, direction): the row, as ``Record.key``."""
        return self.case, self.provider, self.direction

    def regressed(self, fail_pct: float) -> bool:
        """SLOWER by more than ``fail_pct`` percent, or newly failing."""
        if self.verdict == "NEW FAILURE":
            return True
        return self.verdict == SLOWER and self.ratio is not None and self.ratio > 1 + fail_pct / 100


def decide(ratio: float, lo: float, hi: float, threshold_pct: float = DEFAULT_THRESHOLD_PCT) -> str:
    """The verdict for a ratio, its confidence interval and the smallest callable shift (percent)."""
    t = threshold_pct / 100
    if hi < 1 and ratio < 1 - t:
        return FASTER
    if lo > 1 and ratio > 1 + t:
        return SLOWER
    if lo >= 1 - t and hi <= 1 + t:
        return SAME
    if hi < 1 or lo > 1:  # significant, but smaller than the threshold
        return SAME
    return AMBIGUOUS


def drift(record: Record) -> float:
    """Relative standard deviation of a record's pass medians (or of three chronological blocks of its
    samples when it has one pass): how much a rerun of the same build may move this row."""
    medians = record.round_medians or _block_medians(record.samples_us, 3)
    if len(medians) < 2:
        return 0.0
    m = np.asarray(medians, dtype=np.float64)
    return float(np.std(m, ddof=1) / np.median(m))


def _block_medians(samples: list[float], blocks: int) -> list[float]:
    if len(samples) < 3 * blocks:
        return []
    return [float(np.median(b)) for b in np.array_split(np.asarray(samples), blocks)]


def _between_runs(base_by: dict, new_by: dict) -> float:
    """Robust standard deviation over rows of ``log(new / base)`` (1.4826 x its median absolute
    deviation): what two runs differ by, row to row, measured on this pair of runs."""
    logs = [np.log(new_by[k].median_us / b.median_us) for k, b in base_by.items()
            if b.ok and k in new_by and new_by[k].ok and b.median_us > 0 and new_by[k].median_us > 0]
    if len(logs) < 5:  # too few rows to tell the spread from a change
        return 0.0
    a = np.asarray(logs)
    return float(1.4826 * np.median(np.abs(a - np.median(a))))


def _by_key(records: Sequence[Record]) -> dict:
    """Records by (case, provider, direction)."""
    return {r.key: r for r in records}


def same_build_between(base: Sequence[Record], base2: Sequence[Record], new: Sequence[Record],
                       new2: Sequence[Record]) -> float:
    """What two runs of one build differ by, row to row: the larger of the robust spreads of
    ``log(base2 / base)`` and ``log(new2 / new)`` over rows (as ``_between_runs``), for builds timed twice."""
    return max(_between_runs(_by_key(base), _by_key(base2)), _between_runs(_by_key(new), _by_key(new2)))


def _pooled(row: float, run: float, row_dof: float = 2.0) -> float:
    """A row's drift pooled with its run's typical drift (see :data:`PRIOR_DOF`)."""
    return float(np.sqrt((row_dof * row * row + PRIOR_DOF * run * run) / (row_dof + PRIOR_DOF)))


def _run_drift(records: Sequence[Record]) -> float:
    """A run's typical drift: the median over its measured rows."""
    values = [drift(r) for r in records if r.ok]
    return float(np.median(values)) if values else 0.0


def compare_records(base: Sequence[Record], new: Sequence[Record], *,
                    threshold_pct: float = DEFAULT_THRESHOLD_PCT, level: float = 0.95,
                    seed: int = 0, between: float | None = None) -> list[Comparison]:
    """Pair records by (case, provider, direction) and compare each pair. ``between``: the run-to-run
    spread of a row's log-median where it is known (``same_build_between``), else it is estimated from
    ``log(new / base)`` over the rows."""
    base_by, new_by = _by_key(base), _by_key(new)
    base_floor, new_floor = _run_drift(base), _run_drift(new)
    if between is None:
        between = _between_runs(base_by, new_by)
    keys = list(base_by) + [k for k in new_by if k not in base_by]
    out = []
    for key in keys:
        b, n = base_by.get(key), new_by.get(key)
        case, provider, direction = key
        if b is None or n is None:
            out.append(Comparison(case, provider, direction, b.median_us if b else None,
                                  n.median_us if n else None, verdict="MISSING",
                                  note="only in base" if n is None else "only in new"))
            continue
        if not (b.ok and n.ok):
            if b.ok and n.status in ("error", "oom"):
                out.append(Comparison(case, provider, direction, b.median_us, None, verdict="NEW FAILURE",
                                      note=f"{n.status}: {n.error}"))
            else:
                out.append(Comparison(case, provider, direction, b.median_us, n.median_us, verdict="NOT RUN",
                                      note=f"base {b.status}, new {n.status}"))
            continue
        ratio, lo, hi = bootstrap_ratio_ci(b.samples_us, n.samples_us, level=level, seed=seed)
        within = float(np.hypot(_pooled(drift(b), base_floor), _pooled(drift(n), new_floor)))
        detectable = max(threshold_pct, 100 * DRIFT_SIGMAS * max(within, between))
        out.append(Comparison(case, provider, direction, b.median_us, n.median_us, ratio, lo, hi,
                              decide(ratio, lo, hi, detectable), detectable_pct=detectable, api=b.api))
    return out


def agree(first: Sequence[Comparison], second: Sequence[Comparison]) -> list[Comparison]:
    """One comparison per row from two of the same builds (the second timed in the other order): the verdict
    both give, else AMBIGUOUS, noted; the geometric mean of the medians and ratios, an interval spanning
    both. A row without a ratio in either (a failure, a missing record) keeps that comparison's verdict."""
    again = {c.key: c for c in second}
    out = []
    for a in first:
        b = again.pop(a.key, None)
        if b is None or a.ratio is None or b.ratio is None:
            out.append(a if b is None or a.ratio is None else b)
            continue
        both = a.verdict == b.verdict
        out.append(Comparison(a.case, a.provider, a.direction, geometric_mean([a.base_us, b.base_us]),
                              geometric_mean([a.new_us, b.new_us]), geometric_mean([a.ratio, b.ratio]),
                              min(a.ci_low, b.ci_low), max(a.ci_high, b.ci_high),
                              a.verdict if both else AMBIGUOUS, "" if both else f"{a.verdict} then {b.verdict}",
                              max(a.detectable_pct, b.detectable_pct), a.api))
    return out + list(again.values())  # rows only the second comparison has


def compare_both_orders(base: Sequence[Record], new: Sequence[Record], base2: Sequence[Record],
                        new2: Sequence[Record], *, threshold_pct: float = DEFAULT_THRESHOLD_PCT) -> list[Comparison]:
    """``compare --again``: both pairs compared with the run-to-run spread of each build's two runs
    (``same_build_between``), then the verdicts they agree on (``agree``)."""
    between = same_build_between(base, base2, new, new2)
    return agree(compare_records(base, new, threshold_pct=threshold_pct, between=between),
                 compare_records(base2, new2, threshold_pct=threshold_pct, between=between))


@dataclass(frozen=True)
class GroupSummary:
    """A change's overall effect on one API, provider and direction: the rows compared, the geometric
    mean, lowest and highest of their new/base ratios, and how many were called FASTER and SLOWER."""

    api: str
    provider: str
    direction: str
    rows: int
    geomean: float
    lowest: float
    highest: float
    faster: int
    slower: int


def summarize(comparisons: Sequence[Comparison]) -> list[GroupSummary]:
    """One GroupSummary per (API, provider, direction) with at least one ratio, in first-seen order."""
    groups: dict[tuple[str, str, str], list[Comparison]] = {}
    for c in comparisons:
        if c.ratio is not None and c.ratio > 0:
            groups.setdefault((c.api, c.provider, c.direction), []).append(c)
    out = []
    for (api, provider, direction), rows in groups.items():
        ratios = [c.ratio for c in rows]
        out.append(GroupSummary(api, provider, direction, len(rows), geometric_mean(ratios), min(ratios), max(ratios),
                                sum(c.verdict == FASTER for c in rows), sum(c.verdict == SLOWER for c in rows)))
    return out


def markdown(comparisons: Sequence[Comparison], *, fail_pct: float | None = None) -> str:
    """One GitHub table (case, provider, direction, medians, ratio, CI, verdict), a count line, and a table
    of the new/base ratios' geometric mean per API, provider and direction (summarize)."""
    rows = []
    for c in comparisons:
        ci = f"[{c.ci_low:.3f}, {c.ci_high:.3f}]" if c.ci_low is not None else ""
        flag = " **gate**" if fail_pct is not None and c.regressed(fail_pct) else ""
        rows.append([f"`{c.case}`", c.provider, c.direction,
                     f"{c.base_us:.1f}" if c.base_us is not None else "",
                     f"{c.new_us:.1f}" if c.new_us is not None else "",
                     f"{c.ratio:.3f}" if c.ratio is not None else "", ci,
                     f"±{c.detectable_pct:.1f}%" if c.detectable_pct is not None else "", c.verdict + flag, c.note])
    table = tabulate(rows, headers=["case", "provider", "direction", "base us", "new us", "new/base",
                                    "95% CI", "detectable", "verdict", "note"], tablefmt="github",
                     disable_numparse=True)
    counts: dict[str, int] = {}
    for c in comparisons:
        counts[c.verdict] = counts.get(c.verdict, 0) + 1
    summary = ", ".join(f"{v}: {n}" for v, n in sorted(counts.items()))
    groups = [[f"`{g.api}`", g.provider, g.direction, g.rows, f"{g.geomean:.3f}", f"{g.lowest:.3f}",
               f"{g.highest:.3f}", g.faster, g.slower] for g in summarize(comparisons)]
    if not groups:
        return f"{table}\n\n{summary}\n"
    # lower-case column names: a search of the output for the verdicts finds rows only
    by_api = tabulate(groups, headers=["api", "provider", "direction", "rows", "geomean new/base", "lowest",
                                       "highest", "faster", "slower"], tablefmt="github", disable_numparse=True)
    return f"{table}\n\n{summary}\n\nPer API, provider and direction:\n\n{by_api}\n"
