"""Check ``opbench compare`` for false alarms and power on real consecutive runs; write a markdown record.

    python docs/op_benchmark/compare_validation.py RUN1.json RUN2.json ... [--out FILE.md]

The runs are consecutive ``opbench bench`` runs of the same build on one machine, paired in
order ((1, 2), (3, 4), ...): A/A pairs, in which every FASTER or SLOWER row is a false alarm
and the gate (``--fail-on-slower 5``) must pass. Power is measured on the same pairs by
planting a slowdown in the second run's data (every sample and pass median times 1.05, then
1.5), so the planted shift meets exactly the noise two real runs have: a 5% slowdown must be
SLOWER in at least 90% of the rows whose kernels take 20 us or more, a 1.5x one in every row.
With four runs or more, each pair is also checked with the next pair taken in the other order as
its ``--again`` (``compare --again``: (1, 2) with (4, 3), (3, 4) with (6, 5), ... wrapping round),
the slowdowns planted in both pairs' "new" runs.
"""

from __future__ import annotations

import argparse
import copy
import datetime
import sys
from pathlib import Path

from tabulate import tabulate

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from op_benchmark.compare import FASTER, SLOWER, compare_both_orders, compare_records  # noqa: E402
from op_benchmark.results import Record, read_json  # noqa: E402
from op_benchmark.stats import Measurement  # noqa: E402

GATE_PCT = 5.0
LONG_US = 20.0


def slowed(records: list[Record], factor: float) -> list[Record]:
    """The records with every sample and pass median multiplied by ``factor``."""
    out = []
    for r in records:
        r = copy.deepcopy(r)
        if r.ok:
            r.set_measurement(Measurement.of([s * factor for s in r.samples_us]))
            r.round_medians = [m * factor for m in r.round_medians] if r.round_medians else None
        out.append(r)
    return out


def agreed(b1: list[Record], n1: list[Record], b2: list[Record], n2: list[Record], factor: float) -> list:
    """compare --again's rows with a ratio, both new runs slowed by ``factor`` (the run-to-run spread, as the
    command takes it, between each build's two runs)."""
    n1, n2 = slowed(n1, factor), slowed(n2, factor)
    return [c for c in compare_both_orders(b1, n1, b2, n2) if c.ratio is not None]


def both_orders(results: list, names: list[str]) -> list[tuple]:
    """Pair k with the next pair reversed as its --again (wrapping round): A/A false alarms and gate, then the
    SLOWER rate with each slowdown planted in both pairs' new runs."""
    out = []
    n = len(results)
    for i in range(0, n, 2):
        j, k = (i + 3) % n, (i + 2) % n  # the next pair, new (its first run) timed before base
        runs = [results[x].records for x in (i, i + 1, j, k)]
        aa = agreed(*runs, 1.0)
        alarms = sum(c.verdict in (FASTER, SLOWER) for c in aa)
        gate = "exit 1" if any(c.regressed(GATE_PCT) for c in aa) else "exit 0"
        long_rows = [c for c in agreed(*runs, 1.05) if c.base_us >= LONG_US]
        big = agreed(*runs, 1.5)
        out.append((f"{names[i]} / {names[i + 1]} again {names[j]} / {names[k]}", len(aa), alarms, gate,
                    f"{sum(c.verdict == SLOWER for c in long_rows)} of {len(long_rows)}",
                    f"{sum(c.verdict == SLOWER for c in big)} of {len(big)}"))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("compare_validation.md"))
    args = ap.parse_args()
    if len(args.runs) < 2 or len(args.runs) % 2:
        ap.error("give an even number of runs (consecutive pairs)")
    results = [read_json(p) for p in args.runs]
    env = results[0].env
    rows, planted = [], []
    for i in range(0, len(results), 2):
        base, new = results[i].records, results[i + 1].records
        aa = compare_records(base, new)
        ok = [c for c in aa if c.ratio is not None]
        alarms = [c for c in ok if c.verdict in (FASTER, SLOWER)]
        gate = any(c.regressed(GATE_PCT) for c in aa)
        detect = sorted(c.detectable_pct for c in ok)
        rows.append((f"{args.runs[i].name} / {args.runs[i + 1].name}", len(ok), len(alarms),
                     "exit 1" if gate else "exit 0", f"{detect[len(detect) // 2]:.1f}%", f"{detect[-1]:.1f}%"))
        for factor in (1.05, 1.5):
            cs = [c for c in compare_records(base, slowed(new, factor)) if c.ratio is not None]
            long_rows = [c for c in cs if c.base_us >= LONG_US]
            scope = long_rows if factor == 1.05 else cs
            planted.append((f"pair {i // 2 + 1}", f"{factor}x", "rows >= 20 us" if factor == 1.05 else "all rows",
                            len(scope), sum(c.verdict == SLOWER for c in scope),
                            f"{100.0 * sum(c.verdict == SLOWER for c in scope) / max(len(scope), 1):.0f}%"))
    both = both_orders(results, [p.name for p in args.runs]) if len(results) >= 4 else []
    gpu = (env.get("gpu") or {}).get("name") or env.get("device", "cpu")
    text = "\n".join([
        "# `opbench compare` on consecutive runs of one build", "",
        f"Produced by `docs/op_benchmark/compare_validation.py` on {datetime.date.today().isoformat()}; "
        f"runs taken on {gpu} ({env.get('time', '')}), commit `{env.get('git_commit') or 'unknown'}`, "
        f"{results[0].config.get('rounds', 'n/a')} rounds per run.", "",
        "## A/A pairs: no FASTER/SLOWER row, the gate passes", "",
        tabulate(rows, headers=("pair", "rows", "FASTER/SLOWER", f"--fail-on-slower {GATE_PCT:g}",
                                "median detectable", "largest detectable"), tablefmt="github"), "",
        "## Planted slowdowns in the second run of each pair", "",
        tabulate(planted, headers=("pair", "slowdown", "rows", "n", "SLOWER", "rate"), tablefmt="github"), "",
    ] + ([
        "## Both orders (`compare --again`): A/A, then slowdowns planted in both new runs", "",
        tabulate(both, headers=("pairs", "rows", "FASTER/SLOWER", f"--fail-on-slower {GATE_PCT:g}",
                                "1.05x: SLOWER of rows >= 20 us", "1.5x: SLOWER of all rows"), tablefmt="github"),
        "",
    ] if both else []))
    args.out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
