"""``layer_norm(x, weight=None, bias=None, epsilon=1e-5)`` for Paddle and PyTorch tensors, backed by our custom op.

Normalizes over the last dimension: ``(x - mean) / sqrt(var + epsilon) * weight + bias``, fp32
accumulation, output in x's dtype (float32, float16, bfloat16); weight and bias are ``[hidden]`` in
x's dtype or float32 (both the same). Differentiable in x, weight and bias: the forward saves per-row
mean and rstd (fp32); the backward's weight/bias gradients are deterministic (no atomics).
PyTorch: ops ``opbench_layer_norm::layer_norm_fwd/_bwd`` with a fake (meta) rule here and an autograd
rule in C++ (``norm_common/torch_norm_autograd.h``). Paddle: custom op ``opbench_layer_norm`` (always given a
weight and a bias: ones and zeros when the caller passes none). :func:`paddle_layer_norm` takes
``paddle.nn.functional.layer_norm``'s arguments (``ops.OPS``) when normalized_shape is the last dim.
"""

from __future__ import annotations

from typing import Any

from ops import build, norm_args
from ops.norm_args import check_call, check_spec, last_dim_only, paddle_constant_row, rows_of, takes_grad, torch_ops
from ops.tensors import dtype_name


def _register(torch: Any) -> None:
    """The fake (meta) rules of ``opbench_layer_norm::layer_norm_fwd/_bwd`` (run once by torch_ops)."""
    @torch.library.register_fake("opbench_layer_norm::layer_norm_fwd")
    def _fwd_fake(x, weight, bias, epsilon):  # noqa: ANN001, ANN202
        rows = rows_of(x)
        stat = torch.empty((rows,), dtype=torch.float32, device=x.device)
        return torch.empty(tuple(x.shape), dtype=x.dtype, device=x.device), stat, torch.empty_like(stat)

    @torch.library.register_fake("opbench_layer_norm::layer_norm_bwd")
    def _bwd_fake(grad, x, weight, bias, mean, rstd, need_w, need_b):  # noqa: ANN001, ANN202
        p = weight if weight is not None else bias
        pd = p.dtype if p is not None else x.dtype
        nw = x.shape[-1] if (need_w and weight is not None) else 0
        nb = x.shape[-1] if (need_b and bias is not None) else 0
        return (torch.empty(tuple(x.shape), dtype=x.dtype, device=x.device),
                torch.empty((nw,), dtype=pd, device=x.device), torch.empty((nb,), dtype=pd, device=x.device))


def _torch_layer_norm(x: Any, weight: Any, bias: Any, epsilon: float) -> Any:
    return torch_ops("layer_norm", _register).layer_norm_fwd(x, weight, bias, float(epsilon))[0]


def _paddle_layer_norm(x: Any, weight: Any, bias: Any, epsilon: float) -> Any:
    mod = build.load("paddle", ext="norm")
    pd = dtype_name(weight if weight is not None else bias if bias is not None else x)
    # which parameter gradients the backward computes (the rows given for a missing parameter take none)
    weight_grad, bias_grad = takes_grad(weight), takes_grad(bias)
    if weight is None:
        weight = paddle_constant_row(x, 1.0, pd)
    if bias is None:
        bias = paddle_constant_row(x, 0.0, pd)
    return mod.opbench_layer_norm(x, weight, bias, float(epsilon), weight_grad, bias_grad)[0]


def layer_norm(x: Any, weight: Any = None, bias: Any = None, epsilon: float = 1e-5) -> Any:
    """Layer normalization of ``x`` over its last dimension, then ``* weight + bias`` ([hidden]) when given.

    Returns a tensor of x's framework, shape and dtype; differentiable in x, weight and bias.
    """
    fw = check_call("layer_norm", x, {"weight": weight, "bias": bias}, epsilon)
    if fw == "torch":
        return _torch_layer_norm(x, weight, bias, epsilon)
    return _paddle_layer_norm(x, weight, bias, epsilon)


def paddle_layer_norm(x: Any, normalized_shape: Any, weight: Any = None, bias: Any = None, epsilon: float = 1e-5,
                      name: str | None = None) -> Any:
    """``paddle.nn.functional.layer_norm``'s signature on :func:`layer_norm` (normalized_shape: the last dim)."""
    last_dim_only("layer_norm", x, normalized_shape)
    return layer_norm(x, weight, bias, epsilon)


def _checks(x: Any, normalized_shape: Any, weight: Any = None, bias: Any = None, epsilon: float = 1e-5,
            name: str | None = None) -> None:
    last_dim_only("layer_norm", x, normalized_shape)
    check_spec("layer_norm", x, {"weight": weight, "bias": bias}, epsilon)


paddle_layer_norm.why_not = norm_args.why_not_rule("layer_norm", _checks)  # type: ignore[attr-defined]
