"""``paddle.Tensor`` methods with no function of the same name: operators (dunders), ``astype``, ..."""

from __future__ import annotations

from opbench.domains import NONZERO, POSITIVE, Domain
from opbench.mapping.converters import elementwise as ew
from opbench.mapping.converters import tensor_methods as cv
from opbench.mapping.spec import ApiMapping as M
from opbench.mapping.spec import Param

T = "paddle.Tensor."
# Operators have no recorded Paddle signature (they are builtins): self and the other operand.
SELF_OTHER = (Param("x"), Param("y"))
SHIFT = Domain(low=0.0, high=7.0)  # shift counts valid for every integer width
EXPONENT = Domain(low=0.0, high=4.0)  # pow: no integer overflow, no negative integer power
TRUTH = ("Paddle's truth value is `np.array(self) > 0`, so a negative one-element tensor is False; "
         "torch (and Python) take `x != 0`")


def op(name: str, torch_name: str | None = None, **kw: object) -> M:
    """A binary operator mapped to torch.Tensor's operator of the same (or another) name."""
    return M(T + name, f"torch.Tensor.{torch_name or name}(x, y)", params=SELF_OTHER, **kw)


ENTRIES: list[M] = [
    M(T + "__add__", "torch.Tensor.__add__(x, y)", params=SELF_OTHER),
    op("__radd__"),
    M(T + "__sub__", convert=ew.subtract, params=SELF_OTHER),
    M(T + "__rsub__", convert=ew.rsubtract, params=SELF_OTHER),
    op("__mul__"),
    op("__rmul__"),
    op("__truediv__", domains={"y": NONZERO}),
    op("__div__", "__truediv__", domains={"y": NONZERO}),
    op("__rtruediv__", domains={"x": NONZERO}),
    op("__floordiv__", domains={"y": NONZERO}),
    op("__mod__", domains={"y": NONZERO}),
    op("__rmod__", domains={"x": NONZERO}),
    # A positive base keeps fractional exponents real (and the gradient finite).
    op("__pow__", domains={"x": POSITIVE, "y": EXPONENT}),
    op("__rpow__", domains={"x": EXPONENT}),
    M(T + "__matmul__", convert=cv.matmul, params=SELF_OTHER),
    M(T + "__rmatmul__", convert=cv.rmatmul, params=SELF_OTHER),
    op("__eq__"),
    op("__ne__"),
    op("__lt__"),
    op("__le__"),
    op("__gt__"),
    op("__ge__"),
    # Recorded signatures (x, y[, out, name]).
    M(T + "__and__", "torch.Tensor.__and__(x, y)"),
    M(T + "__or__", "torch.Tensor.__or__(x, y)"),
    M(T + "__xor__", "torch.Tensor.__xor__(x, y)"),
    M(T + "__rand__", "torch.Tensor.__rand__(x, y)"),
    M(T + "__ror__", "torch.Tensor.__ror__(x, y)"),
    M(T + "__rxor__", "torch.Tensor.__rxor__(x, y)"),
    M(T + "__invert__", "torch.Tensor.__invert__(x)"),
    M(T + "__lshift__", convert=ew.left_shift, domains={"y": SHIFT}),
    M(T + "__rshift__", convert=ew.right_shift, domains={"y": SHIFT}),
    M(T + "__rlshift__", convert=ew.rleft_shift, domains={"x": SHIFT}),
    M(T + "__rrshift__", convert=ew.rright_shift, domains={"x": SHIFT}),
    M(T + "__neg__", "torch.Tensor.__neg__(var)"),
    M(T + "__abs__", "torch.Tensor.__abs__(var)"),
    M(T + "__pos__", "torch.Tensor.__pos__(x)"),
    M(T + "__len__", "torch.Tensor.__len__(var)"),
    M(T + "__nonzero__", "torch.Tensor.__bool__(self)", known=TRUTH),
    M(T + "__bool__", "torch.Tensor.__bool__(self)", known=TRUTH),
    M(T + "sigmoid", "torch.sigmoid(x)"),
]
