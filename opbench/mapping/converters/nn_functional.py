"""Converters for ``paddle.nn.functional``."""

from __future__ import annotations

from typing import Any

from opbench.mapping.converters import to_ints, torch_module


def gelu(a: dict[str, Any]) -> Any:
    """Paddle's ``approximate`` is a bool (or 'tanh'/'none'); torch wants the string."""
    approx = a["approximate"]
    mode = approx if isinstance(approx, str) else ("tanh" if approx else "none")
    return torch_module().nn.functional.gelu(a["x"], approximate=mode)


def layer_norm(a: dict[str, Any]) -> Any:
    """``normalized_shape`` may be an int; Paddle's weight/bias may be flat, torch wants that shape."""
    torch = torch_module()
    shape = to_ints(a["normalized_shape"])
    w, b = a["weight"], a["bias"]
    w = None if w is None else w.reshape(shape)
    b = None if b is None else b.reshape(shape)
    return torch.nn.functional.layer_norm(a["x"], shape, w, b, eps=float(a["epsilon"]))


def linear(a: dict[str, Any]) -> Any:
    """Paddle's weight is [in, out], torch.nn.functional.linear wants [out, in]: pass its transpose."""
    return torch_module().nn.functional.linear(a["x"], a["weight"].t(), a["bias"])


def embedding(a: dict[str, Any]) -> Any:
    """Paddle zeroes the output rows of ``padding_idx`` in the forward; torch only skips their gradient."""
    torch = torch_module()
    x, w, pad = a["x"], a["weight"], a["padding_idx"]
    out = torch.nn.functional.embedding(
        x, w, padding_idx=pad, max_norm=a["max_norm"], norm_type=float(a["norm_type"]),
        scale_grad_by_freq=a["scale_grad_by_freq"], sparse=a["sparse"],
    )
    if pad is None:
        return out
    pad = pad if pad >= 0 else pad + w.shape[0]
    return out * (x != pad).unsqueeze(-1).to(out.dtype)
