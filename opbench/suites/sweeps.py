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


# The norms' dtypes (ops/'s norms refuse float64) and LLM hidden sizes; a sweep draws half its hidden sizes
# from this list and half log-uniform in [NORM_HIDDEN_RANGE], rounded to an odd number (no vector width
# divides it, so the kernels' remainder paths run).
NORM_DTYPES = ("bfloat16", "float16", "float32")
LLM_HIDDEN = (768, 1024, 2048, 2560, 3072, 4096, 5120, 6144, 8192, 12288, 16384)
NORM_HIDDEN_RANGE = (768, 65536)
NORM_MAX_ELEMENTS = 1 << 27  # per input: x, out, their grads and the compile anchor's buffers fit in MEMORY_CAP


def _norm_shapes(seed: int, count: int) -> list[tuple[int, int, str]]:
    """``count`` (rows, hidden, dtype): rows log-uniform in 1-65,536 (capped by NORM_MAX_ELEMENTS), hidden
    alternately an LLM size and an odd size, dtypes in turn; the first two cases pin the ends (one row;
    65,536 rows)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        dtype = NORM_DTYPES[i % len(NORM_DTYPES)]
        if i % 2 == 0:
            hidden = int(rng.choice(LLM_HIDDEN))
        else:
            lo, hi = (math.log(v) for v in NORM_HIDDEN_RANGE)
            hidden = int(math.exp(rng.uniform(lo, hi))) | 1
        rows = max(1, round(2 ** rng.uniform(0, 16)))
        rows = {0: 1, 1: 1 << 16}.get(i, rows)
        rows = max(1, min(rows, NORM_MAX_ELEMENTS // hidden))
        out.append((rows, hidden, dtype))
    return out


def rms_norm_sweep(seed: int = SEED, count: int = 64) -> list[str]:
    """``count`` rms_norm cases over the last dim (see :func:`_norm_shapes`), weight in the input dtype."""
    return [f"paddle.nn.functional.rms_norm({_tensor([r, h], d)}, [{h}], {_tensor([h], d)}, 1e-06, )"
            for r, h, d in _norm_shapes(seed + 1, count)]


def layer_norm_sweep(seed: int = SEED, count: int = 64) -> list[str]:
    """``count`` layer_norm cases over the last dim (see :func:`_norm_shapes`), weight and bias in the input
    dtype."""
    return [f"paddle.nn.functional.layer_norm({_tensor([r, h], d)}, [{h}], {_tensor([h], d)}, "
            f"{_tensor([h], d)}, 1e-05, )" for r, h, d in _norm_shapes(seed + 2, count)]


# Registered as built-in suites by opbench.suites: name -> (purpose, generator).
SWEEPS: dict[str, tuple[str, Callable[[], list[str]]]] = {
    "lerp-sweep": ("lerp on 70 seeded cases: x, y and weight broadcast along random dims, ranks 1-5, "
                   "1e3-2e8 elements, four float dtypes, scalar and tensor weights", lerp_sweep),
    "rms_norm-sweep": ("rms_norm on 64 seeded cases: rows 1-65,536, LLM and odd hidden sizes 768-65,536, "
                       "bf16/fp16/fp32", rms_norm_sweep),
    "layer_norm-sweep": ("layer_norm on 64 seeded cases: rows 1-65,536, LLM and odd hidden sizes 768-65,536, "
                         "bf16/fp16/fp32", layer_norm_sweep),
}
