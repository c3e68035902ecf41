"""Argument checks and the framework glue shared by ``ops.rms_norm`` and ``ops.layer_norm``.

Checks work on tensors and on anything with ``.shape`` and ``.dtype`` (a benchmark case's
``TensorSpec``), so the same rules decide a call's error and a provider's "not applicable".
Every error is one line naming the shapes/dtypes at fault.
"""

from __future__ import annotations

import inspect
import math
import sys
import threading
from collections.abc import Callable
from numbers import Real
from typing import Any

from ops import build
from ops.tensors import device_name, dtype_name, framework_of

_ready: set[str] = set()  # ops whose torch rules are registered
_lock = threading.Lock()


def torch_ops(op: str, register: Callable[[Any], None]) -> Any:
    """``torch.ops.opbench_<op>``, after loading the norm extension and running ``register(torch)`` (the op's
    fake and autograd rules) once; the first call runs outside torch.compile's tracing."""
    import torch

    if op not in _ready:
        torch.compiler.disable(_setup_torch)(op, register)
    return getattr(torch.ops, f"opbench_{op}")


def _setup_torch(op: str, register: Callable[[Any], None]) -> None:
    with _lock:
        if op in _ready:
            return
        import torch

        build.load("torch", ext="norm")
        register(torch)
        _ready.add(op)


_CONSTANT_ROWS: dict[tuple[float, int, str, str], Any] = {}
_MAX_CONSTANT_ROWS = 64  # distinct (value, hidden, dtype, place) rows kept; the cache is emptied beyond


def paddle_constant_row(x: Any, value: float, dtype: str) -> Any:
    """A ``[hidden]`` Paddle tensor of ``value`` on x's place (the weight or bias a caller left out), made once
    per (value, hidden, dtype, place) and reused: creating it on every call cost more than a small row's kernel."""
    import numpy as np
    import paddle

    key = (value, int(x.shape[-1]), dtype, str(x.place))
    row = _CONSTANT_ROWS.get(key)
    if row is None:
        if len(_CONSTANT_ROWS) >= _MAX_CONSTANT_ROWS:
            _CONSTANT_ROWS.clear()
        row = paddle.to_tensor(np.full([key[1]], value, dtype="float32"), place=x.place).astype(dtype)
        row.stop_gradient = True
        _CONSTANT_ROWS[key] = row
    return row


def takes_grad(param: Any) -> bool:
    """Whether a Paddle parameter given to a norm op takes a gradient (False for None)."""
    return param is not None and not param.stop_gradient


def rows_of(x: Any) -> Any:
    """The number of rows of ``x`` normalized over its last dim (a SymInt under tracing)."""
    rows = 1
    for d in x.shape[:-1]:
        rows *= d
    return rows

INPUT_DTYPES = ("float32", "float16", "bfloat16")


def check_spec(op: str, x: Any, params: dict[str, Any], epsilon: Any) -> None:
    """Shape/dtype/epsilon rules on objects with ``.shape`` and ``.dtype``; ValueError/TypeError when broken."""
    xd = dtype_name(x)
    if xd not in INPUT_DTYPES:
        raise TypeError(f"{op}: x dtype {xd} is not supported (expected one of {', '.join(INPUT_DTYPES)})")
    shape = tuple(x.shape)
    if not shape:
        raise ValueError(f"{op}: x must have at least one dim, got shape {list(shape)}")
    if isinstance(epsilon, bool) or not isinstance(epsilon, Real) or not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"{op}: epsilon must be a finite number > 0, got {epsilon!r}")
    given = {k: v for k, v in params.items() if v is not None}
    for name, p in given.items():
        if tuple(p.shape) != shape[-1:]:
            raise ValueError(f"{op}: {name} shape {list(p.shape)} must be [{shape[-1]}] "
                             f"(the last dim of x, shape {list(shape)})")
        pd = dtype_name(p)
        if pd not in (xd, "float32"):
            raise TypeError(f"{op}: {name} dtype {pd} must be x's dtype {xd} or float32")
    dtypes = {dtype_name(p) for p in given.values()}
    if len(dtypes) > 1:
        shown = ", ".join(f"{k} {dtype_name(v)}" for k, v in given.items())
        raise TypeError(f"{op}: weight and bias dtypes differ ({shown})")


_PASSED: dict[tuple[Any, ...], str] = {}  # what eager torch calls that passed check_call looked like
_MAX_PASSED = 256  # entries kept; the cache is emptied beyond


def _torch_key(op: str, x: Any, params: dict[str, Any], epsilon: Any) -> tuple[Any, ...] | None:
    """Everything check_call reads of an eager torch call, as a dict key; None for other calls (Paddle,
    tensor subclasses such as fake tensors, torch.compile tracing), which are checked in full."""
    torch = sys.modules.get("torch")
    if torch is None or type(x) not in (torch.Tensor, torch.nn.Parameter) or torch.compiler.is_compiling():
        return None
    key: list[Any] = [op, x.shape, x.dtype, x.device, type(epsilon), epsilon]
    for p in params.values():
        if p is None:
            key.append(None)
        elif type(p) in (torch.Tensor, torch.nn.Parameter):
            key += (p.shape, p.dtype, p.device)
        else:
            return None
    return tuple(key)


def check_call(op: str, x: Any, params: dict[str, Any], epsilon: Any) -> str:
    """Full check of a call on tensors; returns the framework ('torch' or 'paddle'). An eager torch call
    shaped like one that passed is answered from a cache: the checks cost more than a small row's kernel."""
    key = _torch_key(op, x, params, epsilon)
    if key is not None and key in _PASSED:
        return _PASSED[key]
    fw = _check_call(op, x, params, epsilon)
    if key is not None:
        if len(_PASSED) >= _MAX_PASSED:
            _PASSED.clear()
        _PASSED[key] = fw
    return fw


def _check_call(op: str, x: Any, params: dict[str, Any], epsilon: Any) -> str:
    fw = framework_of(x)
    if fw is None:
        raise TypeError(f"{op}: x must be a paddle.Tensor or torch.Tensor, got {type(x).__name__}")
    for name, p in params.items():
        if p is not None and framework_of(p) != fw:
            raise TypeError(f"{op}: {name} must be a {fw} tensor like x, got {type(p).__name__}")
    check_spec(op, x, params, epsilon)
    given = [p for p in params.values() if p is not None]
    devs = {device_name(t, fw) for t in [x, *given]} if given else set()
    if len(devs) > 1:
        raise ValueError(f"{op}: tensors are on different devices ({', '.join(sorted(devs))})")
    return fw


def last_dim_only(op: str, x: Any, normalized_shape: Any) -> None:
    """A Paddle-API ``normalized_shape`` our ops take: the last dim alone (an int or a one-element list)."""
    ns = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    shape = tuple(x.shape)
    if not shape or len(ns) != 1 or ns[0] != shape[-1]:
        raise ValueError(f"{op}: normalized_shape {normalized_shape!r} must be the last dim of x "
                         f"(shape {list(x.shape)}) alone")


def why_not_rule(op: str, checks: Callable[..., None]) -> Callable[..., str | None]:
    """An op's ``why_not`` (see ``ops.OPS``) from ``checks``, a function with the op's Paddle signature that raises
    TypeError or ValueError on arguments the op refuses: None when it passes, else its one-line reason, or the
    binding error when the arguments do not fit the signature."""
    signature = inspect.signature(checks)

    def why_not(*args: Any, **kwargs: Any) -> str | None:
        try:
            signature.bind(*args, **kwargs)
        except TypeError as exc:
            return f"{op}: {exc}"
        try:
            checks(*args, **kwargs)
        except (TypeError, ValueError) as exc:
            return str(exc)
        return None

    why_not.__doc__ = f"None when {op} takes these arguments (tensors or specs with shape/dtype), else why not."
    return why_not
