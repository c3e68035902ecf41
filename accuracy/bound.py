"""The float64 verdict: is the subject as close to the truth as its dtype allows, or as the
reference is?

A fixed ``atol``/``rtol`` is wrong both ways: too loose for an element-wise op (a result
biased by a few roundings passes) and too tight for a reduction (a 128-term sum of large
terms legitimately differs by more than 1e-5). Here every compared element gets an allowance
measured in *units*: one unit is the dtype's machine epsilon (2^-23 for float32: the spacing
of values just above 1, twice the worst rounding error) times the element's scale. The scale
is the largest of the element's truth, the tensor's largest truth, and the element's
magnitude: the float64 result on the absolute values of the inputs (for a sum, the sum of
the absolute terms). An op's rounding errors are the size of the values it handles: for a
difference of nearly equal values (``x - tanh(x)``, ``exp(x) - 1``, ``x - mean``) or a sum
that cancels, those are the tensor's values or the terms, not the small result.

An element may be off by ``BASE_UNITS`` units (``BACKWARD_UNITS`` more for a gradient) plus
``log2`` of the number of terms summed into it (what an accumulation in a tree of that depth
adds), or by ``REFERENCE_FACTOR`` times the reference's worst error in units, whichever is
larger: the reference's error is a measurement of what this op costs in this dtype (a
gradient chains several rounded operations), and a subject as close as the reference never
fails. The number of terms is the larger of the float64 result on inputs of ones when that
is a whole number (the count, for sums and matrix products) and the ratio of the largest
tensor of the case to this one (for a reduced gradient), times the row a normalization's
statistics sum (:mod:`accuracy.row_terms`). Non-finite truths are judged by equality with
the reference.

Only dtypes narrower than float64 are judged this way (:data:`JUDGED`); float64 outputs have
no more precise truth and keep the per-dtype tolerance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: Machine epsilon of each floating dtype (the distance from 1 to the next value): one unit.
UNIT: dict[str, float] = {
    "float64": 2.0**-52, "float32": 2.0**-23, "float16": 2.0**-10, "bfloat16": 2.0**-7,
    "complex128": 2.0**-52, "complex64": 2.0**-23,
}
#: The dtypes judged by the bound: those narrower than the float64 truth. A float64 output has
#: no more precise truth to be judged against, so it keeps the per-dtype tolerance.
JUDGED = frozenset({"float32", "float16", "bfloat16", "complex64"})
#: The smallest normal value: the scale of an element whose truth and magnitude are zero.
FLOOR: dict[str, float] = {
    "float64": 2.0**-1022, "float32": 2.0**-126, "float16": 2.0**-14, "bfloat16": 2.0**-126,
    "complex128": 2.0**-1022, "complex64": 2.0**-126,
}
#: Units any element may be off by: half for the final rounding, the rest for a few operations
#: rounded on the way (a transcendental function of a good math library is within 1 to 2).
BASE_UNITS = 3.0
#: Extra units for a gradient: it chains the forward's rounded output through more operations,
#: and a rounding of that output is amplified where the derivative changes fast (``1 - y*y``
#: of tanh near saturation turns half a unit in ``y`` into several).
BACKWARD_UNITS = 5.0
#: A subject may be this many times as far from the truth as the reference is: two sound
#: implementations of one op in one dtype land within a factor of two of each other.
REFERENCE_FACTOR = 2.0


@dataclass(frozen=True)
class Verdict:
    """What the bound decided for one output, with the figures a reviewer checks it by."""

    passed: bool
    mismatches: int
    first_index: tuple[int, ...] | None
    subject_units: float  # worst error of the subject, in units
    reference_units: float  # worst error of the reference, in units
    allowed_units: float  # the allowance at the subject's worst element
    terms: float  # the number of summed terms at that element
    subject_max_abs: float
    reference_max_abs: float

    def to_json(self) -> dict:
        return {k: (v if not isinstance(v, float) else _round(v)) for k, v in self.__dict__.items()}


def _round(v: float) -> float:
    return v if not math.isfinite(v) else float(f"{v:.4g}")


def _f64(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64).reshape(-1)


def judge(subject: np.ndarray, reference: np.ndarray, truth: np.ndarray, magnitude: np.ndarray | None,
          terms: np.ndarray | float, dtype: str, backward: bool = False) -> Verdict:
    """The verdict for one output or gradient of dtype ``dtype`` (arrays of one shape; float64 truth, magnitude)."""
    shape = np.shape(truth)
    s, r, t = _f64(subject), _f64(reference), _f64(truth)
    m = np.abs(_f64(magnitude)) if magnitude is not None and np.shape(magnitude) == shape else np.abs(t)
    n = np.broadcast_to(np.asarray(terms, dtype=np.float64), shape).reshape(-1)
    u, floor = UNIT[dtype], FLOOR[dtype]
    with np.errstate(invalid="ignore", over="ignore"):
        finite_t = np.where(np.isfinite(t), np.abs(t), 0.0)
        largest = float(finite_t.max()) if finite_t.size else 0.0
        scale = u * np.maximum(np.maximum(finite_t, largest), np.where(np.isfinite(m), m, 0.0)) + floor * u
        es, er = np.abs(s - t), np.abs(r - t)
        s_units, r_units = es / scale, er / scale
        finite = np.isfinite(t)
        s_worst = _nanmax(np.where(finite, s_units, 0.0))
        r_worst = _nanmax(np.where(finite, r_units, 0.0))
        depth = np.log2(np.clip(np.nan_to_num(n, nan=1.0), 1.0, 1e15))
        own = BASE_UNITS + (BACKWARD_UNITS if backward else 0.0) + depth
        allowed = np.maximum(own, REFERENCE_FACTOR * r_worst if math.isfinite(r_worst) else 0.0)
        same_as_ref = (s == r) | (np.isnan(s) & np.isnan(r))
        bad = np.where(finite, ~(s_units <= allowed), ~same_as_ref)
    count = int(bad.sum())
    worst = int(np.nanargmax(np.where(finite, s_units, -1.0))) if s.size else 0
    first = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), shape)) if count else None
    return Verdict(
        passed=count == 0, mismatches=count, first_index=first, subject_units=s_worst, reference_units=r_worst,
        allowed_units=float(allowed[worst]) if s.size else float(BASE_UNITS), terms=float(n[worst]) if s.size else 1.0,
        subject_max_abs=_nanmax(np.where(finite, es, 0.0)), reference_max_abs=_nanmax(np.where(finite, er, 0.0)),
    )


def _nanmax(a: np.ndarray) -> float:
    if a.size == 0:
        return 0.0
    return math.inf if np.isnan(a).any() else float(a.max())


def count_terms(ones_result: np.ndarray | float) -> np.ndarray:
    """Terms summed into each element, from the float64 result on inputs of ones: a sum or a matrix
    product of ones counts its terms exactly, as a whole number; anything else (``exp(1)``,
    ``1 / n``) is not a count, and counts as one term."""
    n = np.abs(np.nan_to_num(np.asarray(ones_result, dtype=np.complex128 if np.iscomplexobj(ones_result)
                                        else np.float64)))
    whole = (n >= 1) & (np.abs(n - np.round(n)) <= 1e-9 * n)
    return np.where(whole, n, 1.0)


def terms_from_sizes(this_numel: int, largest_numel: int) -> float:
    """How many terms a reduction into ``this_numel`` elements from the largest tensor sums, at least 1."""
    return max(1.0, largest_numel / max(this_numel, 1))
