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
from opbench.domains import DEFAULT, Domain

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
    nan = np.isnan(a)
    out[nan] = np.uint32(0x7FC00000)
    return out.view(np.float32)


def host_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype that carries a case dtype's values (bfloat16 travels as float32)."""
    return np.dtype("float32" if dtype == "bfloat16" else dtype)


def draw(spec: TensorSpec, domain: Domain, rng: np.random.Generator, index_size: int | None = None) -> np.ndarray:
    """Values for one tensor from its domain; ``index_size`` bounds index tensors to ``[0, index_size)``."""
    shape, dtype = spec.shape, spec.dtype
    if index_size is not None:
        return rng.integers(0, max(index_size, 1), size=shape).astype(dtype)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in INT_DTYPES:
        info = np.iinfo(dtype)
        low = 1 if domain.low > 0 else INT_LOW
        high = max(int(np.ceil(domain.high)), INT_HIGH)
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
        if dtype == "float16":
            return values.astype(np.float16)
        if dtype == "bfloat16":
            return round_to_bfloat16(values)
        return values
    raise ValueError(f"cannot generate values of dtype {dtype}")


def _uniform(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, domain: Domain) -> np.ndarray:
    values = rng.random(shape, dtype=np.float64) * (domain.high - domain.low) + domain.low
    if domain.min_abs > 0:
        small = np.abs(values) < domain.min_abs
        values = np.where(small, np.copysign(domain.min_abs, values) + values, values)
    return values.astype(dtype)


@dataclass(frozen=True)
class TensorInput:
    """One tensor of a case: the parameter it belongs to, its spec, domain and index bound."""

    param: str
    spec: TensorSpec
    domain: Domain
    index_size: int | None


def tensor_inputs(case: Case) -> list[TensorInput]:
    """Each tensor of the case, in :meth:`Case.tensors` order, with what its values depend on."""
    bound, domains = _bind(case)
    out: list[TensorInput] = []
    for name, value in bound.items():
        domain = domains.get(name, DEFAULT)
        index_size = _index_size(domain, bound) if domain.index_of else None
        out.extend(TensorInput(name, spec, domain, index_size) for spec in _specs(value))
    return out


def generate(case: Case, seed: int = 0) -> list[np.ndarray]:
    """Host arrays for every tensor of the case, in :meth:`Case.tensors` order."""
    arrays = []
    for ordinal, t in enumerate(tensor_inputs(case)):
        rng = np.random.default_rng(tensor_seed(seed, ordinal, t.spec, t.domain))
        arrays.append(np.asarray(draw(t.spec, t.domain, rng, t.index_size)))
    return arrays


def _bind(case: Case) -> tuple[dict[str, Any], dict[str, Domain]]:
    """Bind the call to the mapped Paddle signature when there is one, for per-parameter domains.

    Tensors are visited in :meth:`Case.tensors` order either way (args then kwargs).
    """
    from opbench.mapping import MappingMissing, lookup

    positional = {f"#{i}": v for i, v in enumerate(case.args)}
    positional.update(case.kwargs)
    try:
        mapping = lookup(case.api)
    except MappingMissing:
        return positional, {}
    names = [p.name for p in mapping.params]
    bound: dict[str, Any] = {}
    for i, v in enumerate(case.args):
        bound[names[i] if i < len(names) else f"#{i}"] = v
    bound.update(case.kwargs)
    return bound, dict(mapping.domains)


def _specs(value: Any) -> list[TensorSpec]:
    if isinstance(value, TensorSpec):
        return [value]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _specs(v)]
    return []


def _index_size(domain: Domain, bound: dict[str, Any]) -> int:
    target = bound.get(domain.index_of)
    if not isinstance(target, TensorSpec):
        raise ValueError(f"index domain refers to '{domain.index_of}', which is not a tensor argument")
    axis = bound.get(domain.axis_param, domain.axis) if domain.axis_param else domain.axis
    if not isinstance(axis, int) or not target.shape:
        return target.numel if not target.shape else target.shape[0]
    return target.shape[axis % len(target.shape)]
