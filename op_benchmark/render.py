"""Renderers for benchmark records: GitHub markdown tables per direction, and CSV.

One row per case; a median column per provider (only providers measured somewhere in
that direction), speedup columns against ``paddle`` and ``torch``, and a verdict that
names the fastest provider and says when its lead is within the noise.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from tabulate import tabulate

from op_benchmark.directions import DIRECTIONS
from op_benchmark.results import Record

BASELINES = ("paddle", "torch")
# How a record that has no time shows in a table: cannot run here (n/a: the provider does not apply,
# or its framework has no kernel for the dtype on this device; "Not run" below the table says which),
# or failed.
_SHORT = {"not_applicable": "n/a", "unsupported": "n/a", "skipped": "skipped", "error": "error", "oom": "OOM"}
CSV_FIELDS = ("case", "api", "provider", "direction", "device", "method", "status", "median_us", "min_us",
              "iqr_us", "noise", "samples", "throttled_samples", "bytes", "gbps", "pct_peak_bw", "flops",
              "tflops", "stop_reason", "error")


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


def verdict(row: dict[str, Record]) -> str:
    """The fastest provider, and whether it is clearly ahead of the next (nvbench's interval rule:
    the leader's Q3 below the runner-up's min) or only within the noise."""
    ok = sorted((r for r in row.values() if r.ok), key=lambda r: r.median_us or 0.0)
    if not ok:
        return "no result"
    if len(ok) == 1:
        return f"only {ok[0].provider}"
    best, second = ok[0], ok[1]
    speedup = (second.median_us or 0.0) / (best.median_us or 1.0)
    if best.q3_us is not None and second.min_us is not None and best.q3_us < second.min_us:
        return f"{best.provider} fastest ({speedup:.2f}x vs {second.provider})"
    return f"{best.provider} ~ {second.provider} (within noise)"


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
    for case, row in by_case.items():
        cells: list[Any] = [f"`{case}`"]
        cells += [fmt_cell(row.get(p)) for p in providers]
        for p, b in pairs:
            rp, rb = row.get(p), row.get(b)
            cells.append(f"{rb.median_us / rp.median_us:.2f}x" if rp and rb and rp.ok and rb.ok
                         and rp.median_us else "")
        cells.append(verdict(row))
        body.append(cells)
    return tabulate(body, headers=headers, tablefmt="github", disable_numparse=True)


def failures(records: Sequence[Record], strict: bool = False) -> list[Record]:
    """Records that failed (an error, an OOM, a refused case); with ``strict`` also those that
    could not run here (``unsupported``: no kernel for the dtype; ``not_applicable``)."""
    bad = ("error", "oom", "skipped") + (("unsupported", "not_applicable") if strict else ())
    return [r for r in records if r.status in bad]


def markdown(records: Sequence[Record], env: dict[str, Any] | None = None, *,
             provider_order: Sequence[str] = ()) -> str:
    """The whole report: a header line, one table per direction, then failed cases with reasons."""
    parts = []
    if env is not None:
        gpu = (env.get("gpu") or {}).get("name") or env.get("device", "cpu")
        method = records[0].method if records else ""
        bw = env.get("peak_bandwidth_gbps")
        parts.append(f"Device: {gpu}; method: {method}; median us (±noise when >= 1%); {env.get('time', '')}"
                     + (f"; peak bandwidth {bw:.0f} GB/s" if bw else ""))
    for d in DIRECTIONS:
        table = markdown_table(records, d, provider_order=provider_order)
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
