"""``opbench report``: per op, provider pair and direction, the geometric-mean speedup (with min,
max and case count) over the cases of one results file, as markdown and an optional PNG chart.

A speedup is ``median(baseline) / median(provider)``: above 1 the provider is faster.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tabulate import tabulate

from op_benchmark.results import Record
from op_benchmark.stats import geometric_mean

DEFAULT_BASELINES = ("paddle", "torch")


@dataclass(frozen=True)
class SpeedupRow:
    api: str
    provider: str
    baseline: str
    direction: str
    cases: int
    geomean: float
    min: float
    max: float


def speedups(records: Sequence[Record], baselines: Sequence[str] = DEFAULT_BASELINES) -> list[SpeedupRow]:
    """One row per (api, provider, baseline, direction) with at least one case measured by both."""
    by_case: dict[tuple[str, str], dict[str, Record]] = {}
    apis: dict[str, str] = {}
    for r in records:
        if r.ok:
            by_case.setdefault((r.case, r.direction), {})[r.provider] = r
            apis[r.case] = r.api or r.case.split("(", 1)[0]
    groups: dict[tuple[str, str, str, str], list[float]] = {}
    for (case, direction), row in by_case.items():
        for base in baselines:
            if base not in row:
                continue
            for prov, rec in row.items():
                if prov != base and rec.median_us:
                    groups.setdefault((apis[case], prov, base, direction), []).append(
                        (row[base].median_us or 0.0) / rec.median_us)
    out = [SpeedupRow(api, prov, base, d, len(v), geometric_mean(v), min(v), max(v))
           for (api, prov, base, d), v in groups.items() if all(x > 0 for x in v)]
    return sorted(out, key=lambda s: (s.api, s.baseline, s.provider, s.direction))


def markdown(rows: Sequence[SpeedupRow]) -> str:
    if not rows:
        return "No provider pair was measured on the same case.\n"
    body = [[f"`{r.api}`", f"{r.provider} vs {r.baseline}", r.direction, r.cases, f"{r.geomean:.2f}x",
             f"{r.min:.2f}x", f"{r.max:.2f}x"] for r in rows]
    return tabulate(body, headers=["op", "pair", "direction", "cases", "geomean", "min", "max"],
                    tablefmt="github", disable_numparse=True) + "\n"


def bar_chart(rows: Sequence[SpeedupRow], path: str | Path) -> str | None:
    """Write a horizontal bar chart of the geometric means; returns a note instead when
    matplotlib is not installed (the chart is optional)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no PNG chart (pip install matplotlib)"
    if not rows:
        return "nothing to plot"
    labels = [f"{r.api.removeprefix('paddle.')} {r.provider} vs {r.baseline} {r.direction}" for r in rows]
    values = [r.geomean for r in rows]
    fig, ax = plt.subplots(figsize=(9, 0.35 * len(rows) + 1.2))
    ax.barh(range(len(rows)), values, color=["tab:green" if v >= 1 else "tab:red" for v in values])
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel("speedup (geometric mean over cases; > 1 is faster)")
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None
