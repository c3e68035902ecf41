"""Comparison figures for one output or grad: max abs/rel error, mismatch count, first bad index.

Two ways to get the same figures: :func:`host_figures` on host arrays (the default, CPU path)
and :func:`device_figures_batch` through :meth:`Backend.close_figures_batch` on the device (GPU
cache mode: every output and grad of a case at once; only the figures come back, in one copy).
Either way a mismatch is
``|actual - expected| > atol + rtol * |expected|``, NaN equal to NaN, equal infinities equal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from accuracy.tolerances import Tolerance


@dataclass(frozen=True)
class Figures:
    """What one comparison measured."""

    mismatches: int
    max_abs: float
    max_rel: float
    first_index: tuple[int, ...] | None


@dataclass
class Comparison:
    """One compared output (``forward``) or input grad (``backward``), as written to the results file.

    ``passed`` is None for a pair that was not compared (``note`` says why, e.g. the subject
    has no grad for that input).
    """

    direction: str
    name: str
    dtype: str = ""
    shape: list[int] = field(default_factory=list)
    atol: float = 0.0
    rtol: float = 0.0
    numel: int = 0
    mismatches: int = 0
    max_abs: float | None = None
    max_rel: float | None = None
    first_index: list[int] | None = None
    passed: bool | None = True
    note: str = ""
    float64: dict[str, Any] | None = None
    bound: dict[str, Any] | None = None  # the float64 verdict's figures (accuracy.bound.Verdict)
    judge: bool = field(default=False, repr=False)  # decided by the float64 bound when the sides differ

    @property
    def label(self) -> str:
        return f"{self.direction} {self.name}"

    def to_json(self) -> dict[str, Any]:
        """The record form: unset fields left out (a pair not compared keeps only its note)."""
        d = {f.name: _copy(getattr(self, f.name)) for f in fields(self) if f.name != "judge"}  # no deep copy
        if not self.dtype:
            d = {k: d[k] for k in ("direction", "name", "passed", "note")}
        return {k: v for k, v in d.items() if v not in (None, "") or k == "passed"}


def _copy(value: Any) -> Any:
    return list(value) if isinstance(value, list) else dict(value) if isinstance(value, dict) else value


def _work_array(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    if a.dtype.kind == "f":
        return a.astype(np.float64)
    return a.astype(np.int64)


def host_figures(actual: np.ndarray, expected: np.ndarray, tol: Tolerance) -> Figures:
    """Figures for two same-shape host arrays (bfloat16 arrives as float32)."""
    if actual.shape != expected.shape:
        raise ValueError(f"shapes differ {actual.shape} vs {expected.shape}")
    if actual.size == 0:
        return Figures(0, 0.0, 0.0, None)
    shape = np.shape(actual)
    a, e = _work_array(np.asarray(actual).reshape(-1)), _work_array(np.asarray(expected).reshape(-1))
    if a.dtype.kind != e.dtype.kind:
        kind = np.complex128 if "c" in (a.dtype.kind, e.dtype.kind) else np.float64
        a, e = a.astype(kind), e.astype(kind)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        same = a == e
        if a.dtype.kind in "fc":
            same |= np.isnan(a) & np.isnan(e)
        diff = np.abs(a - e).astype(np.float64)
        diff[same] = 0
        ref = np.abs(e).astype(np.float64)
        bad = ~(diff <= tol.atol + tol.rtol * ref) & ~same
        rel = np.where(same, 0.0, diff / ref)
    count = int(bad.sum())
    first = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), shape)) if count else None
    return Figures(count, _max(diff), _max(rel), first)


def _max(a: np.ndarray) -> float:
    return math.nan if np.isnan(a).any() else float(a.max())


def device_figures(backend: Any, actual: Any, expected: Any, tol: Tolerance) -> Figures:
    """Figures computed on the device of ``backend`` (both tensors are of its framework)."""
    return Figures(*backend.close_figures(actual, expected, tol.atol, tol.rtol))


def device_figures_batch(backend: Any, pairs: list[tuple[Any, Any, Tolerance]]) -> list[Figures]:
    """:func:`device_figures` of every ``(actual, expected, tolerance)`` of a case in one backend call:
    the figures stay on the device until all are computed, then come back in one copy."""
    got = backend.close_figures_batch([(a, e, tol.atol, tol.rtol) for a, e, tol in pairs])
    return [Figures(*f) for f in got]
