"""Renders the compact lerp table of docs/ops/lerp-design.md from an `opbench bench lerp --json` file.

One row per case: torch / torch-compile / torch-ops median us for fwd, bwd and fwd+bwd, with ours in bold
where torch.compile is not clearly faster (the suite's verdict rule: compile's Q3 below ours' minimum), and
ours as % of the run's copy bandwidth for fwd and bwd.

    python docs/ops/design_table.py OUT/lerp.json     # the JSON of `gpu_run.sh OUT lerp`
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from tabulate import tabulate

PROVIDERS = ("torch", "torch-compile", "torch-ops")
DIRECTIONS = ("fwd", "bwd", "fwd+bwd")


def fmt_us(v: float) -> str:
    """Microseconds as the tables print them: one decimal below 1000, thousands separators above."""
    return f"{v:,.0f}" if v >= 1000 else f"{v:.1f}"


def render(records: list[dict[str, Any]]) -> str:
    """The compact markdown table for one run's records."""
    by_key = {(r["case"], r["provider"], r["direction"]): r for r in records}
    cases = list(dict.fromkeys(r["case"] for r in records))
    rows = []
    for case in cases:
        row = [f"`{case[len('paddle.lerp('):].rstrip(', )')}`"]
        for direction in DIRECTIONS:
            torch_r, compile_r, ops_r = (by_key[(case, p, direction)] for p in PROVIDERS)
            ops = fmt_us(ops_r["median_us"])
            if ops_r["median_us"] <= compile_r["median_us"] or not compile_r["q3_us"] < ops_r["min_us"]:
                ops = f"**{ops}**"
            row.append(f"{fmt_us(torch_r['median_us'])} / {fmt_us(compile_r['median_us'])} / {ops}")
            if direction != "fwd+bwd":
                row.append(f"{ops_r['pct_peak_bw']:.0f}")
        rows.append(row)
    headers = ["case", "fwd torch / compile / ops", "ops % copy", "bwd torch / compile / ops", "ops % copy",
               "fwd+bwd torch / compile / ops"]
    return tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", type=Path, help="an `opbench bench lerp --json` file")
    args = parser.parse_args()
    print(render(json.loads(args.json.read_text())["records"]))


if __name__ == "__main__":
    main()
