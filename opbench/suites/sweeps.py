"""Seeded sweeps: cases drawn from a fixed seed, so an op is proven on shapes nobody picked by hand.

Each sweep is a function returning config lines; :data:`SWEEPS` registers them as built-in suites
(``opbench cases lerp-sweep``, ``bench``, ``accuracy``). The same seed gives the same lines on every
machine (NumPy's PCG64 stream). Sizes are capped so that a case's inputs, output and gradients fit in
:data:`MEMORY_CAP` bytes, leaving room for the ``torch.compile`` anchor on an 80 GB GPU.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

SEED = 20261125
MEMORY_CAP = 4 << 30  # bytes for a case's inputs, output and gradients
FLOAT_DTYPES = ("float32", "float16", "bfloat16", "float64")
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8}
# How each lerp operand relates to the output: its own shape in every dim, broadcast along some dims,
# or (the weight only) a Python float or a one-element tensor.
LERP_PATTERNS = ("same", "x-broadcast", "y-broadcast", "weight-broadcast", "all-broadcast", "scalar-weight",
                 "one-element-weight")


def _tensor(shape: list[int], dtype: str) -> str:
    return f'Tensor({list(shape)},"{dtype}")'


def _shape(rng: np.random.Generator, rank: int, numel: float) -> list[int]:
    """A shape of `rank` dims whose product is about `numel`: log-sizes split at random, no dim below 2."""
    parts = rng.dirichlet(np.ones(rank)) * math.log(numel)
    return [max(2, round(math.exp(p))) for p in parts]


def _broadcast_of(rng: np.random.Generator, full: list[int]) -> list[int]:
    """`full` with a random non-empty set of dims set to 1, and sometimes the leading ones dropped."""
    shape = list(full)
    for d in rng.permutation(len(full))[: rng.integers(1, len(full) + 1)]:
        shape[d] = 1
    if rng.random() < 0.3:
        lead = int(rng.integers(0, len(shape)))
        shape = shape[lead:] if all(s == 1 for s in shape[:lead]) else shape
    return shape or [1]


def lerp_sweep(seed: int = SEED, count: int = 70) -> list[str]:
    """``count`` lerp cases: ranks 1-5, 1e3 to 2e8 output elements (log-uniform, capped by memory), the four
    float dtypes in turn, and the patterns of :data:`LERP_PATTERNS` in turn (x, y and weight each broadcast
    along random dims; scalar and one-element weights). Grammar note: every tensor input of a backward
    needs a gradient, so a weight without one is covered by the scalar-weight cases."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        dtype = FLOAT_DTYPES[i % len(FLOAT_DTYPES)]
        pattern = LERP_PATTERNS[i % len(LERP_PATTERNS)]
        rank = int(rng.integers(1, 6))
        numel = 10 ** rng.uniform(3, math.log10(2e8))
        numel = min(numel, MEMORY_CAP / (8 * DTYPE_BYTES[dtype]))  # x, y, w, out and their grads, with slack
        if pattern in ("x-broadcast", "y-broadcast", "weight-broadcast", "all-broadcast"):
            rank = max(rank, 2)
        full = _shape(rng, rank, numel)
        while math.prod(full) * 8 * DTYPE_BYTES[dtype] > MEMORY_CAP:  # rounding the dims up can overshoot
            full[full.index(max(full))] //= 2
        x, y, w = list(full), list(full), list(full)
        if pattern == "x-broadcast":
            x = _broadcast_of(rng, full)
        elif pattern == "y-broadcast":
            y = _broadcast_of(rng, full)
        elif pattern == "weight-broadcast":
            w = _broadcast_of(rng, full)
        elif pattern == "all-broadcast":  # each along different dims, so that the output is still `full`
            order = rng.permutation(rank)
            x, y, w = ([1 if d == order[k % rank] else s for d, s in enumerate(full)] for k in range(3))
        weight = _tensor(w, dtype)
        if pattern == "scalar-weight":
            weight = repr(float(rng.choice([0.0, 0.25, 0.5, 0.75, 1.0, -0.5, 1.5])))
        elif pattern == "one-element-weight":
            weight = _tensor([1], dtype)
        out.append(f"paddle.lerp({_tensor(x, dtype)}, {_tensor(y, dtype)}, {weight}, )")
    return out


# Registered as built-in suites by opbench.suites: name -> (purpose, generator).
SWEEPS: dict[str, tuple[str, Callable[[], list[str]]]] = {
    "lerp-sweep": ("lerp on 70 seeded cases: x, y and weight broadcast along random dims, ranks 1-5, "
                   "1e3-2e8 elements, four float dtypes, scalar and tensor weights", lerp_sweep),
}
