"""Converters for Reductions, scans, sorting and search."""

from __future__ import annotations

from typing import Any

from opbench.mapping.converters import axes, dtype_or_none, to_int, torch_module
from opbench.mapping.dtypes import to_torch_dtype


def _sum_like(fn_name: str, a: dict[str, Any], dtype: Any) -> Any:
    torch = torch_module()
    x = a["x"]
    dims = axes(a["axis"], x.dim())
    kw = {} if dtype is None else {"dtype": dtype}
    if dims is None:
        return _keepdim_all(getattr(torch, fn_name)(x, **kw), x.dim(), a["keepdim"])
    return getattr(torch, fn_name)(x, dim=dims, keepdim=a["keepdim"], **kw)


def reduce_sum(a: dict[str, Any]) -> Any:
    """``axis`` int/list/None; bool and int32 inputs sum to int64 (as in torch); ``dtype`` casts first."""
    return _sum_like("sum", a, dtype_or_none(a["dtype"]))


def mean(a: dict[str, Any]) -> Any:
    """``axis`` int/list/None (None or [] = all), ``keepdim`` kept for a full reduction too."""
    return _sum_like("mean", a, dtype_or_none(a["dtype"]))


def _amax_amin(fn_name: str, a: dict[str, Any]) -> Any:
    torch = torch_module()
    x = a["x"]
    dims = axes(a["axis"], x.dim())
    if dims is None:
        return _keepdim_all(getattr(torch, fn_name)(x), x.dim(), a["keepdim"])
    return getattr(torch, fn_name)(x, dim=dims, keepdim=a["keepdim"])


def reduce_max(a: dict[str, Any]) -> Any:
    """Values only (torch.max with a dim also returns indices): torch.amax over int/list/None axes."""
    return _amax_amin("amax", a)


def reduce_min(a: dict[str, Any]) -> Any:
    """Values only (torch.min with a dim also returns indices): torch.amin over int/list/None axes."""
    return _amax_amin("amin", a)


def prod(a: dict[str, Any]) -> Any:
    """torch.prod takes one dim: reduce list axes one at a time; result keeps x's dtype unless ``dtype``."""
    torch = torch_module()
    x = a["x"]
    dtype = dtype_or_none(a["dtype"])
    if dtype is not None:
        x = x.to(dtype)
    dims = axes(a["axis"], x.dim())
    if dims is None or x.dim() == 0:
        out = _keepdim_all(torch.prod(x), x.dim(), a["keepdim"])
    else:
        norm = sorted({d % x.dim() for d in dims}, reverse=True)
        out = x
        for d in norm:
            out = torch.prod(out, dim=d, keepdim=True)
        if not a["keepdim"]:
            out = out.squeeze(tuple(norm))
    return out.to(x.dtype)  # torch.prod widens int32 to int64, Paddle keeps int32


def logsumexp(a: dict[str, Any]) -> Any:
    """``axis`` None (or []) reduces every dim, with ``keepdim`` giving ``[1] * ndim``."""
    torch = torch_module()
    x = a["x"]
    dims = axes(a["axis"], x.dim())
    if dims is None:
        dims = tuple(range(x.dim())) if x.dim() else (0,)
    elif x.dim() == 0:
        dims = (0,)
    return torch.logsumexp(x, dim=dims, keepdim=a["keepdim"])


def cumsum(a: dict[str, Any]) -> Any:
    """``axis=None`` sums over the flattened tensor; ``dtype`` casts the input first."""
    torch = torch_module()
    x = a["x"]
    dtype = dtype_or_none(a["dtype"])
    if a["axis"] is None:
        return torch.cumsum(x.flatten(), dim=0, dtype=dtype)
    return torch.cumsum(x, dim=to_int(a["axis"]), dtype=dtype)


def argmax(a: dict[str, Any]) -> Any:
    """``axis=None`` flattens (``keepdim`` then gives ``[1] * ndim``); ``dtype`` is the index dtype."""
    torch = torch_module()
    x = a["x"]
    if a["axis"] is None:
        out = _keepdim_all(torch.argmax(x), x.dim(), a["keepdim"])
    else:
        out = torch.argmax(x, dim=to_int(a["axis"]), keepdim=a["keepdim"])
    return out.to(to_torch_dtype(a["dtype"]))


def _keepdim_all(out: Any, ndim: int, keepdim: bool) -> Any:
    """Reshape a full reduction to Paddle's ``keepdim=True`` shape ``[1] * ndim``."""
    return out.reshape([1] * ndim) if keepdim else out
