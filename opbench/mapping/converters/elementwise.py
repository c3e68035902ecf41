"""Converters for Element-wise APIs."""

from __future__ import annotations

from typing import Any

from opbench.mapping.converters import torch_module
from opbench.mapping.dtypes import to_torch_dtype


def where(a: dict[str, Any]) -> Any:
    """``x``/``y`` may be Python scalars; both None means ``nonzero(as_tuple=True)`` like Paddle."""
    torch = torch_module()
    cond, x, y = a["condition"], a["x"], a["y"]
    if x is None and y is None:
        return torch.nonzero(cond, as_tuple=True)
    return torch.where(cond, x, y)


def clip(a: dict[str, Any]) -> Any:
    """Paddle allows both bounds None (a copy); torch.clamp needs one. Tensor bounds become scalars."""
    x, lo, hi = a["x"], a["min"], a["max"]
    lo = lo.item() if hasattr(lo, "item") else lo
    hi = hi.item() if hasattr(hi, "item") else hi
    if lo is None and hi is None:
        return x.clone()
    return torch_module().clamp(x, min=lo, max=hi)


def scale(a: dict[str, Any]) -> Any:
    """``scale*x + bias`` (or ``scale*(x + bias)``), then optional activation ``act`` by torch name.

    Paddle computes in x's dtype: for integer x the scale and bias are cast to int first.
    """
    torch = torch_module()
    x, s, b = a["x"], a["scale"], float(a["bias"])
    s = s.item() if hasattr(s, "item") else float(s)
    if not (x.is_floating_point() or x.is_complex()):
        s, b = int(s), int(b)
    out = x * s + b if a["bias_after_scale"] else (x + b) * s
    out = out.to(x.dtype)
    act = a["act"]
    return out if act is None else getattr(torch, act)(out)


def cast(a: dict[str, Any]) -> Any:
    """``dtype`` may be a string, a Paddle dtype or a torch dtype."""
    return a["x"].to(to_torch_dtype(a["dtype"]))
