"""``opbench report``: a results file as the performance section of a Paddle operator PR, and the
speedup summary under ``opbench bench``'s tables.

The section (:func:`pr_section`) gives, per op and direction, the candidate's geometric-mean, minimum
and maximum speedup over Paddle's kernel (before) and over the industry's best (the fastest anchor of
each case) and against each anchor on its own, how many cases are slower, which cases are below the
industry's best, the before/after table of every case, and a chart. With
explicit ``--baselines`` it is the plain pairwise summary (:func:`speedups`). A speedup is
``median(baseline) / median(provider)``: above 1 the provider is faster.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tabulate import tabulate

from op_benchmark import render, roles
from op_benchmark.directions import DIRECTIONS
from op_benchmark.results import BenchResult, Record
from op_benchmark.stats import geometric_mean

DEFAULT_BASELINES = ("paddle", "torch")
BEST = "industry best"  # the virtual baseline: the fastest anchor of each case


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
    below: int = 0  # cases below 1.00x
    slower: int | None = None  # cases slower beyond the noise (nvbench's interval rule); None: not judged


def _row(api: str, provider: str, baseline: str, direction: str, values: list[float],
         slower: int | None = None) -> SpeedupRow:
    return SpeedupRow(api, provider, baseline, direction, len(values), geometric_mean(values), min(values),
                      max(values), sum(v < 1.0 for v in values), slower)


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
    out = [_row(api, prov, base, d, v) for (api, prov, base, d), v in groups.items() if all(x > 0 for x in v)]
    return sorted(out, key=lambda s: (s.api, s.baseline, s.provider, s.direction))


def candidate_speedups(records: Sequence[Record], per_anchor: bool = False) -> list[SpeedupRow]:
    """Per op and direction, the candidate against Paddle's kernel (before) and against the industry's
    best (per case, the fastest anchor measured on it); with ``per_anchor`` also against each anchor on
    its own (PyTorch eager, ``torch.compile``, Liger, ...). Ops without a candidate have no row."""
    by_case: dict[tuple[str, str], dict[str, Record]] = {}
    for r in records:
        by_case.setdefault((r.case, r.direction), {})[r.provider] = r
    groups: dict[tuple[str, str, str, str], list[tuple[float, bool]]] = {}
    for (_case, direction), row in by_case.items():
        cand = roles.candidate(row)
        if cand is None or not cand.ok:
            continue
        api = cand.api or cand.case.split("(", 1)[0]
        anchors = [(p, r) for p, r in row.items() if per_anchor and roles.is_anchor(p)]
        for baseline, base in ((roles.BEFORE, row.get(roles.BEFORE)), (BEST, roles.best_anchor(row)), *anchors):
            ratio = roles.speedup(base, cand)
            if ratio and base is not None:
                groups.setdefault((api, cand.provider, baseline, direction), []).append(
                    (ratio, render.clearly_faster(base, cand)))
    order = {d: i for i, d in enumerate(DIRECTIONS)}
    out = [_row(api, prov, base, d, [r for r, _ in v], sum(s for _, s in v))
           for (api, prov, base, d), v in groups.items()]
    rank = {roles.BEFORE: 0, BEST: 1}
    return sorted(out, key=lambda s: (s.api, rank.get(s.baseline, 2), s.baseline, order.get(s.direction, 9),
                                      s.provider))


def below_best(records: Sequence[Record]) -> list[tuple[str, str, float, str]]:
    """The cases where the candidate is below 1.00x of the industry's best: (case label, direction,
    speedup, fastest anchor), slowest first."""
    by_case: dict[tuple[str, str], dict[str, Record]] = {}
    for r in records:
        by_case.setdefault((r.case, r.direction), {})[r.provider] = r
    out = []
    for (case, direction), row in by_case.items():
        best = roles.best_anchor(row)
        ratio = roles.speedup(best, roles.candidate(row))
        if ratio is not None and best is not None and ratio < 1.0:
            out.append((render.case_label(case), direction, ratio, best.provider))
    return sorted(out, key=lambda c: c[2])


def markdown(rows: Sequence[SpeedupRow]) -> str:
    """The summary table: one row per op, pair and direction."""
    if not rows:
        return "No provider pair was measured on the same case.\n"
    judged = any(r.slower is not None for r in rows)
    body = [[f"`{r.api}`", f"{r.provider} vs {r.baseline}", r.direction, r.cases, f"{r.geomean:.2f}x",
             f"{r.min:.2f}x", f"{r.max:.2f}x", r.below] + ([r.slower] if judged else []) for r in rows]
    headers = ["op", "pair", "direction", "cases", "geomean", "min", "max", "below 1.00x"]
    return tabulate(body, headers=headers + (["slower beyond noise"] if judged else []),
                    tablefmt="github", disable_numparse=True) + "\n"


def _device_line(result: BenchResult) -> str:
    env = result.env
    gpu = (env.get("gpu") or {}).get("name")
    cpu = env.get("cpu") or {}
    device = gpu or f"CPU {cpu.get('model') or '(model unknown)'}, {cpu.get('threads') or '?'} threads"
    fw = ", ".join(f"{k} {v['version']}" for k, v in (env.get("frameworks") or {}).items()
                   if isinstance(v, dict) and v.get("version"))
    method = result.records[0].method if result.records else ""
    parts = [f"Device: {device}", f"timing: {method}" + (" (L2 flushed)" if gpu else ""), fw,
             f"commit {env.get('git_commit')}" if env.get("git_commit") else "", env.get("time", "")]
    return "; ".join(p for p in parts if p) + "."


def pr_section(result: BenchResult, chart: str | None = None) -> str:
    """The performance section of an operator PR, in markdown: the environment, the speedup summary
    (candidate vs Paddle before and vs the industry's best), the chart when ``chart`` names its file,
    and the before/after table of every case per direction, with what could not run."""
    rows = candidate_speedups(result.records, per_anchor=True)
    parts = ["## Performance", _device_line(result)]
    if not rows:
        parts.append("No candidate (paddle-ops / torch-ops) was measured: nothing to compare against "
                     "Paddle's kernel. Pairwise summary of the providers run:")
        parts.append(markdown(speedups(result.records)))
    else:
        parts.append("Speedup of the candidate (median time of the other / median time of ours; above 1.00x "
                     "ours is faster). Before: Paddle's kernel; industry best: per case the fastest of "
                     "the other providers run (PyTorch eager, torch.compile, ...).")
        parts.append(markdown(rows))
        against = [r for r in rows if r.baseline == roles.BEFORE]
        slower = [r for r in against if r.slower]
        parts.append("Paddle's kernel was not measured in this run (Paddle not installed on this machine)."
                     if not against else "Cases slower than Paddle's kernel beyond the noise: " + (", ".join(
                         f"{r.slower} {r.direction} ({r.api})" for r in slower) if slower else "none") + ".")
        below = below_best(result.records)
        parts.append("Cases below 1.00x of the industry's best: " + ("none." if not below else "\n\n" + "\n".join(
            f"- {label} {d}: {ratio:.2f}x of {prov}" for label, d, ratio, prov in below)))
    if chart:
        parts.append(f"![speedups]({chart})")
    tables = render.markdown(result.records)
    parts.append("### Every case\n\n" + tables.strip())
    return "\n\n".join(parts) + "\n"


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
