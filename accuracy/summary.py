"""The markdown summary of a run, for PR descriptions, and the ``--test-tol`` CSV.

Counts by outcome first, then every failing case with its failing comparisons'
figures (and the float64 third opinion when there is one).
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tabulate import tabulate

from accuracy.outcomes import CONFIG_ERROR, OUTCOMES, is_failing


def _num(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)


def counts(records: Sequence[dict]) -> Counter:
    return Counter(r["outcome"] for r in records)


def markdown(records: Sequence[dict], title: str = "Accuracy", header: dict[str, str] | None = None,
             max_failures: int = 200, strict: bool = False) -> str:
    """Counts by outcome, then each failing case (outcome, figures, error) as markdown."""
    c = counts(records)
    lines = [f"## {title}", ""]
    if header:
        lines += [", ".join(f"{k}: {v}" for k, v in header.items()), ""]
    rows = [(o, c[o]) for o in OUTCOMES if c.get(o)] + [(o, n) for o, n in c.items() if o not in OUTCOMES]
    rows.append(("**total**", len(records)))
    lines += [tabulate(rows, headers=("outcome", "cases"), tablefmt="github"), ""]
    bad = [r for r in records if is_failing(r, strict) or r["outcome"] == CONFIG_ERROR]
    if not bad:
        lines.append("No failing cases.")
        return "\n".join(lines) + "\n"
    lines += [f"### Failing cases ({len(bad)})", ""]
    for r in bad[:max_failures]:
        lines += _case_block(r)
    if len(bad) > max_failures:
        lines.append(f"... and {len(bad) - max_failures} more (see the results file)")
    return "\n".join(lines) + "\n"


def _case_block(r: dict) -> list[str]:
    where = f" ({r['source']})" if r.get("source") else ""
    out = [f"- `{r['config']}`{where}: **{r['outcome']}**"]
    if r.get("error"):
        side = f"{r['error_side']} " if r.get("error_side") else ""
        stage = f" in {r['error_stage']}" if r.get("error_stage") else ""
        kind = f" [{r['error_kind']}]" if r.get("error_kind") else ""
        kind += f" (mapping: `{r['converter']}`)" if r.get("converter") else ""
        out.append(f"  {side}error{stage}{kind}: `{r['error'].splitlines()[0][:300]}`")
    failed = [c for c in r.get("comparisons", []) if c.get("passed") is False]
    if failed:
        rows = []
        for c in failed:
            f64 = c.get("float64") or {}
            third = (f"subject {_num(f64['subject_max_abs'])} / reference {_num(f64['reference_max_abs'])} "
                     f"({f64['closer']} closer)" if "closer" in f64 else f64.get("error", ""))
            rows.append((c["direction"], c["name"], c.get("dtype", ""), _num(c.get("max_abs")),
                         _num(c.get("max_rel")), f"{c.get('mismatches', '')}/{c.get('numel', '')}",
                         _num(c.get("first_index")), f"{_num(c.get('atol'))}/{_num(c.get('rtol'))}",
                         c.get("note", ""), third))
        table = tabulate(rows, headers=("dir", "output", "dtype", "max abs", "max rel", "mismatches",
                                        "first idx", "atol/rtol", "note", "vs float64 (max abs)"),
                         tablefmt="github")
        out += ["", *("  " + line for line in table.splitlines()), ""]
    return out


TOL_COLUMNS = ("config", "outcome", "direction", "output", "dtype", "numel", "max_abs", "max_rel",
               "mismatches", "first_index", "atol", "rtol", "note")


def write_test_tol(records: Sequence[dict], path: str | Path) -> int:
    """One CSV row per case and compared output/grad (``--test-tol``); returns the row count."""
    n = 0
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(TOL_COLUMNS)
        for r in records:
            comps = r.get("comparisons") or [{}]
            for c in comps:
                w.writerow([r["config"], r["outcome"], c.get("direction", ""), c.get("name", ""),
                            c.get("dtype", ""), c.get("numel", ""), c.get("max_abs", ""), c.get("max_rel", ""),
                            c.get("mismatches", ""), c.get("first_index", ""), c.get("atol", ""),
                            c.get("rtol", ""), c.get("note", "") or r.get("error", "")[:200]])
                n += 1
    return n
