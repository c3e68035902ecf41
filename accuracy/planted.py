"""Planted defects: the PyTorch side broken on purpose, to prove the verdicts catch real bugs.

Load with ``OPBENCH_ACCURACY_PLUGINS=accuracy.planted`` and use one as ``--subject`` against
``--reference torch``. Each is the ``torch`` provider with one defect a kernel author could
make, small enough to hide under a loose tolerance:

- ``planted-bias``: every floating output off by a relative 4 units of its dtype (4 epsilon).
- ``planted-drop``: one term left out of a reduction (the first element of the first floating
  input counts as zero).
- ``planted-axis``: the gradient of a broadcast second input summed over the wrong axis (for
  ``x [n, n]`` with ``y [n]``: over each row instead of each column).
- ``planted-bf16``: every float32 output rounded through bfloat16.

``docs/accuracy/verdicts.py`` runs them over generated cases and counts how many are caught;
``tests/accuracy/test_verdicts.py`` checks each on a few.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from accuracy.bound import UNIT
from accuracy.plugins import register
from opbench.cases import Case
from opbench.providers import TorchProvider, flatten


def _map_outputs(out: Any, fn: Callable[[Any], Any]) -> Any:
    if isinstance(out, (list, tuple)):
        return type(out)(_map_outputs(o, fn) for o in out)
    return fn(out)


class _Planted(TorchProvider):
    """The torch provider with :meth:`plant` applied to each call."""

    def bind_call(self, case: Case, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Callable[[], Any]:
        return self.plant(case, args, kwargs)

    def plant(self, case: Case, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Callable[[], Any]:
        raise NotImplementedError

    def _good(self, case: Case, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Callable[[], Any]:
        from opbench.mapping import prepare_torch_call

        return lambda: prepare_torch_call(case.api, args, kwargs)()


class Bias(_Planted):
    name = "planted-bias"

    def plant(self, case, args, kwargs):
        good = self._good(case, args, kwargs)

        def biased(t: Any) -> Any:
            name = str(t.dtype).removeprefix("torch.") if hasattr(t, "dtype") else ""
            return t * (1 + 4 * UNIT[name]) if name in UNIT and not t.is_complex() else t

        return lambda: _map_outputs(good(), biased)


class Drop(_Planted):
    name = "planted-drop"

    def plant(self, case, args, kwargs):
        import torch

        floats = [t for t in flatten(list(args) + list(kwargs.values()))
                  if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel() > 1]
        if not floats:
            return self._good(case, args, kwargs)
        target = floats[0]
        mask = torch.ones_like(target)
        mask.view(-1)[0] = 0

        def swap(v: Any) -> Any:
            if v is target:
                return target * mask
            if isinstance(v, (list, tuple)):
                return type(v)(swap(e) for e in v)
            return v

        def call() -> Any:
            from opbench.mapping import prepare_torch_call

            return prepare_torch_call(case.api, swap(args), {k: swap(v) for k, v in kwargs.items()})()

        return call


class Axis(_Planted):
    name = "planted-axis"

    def plant(self, case, args, kwargs):
        import torch

        x, y = (args + (None, None))[:2]
        square = isinstance(x, torch.Tensor) and x.dim() == 2 and x.shape[0] == x.shape[1]
        if not (square and isinstance(y, torch.Tensor) and y.dim() == 1 and y.shape[0] == x.shape[1]):
            return self._good(case, args, kwargs)
        n = x.shape[0]

        class WrongAxis(torch.autograd.Function):
            @staticmethod
            def forward(ctx: Any, v: Any) -> Any:
                return v.expand(n, n).clone()

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return g.sum(dim=1)  # the broadcast was along dim 0: the right sum is over dim 0

        def call() -> Any:
            from opbench.mapping import prepare_torch_call

            return prepare_torch_call(case.api, (x, WrongAxis.apply(y), *args[2:]), kwargs)()

        return call


class Bf16(_Planted):
    name = "planted-bf16"

    def plant(self, case, args, kwargs):
        import torch

        good = self._good(case, args, kwargs)

        def rounded(t: Any) -> Any:
            if isinstance(t, torch.Tensor) and t.dtype == torch.float32:
                return t.to(torch.bfloat16).to(torch.float32)
            return t

        return lambda: _map_outputs(good(), rounded)


PLANTED = {cls.name: cls for cls in (Bias, Drop, Axis, Bf16)}
for _name, _cls in PLANTED.items():
    register(_name, _cls)
