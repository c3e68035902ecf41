"""Framework-neutral facts about a tensor (its framework, dtype name, device), read without importing a
framework that is not installed: the ops' Python APIs check arguments with them before any binding loads."""

from __future__ import annotations

import sys
from typing import Any


def framework_of(t: Any) -> str | None:
    """'torch' or 'paddle' for a tensor of that framework, else None."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(t, torch.Tensor):
        return "torch"
    paddle = sys.modules.get("paddle")
    if paddle is not None and isinstance(t, paddle.Tensor):
        return "paddle"
    return None


def dtype_name(t: Any) -> str:
    """'float32' for a torch/paddle tensor's dtype, a tensor spec's dtype, or a dtype string."""
    s = str(getattr(t, "dtype", t))
    for prefix in ("torch.", "paddle."):
        s = s.removeprefix(prefix)
    return s


def device_name(t: Any, fw: str) -> str:
    """The tensor's device as its framework prints it (``cuda:0``, ``Place(gpu:0)``)."""
    return str(t.device) if fw == "torch" else str(t.place)
