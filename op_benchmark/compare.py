"""``opbench compare``: two result files, per case, provider and direction, a ratio with a CI.

The ratio is ``median(new) / median(base)`` with a 95% bootstrap interval over both runs'
raw samples, so each run's noise widens it. Verdicts (``threshold``: the smallest change
worth a name, 2% by default):

- FASTER / SLOWER: the whole interval is below / above 1 and the ratio is beyond the threshold;
- SAME: the whole interval lies within 1 +- threshold;
- AMBIGUOUS: anything else (the interval is too wide to tell): never a gate failure.

The gate fails only on SLOWER by more than ``fail_pct``: a regression both significant and big.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tabulate import tabulate

from op_benchmark.results import Record
from op_benchmark.stats import bootstrap_ratio_ci

FASTER, SLOWER, SAME, AMBIGUOUS = "FASTER", "SLOWER", "SAME", "AMBIGUOUS"
DEFAULT_THRESHOLD_PCT = 2.0
DEFAULT_FAIL_PCT = 5.0


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

    def regressed(self, fail_pct: float) -> bool:
        """SLOWER by more than ``fail_pct`` percent, or newly failing."""
        if self.verdict == "NEW FAILURE":
            return True
        return self.verdict == SLOWER and self.ratio is not None and self.ratio > 1 + fail_pct / 100


def decide(ratio: float, lo: float, hi: float, threshold_pct: float = DEFAULT_THRESHOLD_PCT) -> str:
    """The verdict for a ratio and its confidence interval (see the module docstring)."""
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


def compare_records(base: Sequence[Record], new: Sequence[Record], *,
                    threshold_pct: float = DEFAULT_THRESHOLD_PCT, level: float = 0.95,
                    seed: int = 0) -> list[Comparison]:
    """Pair records by (case, provider, direction) and compare each pair."""
    base_by = {r.key: r for r in base}
    new_by = {r.key: r for r in new}
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
        out.append(Comparison(case, provider, direction, b.median_us, n.median_us, ratio, lo, hi,
                              decide(ratio, lo, hi, threshold_pct)))
    return out


def markdown(comparisons: Sequence[Comparison], *, fail_pct: float | None = None) -> str:
    """One GitHub table (case, provider, direction, medians, ratio, CI, verdict) and a count line."""
    rows = []
    for c in comparisons:
        ci = f"[{c.ci_low:.3f}, {c.ci_high:.3f}]" if c.ci_low is not None else ""
        flag = " **gate**" if fail_pct is not None and c.regressed(fail_pct) else ""
        rows.append([f"`{c.case}`", c.provider, c.direction,
                     f"{c.base_us:.1f}" if c.base_us is not None else "",
                     f"{c.new_us:.1f}" if c.new_us is not None else "",
                     f"{c.ratio:.3f}" if c.ratio is not None else "", ci, c.verdict + flag, c.note])
    table = tabulate(rows, headers=["case", "provider", "direction", "base us", "new us", "new/base",
                                    "95% CI", "verdict", "note"], tablefmt="github", disable_numparse=True)
    counts: dict[str, int] = {}
    for c in comparisons:
        counts[c.verdict] = counts.get(c.verdict, 0) + 1
    summary = ", ".join(f"{v}: {n}" for v, n in sorted(counts.items()))
    return f"{table}\n\n{summary}\n"
