"""Render an op's GPU table of record from its ``opbench bench`` JSON: the ops targets and their bounds.

    python docs/ops/sweep_doc.py OUT/sweep_layer_norm.json --out docs/ops/sweep_layer_norm_h200.md
    python docs/ops/sweep_doc.py OUT/norms.json --out docs/ops/norms_h200.md

The JSON is what ``bash docs/gpu_run.sh OUT sweep`` (a seeded sweep) or ``norms`` (the named suites) writes.
The targets, per direction, for the candidate (``torch-ops``): no case below 0.95x of the fastest anchor
(``torch.compile`` or Liger), a geometric mean of at least 1.2x ``torch.compile``, and the large cases (at least
:data:`LARGE_BYTES` must move) at at least 90% of the measured copy bandwidth. Each target gets its physical
bound: a case cannot take less than the bytes that must move at the copy bandwidth, nor less than the fastest
call of the run (one launch, L2 flushed); so no kernel can be more than ``anchor time / that floor`` faster than
an anchor, and the geometric mean of those ceilings bounds the reachable geometric mean. Where the run timed
a device copy of each case's bytes beside it (``opbench bench --copy-floor``: ``copy_us``), a second, tighter
ceiling takes that copy as the floor, or the case's fastest call where one beat the copy: what a kernel moving
its bytes no faster than the device's own copy could reach; a case below 0.95x whose anchor that ceiling leaves
below 0.95x too is counted as bounded by the copy (no kernel at the copy's speed meets the target there).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tabulate import tabulate  # noqa: E402

from op_benchmark import report  # noqa: E402
from op_benchmark.render import case_label  # noqa: E402
from op_benchmark.results import BenchResult, Record, read_json  # noqa: E402
from op_benchmark.stats import geometric_mean  # noqa: E402

CANDIDATE = "torch-ops"
FAST_ANCHORS = ("torch-compile", "liger")  # the anchors the "no case below 0.95x" target names
MIN_VS_FASTEST, GEOMEAN_VS_COMPILE, LARGE_PCT = 0.95, 1.2, 90.0
LARGE_BYTES = 256 << 20  # bytes that must move, from which a case counts as large


def floor_us(rec: Record, peak_gbps: float | None, launch_us: float) -> float:
    """The least time any kernel could take on this case: its bytes at the copy bandwidth, or one launch."""
    move_us = (rec.bytes or 0) / (peak_gbps * 1e3) if peak_gbps else 0.0
    return max(move_us, launch_us)


def copy_floor_us(rec: Record, fastest_us: float, peak_gbps: float | None, launch_us: float) -> float | None:
    """The least time a kernel moving this case's bytes no faster than a device copy could take: the copy timed
    beside it, or the case's fastest call of any provider where one beat the copy (the copy is no bound there),
    never below :func:`floor_us`; None where the run did not time the copy."""
    if not rec.copy_us:
        return None
    return max(min(rec.copy_us, fastest_us), floor_us(rec, peak_gbps, launch_us))


def ceiling_cell(ratios: list[float]) -> str:
    """A ceiling of the geometric mean, marked where it is below the target."""
    if not ratios:
        return "n/a"
    ceiling = geometric_mean(ratios)
    return f"{ceiling:.2f}x" + (" (1.2x unreachable)" if ceiling < GEOMEAN_VS_COMPILE else "")


def rows_by_case(records: list[Record]) -> dict[tuple[str, str, str], dict[str, Record]]:
    """(op, case, direction) -> provider -> record, for the records that ran."""
    out: dict[tuple[str, str, str], dict[str, Record]] = {}
    for r in records:
        if r.ok:
            out.setdefault((r.api.rsplit(".", 1)[-1], r.case, r.direction), {})[r.provider] = r
    return out


def has_copy_floor(result: BenchResult) -> bool:
    """Whether the run timed a device copy of each case's bytes (``--copy-floor``)."""
    return any(r.copy_us for r in result.records if r.provider == CANDIDATE)


def targets(result: BenchResult) -> tuple[list[list[str]], list[list[str]]]:
    """The summary table (one row per op and direction) and the per-case table (slowest against the fastest
    anchor first); with the copy floor, each gets its columns (a ceiling by it, the copy's time)."""
    peak = result.env.get("peak_bandwidth_gbps")
    copies = has_copy_floor(result)
    by_case = rows_by_case(result.records)
    launch_us = min((r.median_us for row in by_case.values() for r in row.values() if r.median_us), default=0.0)
    summary, cases = [], []  # cases: (ours vs the fastest anchor, table row)
    for op, direction in dict.fromkeys((o, d) for o, _, d in by_case):
        vs_fast, vs_compile, ceil_compile, ceil_copy, large, below, bounded = [], [], [], [], [], 0, 0
        for (o, case, d), row in by_case.items():
            ours = row.get(CANDIDATE)
            fast = [row[p] for p in FAST_ANCHORS if p in row]
            if (o, d) != (op, direction) or ours is None or not fast:
                continue
            best = min(fast, key=lambda r: r.median_us)
            floor = floor_us(ours, peak, launch_us)
            fastest_us = min(r.median_us for r in row.values() if r.median_us)
            copy_floor = copy_floor_us(ours, fastest_us, peak, launch_us)
            ratio = best.median_us / ours.median_us
            copy_ceiling = best.median_us / copy_floor if copy_floor else None  # what a copy-speed kernel reaches
            vs_fast.append(ratio)
            below += ratio < MIN_VS_FASTEST
            bounded += ratio < MIN_VS_FASTEST and copy_ceiling is not None and copy_ceiling < MIN_VS_FASTEST
            if "torch-compile" in row:
                vs_compile.append(row["torch-compile"].median_us / ours.median_us)
                ceil_compile.append(row["torch-compile"].median_us / floor)
                if copy_floor:
                    ceil_copy.append(row["torch-compile"].median_us / copy_floor)
            if (ours.bytes or 0) >= LARGE_BYTES:
                large.append(ours.pct_peak_bw or 0.0)
            case_row = [case_label(case), d, f"{ours.median_us:.1f}", f"{best.median_us:.1f} ({best.provider})",
                        f"{ratio:.2f}x", f"{ours.pct_peak_bw or 0:.0f}%", f"{best.pct_peak_bw or 0:.0f}%",
                        f"{best.median_us / floor:.2f}x"]
            if copies:
                case_row += [f"{ours.copy_us:.1f}" if ours.copy_us else "n/a",
                             f"{copy_ceiling:.2f}x" if copy_ceiling is not None else "n/a"]
            cases.append((ratio, case_row))
        if not vs_fast:
            continue
        summary.append([
            op, direction, str(len(vs_fast)), f"{min(vs_fast):.2f}x",
            f"{below} ({bounded} bounded by the copy)" if bounded else f"{below}",
            f"{geometric_mean(vs_compile):.2f}x" if vs_compile else "n/a", ceiling_cell(ceil_compile),
            *([ceiling_cell(ceil_copy)] if copies else []),
            f"{sum(p >= LARGE_PCT for p in large)} of {len(large)}" if large else "no large case",
        ])
    return summary, [row for _, row in sorted(cases, key=lambda c: c[0])]


def render(result: BenchResult, source: str) -> str:
    """The whole document."""
    env = result.env
    gpu = (env.get("gpu") or {}).get("name", "unknown GPU")
    fw = ", ".join(f"{k} {v['version']}" for k, v in (env.get("frameworks") or {}).items()
                   if isinstance(v, dict) and v.get("version"))
    cfg = result.config
    suites = cfg.get("cases") or sorted({r.api.rsplit(".", 1)[-1] for r in result.records})
    swept = any(str(s).endswith("-sweep") for s in suites)
    drawn = ("The cases are drawn from a fixed seed by `opbench/suites/sweeps.py`; " if swept
             else "The cases are the named suites' (`opbench/suites/`); ")
    summary, cases = targets(result)
    copies = has_copy_floor(result)
    head = ["op", "direction", "cases", f"min vs fastest anchor (target >= {MIN_VS_FASTEST}x)",
            f"cases below {MIN_VS_FASTEST}x", f"geomean vs torch.compile (target >= {GEOMEAN_VS_COMPILE}x)",
            "ceiling of that geomean", *(["ceiling by a copy of the bytes"] if copies else []),
            f"large cases at >= {LARGE_PCT:.0f}% of copy bandwidth"]
    case_head = ["case", "dir", "ours (us)", "fastest anchor (us)", "ours vs it", "ours % of copy bw",
                 "its % of copy bw", "ceiling vs it", *(["copy of the bytes (us)", "copy ceiling vs it"]
                                                        if copies else [])]
    copy_note = (" Ceiling by a copy of the bytes: the same mean with each case's floor the device copy of its "
                 "bytes (a copy, or an add of two buffers into a third where the case reads about twice what "
                 "it writes: `op_benchmark/floor.py`) timed beside it (`--copy-floor`), or the case's fastest "
                 "call of any provider where one beat the copy, never below the floor above: what a kernel moving "
                 "its bytes no faster than the device's own copy could reach (a practical bound); "
                 "`copy ceiling vs it` is that bound per case, and a case below "
                 f"{MIN_VS_FASTEST}x is `bounded by the copy` where that bound is below {MIN_VS_FASTEST}x too: "
                 "there even a kernel as fast as the device's copy misses the target." if copies else "")
    rows = report.candidate_speedups(result.records, per_anchor=True)
    lines = [
        f"# {', '.join(suites)} on an {gpu}",
        "",
        f"Produced by [sweep_doc.py](sweep_doc.py) from `{source}`, the JSON of `bash docs/gpu_run.sh OUT ...` "
        f"(`opbench bench {' '.join(suites)} --providers {','.join(cfg.get('providers') or [])} "
        f"--rounds {cfg.get('rounds', 1)} --method {cfg.get('method', 'events')}"
        f"{' --copy-floor' if cfg.get('copy_floor') else ''}`); {fw}; driver "
        f"{env.get('driver', '?')}; commit {env.get('git_commit') or 'unknown'}; {env.get('time', '')}. "
        f"Copy bandwidth measured by the run: {env.get('peak_bandwidth_gbps') or 0:.0f} GB/s. " + drawn +
        f"the candidate is our op through its PyTorch binding (`{CANDIDATE}`).",
        "",
        *([stopped_note(result), ""] if result.interrupted else []),
        "## Targets",
        "",
        "Ceiling: the geometric mean over the cases of torch.compile's time over the least time any kernel "
        "could take (the bytes that must move at the copy bandwidth, or the run's fastest call, one launch, "
        "whichever is longer); where it is below the target, no kernel can meet it. `ceiling vs it`: the same "
        "bound per case against the fastest anchor." + copy_note,
        "",
        tabulate(summary, head, tablefmt="github", disable_numparse=True),
        "",
        "## Speedups",
        "",
        report.markdown(rows).strip(),
        "",
        "## Every case, slowest against the fastest anchor first",
        "",
        tabulate(cases, case_head, tablefmt="github", disable_numparse=True),
        "",
    ]
    missing = [r for r in result.records if not r.ok and r.status != "not_applicable"]
    if missing:
        lines += ["Records that did not run: " + "; ".join(f"{case_label(r.case)} {r.direction} {r.provider}: "
                                                          f"{r.status}" for r in missing), ""]
    return "\n".join(lines)


def stopped_note(result: BenchResult) -> str:
    """The sentence a stopped run's document carries: how many cases it measured, in full and in part."""
    per_case = Counter(case_label(r.case) for r in result.records)
    full = max(per_case.values(), default=0)
    part = sum(1 for n in per_case.values() if n < full)
    return ("The run was stopped before it finished (its time limit): the tables cover the cases it measured, "
            f"{len(per_case) - part} in full" + (f" and {part} in part." if part else "."))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("json", help="the sweep's opbench bench --json file")
    p.add_argument("--out", help="markdown file to write (default: stdout)")
    args = p.parse_args(argv)
    text = render(read_json(args.json), Path(args.json).name)
    if args.out:
        Path(args.out).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
