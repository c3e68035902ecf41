"""Bytes moved and FLOPs per case and direction: a default model, overridable per API.

Default bytes: ``fwd`` reads every input and writes every output; ``bwd`` reads the output
grads and every input (saved for backward) and writes each input grad; ``fwd+bwd`` is
their sum. It is the traffic of an ideal fused kernel, so GB/s against the device's copy
bandwidth says how far from the memory limit an implementation is. FLOPs come from the
mapping entry's ``flops`` (forward); backward counts twice the forward, as for matmul.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from opbench.cases import DTYPE_SIZES, Case
from opbench.inputs import tensor_inputs


@dataclass(frozen=True)
class TensorIO:
    """One tensor the op touches: its parameter name (inputs), shape, dtype, and whether it takes a grad."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    needs_grad: bool = False

    @property
    def nbytes(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n * DTYPE_SIZES.get(self.dtype, 0)


@dataclass(frozen=True)
class CaseIO:
    inputs: tuple[TensorIO, ...]
    outputs: tuple[TensorIO, ...]
    grad_outputs: tuple[TensorIO, ...]


def default_traffic(direction: str, io: CaseIO) -> tuple[int, int]:
    """(bytes read, bytes written) by the default model: ``fwd`` reads the inputs and writes the outputs,
    ``bwd`` reads the output grads and the inputs and writes the input grads."""
    fwd = (sum(t.nbytes for t in io.inputs), sum(t.nbytes for t in io.outputs))
    bwd = (sum(t.nbytes for t in io.grad_outputs) + sum(t.nbytes for t in io.inputs),
           sum(t.nbytes for t in io.inputs if t.needs_grad))
    return {"fwd": fwd, "bwd": bwd, "fwd+bwd": (fwd[0] + bwd[0], fwd[1] + bwd[1])}[direction]


def default_bytes(direction: str, io: CaseIO) -> int:
    return sum(default_traffic(direction, io))


def lerp_bytes(direction: str, io: CaseIO) -> int:
    """``lerp`` backward needs x and y only for the weight's grad: dx = (1-w) g, dy = w g, dw = (y-x) g.
    Where x and y both have the output's size in a 4- or 8-byte type, the training forward can save
    ``y - x`` exactly (torch.compile's does, and ours on the GPU), so the backward reads that one tensor
    instead of both; a 2-byte ``y - x`` would add a rounding to dw, so there both are counted."""
    if direction == "fwd":
        return default_bytes(direction, io)
    by_name = {t.name: t for t in io.inputs}
    w = by_name.get("weight")
    bwd = sum(t.nbytes for t in io.grad_outputs) + sum(t.nbytes for t in io.inputs if t.needs_grad)
    if w is not None:
        bwd += w.nbytes
        if w.needs_grad:
            xy = [t for n, t in by_name.items() if n in ("x", "y")]
            out = io.outputs[0].nbytes if io.outputs else 0
            exact_diff = DTYPE_SIZES.get(w.dtype, 0) >= 4 and len(xy) == 2 and all(t.nbytes == out for t in xy)
            bwd += out if exact_diff else sum(t.nbytes for t in xy)
    return bwd + (default_bytes("fwd", io) if direction == "fwd+bwd" else 0)


def read_share(direction: str, io: CaseIO) -> float:
    """The share of the default model's bytes that are read (the rest are written): the mix the copy floor
    (floor.py) moves."""
    reads, writes = default_traffic(direction, io)
    return reads / (reads + writes) if reads + writes else 0.5


#: Per-API byte models; add an entry where the default misjudges what an op must move.
BYTES_OVERRIDES: dict[str, Callable[[str, CaseIO], int]] = {"paddle.lerp": lerp_bytes}


def bytes_moved(case: Case, direction: str, io: CaseIO) -> int:
    return BYTES_OVERRIDES.get(case.api, default_bytes)(direction, io)


def flops(case: Case, direction: str) -> float | None:
    """FLOPs of the case in ``direction`` from the mapping's ``flops`` (None: memory-bound op)."""
    from opbench.mapping import MappingMissing, lookup

    try:
        fn = lookup(case.api).flops
    except MappingMissing:
        return None
    if fn is None:
        return None
    shapes: dict[str, tuple[int, ...]] = {}
    for t in tensor_inputs(case):
        shapes.setdefault(t.param, t.spec.shape)
    try:
        f = float(fn(shapes))
    except (KeyError, ValueError, TypeError):
        return None
    return {"fwd": f, "bwd": 2 * f, "fwd+bwd": 3 * f}[direction]


def case_io(case: Case, grad_flags: list[bool], outputs: list[tuple[tuple[int, ...], str]],
            grad_outputs: list[tuple[tuple[int, ...], str]]) -> CaseIO:
    """The case's tensors as :class:`TensorIO` (``grad_flags``: per input, in case order)."""
    ins = tuple(TensorIO(t.param, t.spec.shape, t.spec.dtype, bool(g))
                for t, g in zip(tensor_inputs(case), grad_flags, strict=False))
    return CaseIO(ins, tuple(TensorIO("out", s, d) for s, d in outputs),
                  tuple(TensorIO("grad_out", s, d) for s, d in grad_outputs))
