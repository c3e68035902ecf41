"""Converters for Creation, random and utility APIs: full, zeros, arange, linspace, eye, rand, broadcast_shape, ..."""

from __future__ import annotations

import math
from typing import Any

from opbench.mapping.converters import dtype_or_none, scalar, to_int, to_ints, torch_module
from opbench.mapping.converters.manipulation import as_strided
from opbench.mapping.dtypes import to_torch_dtype


def _shape(shape: Any) -> list[int]:
    """Paddle's ``shape``: an int, a 1-D int tensor, or a list/tuple of ints and int tensors (Paddle reads a
    tensor entry's first element)."""
    if isinstance(shape, (list, tuple)):
        return [int(s.reshape(-1)[0]) if hasattr(s, "reshape") else int(s) for s in shape]
    return to_ints(shape) or []


def _float_default(dtype: Any) -> Any:
    """The dtype asked for, else Paddle's default float32."""
    return dtype_or_none(dtype) or torch_module().float32


def full(a: dict[str, Any]) -> Any:
    """``shape`` list/tuple/tensor; ``fill_value`` number or tensor; no ``dtype``: bool for a bool value, else
    float32."""
    torch = torch_module()
    value = scalar(a["fill_value"])
    dtype = dtype_or_none(a["dtype"]) or (torch.bool if isinstance(value, bool) else torch.float32)
    return torch.full(_shape(a["shape"]), value, dtype=dtype)


def zeros(a: dict[str, Any]) -> Any:
    """``shape`` list/tuple/tensor; float32 unless ``dtype``."""
    return torch_module().zeros(_shape(a["shape"]), dtype=_float_default(a["dtype"]))


def ones(a: dict[str, Any]) -> Any:
    """``shape`` list/tuple/tensor; float32 unless ``dtype``."""
    return torch_module().ones(_shape(a["shape"]), dtype=_float_default(a["dtype"]))


def empty(a: dict[str, Any]) -> Any:
    """Uninitialised memory of ``shape`` (float32 unless ``dtype``): only shape and dtype are comparable."""
    return torch_module().empty(_shape(a["shape"]), dtype=_float_default(a["dtype"]))


def full_like(a: dict[str, Any]) -> Any:
    """x's shape, ``dtype`` else x's dtype; ``fill_value`` number or tensor."""
    torch = torch_module()
    return torch.full_like(a["x"], scalar(a["fill_value"]), dtype=dtype_or_none(a["dtype"]))


def zeros_like(a: dict[str, Any]) -> Any:
    """x's shape, ``dtype`` else x's dtype."""
    return torch_module().zeros_like(a["x"], dtype=dtype_or_none(a["dtype"]))


def ones_like(a: dict[str, Any]) -> Any:
    """x's shape, ``dtype`` else x's dtype."""
    return torch_module().ones_like(a["x"], dtype=dtype_or_none(a["dtype"]))


def empty_like(a: dict[str, Any]) -> Any:
    """x's shape, ``dtype`` else x's dtype, uninitialised."""
    return torch_module().empty_like(a["x"], dtype=dtype_or_none(a["dtype"]))


def astype(a: dict[str, Any]) -> Any:
    """A cast to any dtype spelling (string, paddle dtype, numpy type)."""
    return a["self"].to(to_torch_dtype(a["dtype"]))


def clone_self(a: dict[str, Any]) -> Any:
    """A copy that keeps the gradient path."""
    return a["self"].clone()


def detach(a: dict[str, Any]) -> Any:
    """The same values, cut from the graph."""
    return a["self"].detach()


def clone(a: dict[str, Any]) -> Any:
    """A copy that keeps the gradient path."""
    return a["x"].clone()


def assign(a: dict[str, Any]) -> Any:
    """A copy of x; a Python number or list becomes a tensor (int64 or float64, a number as shape ``[1]``)."""
    torch = torch_module()
    x = a["x"]
    if isinstance(x, torch.Tensor):
        return x.clone()
    if isinstance(x, bool):
        return torch.tensor([x])
    if isinstance(x, (int, float)):
        return torch.tensor([x], dtype=torch.int64 if isinstance(x, int) else torch.float64)
    t = torch.tensor(x)
    return t.to(torch.float64) if t.is_floating_point() else t


def broadcast_shape(a: dict[str, Any]) -> Any:
    """The broadcast shape of two shapes, as a Python list (as Paddle returns it)."""
    return list(torch_module().broadcast_shapes(tuple(_shape(a["x_shape"])), tuple(_shape(a["y_shape"]))))


def arange(a: dict[str, Any]) -> Any:
    """``end=None`` means [0, start); numbers or tensors; no ``dtype``: int64 when all are ints, else float32."""
    torch = torch_module()
    start, end, step = scalar(a["start"]), scalar(a["end"]), scalar(a["step"])
    if end is None:
        start, end = 0, start
    dtype = dtype_or_none(a["dtype"])
    if dtype is None:
        ints = all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end, step))
        dtype = torch.int64 if ints else torch.float32
    return torch.arange(start, end, step, dtype=dtype)


def linspace(a: dict[str, Any]) -> Any:
    """``num`` points in [start, stop] (numbers or tensors); float32 unless ``dtype`` (ints truncate)."""
    torch = torch_module()
    out = torch.linspace(float(scalar(a["start"])), float(scalar(a["stop"])), to_int(a["num"]), dtype=torch.float64)
    return out.to(_float_default(a["dtype"]))


def logspace(a: dict[str, Any]) -> Any:
    """``base ** linspace(start, stop, num)``; float32 unless ``dtype``."""
    torch = torch_module()
    out = torch.logspace(float(scalar(a["start"])), float(scalar(a["stop"])), to_int(a["num"]),
                         base=float(scalar(a["base"])), dtype=torch.float64)
    return out.to(_float_default(a["dtype"]))


def eye(a: dict[str, Any]) -> Any:
    """``num_columns=None`` gives a square matrix; sizes numbers or tensors; float32 unless ``dtype``."""
    torch = torch_module()
    rows = to_int(a["num_rows"])
    cols = rows if a["num_columns"] is None else to_int(a["num_columns"])
    return torch.eye(rows, cols, dtype=_float_default(a["dtype"]))


def shape(a: dict[str, Any]) -> Any:
    """x's shape as a 1-D int64 tensor."""
    torch = torch_module()
    return torch.tensor(list(a["input"].shape), dtype=torch.int64)


def numel(a: dict[str, Any]) -> Any:
    """The element count as a 0-D int64 tensor."""
    torch = torch_module()
    return torch.tensor(a["x"].numel(), dtype=torch.int64)


def rank(a: dict[str, Any]) -> Any:
    """The number of dims as a 0-D int32 tensor."""
    torch = torch_module()
    return torch.tensor(a["input"].dim(), dtype=torch.int32)


def dim(a: dict[str, Any]) -> Any:
    """The number of dims as a Python int."""
    return a["var"].dim()


def is_complex(a: dict[str, Any]) -> Any:
    """A Python bool."""
    return a["x"].is_complex()


def is_empty(a: dict[str, Any]) -> Any:
    """A 0-D bool tensor: no elements."""
    torch = torch_module()
    return torch.tensor(a["x"].numel() == 0)


def tolist(a: dict[str, Any]) -> Any:
    """Nested Python lists of numbers."""
    return a["x"].tolist()


def item(a: dict[str, Any]) -> Any:
    """One element as a Python number: the only one, or the one at a flat index / per-dim indices."""
    x, idx = a["self"], a["args"]
    if not idx:
        return x.item()
    if len(idx) == 1:
        return x.reshape(-1)[to_int(idx[0])].item()
    return x[tuple(to_int(i) for i in idx)].item()


def meshgrid(a: dict[str, Any]) -> Any:
    """Tensors given one by one or as one list; "ij" indexing; a list of outputs."""
    torch = torch_module()
    args = a["args"]
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return list(torch.meshgrid(*args, indexing="ij"))


def diag(a: dict[str, Any]) -> Any:
    """1-D x: a matrix with x on the ``offset`` diagonal and ``padding_value`` elsewhere; 2-D x: that diagonal."""
    torch = torch_module()
    x, offset = a["x"], to_int(a["offset"])
    out = torch.diag(x, offset)
    pad = scalar(a["padding_value"])
    if x.dim() == 1 and pad != 0:
        on = torch.diag(torch.ones_like(x, dtype=torch.bool), offset)
        out = torch.where(on, out, torch.tensor(pad, dtype=out.dtype))
    return out


def fill_diagonal_tensor(a: dict[str, Any]) -> Any:
    """x with y written on the ``offset`` diagonal of dims (dim1, dim2), out of place."""
    return torch_module().diagonal_scatter(a["x"], a["y"], to_int(a["offset"]), to_int(a["dim1"]),
                                           to_int(a["dim2"]))


def fill_diagonal(a: dict[str, Any]) -> Any:
    """Paddle's kernel: flat positions ``i + offset`` for i stepping by the sum of strides, kept on their row,
    up to ``cols * cols`` elements of a matrix unless ``wrap`` (torch's fill_diagonal_ has no ``offset``)."""
    torch = torch_module()
    x = a["x"]
    offset, cols = to_int(a["offset"]), x.shape[1]
    step = sum(x.stride())
    if x.numel() == 0:
        return x.clone()
    size = x.numel() if a["wrap"] or x.dim() > 2 else min(x.numel(), cols * cols)
    idx = [i + offset for i in range(0, size, step) if 0 <= i % cols + offset < cols]
    flat = x.reshape(-1).clone()
    flat[torch.tensor(idx, dtype=torch.int64)] = torch.tensor(scalar(a["value"]), dtype=x.dtype)
    return flat.reshape(x.shape)


def zero_(a: dict[str, Any]) -> Any:
    """Zeros of x's shape and dtype (in place in Paddle)."""
    return torch_module().zeros_like(a["x"])


def set_(a: dict[str, Any]) -> Any:
    """x re-pointed at ``source``'s memory (in place in Paddle): ``shape`` and ``stride`` default to source's,
    a shape alone takes contiguous strides, ``offset`` counts bytes; no source leaves x empty."""
    torch = torch_module()
    x, src = a["x"], a["source"]
    if src is None:
        return torch.empty(0, dtype=x.dtype)
    if a["shape"] is None:
        return src.clone()
    shape = to_ints(a["shape"])
    stride = a["stride"] if a["stride"] is not None else [math.prod(shape[i + 1:]) for i in range(len(shape))]
    return as_strided({"x": src, "shape": shape, "stride": stride, "offset": a["offset"]}).clone()


def fill_(a: dict[str, Any]) -> Any:
    """``value`` everywhere, x's shape and dtype (in place in Paddle)."""
    return torch_module().full_like(a["x"], scalar(a["value"]))


def parameters_to_vector(a: dict[str, Any]) -> Any:
    """The parameters flattened and concatenated."""
    torch = torch_module()
    return torch.cat([p.reshape(-1) for p in a["parameters"]])


def vector_to_parameters(a: dict[str, Any]) -> Any:
    """Copies slices of ``vec`` into the parameters in place and returns None, as Paddle does."""
    torch = torch_module()
    with torch.no_grad():
        torch.nn.utils.vector_to_parameters(a["vec"], [p.clone() for p in a["parameters"]])
    return None


def complex_(a: dict[str, Any]) -> Any:
    """real + i*imag, broadcast."""
    torch = torch_module()
    real, imag = torch.broadcast_tensors(a["real"], a["imag"])
    return torch.complex(real, imag)


def polar(a: dict[str, Any]) -> Any:
    """abs * (cos(angle) + i sin(angle)), written out: torch.polar's gradient for a negative ``abs`` differs from
    the formula's (Paddle's)."""
    torch = torch_module()
    r, t = a["abs"], a["angle"]
    return torch.complex(r * torch.cos(t), r * torch.sin(t))


def frexp(a: dict[str, Any]) -> Any:
    """(mantissa, exponent), the exponent in x's float dtype (torch gives int32)."""
    m, e = torch_module().frexp(a["x"])
    return m, e.to(a["x"].dtype)


def tril_indices(a: dict[str, Any]) -> Any:
    """[2, N] indices of the lower triangle (``col=None``: square), in ``dtype``."""
    torch = torch_module()
    row = to_int(a["row"])
    col = row if a["col"] is None else to_int(a["col"])
    return torch.tril_indices(row, col, to_int(a["offset"])).to(to_torch_dtype(a["dtype"]))


def triu_indices(a: dict[str, Any]) -> Any:
    """[2, N] indices of the upper triangle (``col=None``: square), in ``dtype``."""
    torch = torch_module()
    row = to_int(a["row"])
    col = row if a["col"] is None else to_int(a["col"])
    return torch.triu_indices(row, col, to_int(a["offset"])).to(to_torch_dtype(a["dtype"]))


# -- random: only shapes and dtypes are compared -------------------------------------------------------------------


def normal(a: dict[str, Any]) -> Any:
    """Tensor mean/std: their broadcast shape and dtype; numbers: float32 of ``shape``."""
    torch = torch_module()
    mean, std = a["mean"], a["std"]
    if isinstance(mean, torch.Tensor) or isinstance(std, torch.Tensor):
        dtype = (mean if isinstance(mean, torch.Tensor) else std).dtype  # a number takes the tensor's dtype
        m, s = torch.broadcast_tensors(torch.as_tensor(mean, dtype=dtype), torch.as_tensor(std, dtype=dtype))
        return torch.normal(m, s)
    return torch.normal(float(mean), float(std), size=_shape(a["shape"]), dtype=torch.float32)


def standard_normal(a: dict[str, Any]) -> Any:
    """N(0, 1) of ``shape``, float32 unless ``dtype``."""
    return torch_module().randn(_shape(a["shape"]), dtype=_float_default(a["dtype"]))


def log_normal(a: dict[str, Any]) -> Any:
    """exp(N(mean, std)): tensor mean/std give their broadcast shape and dtype; numbers float32 of ``shape``."""
    torch = torch_module()
    mean, std = a["mean"], a["std"]
    if isinstance(mean, torch.Tensor) or isinstance(std, torch.Tensor):
        return torch.exp(normal(a))
    return torch.empty(_shape(a["shape"]), dtype=torch.float32).log_normal_(float(a["mean"]), float(a["std"]))


def multinomial(a: dict[str, Any]) -> Any:
    """int64 category indices, ``num_samples`` per row (a number or a 1-element tensor)."""
    torch = torch_module()
    return torch.multinomial(a["x"], to_int(a["num_samples"]), replacement=bool(a["replacement"]))


def bernoulli(a: dict[str, Any]) -> Any:
    """0/1 draws with probability x (or the number ``p``), x's dtype."""
    torch = torch_module()
    x = a["x"]
    return torch.bernoulli(x if a["p"] is None else torch.full_like(x, float(a["p"])))


def poisson(a: dict[str, Any]) -> Any:
    """Poisson draws with rate x, x's dtype."""
    return torch_module().poisson(a["x"])


def normal_(a: dict[str, Any]) -> Any:
    """N(mean, std) draws of x's shape and dtype."""
    return torch_module().empty_like(a["x"]).normal_(scalar(a["mean"]) if not isinstance(a["mean"], complex)
                                                     else 0.0, float(a["std"]))


def exponential_(a: dict[str, Any]) -> Any:
    """Exponential(lam) draws of x's shape and dtype."""
    return torch_module().empty_like(a["x"]).exponential_(float(scalar(a["lam"])))


def log_normal_(a: dict[str, Any]) -> Any:
    """exp(N(mean, std)) draws of x's shape and dtype."""
    return torch_module().empty_like(a["x"]).log_normal_(float(a["mean"]), float(a["std"]))


def cauchy_(a: dict[str, Any]) -> Any:
    """Cauchy(loc, scale) draws of x's shape and dtype."""
    return torch_module().empty_like(a["x"]).cauchy_(float(a["loc"]), float(a["scale"]))


def geometric_(a: dict[str, Any]) -> Any:
    """Geometric(probs) draws of x's shape and dtype."""
    return torch_module().empty_like(a["x"]).geometric_(float(scalar(a["probs"])))


def bernoulli_(a: dict[str, Any]) -> Any:
    """Bernoulli(p) draws of x's shape and dtype."""
    torch = torch_module()
    p = a["p"]
    return torch.empty_like(a["x"]).bernoulli_(p if isinstance(p, torch.Tensor) else float(p))
