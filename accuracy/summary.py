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

from accuracy.outcomes import ACCURACY_FAIL, CONFIG_ERROR, OUTCOMES, PASS, is_failing

COMPARED = frozenset({PASS, ACCURACY_FAIL})


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
        lines += ["No failing cases.", ""]
    else:
        lines += [f"### Failing cases ({len(bad)})", ""]
        for r in bad[:max_failures]:
            lines += _case_block(r)
        if len(bad) > max_failures:
            lines.append(f"... and {len(bad) - max_failures} more (see the results file)")
        lines.append("")
    lines.append(compared_line(records))
    return "\n".join(lines) + "\n"


def compared_line(records: Sequence[dict]) -> str:
    """The last line of a run: were all cases compared, and if not, how many and why.

    A case is compared when both sides ran and their outputs were checked (``pass`` or
    ``accuracy_fail``); every other outcome, failing or not, left it unchecked.
    """
    missed = Counter(r["outcome"] for r in records if r["outcome"] not in COMPARED)
    if not missed:
        return f"All {len(records)} cases compared."
    why = ", ".join(f"{n} {o}" for o, n in missed.most_common())
    return f"{sum(missed.values())} of {len(records)} cases not compared: {why}."


def _case_block(r: dict) -> list[str]:
    where = f" ({r['source']})" if r.get("source") else ""
    out = [f"- `{r['config']}`{where}: **{r['outcome']}**"]
    if r.get("error"):
        side = f"{r['error_side']} " if r.get("error_side") else ""
        stage = f" in {r['error_stage']}" if r.get("error_stage") else ""
        kind = f" [{r['error_kind']}]" if r.get("error_kind") else ""
        kind += f" (mapping: `{r['converter']}`)" if r.get("converter") else ""
        out.append(f"  {side}error{stage}{kind}: `{r['error'].splitlines()[0][:300]}`")
    if r.get("known"):
        out.append(f"  known difference (mapping): {r['known']}")
    failed = [c for c in r.get("comparisons", []) if c.get("passed") is False]
    if failed:
        rows = []
        for c in failed:
            f64 = c.get("float64") or {}
            third = (f"subject {_num(f64['subject_max_abs'])} / reference {_num(f64['reference_max_abs'])} "
                     f"({f64['closer']} closer)" if "closer" in f64 else f64.get("error", ""))
            b = c.get("bound")
            if b:
                third += (f"; units: subject {_num(b['subject_units'])}, reference {_num(b['reference_units'])}, "
                          f"allowed {_num(b['allowed_units'])} ({_num(b['terms'])} terms)")
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
               "mismatches", "first_index", "atol", "rtol", "subject_units", "reference_units", "allowed_units",
               "terms", "subject_err_f64", "reference_err_f64", "note")
# The float64 bound's figures (accuracy.bound.Verdict) as --test-tol columns.
_BOUND_COLUMNS = ("subject_units", "reference_units", "allowed_units", "terms", "subject_max_abs",
                  "reference_max_abs")


def write_test_tol(records: Sequence[dict], path: str | Path) -> int:
    """One CSV row per case and compared output/grad (``--test-tol``); returns the row count."""
    n = 0
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(TOL_COLUMNS)
        for r in records:
            comps = r.get("comparisons") or [{}]
            for c in comps:
                bound = c.get("bound") or {}
                w.writerow([r["config"], r["outcome"], c.get("direction", ""), c.get("name", ""),
                            c.get("dtype", ""), c.get("numel", ""), c.get("max_abs", ""), c.get("max_rel", ""),
                            c.get("mismatches", ""), c.get("first_index", ""), c.get("atol", ""),
                            c.get("rtol", ""), *(bound.get(k, "") for k in _BOUND_COLUMNS),
                            c.get("note", "") or r.get("error", "")[:200]])
                n += 1
    return n
