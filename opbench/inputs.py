"""Deterministic, seeded input values for a case, identical for every framework.

Each tensor gets its own NumPy generator seeded from (seed, its position in the
call, shape, dtype, domain), so the same case and seed give the same bits on
every run and every framework, and equal tensors of different cases share
values (which lets the accuracy checker's GPU cache reuse them). Half-precision
values are drawn in float32 and rounded once to the target dtype here, so the
frameworks' own casts are exact.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from opbench.cases import COMPLEX_DTYPES, FLOAT_DTYPES, INT_DTYPES, Case, TensorSpec
from opbench.domains import BY_NAME, DEFAULT, Domain

# Integers: PaddleAPITest draws in ±65535; a narrower range keeps sums and
# products of int tensors exact in float64 references.
INT_LOW, INT_HIGH = -100, 100


def tensor_seed(seed: int, ordinal: int, spec: TensorSpec, domain: Domain) -> int:
    """A 64-bit seed for one tensor, stable across processes and Python versions."""
    key = f"{seed}|{ordinal}|{spec.shape}|{spec.dtype}|{domain}".encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "little")


def round_to_bfloat16(a: np.ndarray) -> np.ndarray:
    """Round float32 values to the nearest bfloat16 (ties to even); the result stays float32."""
    bits = np.asarray(a, dtype=np.float32, order="C").view(np.uint32)
    rounding = ((bits >> 16) & 1) + np.uint32(0x7FFF)
    out = ((bits + rounding) & np.uint32(0xFFFF0000)).astype(np.uint32)
    out = np.where(np.isnan(a), np.uint32(0x7FC00000), out).astype(np.uint32)  # also for 0-D arrays
    return out.view(np.float32)


def host_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype that carries a case dtype's values (bfloat16 travels as float32)."""
    return np.dtype("float32" if dtype == "bfloat16" else dtype)


def draw(spec: TensorSpec, domain: Domain, rng: np.random.Generator, context: Any = None) -> np.ndarray:
    """Values for one tensor from its domain.

    ``context`` is what the domain's kind needs from the rest of the call, worked out by
    :func:`tensor_inputs`: the size to index into (``index``, ``bound``, ``sections``) or the
    shape of the tensor referred to (``shape``, ``broadcast``, ``axes``, ``permutation``).
    A domain whose context is missing (the referred argument is not a tensor of known
    shape) is drawn as a plain uniform one.
    """
    kind = domain.kind if context is not None or domain.kind in ("uniform", "sorted", "spd") else "uniform"
    if kind in ("index", "bound"):
        size = max(int(context), 1)
        if domain.distinct and spec.numel <= size:
            return rng.permutation(size)[: spec.numel].reshape(spec.shape).astype(spec.dtype)
        return rng.integers(0, size, size=spec.shape).astype(spec.dtype)
    values = _DRAW[kind](spec, domain, rng, context)
    return np.asarray(values).astype(host_dtype(spec.dtype), copy=False) if kind in _INT_KINDS else values


def _uniform_values(spec: TensorSpec, domain: Domain, rng: np.random.Generator, context: Any = None) -> np.ndarray:
    shape, dtype = spec.shape, spec.dtype
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in INT_DTYPES:
        # A domain reaching below zero gets the wide integer range; a non-negative one its own
        # [ceil(low), ceil(high)] (positive: at least 1), so counts and repeats stay small.
        info = np.iinfo(dtype)
        if domain.low < 0:
            low, high = INT_LOW, INT_HIGH
        else:
            low = max(int(np.ceil(domain.low)), 1 if domain.low > 0 else 0)
            high = max(int(np.ceil(domain.high)), low)
        values = rng.integers(max(low, info.min), min(high, info.max), size=shape, endpoint=True)
        if domain.min_abs > 0:
            values[values == 0] = 1
        return values.astype(dtype)
    if dtype in COMPLEX_DTYPES:
        part = "float32" if dtype == "complex64" else "float64"
        real = _uniform(rng, shape, part, domain)
        imag = _uniform(rng, shape, part, domain)
        return (real + 1j * imag).astype(dtype)
    if dtype in FLOAT_DTYPES:
        values = _uniform(rng, shape, "float64" if dtype == "float64" else "float32", domain)
        return _round(values, dtype)
    raise ValueError(f"cannot generate values of dtype {dtype}")


def _round(values: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "float16":
        return values.astype(np.float16)
    if dtype == "bfloat16":
        return round_to_bfloat16(values)
    return values


def _sorted_values(spec: TensorSpec, domain: Domain, rng: np.random.Generator, context: Any = None) -> np.ndarray:
    values = _uniform_values(spec, domain, rng)
    return np.sort(values, axis=-1) if values.ndim else values


def _spd_values(spec: TensorSpec, domain: Domain, rng: np.random.Generator, context: Any = None) -> np.ndarray:
    """``A @ A^T + n * I`` per matrix: symmetric, well conditioned, positive definite."""
    if len(spec.shape) < 2 or spec.shape[-1] != spec.shape[-2] or spec.dtype not in FLOAT_DTYPES | COMPLEX_DTYPES:
        return _uniform_values(spec, domain, rng)
    n = spec.shape[-1]
    a = rng.random(spec.shape) * 2 - 1
    m = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    return _round(m.astype("float64" if spec.dtype in ("float64", "complex128") else "float32"), spec.dtype).astype(
        host_dtype(spec.dtype) if spec.dtype not in COMPLEX_DTYPES else spec.dtype)


def _count(spec: TensorSpec) -> int:
    """How many ints a shape-like tensor holds (a 0-D tensor holds one)."""
    return spec.numel if spec.shape else 1


def _shape_values(spec: TensorSpec, domain: Domain, rng: np.random.Generator, context: Any) -> np.ndarray:
    """A shape of ``_count(spec)`` dims whose product is the element count of the shape ``context``."""
    n, total = _count(spec), int(np.prod(context, dtype=np.int64))
    dims = [1] * n
    if total == 0:
        dims[int(rng.integers(n))] = 0
    else:
        for f in _prime_factors(total):
            dims[int(rng.integers(n))] *= f
    return np.array(dims).reshape(spec.shape)


def _prime_factors(n: int) -> list[int]:
    out, f = [], 2
    while f * f <= n:
        while n % f == 0:
            out.append(f)
            n //= f
        f += 1
    return out + ([n] if n > 1 else [])


def _broadcast_values(spec: TensorSpec, domain: Domain, rng: np.random.Generator, context: Any) -> np.ndarray:
    """A shape of ``_count(spec)`` dims that ``context`` broadcasts to (its size-1 dims may grow)."""
    n, src = _count(spec), tuple(context)
    lead = [int(v) for v in rng.integers(1, 4, size=max(n - len(src), 0))]
    tail = [d if d != 1 else int(rng.integers(1, 4)) for d in src[len(src) - min(n, len(src)):]]
    return np.array(lead + tail).reshape(spec.shape)


def _axes_values(spec: TensorSpec, domain: Domain, rng: np.random.Generator, context: Any) -> np.ndarray:
    ndim = max(len(context), 1)
    n = min(_count(spec), ndim)
    axes = rng.permutation(ndim)[:n]
    return np.resize(axes, spec.shape) if spec.shape else np.array(axes[0])


def _permutation_values(spec: TensorSpec, domain: Domain, rng: np.random.Generator, context: Any) -> np.ndarray:
    return np.resize(rng.permutation(max(len(context), 1)), spec.shape)


def _sections_values(spec: TensorSpec, domain: Domain, rng: np.random.Generator, context: Any) -> np.ndarray:
    """``_count(spec)`` positive sizes that sum to ``context`` (zeros when it is too small)."""
    n, total = _count(spec), int(context)
    if total < n:
        return np.array([total] + [0] * (n - 1)).reshape(spec.shape)
    cuts = np.sort(rng.choice(np.arange(1, total), size=n - 1, replace=False)) if n > 1 else np.array([], int)
    return np.diff(np.concatenate([[0], cuts, [total]])).reshape(spec.shape)


def _boxes_values(spec: TensorSpec, domain: Domain, rng: np.random.Generator, context: Any) -> np.ndarray:
    """Boxes ``(x1, y1, x2, y2)`` with corners inside the image ``context`` (``[N, C, H, W]``), at least
    a quarter pixel wide and tall."""
    if spec.shape[-1:] != (4,) or len(context) < 2:
        return _uniform_values(spec, domain, rng)
    h, w = context[-2], context[-1]
    n = spec.numel // 4
    x = np.sort(rng.uniform(0, max(w, 1), (n, 2)), axis=1)
    y = np.sort(rng.uniform(0, max(h, 1), (n, 2)), axis=1)
    x[:, 1] = np.maximum(x[:, 1], x[:, 0] + 0.25)
    y[:, 1] = np.maximum(y[:, 1], y[:, 0] + 0.25)
    boxes = np.stack([x[:, 0], y[:, 0], x[:, 1], y[:, 1]], axis=1).reshape(spec.shape)
    return _round(boxes.astype("float64" if spec.dtype == "float64" else "float32"), spec.dtype)


_DRAW = {
    "uniform": _uniform_values,
    "sorted": _sorted_values,
    "spd": _spd_values,
    "shape": _shape_values,
    "broadcast": _broadcast_values,
    "axes": _axes_values,
    "permutation": _permutation_values,
    "sections": _sections_values,
    "boxes": _boxes_values,
}
_INT_KINDS = frozenset({"shape", "broadcast", "axes", "permutation", "sections"})


def _uniform(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, domain: Domain) -> np.ndarray:
    values = rng.random(shape, dtype=np.float64) * (domain.high - domain.low) + domain.low
    if domain.min_abs > 0:
        small = np.abs(values) < domain.min_abs
        values = np.where(small, np.copysign(domain.min_abs, values) + values, values)
    return values.astype(dtype)


@dataclass(frozen=True)
class TensorInput:
    """One tensor of a case: the parameter it belongs to, its spec, domain and the domain's context."""

    param: str
    spec: TensorSpec
    domain: Domain
    context: Any = None


def tensor_inputs(case: Case) -> list[TensorInput]:
    """Each tensor of the case, in :meth:`Case.tensors` order, with what its values depend on."""
    bound, domains = _bind(case)
    out: list[TensorInput] = []
    for name, value in bound.items():
        for spec in _specs(value):
            domain = domains.get(name) or _by_name(name, spec)
            out.append(TensorInput(name, spec, domain, _context(domain, bound)))
    return out


def _by_name(name: str, spec: TensorSpec) -> Domain:
    """The domain an integer tensor gets from its parameter's name (shape, axis, index, ...)."""
    if spec.dtype in INT_DTYPES:
        return BY_NAME.get(name, DEFAULT)
    return DEFAULT


def generate(case: Case, seed: int = 0) -> list[np.ndarray]:
    """Host arrays for every tensor of the case, in :meth:`Case.tensors` order."""
    arrays = []
    for ordinal, t in enumerate(tensor_inputs(case)):
        rng = np.random.default_rng(tensor_seed(seed, ordinal, t.spec, t.domain))
        arrays.append(np.asarray(draw(t.spec, t.domain, rng, t.context)))
    return arrays


def _bind(case: Case) -> tuple[dict[str, Any], dict[str, Domain]]:
    """Bind the call to the mapped Paddle signature when there is one, for per-parameter domains.

    Tensors are visited in :meth:`Case.tensors` order either way (args then kwargs); a keyword
    given by one of Paddle's aliases (``input`` for ``x``) is named by its parameter.
    """
    from opbench.mapping import MappingMissing, lookup

    positional = {f"#{i}": v for i, v in enumerate(case.args)}
    positional.update(case.kwargs)
    try:
        mapping = lookup(case.api)
    except MappingMissing:
        return positional, {}
    names = [p.name for p in mapping.params if not p.keyword_only and not p.var]
    bound: dict[str, Any] = {}
    for i, v in enumerate(case.args):
        bound[names[i] if i < len(names) else f"#{i}"] = v
    for k, v in case.kwargs:
        bound[mapping.aliases.get(k, k) if k not in bound else k] = v
    return bound, dict(mapping.domains)


def _specs(value: Any) -> list[TensorSpec]:
    if isinstance(value, TensorSpec):
        return [value]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _specs(v)]
    return []


def _context(domain: Domain, bound: dict[str, Any]) -> Any:
    """What ``domain`` needs from the call (see :func:`draw`); None when the call does not give it."""
    if domain.of is None:
        return None
    target = bound.get(domain.of)
    if domain.kind == "bound":
        return target if isinstance(target, int) and not isinstance(target, bool) and target > 0 else None
    if not isinstance(target, TensorSpec):
        return None
    if domain.kind in ("shape", "broadcast", "axes", "permutation", "boxes"):
        return target.shape
    if not target.shape:
        return target.numel
    axis = bound.get(domain.axis_param, domain.axis) if domain.axis_param else domain.axis
    if not isinstance(axis, int) or isinstance(axis, bool):
        axis = domain.axis
    return target.shape[axis % len(target.shape)]
