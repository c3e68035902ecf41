"""Dtype names: one function that turns any dtype spelling into a ``torch.dtype``.

Config lines and callers spell dtypes many ways (``"float32"``, ``"fp16"``,
``Dtype(float32)``, ``paddle.float32`` whose str is ``"paddle.float32"``,
``numpy.float32``, ``torch.bfloat16``); everything funnels through here.
"""

from __future__ import annotations

from typing import Any

# Canonical names are torch attribute names; aliases cover Paddle's VarType
# spellings (FP32, BF16, ...), numpy names and Paddle's uint16-as-bfloat16.
_ALIASES: dict[str, str] = {
    "fp16": "float16",
    "half": "float16",
    "fp32": "float32",
    "float": "float64",  # Paddle reads "float" and Python's float as float64
    "fp64": "float64",
    "double": "float64",
    "bf16": "bfloat16",
    "uint16": "bfloat16",  # Paddle's historical storage name for bfloat16
    "int": "int64",  # Paddle reads "int" and Python's int as int64
    "long": "int64",
    "bool_": "bool",
    "complex": "complex64",
    "float8_e4m3fn": "float8_e4m3fn",
    "float8_e5m2": "float8_e5m2",
}

_CANONICAL = frozenset(
    {
        "float16", "bfloat16", "float32", "float64",
        "int8", "int16", "int32", "int64", "uint8", "bool",
        "complex64", "complex128", "float8_e4m3fn", "float8_e5m2",
    }
)


def dtype_name(value: Any) -> str:
    """The canonical name (``"float32"``, ...) of any dtype spelling; ValueError if unknown."""
    if isinstance(value, str):
        text = value
    else:
        text = getattr(value, "name", None)
        if not isinstance(text, str):  # str(): "paddle.float32", "torch.float32"
            text = str(getattr(value, "__name__", value))
    key = text.strip().strip("'\"")
    if key.startswith("Dtype(") and key.endswith(")"):
        key = key[len("Dtype(") : -1]
    key = key.rsplit(".", 1)[-1].lower()  # torch.float32, paddle.float32, VarType.FP32, np.float32
    key = _ALIASES.get(key, key)
    if key not in _CANONICAL:
        raise ValueError(f"unknown dtype {value!r}")
    return key


def to_torch_dtype(value: Any) -> Any:
    """The ``torch.dtype`` for any dtype spelling (string, Paddle/numpy/torch dtype); imports torch."""
    import torch

    if isinstance(value, torch.dtype):
        return value
    return getattr(torch, dtype_name(value))
