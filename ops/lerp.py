"""``lerp(x, y, weight)`` for Paddle and PyTorch tensors, backed by our custom op.

PyTorch: the op's autograd is a C++ ``torch::autograd::Function`` (``lerp_autograd``) by
default; ``OPBENCH_TORCH_AUTOGRAD=python`` uses the ``torch.library.register_autograd`` rule on
``lerp`` instead (both compute only the gradients ``needs_input_grad`` asks for). With CUDA float32/float64
x, y of one shape and a weight that needs a gradient and broadcasts to it (full size, one element, or
a layout of the core's one-pass broadcast forward), the C++ Function's forward also writes ``y - x``
and saves it (with the weight) instead of x and y, so that the backward reads one full-size tensor
fewer (``lerp_save_diff`` / ``lerp_backward_from_diff``).
The framework is told by the tensor's type (never importing a framework that
is not installed). A Python float weight goes to the scalar path as an
attribute; a one-element weight tensor also takes the scalar path (read once on
the device, no host sync). Arguments are checked here first, so bad shapes,
dtypes or devices raise a one-line ``ValueError``/``TypeError`` naming them.
"""

from __future__ import annotations

import os
import sys
import threading
from numbers import Real
from typing import Any

from ops import build
from ops.tensors import device_name, dtype_name, framework_of

FLOAT_DTYPES = ("float32", "float64", "float16", "bfloat16")

_torch_lock = threading.Lock()
_torch_ready = False
_TORCH_OPS: dict[str, Any] = {}  # the op for each autograd mode (torch_autograd_mode), set by _torch_setup


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy broadcasting of shapes; ValueError naming them when impossible."""
    nd = 0
    for s in shapes:
        nd = max(nd, len(s))
    out = []
    for i in range(nd):
        d = 1
        for s in shapes:
            j = i - (nd - len(s))
            if j < 0 or s[j] == 1:
                continue
            if d not in (1, s[j]):
                shown = ", ".join(str(list(s)) for s in shapes)
                raise ValueError(f"lerp: shapes {shown} are not broadcastable")
            d = s[j]
        out.append(d)
    return tuple(out)


_DTYPE_OK: dict[Any, bool] = {}


def _supported(dtype: Any) -> bool:
    ok = _DTYPE_OK.get(dtype)
    if ok is None:
        name = str(dtype)
        for prefix in ("torch.", "paddle."):
            name = name.removeprefix(prefix)
        ok = _DTYPE_OK[dtype] = name in FLOAT_DTYPES
    return ok


# Shape triples already found broadcastable (torch.Size is a hashable tuple): a set lookup instead of
# broadcast_shape's Python loops on every call; emptied beyond _MAX_BCAST_OK entries.
_BCAST_OK: set[tuple[Any, ...]] = set()
_MAX_BCAST_OK = 256


def _torch_ok(torch: Any, x: Any, y: Any, weight: Any) -> bool:
    """The common torch call in straight-line code: float tensors of one dtype on one device with shapes
    already known to broadcast. False sends the call to the full checks."""
    dt = x.dtype
    if type(y) is not type(x) or y.dtype is not dt or not _supported(dt):
        return False
    dev = x.device
    if y.device != dev:
        return False
    if isinstance(weight, torch.Tensor):
        if weight.dtype is not dt or weight.device != dev:
            return False
        key = (x.shape, y.shape, weight.shape)
    elif type(weight) is float:
        key = (x.shape, y.shape)
    else:
        return False
    return key[0] == key[1] == key[-1] or key in _BCAST_OK


def _validate(x: Any, y: Any, weight: Any) -> str:
    """Check the arguments (every call _torch_ok does not pass, so every error); returns the framework."""
    fw = framework_of(x)
    if fw is None:
        raise TypeError(f"lerp: x must be a paddle.Tensor or torch.Tensor, got {type(x).__name__}")
    if framework_of(y) != fw:
        raise TypeError(f"lerp: y must be a {fw} tensor like x, got {type(y).__name__}")
    w_fw = framework_of(weight)
    w_is_tensor = w_fw is not None
    if w_is_tensor and w_fw != fw:
        raise TypeError(f"lerp: weight is a {w_fw} tensor but x is a {fw} tensor")
    if not w_is_tensor and (isinstance(weight, bool) or not isinstance(weight, Real)):
        raise TypeError(f"lerp: weight must be a {fw} tensor or a Python float, got {type(weight).__name__}")
    if not _supported(x.dtype):
        raise TypeError(f"lerp: dtype {dtype_name(x)} of x is not supported "
                        f"(expected one of {', '.join(FLOAT_DTYPES)})")
    if y.dtype != x.dtype:
        raise TypeError(f"lerp: x and y dtypes differ ({dtype_name(x)} vs {dtype_name(y)})")
    if w_is_tensor and weight.dtype != x.dtype:
        raise TypeError(f"lerp: weight dtype {dtype_name(weight)} differs from x dtype {dtype_name(x)}")
    tensors = [x, y, weight] if w_is_tensor else [x, y]
    if fw == "torch":
        same_dev = all(t.device == x.device for t in tensors)
    else:
        same_dev = len({str(t.place) for t in tensors}) == 1
    if not same_dev:
        devs = sorted({device_name(t, fw) for t in tensors})
        raise ValueError(f"lerp: tensors are on different devices ({', '.join(devs)})")
    shapes = [tuple(t.shape) for t in tensors]
    if any(s != shapes[0] for s in shapes):
        broadcast_shape(*shapes)
        if fw == "torch":
            if len(_BCAST_OK) >= _MAX_BCAST_OK:
                _BCAST_OK.clear()
            _BCAST_OK.add(tuple(t.shape for t in tensors))
    return fw


def _torch_setup() -> None:
    """Build/load the torch extension and register its fake and autograd rules (once)."""
    global _torch_ready
    with _torch_lock:
        if _torch_ready:
            return
        import torch

        build.load("torch")

        def _lerp_fake(x, y, weight, scalar_weight):  # noqa: ANN001, ANN202
            shapes = [x.shape, y.shape] + ([weight.shape] if weight is not None else [])
            return torch.empty(torch.broadcast_shapes(*shapes), dtype=x.dtype, device=x.device)

        torch.library.register_fake("opbench_lerp::lerp")(_lerp_fake)
        torch.library.register_fake("opbench_lerp::lerp_autograd")(_lerp_fake)

        @torch.library.register_fake("opbench_lerp::lerp_backward")
        def _lerp_bwd_fake(grad, x, y, weight, scalar_weight, need_x, need_y, need_w):  # noqa: ANN001, ANN202
            # contiguous, like the real kernels (which make their inputs contiguous first); torch.empty,
            # not x.new_empty, which keeps a non-contiguous x's strides under fake tensors
            def empty(shape: Any) -> Any:
                return torch.empty(tuple(shape), dtype=x.dtype, device=x.device)

            dx = empty(x.shape) if need_x else empty((0,))
            dy = empty(y.shape) if need_y else empty((0,))
            dw = empty(weight.shape) if (need_w and weight is not None) else empty((0,))
            return dx, dy, dw

        @torch.library.register_fake("opbench_lerp::lerp_save_diff")
        def _save_diff_fake(x, y, weight):  # noqa: ANN001, ANN202
            return tuple(torch.empty(tuple(x.shape), dtype=x.dtype, device=x.device) for _ in range(2))

        @torch.library.register_fake("opbench_lerp::lerp_backward_from_diff")
        def _from_diff_fake(grad, diff, weight, need_x, need_y, need_w):  # noqa: ANN001, ANN202
            shapes = (diff.shape, diff.shape, weight.shape)
            return tuple(
                torch.empty(tuple(shape) if need else (0,), dtype=weight.dtype, device=weight.device)
                for shape, need in zip(shapes, (need_x, need_y, need_w), strict=True)
            )

        def _setup_context(ctx, inputs, output):  # noqa: ANN001, ANN202
            x, y, weight, scalar_weight = inputs
            ctx.save_for_backward(x, y, weight)
            ctx.scalar_weight = scalar_weight

        def _backward(ctx, grad):  # noqa: ANN001, ANN202
            x, y, weight = ctx.saved_tensors
            nx, ny, nw = ctx.needs_input_grad[:3]
            nw = bool(nw and weight is not None)
            if not (nx or ny or nw):
                return None, None, None, None
            dx, dy, dw = torch.ops.opbench_lerp.lerp_backward(
                grad, x, y, weight, ctx.scalar_weight, bool(nx), bool(ny), nw
            )
            return (dx if nx else None), (dy if ny else None), (dw if nw else None), None

        torch.library.register_autograd("opbench_lerp::lerp", _backward, setup_context=_setup_context)
        _TORCH_OPS.update(cpp=torch.ops.opbench_lerp.lerp_autograd, python=torch.ops.opbench_lerp.lerp)
        _torch_ready = True


def torch_autograd_mode() -> str:
    """'cpp' (default: the C++ autograd Function, no Python in the backward) or 'python'
    (``torch.library.register_autograd``), from ``OPBENCH_TORCH_AUTOGRAD``."""
    mode = os.environ.get("OPBENCH_TORCH_AUTOGRAD", "cpp")
    if mode not in ("cpp", "python"):
        raise ValueError(f"OPBENCH_TORCH_AUTOGRAD must be 'cpp' or 'python', got {mode!r}")
    return mode


def _torch_lerp(x: Any, y: Any, weight: Any) -> Any:
    torch = sys.modules["torch"]
    if not _torch_ready:  # once; kept out of torch.compile's trace (it takes a lock)
        torch.compiler.disable(_torch_setup)()

    op = _TORCH_OPS[torch_autograd_mode()]
    if isinstance(weight, torch.Tensor):
        return op(x, y, weight, 0.0)
    return op(x, y, None, float(weight))


def _paddle_lerp(x: Any, y: Any, weight: Any) -> Any:
    mod = build.load("paddle")
    if framework_of(weight) == "paddle":
        return mod.opbench_lerp(x, y, weight)
    return mod.opbench_lerp_scalar(x, y, float(weight))


def lerp(x: Any, y: Any, weight: Any, name: str | None = None) -> Any:
    """``x + weight * (y - x)`` (stable form), differentiable, for Paddle or PyTorch tensors.

    ``weight`` is a tensor of the same framework/dtype/device (broadcast with x and y) or a
    Python float. Returns a tensor of the inputs' framework with the broadcast shape.
    ``name`` is accepted (and ignored) for signature compatibility with ``paddle.lerp``.
    """
    torch = sys.modules.get("torch")
    # Traced by torch.compile, the op's fake impl checks shapes (torch.broadcast_shapes); the common
    # eager call passes _torch_ok's straight-line checks.
    if torch is not None and isinstance(x, torch.Tensor) and (torch.compiler.is_compiling() or
                                                               _torch_ok(torch, x, y, weight)):
        return _torch_lerp(x, y, weight)
    fw = _validate(x, y, weight)
    return _torch_lerp(x, y, weight) if fw == "torch" else _paddle_lerp(x, y, weight)
