"""Renderers for benchmark records: GitHub markdown tables per direction, and CSV.

The default table is the one a PR needs (:func:`pr_table`): per case the candidate's time (our
kernel), its speedup over Paddle's kernel (before) and over the industry's best (the fastest anchor
in the run), and a verdict. The wide table (:func:`markdown_table`, ``--wide``) has a median column
per provider, speedups against ``paddle`` and ``torch`` and the fastest provider.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from typing import Any

from tabulate import tabulate

from op_benchmark import roles
from op_benchmark.directions import DIRECTIONS
from op_benchmark.results import Record

BASELINES = ("paddle", "torch")
# How a record that has no time shows in a table: cannot run here (n/a: the provider does not apply,
# or its framework has no kernel for the op or dtype on this device; "Not run" below the table says which),
# or failed.
_SHORT = {"not_applicable": "n/a", "unsupported": "n/a", "skipped": "skipped", "error": "error", "oom": "OOM"}
CSV_FIELDS = ("case", "api", "provider", "direction", "device", "method", "status", "median_us", "min_us",
              "iqr_us", "noise", "samples", "throttled_samples", "bytes", "gbps", "pct_peak_bw", "copy_us", "flops",
              "tflops", "stop_reason", "error")


_TENSOR = re.compile(r'Tensor\(\[([^\]]*)\],\s*"(\w+)"\)')
_DTYPE_SHORT = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16", "int64": "i64",
                "int32": "i32", "bool": "bool", "complex64": "c64", "complex128": "c128"}


def case_label(case: str) -> str:
    """A config line shortened for a table: the API's last name, tensors as their shapes, and the
    dtype once at the end when every tensor has the same one (``lerp([16,102400], [16,102400], 0.2) f32``)."""
    dtypes = {m.group(2) for m in _TENSOR.finditer(case)}
    one = len(dtypes) == 1
    text = _TENSOR.sub(lambda m: f"[{m.group(1).replace(' ', '')}]" + ("" if one else f" {m.group(2)}"), case)
    head, sep, rest = text.partition("(")
    text = head.rsplit(".", 1)[-1] + sep + re.sub(r",\s*\)$", ")", rest.strip())
    return text + (f" {_DTYPE_SHORT.get(dtypes.pop(), '')}".rstrip() if one else "")


def _labels(cases: Sequence[str]) -> dict[str, str]:
    """Short labels when they tell the cases apart, else the config lines themselves."""
    short = {c: case_label(c) for c in cases}
    return short if len(set(short.values())) == len(short) else {c: c for c in cases}


def fmt_us(us: float | None) -> str:
    if us is None:
        return ""
    return f"{us:.1f}" if us < 1000 else f"{us:,.0f}"


def fmt_cell(rec: Record | None) -> str:
    """A median with its noise (``123.4 ±1%``), or the status for a record that was not measured."""
    if rec is None:
        return ""
    if not rec.ok:
        return _SHORT.get(rec.status, rec.status)
    noise = f" ±{100 * rec.noise:.0f}%" if rec.noise is not None and rec.noise >= 0.01 else ""
    return fmt_us(rec.median_us) + noise


def clearly_faster(a: Record, b: Record) -> bool:
    """nvbench's interval rule: ``a``'s Q3 below ``b``'s minimum."""
    return a.q3_us is not None and b.min_us is not None and a.q3_us < b.min_us


def verdict(row: dict[str, Record]) -> str:
    """The fastest provider, and whether it is clearly ahead of the next or only within the noise."""
    ok = sorted((r for r in row.values() if r.ok), key=lambda r: r.median_us or 0.0)
    if not ok:
        return "no result"
    if len(ok) == 1:
        return f"only {ok[0].provider}"
    best, second = ok[0], ok[1]
    speedup = (second.median_us or 0.0) / (best.median_us or 1.0)
    if clearly_faster(best, second):
        return f"{best.provider} fastest ({speedup:.2f}x vs {second.provider})"
    return f"{best.provider} ~ {second.provider} (within noise)"


def pr_verdict(row: dict[str, Record]) -> str:
    """The candidate against Paddle's kernel (a PR may make no case slower) and the fastest other
    provider: ``faster``, ``slower`` (both by the interval rule) or ``~`` (within noise)."""
    cand = roles.candidate(row)
    if cand is None or not cand.ok:
        return "no candidate" if cand is None else _SHORT.get(cand.status, cand.status)
    before = row.get(roles.BEFORE)
    if before is not None and before.ok and clearly_faster(before, cand):
        return f"SLOWER than {before.provider} ({roles.speedup(before, cand):.2f}x)"
    others = [r for p, r in row.items() if p not in roles.CANDIDATES and r.ok]
    if not others:
        return f"only {cand.provider}"
    best = min(others, key=lambda r: r.median_us or 0.0)
    ratio = roles.speedup(best, cand) or 0.0
    if clearly_faster(cand, best):
        return f"faster ({ratio:.2f}x vs {best.provider})"
    if clearly_faster(best, cand):
        return f"slower than {best.provider} ({ratio:.2f}x)"
    return f"~ {best.provider} (within noise, {ratio:.2f}x)"


def _rows(records: Sequence[Record], direction: str) -> tuple[list[str], dict[str, dict[str, Record]]]:
    by_case: dict[str, dict[str, Record]] = {}
    providers: list[str] = []
    for r in records:
        if r.direction != direction:
            continue
        by_case.setdefault(r.case, {})[r.provider] = r
        if r.ok and r.provider not in providers:
            providers.append(r.provider)
    return providers, by_case


def markdown_table(records: Sequence[Record], direction: str, *, provider_order: Sequence[str] = ()) -> str:
    """One GitHub table for ``direction``; empty string when nothing was run in it."""
    providers, by_case = _rows(records, direction)
    if not by_case:
        return ""
    order = {p: i for i, p in enumerate(provider_order)}
    providers.sort(key=lambda p: order.get(p, len(order)))
    # Against paddle: every other provider; against torch: all but paddle (its inverse is already shown).
    pairs = [(p, b) for i, b in enumerate(BASELINES) if b in providers
             for p in providers if p != b and p not in BASELINES[:i]]
    headers = ["case", *(f"{p} (us)" for p in providers), *(f"{p} vs {b}" for p, b in pairs), "verdict"]
    body = []
    labels = _labels(list(by_case))
    for case, row in by_case.items():
        cells: list[Any] = [f"`{labels[case]}`"]
        cells += [fmt_cell(row.get(p)) for p in providers]
        for p, b in pairs:
            rp, rb = row.get(p), row.get(b)
            cells.append(f"{rb.median_us / rp.median_us:.2f}x" if rp and rb and rp.ok and rb.ok
                         and rp.median_us else "")
        cells.append(verdict(row))
        body.append(cells)
    return tabulate(body, headers=headers, tablefmt="github", disable_numparse=True)


def _ratio(x: float | None) -> str:
    return f"{x:.2f}x" if x is not None else ""


def pr_table(records: Sequence[Record], direction: str) -> str:
    """The PR table for ``direction``: per case the candidate's median, Paddle's (before) and the
    speedup over it, the industry's best anchor and the speedup over it, and a verdict. Paddle's
    columns are left out when no Paddle record exists (Paddle not installed); empty string when
    no candidate was run in this direction."""
    _, by_case = _rows(records, direction)
    rows = {case: row for case, row in by_case.items() if roles.candidate(row) is not None}
    if not rows:
        return ""
    names = {roles.candidate(row).provider for row in rows.values()}
    cand_name = names.pop() if len(names) == 1 else "candidate"
    with_before = any(roles.BEFORE in row for row in rows.values())
    labels = _labels(list(rows))
    headers = ["case", f"{cand_name} (us)"]
    headers += [f"{roles.BEFORE} (us)", f"vs {roles.BEFORE}"] if with_before else []
    headers += ["best other (us)", "vs best", "verdict"]
    body = []
    for case, row in rows.items():
        cand, before, best = roles.candidate(row), row.get(roles.BEFORE), roles.best_anchor(row)
        cells: list[Any] = [f"`{labels[case]}`", fmt_cell(cand)]
        if with_before:
            cells += [fmt_cell(before) or "n/a", _ratio(roles.speedup(before, cand))]
        cells += [f"{fmt_cell(best)} ({best.provider})" if best else "n/a", _ratio(roles.speedup(best, cand)),
                  pr_verdict(row)]
        body.append(cells)
    return tabulate(body, headers=headers, tablefmt="github", disable_numparse=True)


def failures(records: Sequence[Record], strict: bool = False) -> list[Record]:
    """Records that failed (an error, an OOM, a refused case); with ``strict`` also those that
    could not run here (``unsupported``: no kernel for the op or dtype; ``not_applicable``)."""
    bad = ("error", "oom", "skipped") + (("unsupported", "not_applicable") if strict else ())
    return [r for r in records if r.status in bad]


def markdown(records: Sequence[Record], env: dict[str, Any] | None = None, *,
             provider_order: Sequence[str] = (), wide: bool = False) -> str:
    """The whole report: a header line, one table per direction (the PR table, or the wide one with
    ``wide`` or when no candidate was run), then what was not run and failed cases with reasons."""
    parts = []
    if env is not None:
        gpu = (env.get("gpu") or {}).get("name") or env.get("device", "cpu")
        method = records[0].method if records else ""
        bw = env.get("peak_bandwidth_gbps")
        parts.append(f"Device: {gpu}; method: {method}; median us (±noise when >= 1%); {env.get('time', '')}"
                     + (f"; peak bandwidth {bw:.0f} GB/s" if bw else ""))
    for d in DIRECTIONS:
        table = "" if wide else pr_table(records, d)
        table = table or markdown_table(records, d, provider_order=provider_order)
        if table:
            parts.append(f"### {d}\n\n{table}")
    skipped: dict[tuple[str, str], int] = {}
    for r in records:
        if r.status in ("not_applicable", "unsupported"):
            skipped[(r.provider, r.error or r.status)] = skipped.get((r.provider, r.error or r.status), 0) + 1
    if skipped:
        lines = [f"- {p}: {why} ({n} record{'s' if n > 1 else ''})" for (p, why), n in skipped.items()]
        parts.append("Not run:\n\n" + "\n".join(lines))
    bad = failures(records)
    if bad:
        lines = [f"- `{r.case}` {r.provider} {r.direction}: {r.status}: {r.error}" for r in bad]
        parts.append("Failed:\n\n" + "\n".join(lines))
    return "\n\n".join(parts) + "\n"


def to_csv(records: Sequence[Record]) -> str:
    """One CSV row per record (raw samples left out; they are in the JSON)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in records:
        w.writerow(r.to_dict())
    return buf.getvalue()
