"""Converters: the PyTorch side of Paddle APIs whose semantics differ beyond names.

A converter takes the bound, Paddle-named arguments (tensors already torch tensors, see
:func:`opbench.mapping.bind`) and returns the torch result with Paddle's shape and dtype.
One module per API family, like :mod:`opbench.mapping.tables`; the helpers every family
uses live here. torch is imported inside the functions so the table imports without it.
"""

from __future__ import annotations

from typing import Any

from opbench.mapping.dtypes import to_torch_dtype


def torch_module() -> Any:
    import torch

    return torch


def _tolist(v: Any) -> Any:
    return v.tolist() if hasattr(v, "tolist") else v


def axes(axis: Any, ndim: int | None = None) -> tuple[int, ...] | None:
    """Paddle's ``axis`` (int, list, tuple, tensor, None) as a tuple of dims; None or [] = all dims."""
    axis = _tolist(axis)
    if axis is None:
        return None
    if isinstance(axis, (int, float)):
        return (int(axis),)
    dims = tuple(int(_tolist(a)) for a in axis)
    return dims or None  # Paddle reduces over everything for an empty list


def to_int(value: Any) -> int | None:
    """An int from a Python number or a one-element tensor (Paddle accepts both for axes)."""
    value = _tolist(value)
    if isinstance(value, list):  # a one-element tensor
        (value,) = value
    return None if value is None else int(value)


def to_ints(values: Any) -> list[int] | None:
    """A list of ints from a list/tuple of numbers or tensors, or from a 1-D tensor."""
    values = _tolist(values)
    if values is None:
        return None
    if isinstance(values, (int, float)):
        return [int(values)]
    return [to_int(v) for v in values]


def scalar(value: Any) -> Any:
    """A Python number from a number or a one-element tensor."""
    return value.item() if hasattr(value, "item") else value


def dtype_or_none(value: Any) -> Any:
    """A ``torch.dtype`` for any dtype spelling; None stays None."""
    return None if value is None else to_torch_dtype(value)
