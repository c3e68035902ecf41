"""Converters: the PyTorch side of Paddle APIs whose names alone do not map.

Each converter takes the bound, Paddle-named arguments (tensors already torch
tensors, see :func:`opbench.mapping.bind`) and returns the torch result with
Paddle's shape and dtype. torch is imported inside the functions so that
importing the mapping table stays free of torch.
"""

from __future__ import annotations

from typing import Any

from opbench.mapping.dtypes import to_torch_dtype


def _torch() -> Any:
    import torch

    return torch


def _axes(axis: Any, ndim: int) -> tuple[int, ...] | None:
    """Paddle's ``axis`` (int, list, tuple, 0-D tensor, None) as a tuple of dims; None = all dims."""
    if axis is None:
        return None
    if hasattr(axis, "tolist"):
        axis = axis.tolist()
    if isinstance(axis, int):
        return (axis,)
    axes = tuple(int(a) for a in axis)
    return axes if axes else None  # Paddle reduces over everything for an empty list


def _int(value: Any) -> int:
    """An int from a Python number or a one-element tensor (Paddle accepts both for axes)."""
    return int(value.item()) if hasattr(value, "item") else int(value)


def _ints(values: Any) -> list[int]:
    """A list of ints from a list/tuple of numbers or tensors, or from a 1-D tensor."""
    if hasattr(values, "tolist"):
        values = values.tolist()
    if isinstance(values, int):
        return [values]
    return [_int(v) for v in values]


def _keepdim_all(out: Any, ndim: int, keepdim: bool) -> Any:
    """Reshape a full reduction to Paddle's ``keepdim=True`` shape ``[1] * ndim``."""
    return out.reshape([1] * ndim) if keepdim else out


def _dtype(value: Any) -> Any:
    return None if value is None else to_torch_dtype(value)


def where(a: dict[str, Any]) -> Any:
    """``x``/``y`` may be Python scalars; both None means ``nonzero(as_tuple=True)`` like Paddle."""
    torch = _torch()
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
    return _torch().clamp(x, min=lo, max=hi)


def scale(a: dict[str, Any]) -> Any:
    """``scale*x + bias`` (or ``scale*(x + bias)``), then optional activation ``act`` by torch name.

    Paddle computes in x's dtype: for integer x the scale and bias are cast to int first.
    """
    torch = _torch()
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


def _sum_like(fn_name: str, a: dict[str, Any], dtype: Any) -> Any:
    torch = _torch()
    x = a["x"]
    dims = _axes(a["axis"], x.dim())
    kw = {} if dtype is None else {"dtype": dtype}
    if dims is None:
        return _keepdim_all(getattr(torch, fn_name)(x, **kw), x.dim(), a["keepdim"])
    return getattr(torch, fn_name)(x, dim=dims, keepdim=a["keepdim"], **kw)


def reduce_sum(a: dict[str, Any]) -> Any:
    """``axis`` int/list/None; bool and int32 inputs sum to int64 (as in torch); ``dtype`` casts first."""
    return _sum_like("sum", a, _dtype(a["dtype"]))


def mean(a: dict[str, Any]) -> Any:
    """``axis`` int/list/None (None or [] = all), ``keepdim`` kept for a full reduction too."""
    return _sum_like("mean", a, _dtype(a["dtype"]))


def _amax_amin(fn_name: str, a: dict[str, Any]) -> Any:
    torch = _torch()
    x = a["x"]
    dims = _axes(a["axis"], x.dim())
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
    torch = _torch()
    x = a["x"]
    dtype = _dtype(a["dtype"])
    if dtype is not None:
        x = x.to(dtype)
    dims = _axes(a["axis"], x.dim())
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
    torch = _torch()
    x = a["x"]
    dims = _axes(a["axis"], x.dim())
    if dims is None:
        dims = tuple(range(x.dim())) if x.dim() else (0,)
    elif x.dim() == 0:
        dims = (0,)
    return torch.logsumexp(x, dim=dims, keepdim=a["keepdim"])


def cumsum(a: dict[str, Any]) -> Any:
    """``axis=None`` sums over the flattened tensor; ``dtype`` casts the input first."""
    torch = _torch()
    x = a["x"]
    dtype = _dtype(a["dtype"])
    if a["axis"] is None:
        return torch.cumsum(x.flatten(), dim=0, dtype=dtype)
    return torch.cumsum(x, dim=_int(a["axis"]), dtype=dtype)


def argmax(a: dict[str, Any]) -> Any:
    """``axis=None`` flattens (``keepdim`` then gives ``[1] * ndim``); ``dtype`` is the index dtype."""
    torch = _torch()
    x = a["x"]
    if a["axis"] is None:
        out = _keepdim_all(torch.argmax(x), x.dim(), a["keepdim"])
    else:
        out = torch.argmax(x, dim=_int(a["axis"]), keepdim=a["keepdim"])
    return out.to(to_torch_dtype(a["dtype"]))


def _t(t: Any, flag: bool) -> Any:
    return t.transpose(-1, -2) if flag and t.dim() >= 2 else t


def matmul(a: dict[str, Any]) -> Any:
    """``transpose_x``/``transpose_y`` swap the last two dims first (no-op on 1-D)."""
    return _torch().matmul(_t(a["x"], a["transpose_x"]), _t(a["y"], a["transpose_y"]))


def reshape(a: dict[str, Any]) -> Any:
    """A 0 in ``shape`` copies that dim of x (literal 0 when x is empty, as Paddle does); -1 is inferred."""
    x = a["x"]
    shape = _ints(a["shape"])
    if x.numel() > 0:
        shape = [x.shape[i] if s == 0 and i < x.dim() else s for i, s in enumerate(shape)]
    return x.reshape(shape)


def transpose(a: dict[str, Any]) -> Any:
    """Paddle's transpose is a full permutation: torch.permute."""
    return a["x"].permute(_ints(a["perm"]))


def concat(a: dict[str, Any]) -> Any:
    """A list/tuple of tensors; ``axis`` may be a 0-D tensor."""
    return _torch().cat(list(a["x"]), dim=_int(a["axis"]))


def stack(a: dict[str, Any]) -> Any:
    """A list/tuple of tensors stacked along a new ``axis``."""
    return _torch().stack(list(a["x"]), dim=_int(a["axis"]))


def squeeze(a: dict[str, Any]) -> Any:
    """``axis`` int/list/None; dims in ``axis`` whose size is not 1 are left alone (as torch>=2.0 does)."""
    x = a["x"]
    dims = _axes(a["axis"], x.dim())
    if dims is None:
        return x.squeeze()
    if x.dim() == 0:
        return x.clone()
    return x.squeeze(dims)


def unsqueeze(a: dict[str, Any]) -> Any:
    """List axes are inserted one after another, each against the rank reached so far."""
    out = a["x"]
    for ax in _ints(a["axis"]):
        out = out.unsqueeze(ax if ax >= 0 else ax + out.dim() + 1)
    return out


def expand(a: dict[str, Any]) -> Any:
    """``shape`` may hold -1 (keep the dim) and tensors; extra leading dims broadcast."""
    return a["x"].expand(_ints(a["shape"]))


def gather(a: dict[str, Any]) -> Any:
    """index_select along ``axis`` (None = 0); a 0-D index drops that axis, a [N, 1] index is flattened."""
    torch = _torch()
    x, index = a["x"], a["index"]
    axis = 0 if a["axis"] is None else _int(a["axis"])
    if index.dim() == 0:
        return torch.index_select(x, axis, index.reshape(1)).squeeze(axis)
    return torch.index_select(x, axis, index.reshape(-1))


def index_select(a: dict[str, Any]) -> Any:
    """torch.index_select with ``dim``; Paddle also takes a [N, 1] index, flattened here."""
    return _torch().index_select(a["x"], _int(a["axis"]), a["index"].reshape(-1))


def gelu(a: dict[str, Any]) -> Any:
    """Paddle's ``approximate`` is a bool (or 'tanh'/'none'); torch wants the string."""
    approx = a["approximate"]
    mode = approx if isinstance(approx, str) else ("tanh" if approx else "none")
    return _torch().nn.functional.gelu(a["x"], approximate=mode)


def layer_norm(a: dict[str, Any]) -> Any:
    """``normalized_shape`` may be an int; Paddle's weight/bias may be flat, torch wants that shape."""
    torch = _torch()
    shape = _ints(a["normalized_shape"])
    w, b = a["weight"], a["bias"]
    w = None if w is None else w.reshape(shape)
    b = None if b is None else b.reshape(shape)
    return torch.nn.functional.layer_norm(a["x"], shape, w, b, eps=float(a["epsilon"]))


def linear(a: dict[str, Any]) -> Any:
    """Paddle's weight is [in, out], torch.nn.functional.linear wants [out, in]: pass its transpose."""
    return _torch().nn.functional.linear(a["x"], a["weight"].t(), a["bias"])


def embedding(a: dict[str, Any]) -> Any:
    """Paddle zeroes the output rows of ``padding_idx`` in the forward; torch only skips their gradient."""
    torch = _torch()
    x, w, pad = a["x"], a["weight"], a["padding_idx"]
    out = torch.nn.functional.embedding(
        x, w, padding_idx=pad, max_norm=a["max_norm"], norm_type=float(a["norm_type"]),
        scale_grad_by_freq=a["scale_grad_by_freq"], sparse=a["sparse"],
    )
    if pad is None:
        return out
    pad = pad if pad >= 0 else pad + w.shape[0]
    return out * (x != pad).unsqueeze(-1).to(out.dtype)
