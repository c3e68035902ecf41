"""GPU cache mode: inputs and output grads made on the device once, reused by later cases.

A tensor is keyed by what its values depend on (shape, dtype, value domain, index bound,
seed), so equal tensors of different cases are made once. Floating tensors with a plain
``[low, high)`` domain are drawn on the device; the other domains (indices, non-zero
divisors, integers, complex) are drawn by :mod:`opbench.inputs` and copied up once. The
cache holds at most ``max_bytes``, evicting the least recently used tensor first.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from opbench import inputs as inputs_mod
from opbench.backends import Backend
from opbench.cases import DTYPE_SIZES, FLOAT_DTYPES, Case, TensorSpec
from opbench.domains import Domain

DEFAULT_MAX_BYTES = 8 * 2**30


class DeviceCache:
    """An LRU of device tensors bounded by bytes, on one backend (the reference's)."""

    def __init__(self, backend: Backend, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.backend = backend
        self.max_bytes = max_bytes
        self.bytes = 0
        self.hits = 0
        self.misses = 0
        self._items: OrderedDict[tuple, tuple[Any, int]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: tuple, nbytes: int, make: Any) -> Any:
        """The tensor under ``key``, made by ``make()`` on a miss and kept while it fits."""
        if key in self._items:
            self._items.move_to_end(key)
            self.hits += 1
            return self._items[key][0]
        self.misses += 1
        value = make()
        if nbytes <= self.max_bytes:
            self._items[key] = (value, nbytes)
            self.bytes += nbytes
            while self.bytes > self.max_bytes:
                _, (_, n) = self._items.popitem(last=False)
                self.bytes -= n
        return value

    def inputs(self, case: Case, seed: int, tensors: list[inputs_mod.TensorInput] | None = None) -> list[Any]:
        """One device tensor per tensor of the case, in :meth:`Case.tensors` order (``tensors``: the
        case's :func:`opbench.inputs.tensor_inputs`, when the caller has them already)."""
        out = []
        for ordinal, t in enumerate(inputs_mod.tensor_inputs(case) if tensors is None else tensors):
            tseed = inputs_mod.tensor_seed(seed, ordinal, t.spec, t.domain)
            key = ("input", t.spec.shape, t.spec.dtype, t.domain, t.context, tseed)
            out.append(self.get(key, t.spec.nbytes,
                                lambda t=t, tseed=tseed: self._make(t.spec, t.domain, t.context, tseed)))
        return out

    def output_grad(self, shape: tuple[int, ...], dtype: str, seed: int) -> Any:
        """Uniform [-1, 1) output grad values, drawn on the device."""
        key = ("grad", tuple(shape), dtype, seed)
        nbytes = int(np.prod(shape, dtype=np.int64)) * DTYPE_SIZES.get(dtype, 8)
        return self.get(key, nbytes, lambda: self.backend.random(tuple(shape), dtype, seed))

    def _make(self, spec: TensorSpec, domain: Domain, context: Any, tseed: int) -> Any:
        b = self.backend
        if spec.dtype in FLOAT_DTYPES and domain.kind == "uniform" and domain.min_abs == 0:
            unit = b.random(spec.shape, "float32", tseed)  # [-1, 1)
            half = (domain.high - domain.low) / 2
            values = unit * half + (domain.low + half)
            return b.cast(values, spec.dtype) if spec.dtype != "float32" else values
        rng = np.random.default_rng(tseed)
        return b.from_numpy(inputs_mod.draw(spec, domain, rng, context), spec.dtype)
