"""Converters for Shape, layout and indexing."""

from __future__ import annotations

from typing import Any

from opbench.mapping.converters import axes, to_int, to_ints, torch_module


def reshape(a: dict[str, Any]) -> Any:
    """A 0 in ``shape`` copies that dim of x (literal 0 when x is empty, as Paddle does); -1 is inferred."""
    x = a["x"]
    shape = to_ints(a["shape"])
    if x.numel() > 0:
        shape = [x.shape[i] if s == 0 and i < x.dim() else s for i, s in enumerate(shape)]
    return x.reshape(shape)


def transpose(a: dict[str, Any]) -> Any:
    """Paddle's transpose is a full permutation: torch.permute."""
    return a["x"].permute(to_ints(a["perm"]))


def concat(a: dict[str, Any]) -> Any:
    """A list/tuple of tensors; ``axis`` may be a 0-D tensor."""
    return torch_module().cat(list(a["x"]), dim=to_int(a["axis"]))


def stack(a: dict[str, Any]) -> Any:
    """A list/tuple of tensors stacked along a new ``axis``."""
    return torch_module().stack(list(a["x"]), dim=to_int(a["axis"]))


def squeeze(a: dict[str, Any]) -> Any:
    """``axis`` int/list/None; dims in ``axis`` whose size is not 1 are left alone (as torch>=2.0 does)."""
    x = a["x"]
    dims = axes(a["axis"], x.dim())
    if dims is None:
        return x.squeeze()
    if x.dim() == 0:
        return x.clone()
    return x.squeeze(dims)


def unsqueeze(a: dict[str, Any]) -> Any:
    """List axes are inserted one after another, each against the rank reached so far."""
    out = a["x"]
    for ax in to_ints(a["axis"]):
        out = out.unsqueeze(ax if ax >= 0 else ax + out.dim() + 1)
    return out


def expand(a: dict[str, Any]) -> Any:
    """``shape`` may hold -1 (keep the dim) and tensors; extra leading dims broadcast."""
    return a["x"].expand(to_ints(a["shape"]))


def gather(a: dict[str, Any]) -> Any:
    """index_select along ``axis`` (None = 0); a 0-D index drops that axis, a [N, 1] index is flattened."""
    torch = torch_module()
    x, index = a["x"], a["index"]
    axis = 0 if a["axis"] is None else to_int(a["axis"])
    if index.dim() == 0:
        return torch.index_select(x, axis, index.reshape(1)).squeeze(axis)
    return torch.index_select(x, axis, index.reshape(-1))


def index_select(a: dict[str, Any]) -> Any:
    """torch.index_select with ``dim``; Paddle also takes a [N, 1] index, flattened here."""
    return torch_module().index_select(a["x"], to_int(a["axis"]), a["index"].reshape(-1))
