"""Converters for Matrix products and linear algebra."""

from __future__ import annotations

from typing import Any

from opbench.mapping.converters import torch_module


def _t(t: Any, flag: bool) -> Any:
    return t.transpose(-1, -2) if flag and t.dim() >= 2 else t


def matmul(a: dict[str, Any]) -> Any:
    """``transpose_x``/``transpose_y`` swap the last two dims first (no-op on 1-D)."""
    return torch_module().matmul(_t(a["x"], a["transpose_x"]), _t(a["y"], a["transpose_y"]))
