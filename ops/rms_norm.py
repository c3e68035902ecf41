"""``rms_norm(x, weight=None, epsilon=1e-6)`` for Paddle and PyTorch tensors, backed by our custom op.

Normalizes over the last dimension: ``x / sqrt(mean(x^2) + epsilon) * weight``, fp32 accumulation,
output in x's dtype (float32, float16, bfloat16); the weight is ``[hidden]`` in x's dtype or float32.
Differentiable in x and weight: the forward saves the per-row rstd (fp32); the backward's weight
gradient is deterministic (no atomics). PyTorch: ops ``opbench_rms_norm::rms_norm_fwd/_bwd`` with a
fake (meta) rule here and an autograd rule in C++ (``norm_common/torch_norm_autograd.h``). Paddle: custom op
``opbench_rms_norm`` (always given a weight: ones when the caller passes none).
:func:`paddle_rms_norm` takes ``paddle.nn.functional.rms_norm``'s arguments (``ops.OPS``).
"""

from __future__ import annotations

from typing import Any

from ops import build, norm_args
from ops.norm_args import check_call, check_spec, last_dim_only, paddle_constant_row, rows_of, takes_grad, torch_ops
from ops.tensors import dtype_name


def _register(torch: Any) -> None:
    """The fake (meta) rules of ``opbench_rms_norm::rms_norm_fwd/_bwd`` (run once by torch_ops)."""
    @torch.library.register_fake("opbench_rms_norm::rms_norm_fwd")
    def _fwd_fake(x, weight, epsilon):  # noqa: ANN001, ANN202
        rows = rows_of(x)
        return (torch.empty(tuple(x.shape), dtype=x.dtype, device=x.device),
                torch.empty((rows,), dtype=torch.float32, device=x.device))

    @torch.library.register_fake("opbench_rms_norm::rms_norm_bwd")
    def _bwd_fake(grad, x, weight, rstd, need_w):  # noqa: ANN001, ANN202
        dx = torch.empty(tuple(x.shape), dtype=x.dtype, device=x.device)
        wd = weight.dtype if weight is not None else x.dtype
        n = x.shape[-1] if (need_w and weight is not None) else 0
        return dx, torch.empty((n,), dtype=wd, device=x.device)


def _torch_rms_norm(x: Any, weight: Any, epsilon: float) -> Any:
    return torch_ops("rms_norm", _register).rms_norm_fwd(x, weight, float(epsilon))[0]


def _paddle_rms_norm(x: Any, weight: Any, epsilon: float) -> Any:
    mod = build.load("paddle", ext="norm")
    weight_grad = takes_grad(weight)  # a missing weight's row of ones takes none: the backward skips its sum
    if weight is None:
        weight = paddle_constant_row(x, 1.0, dtype_name(x))
    return mod.opbench_rms_norm(x, weight, float(epsilon), weight_grad)[0]


def rms_norm(x: Any, weight: Any = None, epsilon: float = 1e-6) -> Any:
    """RMS normalization of ``x`` over its last dimension, scaled by ``weight`` ([hidden]) when given.

    Returns a tensor of x's framework, shape and dtype; differentiable in x and weight.
    """
    fw = check_call("rms_norm", x, {"weight": weight}, epsilon)
    return _torch_rms_norm(x, weight, epsilon) if fw == "torch" else _paddle_rms_norm(x, weight, epsilon)


def paddle_rms_norm(input: Any, normalized_shape: Any, weight: Any = None, eps: float = 1e-5,  # noqa: A002
                    name: str | None = None) -> Any:
    """``paddle.nn.functional.rms_norm``'s signature on :func:`rms_norm` (normalized_shape: the last dim)."""
    last_dim_only("rms_norm", input, normalized_shape)
    return rms_norm(input, weight, eps)


def _checks(input: Any, normalized_shape: Any, weight: Any = None, eps: float = 1e-5,  # noqa: A002
            name: str | None = None) -> None:
    last_dim_only("rms_norm", input, normalized_shape)
    check_spec("rms_norm", input, {"weight": weight}, eps)


paddle_rms_norm.why_not = norm_args.why_not_rule("rms_norm", _checks)  # type: ignore[attr-defined]
