"""Optimized custom operators for PaddlePaddle (with a PyTorch binding of the same kernels).

``from ops import lerp, rms_norm, layer_norm``; ``OPS`` maps a Paddle API name to our implementation
(looked up by the benchmark's ``paddle-ops``/``torch-ops`` providers);
``available(framework)`` says whether the ops can be built/used there.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from typing import Any

from ops.build import BuildError, framework_installed
from ops.layer_norm import layer_norm, paddle_layer_norm
from ops.lerp import lerp
from ops.rms_norm import paddle_rms_norm, rms_norm

__all__ = ["OPS", "BuildError", "available", "layer_norm", "lerp", "rms_norm"]

# An entry may carry ``why_not(*args, **kwargs) -> str | None`` (on tensors or on a case's tensor specs):
# the providers report a case it refuses as not applicable (several normalized dims, float64, ...).
# paddle.incubate.nn.functional.fused_rms_norm is left out: it requires a bias and returns (out, residual_out).
OPS: dict[str, Callable[..., Any]] = {
    "paddle.lerp": lerp,
    "paddle.nn.functional.layer_norm": paddle_layer_norm,
    "paddle.nn.functional.rms_norm": paddle_rms_norm,
}


def available(framework: str) -> str | None:
    """None when the ops can be built and used for 'paddle' or 'torch'; otherwise the reason why not."""
    if framework not in ("paddle", "torch"):
        return f"unknown framework {framework!r} (expected 'paddle' or 'torch')"
    if not framework_installed(framework):
        return f"{framework} is not installed"
    if not (shutil.which("c++") or shutil.which("g++")):
        return "no C++ compiler (c++/g++) on PATH"
    if framework == "torch" and not shutil.which("ninja"):
        try:
            import ninja  # noqa: F401
        except ImportError:
            return "ninja is not installed (torch extensions need it)"
    return None
