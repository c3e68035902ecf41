"""Deterministic, seeded input values for a case, identical for every framework.

Each tensor gets its own NumPy generator seeded from (seed, its position in the
call, shape, dtype, domain), so the same case and seed give the same bits on
every run and every framework, and equal tensors of different cases share
values (which lets the accuracy checker's GPU cache reuse them). Half-precision
values are drawn in float32 and rounded once to the target dtype here, so the
frameworks' own casts are exact.
"""

from __future__ import annotations

import functools
import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from opbench.cases import COMPLEX_DTYPES, FLOAT_DTYPES, INT_DTYPES, Case, TensorSpec
from opbench.domains import BY_NAME, DEFAULT, SELF_CONTAINED, Domain

# Integers: PaddleAPITest draws in ±65535; a narrower range keeps sums and
# products of int tensors exact in float64 references.
INT_LOW, INT_HIGH = -100, 100


def tensor_seed(seed: int, ordinal: int, spec: TensorSpec, domain: Domain) -> int:
    """A 64-bit seed for one tensor, stable across processes and Python versions."""
    key = f"{seed}|{ordinal}|{spec.shape}|{spec.dtype}|{domain}".encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "little")


def round_to_bfloat16(a: np.ndarray) -> np.ndarray:
    """Round float32 values to the nearest bfloat16 (ties to even); the result stays float32.

    Computed in place in one output buffer (no temporaries the size of the input): a
    [8192, 8192] tensor rounds in a fifth of the time of the expression form.
    """
    values = np.asarray(a, dtype=np.float32, order="C")
    bits = values.reshape(-1).view(np.uint32)  # 1-D, so 0-D input still gives an array to write into
    out = bits >> np.uint32(16)
    out &= np.uint32(1)
    out += np.uint32(0x7FFF)
    out += bits  # wraps modulo 2**32 like the rest of uint32 arithmetic (only NaNs can, and they are reset)
    out &= np.uint32(0xFFFF0000)
    nan = np.isnan(values.reshape(-1))
    if nan.any():
        out[nan] = np.uint32(0x7FC00000)
    return out.view(np.float32).reshape(values.shape)


def host_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype that carries a case dtype's values (bfloat16 travels as float32)."""
    return np.dtype("float32" if dtype == "bfloat16" else dtype)


def draw(spec: TensorSpec, domain: Domain, rng: np.random.Generator, context: Any = None) -> np.ndarray:
    """Values for one tensor from its domain.

    ``context`` is what the domain's kind needs from the rest of the call, worked out by
    :func:`tensor_inputs`: the size to index into (``index``, ``bound``, ``sections``; a
    ``distinct`` index gets ``(size, axis)``, the axis its slices run along) or the
    shape of the tensor referred to (``shape``, ``broadcast``, ``axes``, ``permutation``).
    A domain whose context is missing (the referred argument is not a tensor of known
    shape) is drawn as a plain uniform one.
    """
    kind = domain.kind if context is not None or domain.kind in SELF_CONTAINED else "uniform"
    if kind in ("index", "bound"):
        size, axis = context if isinstance(context, tuple) else (context, None)
        size = max(int(size), 1)
        if domain.distinct:
            values = _distinct_indices(spec, size, axis, rng)
            if values is not None:
                return values
        return rng.integers(0, size, size=spec.shape).astype(spec.dtype)
    values = _DRAW[kind](spec, domain, rng, context)
    return np.asarray(values).astype(host_dtype(spec.dtype), copy=False) if kind in _INT_KINDS else values


#: The most random keys :func:`_distinct_indices` sorts to draw each slice's indices without repeats.
DISTINCT_INDEX_KEYS = 1 << 24


def _distinct_indices(spec: TensorSpec, size: int, axis: int | None, rng: np.random.Generator) -> np.ndarray | None:
    """Indices in [0, size) that never repeat: over the whole tensor where it holds at most ``size`` of
    them, else within each slice along ``axis`` (a scatter along an axis, ``put_along_axis``) where a
    slice holds at most ``size``; None where repeats cannot be avoided (or would cost more than
    :data:`DISTINCT_INDEX_KEYS` keys to avoid)."""
    if spec.numel <= size:
        return rng.permutation(size)[: spec.numel].reshape(spec.shape).astype(spec.dtype)
    if axis is None or not spec.shape:
        return None
    axis %= len(spec.shape)
    extent = spec.shape[axis]
    rest = spec.shape[:axis] + spec.shape[axis + 1:]
    slices = spec.numel // max(extent, 1)
    if extent > size or slices * size > DISTINCT_INDEX_KEYS:
        return None
    picks = rng.random((slices, size)).argsort(axis=1)[:, :extent].reshape(*rest, extent)
    return np.moveaxis(picks, -1, axis).astype(spec.dtype)


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


@functools.cache
def _values_of(dtype: str) -> np.ndarray:
    """Every finite value of a 16-bit float dtype, as float32, sorted, zero once."""
    bits = np.arange(1 << 16, dtype=np.uint32)
    values = bits.astype(np.uint16).view(np.float16).astype(np.float32) if dtype == "float16" else \
        (bits << 16).view(np.float32)
    values = np.unique(values[np.isfinite(values)])  # +0 and -0 once
    values.flags.writeable = False
    return values


def _distinct_values(spec: TensorSpec, domain: Domain, rng: np.random.Generator, context: Any = None) -> np.ndarray:
    """Floats in [low, high) that never repeat: float32/float64 a shuffled even grid (distinct while the grid's step
    is wider than the dtype's spacing, up to 2^22 float32 values in [-1, 1)), float16/bfloat16 a draw without
    replacement from every value the dtype has there (about 30,000 in [-1, 1)); past that, uniform values."""
    if spec.dtype not in FLOAT_DTYPES or spec.numel <= 1:
        return _uniform_values(spec, domain, rng)
    n, low, high = spec.numel, domain.low, domain.high
    if spec.dtype in ("float32", "float64"):
        grid = low + (high - low) * (rng.permutation(n) + 0.5) / n
        return grid.astype(spec.dtype).reshape(spec.shape)
    values = _values_of(spec.dtype)
    values = values[(values >= low) & (values < high)]
    if values.size < n:
        return _uniform_values(spec, domain, rng)
    return _round(rng.choice(values, size=n, replace=False).reshape(spec.shape), spec.dtype)


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


def _plane_positions(spec: TensorSpec, domain: Domain, rng: np.random.Generator, context: Any = None) -> np.ndarray:
    """Each plane of the dims after the first two holds a permutation of its flat positions (no repeats)."""
    if len(spec.shape) < 3 or spec.numel == 0:
        return np.zeros(spec.shape, dtype=spec.dtype)
    plane = int(np.prod(spec.shape[2:]))
    return rng.random((spec.numel // plane, plane)).argsort(axis=1).reshape(spec.shape).astype(spec.dtype)


_DRAW = {
    "uniform": _uniform_values,
    "sorted": _sorted_values,
    "distinct": _distinct_values,
    "spd": _spd_values,
    "shape": _shape_values,
    "broadcast": _broadcast_values,
    "axes": _axes_values,
    "permutation": _permutation_values,
    "sections": _sections_values,
    "boxes": _boxes_values,
    "plane_positions": _plane_positions,
}
_INT_KINDS = frozenset({"shape", "broadcast", "axes", "permutation", "sections", "plane_positions"})


def _uniform(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, domain: Domain) -> np.ndarray:
    """``random * (high - low) + low`` in float64 (pushed ``min_abs`` away from zero), then cast to ``dtype``.

    A large tensor is drawn in chunks on several threads, each from a copy of the generator advanced to
    its chunk's first value, so the bits are those of one serial draw (NumPy's fill releases the GIL).
    """
    out = np.empty(shape, dtype=dtype)
    flat = out.reshape(-1)
    n = flat.size
    workers = min(_DRAW_THREADS, n // PARALLEL_CHUNK) if hasattr(rng.bit_generator, "advance") else 1
    if workers <= 1:
        _uniform_chunk(rng, flat, domain)
        return out
    state = rng.bit_generator.state
    bounds = range(0, n, PARALLEL_CHUNK)

    def fill(start: int) -> None:
        bits = type(rng.bit_generator)()
        bits.state = state
        bits.advance(start)  # one 64-bit draw per float64 value
        _uniform_chunk(np.random.Generator(bits), flat[start:start + PARALLEL_CHUNK], domain)

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(fill, bounds))
    rng.bit_generator.advance(n)  # the caller's generator ends where a serial draw would leave it
    return out


def _uniform_chunk(rng: np.random.Generator, out: np.ndarray, domain: Domain) -> None:
    # In place: the same IEEE operations, element by element, as ``random * (high - low) + low``,
    # without two more float64 arrays the size of the chunk.
    values = out if out.dtype == np.float64 else np.empty(out.shape, dtype=np.float64)
    rng.random(out=values)
    values *= domain.high - domain.low
    values += domain.low
    if domain.min_abs > 0:
        small = np.abs(values) < domain.min_abs
        values = np.where(small, np.copysign(domain.min_abs, values) + values, values)
    if values is not out:
        out[...] = values


PARALLEL_CHUNK = 1 << 22  # values per chunk of a threaded draw (32 MiB of float64)
_DRAW_THREADS = min(16, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


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


#: What an :class:`InputCache` may hold by default: 4 GiB, or a quarter of the host memory available
#: when the cache is made if that is less. ``OPBENCH_INPUT_CACHE_MB`` sets it (0: keep nothing).
DEFAULT_CACHE_BYTES = 4 * 2**30
CACHE_ENV = "OPBENCH_INPUT_CACHE_MB"


def default_cache_bytes() -> int:
    """The budget of a new :class:`InputCache`: ``OPBENCH_INPUT_CACHE_MB`` MiB when set, else
    :data:`DEFAULT_CACHE_BYTES` capped at a quarter of the host memory available now."""
    text = os.environ.get(CACHE_ENV, "").strip()
    if text:
        try:
            return max(0, int(float(text) * 2**20))
        except ValueError:
            raise ValueError(f"{CACHE_ENV}={text!r}: expected a number of MiB") from None
    from opbench.backends.base import host_free_memory

    return min(DEFAULT_CACHE_BYTES, host_free_memory() // 4)


class InputCache:
    """The host arrays of :func:`generate` per case and seed, kept for a whole run within a byte budget.

    ``opbench bench`` goes over the suite once per round and every round needs the same seeded
    values; drawing them is the slow part of preparing a large case (an [8192, 8192] float32 lerp
    takes seconds of NumPy), so each case is drawn once per run and its arrays are handed to every
    direction, provider and round. Cases are kept in the order they are first asked for until the
    next would pass ``max_bytes``; later ones are drawn each time they are asked for. (A run asks
    for the cases in the same order every round, so evicting the least recently used case would drop
    each one just before it is needed again.) The arrays are shared: callers must not write into
    them, as no provider does (each converts or copies them into its own tensors).
    """

    def __init__(self, max_bytes: int | None = None) -> None:
        self.max_bytes = default_cache_bytes() if max_bytes is None else max(0, max_bytes)
        self._arrays: dict[tuple[str, int], list[np.ndarray]] = {}
        self.nbytes = 0  # held now
        self.hits = 0  # cases handed out from the cache
        self.misses = 0  # cases drawn (kept or not)

    def get(self, case: Case, seed: int = 0) -> list[np.ndarray]:
        """The case's arrays for ``seed``: :func:`generate`'s, drawn now or on an earlier call."""
        key = (case.to_line(), seed)
        kept = self._arrays.get(key)
        if kept is not None:
            self.hits += 1
            return kept
        arrays = generate(case, seed)
        self.misses += 1
        size = sum(a.nbytes for a in arrays)
        if self.nbytes + size <= self.max_bytes:
            self._arrays[key] = arrays
            self.nbytes += size
        return arrays

    def __len__(self) -> int:
        return len(self._arrays)

    def clear(self) -> None:
        """Drop every kept case (the budget stays)."""
        self._arrays.clear()
        self.nbytes = 0


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
    size = target.shape[axis % len(target.shape)]
    return (size, axis) if domain.distinct else size
