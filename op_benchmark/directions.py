"""The timed callables for ``fwd``, ``bwd`` and ``fwd+bwd`` built from a :class:`PreparedCall`.

``bwd`` times backward alone: the forward runs once here, outside the timed region, with
the graph retained; output grads are drawn here; :meth:`Backend.grad` returns input grads
instead of accumulating into ``.grad``, so nothing needs resetting between samples and
nothing is allocated from the RNG inside the timed call.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from opbench.cases import DTYPE_SIZES
from opbench.providers import PreparedCall, flatten

DIRECTIONS = ("fwd", "bwd", "fwd+bwd")


class NoBackward(LookupError):
    """The case has nothing to differentiate (no floating input or output takes a gradient)."""


@dataclass
class TimedCall:
    """What a timer runs, plus the shapes the traffic model needs."""

    direction: str
    fn: Callable[[], Any]
    outputs: list[tuple[tuple[int, ...], str]]  # every tensor output: (shape, dtype)
    grad_outputs: list[tuple[tuple[int, ...], str]]  # the outputs backward starts from


def tensor_meta(call: PreparedCall, tensors: list[Any]) -> list[tuple[tuple[int, ...], str]]:
    b = call.backend
    return [(tuple(int(d) for d in t.shape), b.dtype_name(t)) for t in tensors if b.is_tensor(t)]


def meta_bytes(meta: list[tuple[tuple[int, ...], str]]) -> int:
    return sum(math.prod(shape) * DTYPE_SIZES.get(dtype, 0) for shape, dtype in meta)


def build(call: PreparedCall, direction: str, seed: int = 0) -> TimedCall:
    """The timed callable for ``direction``; runs one forward now to learn the outputs."""
    if direction not in DIRECTIONS:
        raise ValueError(f"unknown direction {direction!r} (known: {', '.join(DIRECTIONS)})")
    b = call.backend
    if direction == "fwd":
        with b.no_grad():
            out = call.forward()
        outputs = tensor_meta(call, flatten(out))
        del out

        def fwd() -> Any:
            with b.no_grad():
                return call.forward()

        return TimedCall(direction, fwd, outputs, [])

    out = call.forward()
    diff = call.differentiable_outputs(out)
    outputs = tensor_meta(call, flatten(out))
    if not diff or not call.grad_inputs:
        raise NoBackward(f"{call.case.api}: no floating input or output takes a gradient")
    grad_meta = tensor_meta(call, diff)
    grads = [b.random(shape, dtype, seed + 7919 * (i + 1)) for i, (shape, dtype) in enumerate(grad_meta)]

    if direction == "bwd":
        def bwd() -> Any:
            return call.backward(diff, grads, retain_graph=True)

        return TimedCall(direction, bwd, outputs, grad_meta)

    def fwd_bwd() -> Any:
        o = call.forward()
        return call.backward(call.differentiable_outputs(o), grads, retain_graph=False)

    return TimedCall(direction, fwd_bwd, outputs, grad_meta)
