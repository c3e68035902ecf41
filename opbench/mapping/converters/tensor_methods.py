"""Converters for ``paddle.Tensor`` methods and operators."""

from __future__ import annotations

from typing import Any

from opbench.mapping.converters import torch_module


def _promoted(x: Any, y: Any) -> tuple[Any, Any]:
    dt = torch_module().result_type(x, y)
    return x.to(dt), y.to(dt)


def matmul(a: dict[str, Any]) -> Any:
    """``x @ y``; Paddle promotes mixed float dtypes, torch.matmul needs one dtype."""
    return torch_module().matmul(*_promoted(a["x"], a["y"]))


def rmatmul(a: dict[str, Any]) -> Any:
    """``y @ x`` (the reflected operator); mixed float dtypes promoted as Paddle does."""
    return torch_module().matmul(*_promoted(a["y"], a["x"]))
