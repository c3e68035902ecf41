"""Converters for Element-wise APIs."""

from __future__ import annotations

from typing import Any

from opbench.mapping.converters import torch_module
from opbench.mapping.dtypes import to_torch_dtype


def where(a: dict[str, Any]) -> Any:
    """``x``/``y`` may be Python scalars; both None means ``nonzero(as_tuple=True)`` like Paddle."""
    torch = torch_module()
    cond, x, y = a["condition"], a["x"], a["y"]
    if x is None and y is None:
        return torch.nonzero(cond, as_tuple=True)
    return torch.where(cond, x, y)


def clip(a: dict[str, Any]) -> Any:
    """Paddle allows both bounds None (a copy); torch.clamp needs one. Tensor bounds become scalars."""
    x, lo, hi = a["x"], a["min"], a["max"]
    lo = lo.item() if hasattr(lo, "item") else lo
    hi = hi.item() if hasattr(hi, "item") else hi
    if lo is None and hi is None:
        return x.clone()
    return torch_module().clamp(x, min=lo, max=hi)


def scale(a: dict[str, Any]) -> Any:
    """``scale*x + bias`` (or ``scale*(x + bias)``), then optional activation ``act`` by torch name.

    Paddle computes in x's dtype: for integer x the scale and bias are cast to int first.
    """
    torch = torch_module()
    x, s, b = a["x"], a["scale"], float(a["bias"])
    s = s.item() if hasattr(s, "item") else float(s)
    if not (x.is_floating_point() or x.is_complex()):
        s, b = int(s), int(b)
    out = x * s + b if a["bias_after_scale"] else (x + b) * s
    out = out.to(x.dtype)
    act = a["act"]
    return out if act is None else getattr(torch, act)(out)


def cast(a: dict[str, Any]) -> Any:
    """``dtype`` may be a string, a Paddle dtype or a torch dtype."""
    return a["x"].to(to_torch_dtype(a["dtype"]))


def _is_int(t: Any) -> bool:
    return not (t.is_floating_point() or t.is_complex())


def _as_tensor(v: Any, like: Any) -> Any:
    """A Python number (or nested list) as a tensor of ``like``'s dtype, the way Paddle takes a scalar operand."""
    torch = torch_module()
    return v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=like.dtype)


def _promoted(x: Any, y: Any) -> tuple[Any, Any]:
    """``x`` and ``y`` cast to their common dtype (torch kernels such as nextafter take only one)."""
    dt = torch_module().result_type(x, y)
    return x.to(dt), y.to(dt)


def _float_ints(*ts: Any) -> list[Any]:
    """Integer tensors cast to float32, as Paddle's math kernels autocast them."""
    torch = torch_module()
    return [t.to(torch.float32) if _is_int(t) else t for t in ts]


def copysign(a: dict[str, Any]) -> Any:
    """Paddle keeps an integer/bool ``x``'s dtype; torch.copysign returns float for integers."""
    x, y = a["x"], a["y"]
    out = torch_module().copysign(x, y)
    return out.to(x.dtype) if _is_int(x) else out


def atan2(a: dict[str, Any]) -> Any:
    """Paddle computes integer inputs in float64; torch in float32."""
    torch = torch_module()
    x, y = a["x"], a["y"]
    if _is_int(x) and _is_int(y):
        x, y = x.to(torch.float64), y.to(torch.float64)
    return torch.atan2(x, y)


def logaddexp(a: dict[str, Any]) -> Any:
    """Paddle autocasts integer inputs to float32; torch has no integer kernel."""
    return torch_module().logaddexp(*_float_ints(a["x"], a["y"]))


def hypot(a: dict[str, Any]) -> Any:
    """Paddle autocasts integer inputs to float32; torch has no integer kernel."""
    return torch_module().hypot(*_float_ints(a["x"], a["y"]))


def nextafter(a: dict[str, Any]) -> Any:
    """Paddle promotes mixed float dtypes; torch.nextafter needs one dtype."""
    return torch_module().nextafter(*_promoted(a["x"], a["y"]))


def frac(a: dict[str, Any]) -> Any:
    """Paddle gives zeros for integer ``x``; torch.frac has no integer kernel."""
    x = a["x"]
    return torch_module().zeros_like(x) if _is_int(x) else torch_module().frac(x)


def stanh(a: dict[str, Any]) -> Any:
    """``scale_b * tanh(scale_a * x)``: a Paddle-only activation."""
    return a["scale_b"] * torch_module().tanh(a["scale_a"] * a["x"])


def increment(a: dict[str, Any]) -> Any:
    """``x + value`` in ``x``'s dtype (Paddle casts ``value`` to it)."""
    x = a["x"]
    return (x + a["value"]).to(x.dtype)


def add_n(a: dict[str, Any]) -> Any:
    """Sum of a list of tensors; a single tensor is returned as is."""
    inputs = a["inputs"]
    if not isinstance(inputs, (list, tuple)):
        return inputs.clone()
    out = inputs[0]
    for t in inputs[1:]:
        out = out + t
    return out


def _shift(x: Any, y: Any, left: bool, arithmetic: bool) -> Any:
    """``x << y`` or ``x >> y``; a logical right shift fills a signed ``x``'s top bits with zeros."""
    torch = torch_module()
    if left:
        return torch.bitwise_left_shift(x, y)
    if arithmetic or x.dtype in (torch.uint8, torch.bool):
        return torch.bitwise_right_shift(x, y)
    bits = torch.iinfo(x.dtype).bits
    y = y.to(torch.int64) if isinstance(y, torch.Tensor) else torch.tensor(y, dtype=torch.int64)
    if bits < 64:  # the unsigned value in int64, shifted, then back (the top bit is 0 after any shift)
        unsigned = x.to(torch.int64) & ((1 << bits) - 1)
        return torch.bitwise_right_shift(unsigned, y).to(x.dtype)
    mask = torch.bitwise_left_shift(torch.ones_like(y), 64 - y.clamp(min=1)) - 1
    return torch.where(y == 0, x, torch.bitwise_right_shift(x, y) & mask)


def left_shift(a: dict[str, Any]) -> Any:
    """``x << y``; ``is_arithmetic`` does not change a left shift."""
    return _shift(a["x"], a["y"], True, a["is_arithmetic"])


def right_shift(a: dict[str, Any]) -> Any:
    """``x >> y``: arithmetic (sign-filling) or, with ``is_arithmetic=False``, logical; torch has only the first."""
    return _shift(a["x"], a["y"], False, a["is_arithmetic"])


def rleft_shift(a: dict[str, Any]) -> Any:
    """``y << x`` (Paddle's ``__rlshift__``), ``y`` a Python int taken in ``x``'s dtype."""
    return _shift(_as_tensor(a["y"], a["x"]), a["x"], True, a["is_arithmetic"])


def rright_shift(a: dict[str, Any]) -> Any:
    """``y >> x`` (Paddle's ``__rrshift__``), ``y`` a Python int taken in ``x``'s dtype, logical or arithmetic."""
    return _shift(_as_tensor(a["y"], a["x"]), a["x"], False, a["is_arithmetic"])


def heaviside(a: dict[str, Any]) -> Any:
    """``y`` where ``x == 0``, else ``x > 0``; torch.heaviside has no derivative, Paddle's passes ``y``'s."""
    torch = torch_module()
    x, y = a["x"], a["y"]
    step = (x > 0).to(torch.result_type(x, y))
    out = torch.where(x == 0, y, step)
    return out + 0 * x if x.requires_grad else out  # Paddle's gradient for x: zeros


def sgn(a: dict[str, Any]) -> Any:
    """``x / |x|``; torch.sgn's gradient for a real ``x`` is a ZeroTensor, so real inputs use torch.sign."""
    torch = torch_module()
    x = a["x"]
    return torch.sgn(x) if x.is_complex() else torch.sign(x)


def _unbool(x: Any, y: Any) -> tuple[Any, Any]:
    """Bool operands of a subtraction cast to the result dtype (Paddle promotes them; torch refuses ``bool - x``).

    A Python bool scalar becomes an int, as Paddle takes it.
    """
    torch = torch_module()
    y = int(y) if isinstance(y, bool) else y
    dt = torch.result_type(x, y)
    if dt == torch.bool:
        return x, y
    cast = lambda v: v.to(dt) if isinstance(v, torch.Tensor) and v.dtype == torch.bool else v  # noqa: E731
    return cast(x), cast(y)


def subtract(a: dict[str, Any]) -> Any:
    """``x - alpha * y``; bool operands are promoted first, as Paddle does."""
    x, y = _unbool(a["x"], a["y"])
    alpha = a.get("alpha", 1)
    return torch_module().sub(x, y, alpha=alpha) if alpha != 1 else x - y


def rsubtract(a: dict[str, Any]) -> Any:
    """``y - x`` (the reflected operator); bool operands are promoted first, as Paddle does."""
    x, y = _unbool(a["x"], a["y"])
    return y - x
