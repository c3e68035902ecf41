"""Converters for Reductions, scans, sorting and search."""

from __future__ import annotations

from typing import Any

from opbench.mapping.converters import axes, dtype_or_none, scalar, to_int, torch_module
from opbench.mapping.dtypes import to_torch_dtype


def _sum_like(fn_name: str, a: dict[str, Any], dtype: Any) -> Any:
    torch = torch_module()
    x = a["x"]
    dims = axes(a["axis"], x.dim())
    kw = {} if dtype is None else {"dtype": dtype}
    if dims is None:
        return _keepdim_all(getattr(torch, fn_name)(x, **kw), x.dim(), a["keepdim"])
    return getattr(torch, fn_name)(x, dim=dims, keepdim=a["keepdim"], **kw)


def reduce_sum(a: dict[str, Any]) -> Any:
    """``axis`` int/list/None; bool and int32 inputs sum to int64 (as in torch); ``dtype`` casts first."""
    return _sum_like("sum", a, dtype_or_none(a["dtype"]))


def mean(a: dict[str, Any]) -> Any:
    """``axis`` int/list/None (None or [] = all), ``keepdim`` kept for a full reduction too; an integer
    ``x`` gives the truncated mean in x's dtype (torch.mean refuses integers)."""
    x = a["x"]
    if dtype_or_none(a["dtype"]) is None and not (x.is_floating_point() or x.is_complex()):
        dims = axes(a["axis"], x.dim())
        return _keepdim_all(mean_int(x, dims, a["keepdim"]), x.dim(), a["keepdim"] and dims is None)
    return _sum_like("mean", a, dtype_or_none(a["dtype"]))


def _amax_amin(fn_name: str, a: dict[str, Any]) -> Any:
    torch = torch_module()
    x = a["x"]
    dims = axes(a["axis"], x.dim())
    if dims is None:
        return _keepdim_all(getattr(torch, fn_name)(x), x.dim(), a["keepdim"])
    return getattr(torch, fn_name)(x, dim=dims, keepdim=a["keepdim"])


def reduce_max(a: dict[str, Any]) -> Any:
    """Values only (torch.max with a dim also returns indices): torch.amax over int/list/None axes."""
    return _amax_amin("amax", a)


def reduce_min(a: dict[str, Any]) -> Any:
    """Values only (torch.min with a dim also returns indices): torch.amin over int/list/None axes."""
    return _amax_amin("amin", a)


def prod(a: dict[str, Any]) -> Any:
    """torch.prod takes one dim: reduce list axes one at a time; result keeps x's dtype unless ``dtype``."""
    torch = torch_module()
    x = a["x"]
    dtype = dtype_or_none(a["dtype"])
    if dtype is not None:
        x = x.to(dtype)
    dims = axes(a["axis"], x.dim())
    if dims is None or x.dim() == 0:
        out = _keepdim_all(torch.prod(x), x.dim(), a["keepdim"])
    else:
        norm = sorted({d % x.dim() for d in dims}, reverse=True)
        out = x
        for d in norm:
            out = torch.prod(out, dim=d, keepdim=True)
        if not a["keepdim"]:
            out = out.squeeze(tuple(norm))
    return out.to(x.dtype)  # torch.prod widens int32 to int64, Paddle keeps int32


def logsumexp(a: dict[str, Any]) -> Any:
    """``axis`` None (or []) reduces every dim, with ``keepdim`` giving ``[1] * ndim``."""
    torch = torch_module()
    x = a["x"]
    dims = axes(a["axis"], x.dim())
    if dims is None:
        dims = tuple(range(x.dim())) if x.dim() else (0,)
    elif x.dim() == 0:
        dims = (0,)
    return torch.logsumexp(x, dim=dims, keepdim=a["keepdim"])


def cumsum(a: dict[str, Any]) -> Any:
    """``axis=None`` sums over the flattened tensor; ``dtype`` casts the input first."""
    torch = torch_module()
    x = a["x"]
    dtype = dtype_or_none(a["dtype"])
    if a["axis"] is None:
        return torch.cumsum(x.flatten(), dim=0, dtype=dtype)
    return torch.cumsum(x, dim=to_int(a["axis"]), dtype=dtype)


def argmax(a: dict[str, Any]) -> Any:
    """``axis=None`` flattens (``keepdim`` then gives ``[1] * ndim``); ``dtype`` is the index dtype."""
    torch = torch_module()
    x = a["x"]
    if a["axis"] is None:
        out = _keepdim_all(torch.argmax(x), x.dim(), a["keepdim"])
    else:
        out = torch.argmax(x, dim=to_int(a["axis"]), keepdim=a["keepdim"])
    return out.to(to_torch_dtype(a["dtype"]))


def _keepdim_all(out: Any, ndim: int, keepdim: bool) -> Any:
    """Reshape a full reduction to Paddle's ``keepdim=True`` shape ``[1] * ndim``."""
    return out.reshape([1] * ndim) if keepdim else out


# -- helpers for reductions torch does over one dim only ---------------------------------------------------------


def _norm_dims(x: Any, axis: Any) -> tuple[int, ...]:
    """Paddle ``axis`` (None/[] = all) as sorted non-negative dims of ``x`` (a 0-D tensor has none)."""
    dims = axes(axis, x.dim())
    if x.dim() == 0:
        return ()
    return tuple(sorted({d % x.dim() for d in (range(x.dim()) if dims is None else dims)}))


def _to_last(x: Any, dims: tuple[int, ...]) -> Any:
    """``x`` with ``dims`` moved to the end and merged into one last dim (a 0-D ``x`` becomes ``[1]``)."""
    if x.dim() == 0:
        return x.reshape(1)
    rest = [d for d in range(x.dim()) if d not in dims]
    y = x.permute(*rest, *dims)
    n = 1
    for d in dims:
        n *= x.shape[d]
    return y.reshape(*[x.shape[d] for d in rest], n)


def _kept_shape(x: Any, dims: tuple[int, ...], keepdim: bool) -> list[int]:
    """The output shape of reducing ``dims`` of ``x``."""
    if keepdim:
        return [1 if d in dims else s for d, s in enumerate(x.shape)]
    return [s for d, s in enumerate(x.shape) if d not in dims]


def _over_last(x: Any, axis: Any, keepdim: bool, fn: Any) -> Any:
    """Apply a last-dim reduction ``fn(y) -> tensor or tuple`` over Paddle ``axis``, shaped like Paddle's result."""
    dims = _norm_dims(x, axis)
    out = fn(_to_last(x, dims))
    shape = _kept_shape(x, dims, keepdim)
    if isinstance(out, tuple):
        return tuple(o.reshape(shape) for o in out)
    return out.reshape(shape)


def _any_all(fn_name: str, a: dict[str, Any]) -> Any:
    torch = torch_module()
    x = a["x"]
    dims = _norm_dims(x, a["axis"])
    if not dims:
        return getattr(torch, fn_name)(x).reshape([1] * x.dim() if a["keepdim"] else [])
    return getattr(torch, fn_name)(x, dim=dims, keepdim=bool(a["keepdim"])).to(torch.bool)


def reduce_all(a: dict[str, Any]) -> Any:
    """``axis`` int/list/tuple/None; any input dtype gives a bool result."""
    return _any_all("all", a)


def reduce_any(a: dict[str, Any]) -> Any:
    """``axis`` int/list/tuple/None; any input dtype gives a bool result."""
    return _any_all("any", a)


def amax(a: dict[str, Any]) -> Any:
    """torch.amax over int/list/None axes, ``keepdim`` for a full reduction too."""
    return _amax_amin("amax", a)


def amin(a: dict[str, Any]) -> Any:
    """torch.amin over int/list/None axes, ``keepdim`` for a full reduction too."""
    return _amax_amin("amin", a)


def _var_std(fn_name: str, a: dict[str, Any]) -> Any:
    torch = torch_module()
    x = a["x"]
    unbiased = a["unbiased"]
    correction = a.get("correction", 1) if unbiased is None else int(bool(unbiased))
    dims = _norm_dims(x, a["axis"])
    if not dims:  # a 0-D input
        return getattr(torch, fn_name)(x.reshape(1), correction=correction).reshape([])
    return getattr(torch, fn_name)(x, dim=dims, correction=correction, keepdim=bool(a["keepdim"]))


def var(a: dict[str, Any]) -> Any:
    """``unbiased`` (None: use the keyword ``correction``) as torch's ``correction``; list/None axes."""
    return _var_std("var", a)


def std(a: dict[str, Any]) -> Any:
    """``unbiased`` as torch's ``correction``; list/None axes, ``keepdim`` for a full reduction too."""
    return _var_std("std", a)


def nansum(a: dict[str, Any]) -> Any:
    """torch.nansum over int/list/None axes; ``dtype`` casts first."""
    return _sum_like("nansum", a, dtype_or_none(a["dtype"]))


def nanmean(a: dict[str, Any]) -> Any:
    """torch.nanmean over int/list/None axes, ``keepdim`` for a full reduction too."""
    torch = torch_module()
    x = a["x"]
    dims = _norm_dims(x, a["axis"])
    if not dims:
        return torch.nanmean(x)
    return torch.nanmean(x, dim=dims, keepdim=bool(a["keepdim"]))


def mean_int(x: Any, dims: Any, keepdim: bool) -> Any:
    """Paddle's mean of an integer tensor: the sum divided by the count, truncated, in x's dtype."""
    torch = torch_module()
    total = torch.sum(x, dtype=torch.int64) if dims is None else torch.sum(x, dim=dims, keepdim=keepdim,
                                                                            dtype=torch.int64)
    n = x.numel() // max(total.numel(), 1)
    return torch.div(total, n, rounding_mode="trunc").to(x.dtype)


def topk(a: dict[str, Any]) -> Any:
    """(values, int64 indices); ``k`` int or 1-element tensor; ``axis=None`` is the last dim."""
    torch = torch_module()
    x = a["x"]
    axis = -1 if a["axis"] is None else to_int(a["axis"])
    if x.dim() == 0:
        return x.clone(), torch.zeros((), dtype=torch.int64)
    return tuple(torch.topk(x, to_int(a["k"]), dim=axis, largest=bool(a["largest"]), sorted=True))


def sort(a: dict[str, Any]) -> Any:
    """Values only (torch.sort also returns indices)."""
    torch = torch_module()
    x = a["x"]
    if x.dim() == 0:
        return x.clone()
    return torch.sort(x, dim=to_int(a["axis"]), descending=bool(a["descending"]), stable=True).values


def argsort(a: dict[str, Any]) -> Any:
    """int64 indices of a stable sort (Paddle's CPU sort keeps equal elements in order)."""
    torch = torch_module()
    x = a["x"]
    if x.dim() == 0:
        return torch.zeros((), dtype=torch.int64)
    return torch.sort(x, dim=to_int(a["axis"]), descending=bool(a["descending"]), stable=True).indices


def argmin(a: dict[str, Any]) -> Any:
    """``axis=None`` flattens (``keepdim`` then gives ``[1] * ndim``); ``dtype`` is the index dtype."""
    torch = torch_module()
    x = a["x"]
    keepdim = bool(a["keepdim"])
    if a["axis"] is None:
        out = _keepdim_all(torch.argmin(x), x.dim(), keepdim)
    else:
        out = torch.argmin(x, dim=to_int(a["axis"]), keepdim=keepdim)
    return out.to(to_torch_dtype(a["dtype"]))


def kthvalue(a: dict[str, Any]) -> Any:
    """(values, int64 indices); ``axis=None`` is the last dim."""
    torch = torch_module()
    x = a["x"]
    axis = -1 if a["axis"] is None else to_int(a["axis"])
    return tuple(torch.kthvalue(x, to_int(a["k"]), dim=axis, keepdim=bool(a["keepdim"])))


def mode(a: dict[str, Any]) -> Any:
    """(values, int64 indices) of the most frequent value along ``axis``."""
    torch = torch_module()
    return tuple(torch.mode(a["x"], dim=to_int(a["axis"]), keepdim=bool(a["keepdim"])))


def _median(a: dict[str, Any], nan: bool) -> Any:
    """``mode="avg"``: mean of the two middle values (values only); ``"min"``: the lower one, with its index
    when ``axis`` is one int."""
    torch = torch_module()
    x = a["x"]
    keepdim = bool(a["keepdim"])
    if x.numel() == 0 or any(x.shape[d] == 0 for d in _norm_dims(x, a["axis"])):  # an empty reduction is NaN
        dims = _norm_dims(x, a["axis"])
        return torch.full(_kept_shape(x, dims, keepdim), float("nan"),
                          dtype=x.dtype if x.is_floating_point() else torch.float32)
    if a["mode"] == "avg":
        if not x.is_floating_point():  # the mean of two middle integers is a float32
            x = x.to(torch.float32)
        q = torch.nanquantile if nan else torch.quantile
        out = _over_last(x, a["axis"], keepdim, lambda y: q(y, 0.5, dim=-1))
        return out
    med = torch.nanmedian if nan else torch.median
    axis = a["axis"]
    single = axis is not None and not isinstance(axis, (list, tuple)) and x.dim() > 0
    if single:
        return tuple(med(x, dim=to_int(axis), keepdim=keepdim))
    return _over_last(x, axis, keepdim, lambda y: med(y, dim=-1).values)


def median(a: dict[str, Any]) -> Any:
    """``mode="avg"`` is torch.quantile(0.5) (torch.median picks the lower middle); ``"min"`` is torch.median."""
    return _median(a, nan=False)


def nanmedian(a: dict[str, Any]) -> Any:
    """As :func:`median`, ignoring NaNs; list axes are merged into one dim first."""
    return _median(a, nan=True)


def _quantile(a: dict[str, Any], nan: bool) -> Any:
    torch = torch_module()
    x = a["x"]
    fn = torch.nanquantile if nan else torch.quantile
    q = a["q"]
    scalar_q = not isinstance(q, (list, tuple)) and not (hasattr(q, "dim") and q.dim() > 0)
    qt = torch.as_tensor(q.tolist() if hasattr(q, "tolist") else q, dtype=x.dtype).reshape(-1)
    dims = _norm_dims(x, a["axis"])
    shape = _kept_shape(x, dims, bool(a["keepdim"]))
    if x.numel() == 0:  # torch refuses an empty input; Paddle gives NaN (or an empty result)
        out = torch.full([qt.numel(), *shape], float("nan"), dtype=x.dtype)
        return out[0] if scalar_q else out
    out = fn(_to_last(x, dims), qt, dim=-1, interpolation=a["interpolation"])  # [len(q), *rest]
    out = out.reshape([qt.numel(), *shape])
    return out[0] if scalar_q else out


def quantile(a: dict[str, Any]) -> Any:
    """torch.quantile takes one dim: list/None axes are merged into one; a list ``q`` adds a leading dim."""
    return _quantile(a, nan=False)


def nanquantile(a: dict[str, Any]) -> Any:
    """As :func:`quantile`, ignoring NaNs."""
    return _quantile(a, nan=True)


def nonzero(a: dict[str, Any]) -> Any:
    """``[N, ndim]`` int64 indices, or (as_tuple) one ``[N]`` tensor per dim."""
    torch = torch_module()
    x = a["x"]
    if a["as_tuple"]:
        return tuple(torch.nonzero(x.reshape(1) if x.dim() == 0 else x, as_tuple=True))
    return torch.nonzero(x)


def masked_select(a: dict[str, Any]) -> Any:
    """x and mask broadcast together; the selected values as a 1-D tensor."""
    return torch_module().masked_select(a["x"], a["mask"])


def allclose(a: dict[str, Any]) -> Any:
    """A 0-D bool tensor (torch.allclose returns a Python bool); ``rtol``/``atol`` may be tensors."""
    torch = torch_module()
    ok = torch.allclose(a["x"], a["y"], rtol=float(scalar(a["rtol"])), atol=float(scalar(a["atol"])),
                        equal_nan=bool(a["equal_nan"]))
    return torch.tensor(ok)


def isclose(a: dict[str, Any]) -> Any:
    """Element-wise bool; ``rtol``/``atol`` may be tensors."""
    return torch_module().isclose(a["x"], a["y"], rtol=float(scalar(a["rtol"])), atol=float(scalar(a["atol"])),
                                  equal_nan=bool(a["equal_nan"]))


def equal_all(a: dict[str, Any]) -> Any:
    """A 0-D bool tensor: same shape and equal values (torch.equal returns a Python bool)."""
    torch = torch_module()
    return torch.tensor(torch.equal(a["x"], a["y"]))


def searchsorted(a: dict[str, Any]) -> Any:
    """int64 (``out_int32``: int32) insertion indices; ``side`` overrides ``right`` when given."""
    torch = torch_module()
    right = a["right"] if a.get("side") is None else a["side"] == "right"
    return torch.searchsorted(a["sorted_sequence"], a["values"], out_int32=bool(a["out_int32"]), right=bool(right))


def bucketize(a: dict[str, Any]) -> Any:
    """int64 (``out_int32``: int32) bucket indices of x in a 1-D sorted sequence."""
    torch = torch_module()
    return torch.bucketize(a["x"], a["sorted_sequence"], out_int32=bool(a["out_int32"]), right=bool(a["right"]))


def count_nonzero(a: dict[str, Any]) -> Any:
    """int64 counts over int/list/None axes; torch has no ``keepdim``, so it is reshaped in."""
    torch = torch_module()
    x = a["x"]
    dims = _norm_dims(x, a["axis"])
    out = torch.count_nonzero(x, dim=dims) if dims else torch.count_nonzero(x)
    return out.reshape(_kept_shape(x, dims, bool(a["keepdim"])))


def _scan(fn_name: str, a: dict[str, Any], axis: Any) -> Any:
    torch = torch_module()
    x = a["x"]
    dtype = dtype_or_none(a.get("dtype"))
    if dtype is not None:
        x = x.to(dtype)
    if axis is None:
        x, axis = x.flatten(), 0
    return getattr(torch, fn_name)(x, dim=to_int(axis))


def logcumsumexp(a: dict[str, Any]) -> Any:
    """``axis=None`` scans the flattened tensor; ``dtype`` casts first."""
    return _scan("logcumsumexp", a, a["axis"])


def cumprod(a: dict[str, Any]) -> Any:
    """``dim=None`` scans the flattened tensor; ``dtype`` casts first; ints keep their dtype (torch widens)."""
    out = _scan("cumprod", a, a["dim"])
    return out if a.get("dtype") is not None else out.to(a["x"].dtype)


def _cum_extreme(fn_name: str, a: dict[str, Any]) -> Any:
    torch = torch_module()
    x = a["x"]
    axis = a["axis"]
    if axis is None:
        x, axis = x.flatten(), 0
    values, indices = getattr(torch, fn_name)(x, dim=to_int(axis))
    return values, indices.to(to_torch_dtype(a["dtype"]))


def cummax(a: dict[str, Any]) -> Any:
    """(values, indices in ``dtype``); ``axis=None`` scans the flattened tensor."""
    return _cum_extreme("cummax", a)


def cummin(a: dict[str, Any]) -> Any:
    """(values, indices in ``dtype``); ``axis=None`` scans the flattened tensor."""
    return _cum_extreme("cummin", a)


def bincount(a: dict[str, Any]) -> Any:
    """Counts of non-negative ints: int64, or the weights' float dtype (float64 for int weights, as torch);
    ``minlength`` may be a tensor."""
    return torch_module().bincount(a["x"], weights=a["weights"], minlength=to_int(a["minlength"]) or 0)


def unique(a: dict[str, Any]) -> Any:
    """Sorted unique values, then (as asked) first-occurrence indices, inverse and counts in ``dtype``."""
    torch = torch_module()
    x = a["x"]
    axis = a["axis"]
    dim = None if axis is None or (isinstance(axis, (list, tuple)) and not axis) else to_int(axis)
    values, inverse, counts = torch.unique(x, sorted=True, return_inverse=True, return_counts=True, dim=dim)
    itype = to_torch_dtype(a["dtype"])
    out = [values]
    if a["return_index"]:
        n = x.numel() if dim is None else x.shape[dim]
        first = torch.full((values.shape[0] if dim is None else values.shape[dim],), n, dtype=torch.int64)
        first = first.scatter_reduce(0, inverse.reshape(-1), torch.arange(inverse.numel()), reduce="amin")
        out.append(first.to(itype))
    if a["return_inverse"]:
        out.append(inverse.reshape(-1).to(itype) if dim is None else inverse.to(itype))
    if a["return_counts"]:
        out.append(counts.to(itype))
    return out[0] if len(out) == 1 else tuple(out)


def unique_consecutive(a: dict[str, Any]) -> Any:
    """Values, then (as asked) inverse and counts in ``dtype``; ``axis=None`` flattens."""
    torch = torch_module()
    axis = a["axis"]
    dim = None if axis is None else to_int(axis)
    values, inverse, counts = torch.unique_consecutive(a["x"], return_inverse=True, return_counts=True, dim=dim)
    itype = to_torch_dtype(a["dtype"])
    out = [values]
    if a["return_inverse"]:
        out.append(inverse.reshape(-1).to(itype) if dim is None else inverse.to(itype))
    if a["return_counts"]:
        out.append(counts.to(itype))
    return out[0] if len(out) == 1 else tuple(out)


def _hist_range(x: Any, lo: Any, hi: Any) -> tuple[float, float]:
    """Paddle's range: ``min == max == 0`` uses the data's; an empty range widens by 0.5 each side."""
    lo, hi = float(scalar(lo)), float(scalar(hi))
    if lo == 0 and hi == 0 and x.numel():
        lo, hi = float(x.detach().min()), float(x.detach().max())
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return lo, hi


def histogram(a: dict[str, Any]) -> Any:
    """int64 counts of ``bins`` equal bins over [min, max] (0, 0: the data's range); float with ``weight``
    or ``density``."""
    torch = torch_module()
    x = a["input"]
    lo, hi = _hist_range(x, a["min"], a["max"])
    bins = to_int(a["bins"])
    xf = x.to(torch.float64).flatten()
    w = a["weight"]
    counts = torch.histc(xf, bins=bins, min=lo, max=hi) if w is None else torch.histogram(
        xf, bins=bins, range=(lo, hi), weight=w.to(torch.float64).flatten()).hist
    if a["density"]:
        width = (hi - lo) / bins
        counts = counts / (counts.sum() * width)
        return counts.to(torch.float32)
    if w is not None:
        return counts.to(w.dtype)
    return counts.to(torch.int64)


def histogramdd(a: dict[str, Any]) -> Any:
    """torch.histogramdd over x's points (its last dim is the point's coordinates): ``bins`` a count, one
    count a dim, or one edge tensor a dim; ``ranges`` flat (min, max) pairs; returns (hist, edges list)."""
    torch = torch_module()
    x, bins, w = a["x"], a["bins"], a["weights"]
    if isinstance(bins, (list, tuple)):
        bins = [b.to(x.dtype) if hasattr(b, "dtype") else int(b) for b in bins]
    else:
        bins = to_int(bins)
    ranges = None if a["ranges"] is None else [float(v) for v in a["ranges"]]
    hist, edges = torch.histogramdd(x.reshape(-1, x.shape[-1]), bins=bins, range=ranges,
                                    weight=None if w is None else w.reshape(-1).to(x.dtype), density=bool(a["density"]))
    return hist, list(edges)


def histogram_bin_edges(a: dict[str, Any]) -> Any:
    """``bins + 1`` equal float32 edges over [min, max] (0, 0: the data's range), whatever x's dtype."""
    torch = torch_module()
    x = a["input"]
    lo, hi = _hist_range(x, a["min"], a["max"])
    return torch.linspace(lo, hi, to_int(a["bins"]) + 1, dtype=torch.float64).to(torch.float32)


def reduce_as(a: dict[str, Any]) -> Any:
    """Sum x down to ``target``'s shape (leading dims dropped, size-1 dims kept)."""
    x, target = a["x"], a["target"]
    lead = x.dim() - target.dim()
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(target.shape) if s == 1 and x.shape[lead + i] != 1)
    out = x.sum(dim=dims, keepdim=True) if dims else x
    return out.reshape(target.shape)
