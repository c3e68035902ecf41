"""Who is who in a PR table: the candidate (our kernel), the kernel it replaces (Paddle's, "before"),
and the anchors (every other provider in the run: PyTorch eager, ``torch.compile``, Liger, ...).

Paddle's rules for an operator-performance PR ask for the op's time in Paddle before the change,
the industry's best, and a before/after table with no case slower; these roles say which records
fill those columns.
"""

from __future__ import annotations

from collections.abc import Mapping

from op_benchmark.results import Record

BEFORE = "paddle"
# The same kernel through each binding; the Paddle binding first, since it is what a Paddle PR ships.
CANDIDATES = ("paddle-ops", "torch-ops")


def is_anchor(provider: str) -> bool:
    """True for a provider that is neither the candidate nor Paddle's own kernel."""
    return provider != BEFORE and provider not in CANDIDATES


def candidate(row: Mapping[str, Record]) -> Record | None:
    """The candidate's record of one case: the first binding measured, else the first that ran at all."""
    present = [row[p] for p in CANDIDATES if p in row]
    return next((r for r in present if r.ok), present[0] if present else None)


def best_anchor(row: Mapping[str, Record]) -> Record | None:
    """The fastest anchor measured on one case (the industry's best), or None."""
    ok = [r for p, r in row.items() if is_anchor(p) and r.ok]
    return min(ok, key=lambda r: r.median_us or 0.0) if ok else None


def speedup(base: Record | None, new: Record | None) -> float | None:
    """``median(base) / median(new)``: above 1 ``new`` is faster; None when either was not measured."""
    if base is None or new is None or not (base.ok and new.ok) or not new.median_us:
        return None
    return (base.median_us or 0.0) / new.median_us
