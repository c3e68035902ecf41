"""Converters for Shape, layout and indexing."""

from __future__ import annotations

from typing import Any

from opbench.mapping.converters import axes, dtype_or_none, scalar, to_int, to_ints, torch_module
from opbench.mapping.spec import MappingUnsupported


def _is_tensor(v: Any) -> bool:
    return hasattr(v, "dtype") and hasattr(v, "shape") and not isinstance(v, (int, float, bool))


def _as_value(v: Any, like: Any) -> Any:
    """A Paddle fill value (number or tensor) as a tensor of ``like``'s dtype, keeping its autograd graph."""
    torch = torch_module()
    if _is_tensor(v):
        return v.to(like.dtype)
    return torch.tensor(v, dtype=like.dtype)


# ---------------------------------------------------------------- indexing (__getitem__, __setitem__)


def _index_tuple(item: Any) -> tuple[Any, ...]:
    """Paddle's index as a tuple of torch index elements, NumPy rules (lists are arrays, not tuples)."""
    torch = torch_module()
    parts = item if isinstance(item, tuple) else (item,)
    out: list[Any] = []
    for p in parts:
        if isinstance(p, list):
            flat = _flatten_list(p)
            dtype = torch.bool if flat and all(isinstance(v, bool) for v in flat) else torch.int64
            p = torch.tensor([_tolist_item(v) for v in p] if p else [], dtype=dtype)
        elif _is_tensor(p) and p.dtype not in (torch.bool, torch.int64):
            p = p.long()
        elif isinstance(p, slice):
            p = slice(*(None if v is None else to_int(v) for v in (p.start, p.stop, p.step)))
        out.append(p)
    return tuple(out)


def _flatten_list(v: Any) -> list[Any]:
    if isinstance(v, (list, tuple)):
        return [e for x in v for e in _flatten_list(x)]
    return [v]


def _tolist_item(v: Any) -> Any:
    if isinstance(v, list):
        return [_tolist_item(e) for e in v]
    return v.tolist() if hasattr(v, "tolist") else v


def _consumed(p: Any) -> int:
    """How many dims of x an index element consumes (Ellipsis is counted apart)."""
    if p is None or isinstance(p, bool):
        return 0
    if _is_tensor(p) and p.dtype == torch_module().bool:
        return max(p.dim(), 0)
    return 1


def _torch_index(x: Any, item: Any) -> tuple[list[int], tuple[Any, ...]]:
    """The dims of x to flip and the torch index that, applied to ``x.flip(dims)``, gives Paddle's ``x[item]``.

    Torch has no negative slice steps: they become positive steps on the flipped dim. Lists
    become index tensors (torch would read a list of lists as a tuple). Integers and 0-D
    integer tensors select a dim first in both Paddle and torch (not NumPy's broadcast).
    """
    idx = list(_index_tuple(item))
    n_ellipsis = sum(1 for p in idx if p is Ellipsis)
    used = sum(_consumed(p) for p in idx if p is not Ellipsis)
    flips: list[int] = []
    dim = 0
    for i, p in enumerate(idx):
        if p is Ellipsis:
            dim += max(x.dim() - used, 0) if n_ellipsis else 0
            continue
        if isinstance(p, slice) and p.step is not None and p.step < 0:
            n = x.shape[dim]
            start, stop, step = p.indices(n)
            count = len(range(start, stop, step))
            flips.append(dim)
            first = n - 1 - start
            idx[i] = slice(first, first + (-step) * (count - 1) + 1, -step) if count else slice(0, 0)
        dim += _consumed(p)
    return flips, tuple(idx)


def getitem(a: dict[str, Any]) -> Any:
    """``x[item]`` with Paddle's rules (negative slice steps, lists as index arrays)."""
    x = a["self"]
    flips, idx = _torch_index(x, a["item"])
    return (x.flip(flips) if flips else x)[idx]


def _assign(x: Any, item: Any, value: Any) -> Any:
    """A copy of x with ``x[item] = value`` under Paddle's indexing rules; value cast to x's dtype as Paddle does."""
    if x.numel() == 0:
        return x.clone()  # nothing to write; Paddle does not check the indices then, torch does
    flips, idx = _torch_index(x, item)
    out = x.flip(flips) if flips else x.clone()
    out[idx] = _as_value(value, out)
    return out.flip(flips) if flips else out


def setitem(a: dict[str, Any]) -> Any:
    """``x[item] = value`` on a copy of x, returned (Paddle writes in place and returns None)."""
    return _assign(a["self"], a["item"], a["value"])


# ---------------------------------------------------------------- slicing


def _slices(x: Any, axes_: Any, starts: Any, ends: Any, strides: Any = None) -> tuple[Any, ...]:
    """An index tuple with ``slice(start, end, stride)`` on each of ``axes_``, ``:`` elsewhere."""
    dims = to_ints(axes_)
    starts, ends = to_ints(starts), to_ints(ends)
    steps = to_ints(strides) if strides is not None else [1] * len(dims)
    index: list[Any] = [slice(None)] * x.dim()
    for d, s, e, st in zip(dims, starts, ends, steps, strict=False):
        index[d % x.dim()] = slice(s, e, st)
    return tuple(index)


def slice_(a: dict[str, Any]) -> Any:
    """Python slicing per axis: negative bounds count from the end, out-of-range bounds are clamped."""
    x = a["input"]
    return getitem({"self": x, "item": _slices(x, a["axes"], a["starts"], a["ends"])})


def strided_slice(a: dict[str, Any]) -> Any:
    """Python slicing per axis with a stride (negative strides walk backwards)."""
    x = a["x"]
    return getitem({"self": x, "item": _slices(x, a["axes"], a["starts"], a["ends"], a["strides"])})


def slice_scatter(a: dict[str, Any]) -> Any:
    """``value`` written into the strided slices of a copy of x (torch.slice_scatter takes one dim only)."""
    x = a["x"]
    return _assign(x, _slices(x, a["axes"], a["starts"], a["ends"], a["strides"]), a["value"])


def crop(a: dict[str, Any]) -> Any:
    """``x[offsets : offsets + shape]`` per dim; a -1 in ``shape`` keeps the rest of that dim."""
    x = a["x"]
    shape = to_ints(a["shape"]) if a["shape"] is not None else list(x.shape)
    offsets = to_ints(a["offsets"]) if a["offsets"] is not None else [0] * x.dim()
    pairs = enumerate(zip(offsets, shape, strict=False))
    index = tuple(slice(o, x.shape[d] if s == -1 else o + s) for d, (o, s) in pairs)
    return x[index]


# ---------------------------------------------------------------- shapes


def reshape(a: dict[str, Any]) -> Any:
    """A 0 in ``shape`` copies that dim of x (literal 0 when x is empty, as Paddle does); -1 is inferred."""
    x = a["x"]
    shape = to_ints(a["shape"])
    if x.numel() > 0:
        shape = [x.shape[i] if s == 0 and i < x.dim() else s for i, s in enumerate(shape)]
    return x.reshape(shape)


def transpose(a: dict[str, Any]) -> Any:
    """Paddle's transpose is a full permutation: torch.permute."""
    return a["x"].permute(to_ints(a["perm"]))


def concat(a: dict[str, Any]) -> Any:
    """A list/tuple of tensors; ``axis`` may be a 0-D tensor."""
    return torch_module().cat(list(a["x"]), dim=to_int(a["axis"]))


def stack(a: dict[str, Any]) -> Any:
    """A list/tuple of tensors stacked along a new ``axis``."""
    return torch_module().stack(list(a["x"]), dim=to_int(a["axis"]))


def multiplex(a: dict[str, Any]) -> Any:
    """Row i of the output is row i of ``inputs[index[i]]`` (as many rows as ``index`` has)."""
    torch = torch_module()
    idx = a["index"].reshape(-1).long()
    rows = torch.stack([t[: idx.numel()] for t in a["inputs"]])
    return rows[idx, torch.arange(idx.numel(), device=idx.device)]


def as_strided(a: dict[str, Any]) -> Any:
    """A view of x's elements; Paddle counts ``offset`` in bytes, torch in elements."""
    x, offset = a["x"], to_int(a["offset"])
    if offset % x.element_size():
        raise MappingUnsupported(f"offset {offset} bytes is not a whole number of {x.dtype} elements")
    return torch_module().as_strided(x, to_ints(a["shape"]), to_ints(a["stride"]), offset // x.element_size())


def squeeze(a: dict[str, Any]) -> Any:
    """``axis`` int/list/None; dims in ``axis`` whose size is not 1 are left alone (as torch>=2.0 does)."""
    x = a["x"]
    dims = axes(a["axis"], x.dim())
    if dims is None:
        return x.squeeze()
    if x.dim() == 0:
        return x.clone()
    return x.squeeze(dims)


def unsqueeze(a: dict[str, Any]) -> Any:
    """List axes are inserted one after another, each against the rank reached so far."""
    out = a["x"]
    for ax in to_ints(a["axis"]):
        out = out.unsqueeze(ax if ax >= 0 else ax + out.dim() + 1)
    return out


def expand(a: dict[str, Any]) -> Any:
    """``shape`` may hold -1 (keep the dim) and tensors; extra leading dims broadcast."""
    return a["x"].expand(to_ints(a["shape"]))


def broadcast_to(a: dict[str, Any]) -> Any:
    """``shape`` as a list/tuple/tensor of ints (may hold 0-D tensors and -1)."""
    return a["x"].expand(to_ints(a["shape"]))


def tile(a: dict[str, Any]) -> Any:
    """``repeat_times`` as a list/tuple/tensor; shorter than x's rank means leading 1s, as torch.tile does."""
    return torch_module().tile(a["x"], to_ints(a["repeat_times"]))


def flatten(a: dict[str, Any]) -> Any:
    """torch.flatten; the axes may be 0-D tensors."""
    return torch_module().flatten(a["x"], to_int(a["start_axis"]), to_int(a["stop_axis"]))


def unflatten(a: dict[str, Any]) -> Any:
    """torch.unflatten; ``shape`` may be a tensor or hold 0-D tensors."""
    return torch_module().unflatten(a["x"], to_int(a["axis"]), to_ints(a["shape"]))


def view(a: dict[str, Any]) -> Any:
    """A shape (list/tuple) reshapes a view; a dtype reinterprets the bytes."""
    x, target = a["x"], a["shape_or_dtype"]
    if isinstance(target, (list, tuple)) or _is_tensor(target):
        return x.view(to_ints(target))
    return x.view(dtype_or_none(target))


def moveaxis(a: dict[str, Any]) -> Any:
    """torch.movedim with int or list axes."""
    src, dst = a["source"], a["destination"]
    src = to_ints(src) if isinstance(src, (list, tuple)) else to_int(src)
    dst = to_ints(dst) if isinstance(dst, (list, tuple)) else to_int(dst)
    return torch_module().movedim(a["x"], src, dst)


def roll(a: dict[str, Any]) -> Any:
    """``shifts`` int/list/tensor, ``axis`` None (roll the flattened tensor), int or list."""
    shifts, dims = to_ints(a["shifts"]), axes(a["axis"])
    if dims is None:
        return torch_module().roll(a["x"], shifts)
    return torch_module().roll(a["x"], shifts, dims)


def flip(a: dict[str, Any]) -> Any:
    """``axis`` int, list or tuple."""
    return torch_module().flip(a["x"], axes(a["axis"]) or ())


def rot90(a: dict[str, Any]) -> Any:
    """torch.rot90 with ``axes`` as a list or tuple."""
    return torch_module().rot90(a["x"], to_int(a["k"]), to_ints(a["axes"]))


def atleast(ndim: int) -> Any:
    """paddle.atleast_Nd: one input gives one tensor, several give a list (as torch's atleast_Nd)."""

    def convert(a: dict[str, Any]) -> Any:
        torch = torch_module()
        fn = {1: torch.atleast_1d, 2: torch.atleast_2d, 3: torch.atleast_3d}[ndim]
        inputs = a["inputs"]
        if len(inputs) == 1:
            return fn(inputs[0])
        return list(fn(*inputs))

    convert.__name__ = f"atleast_{ndim}d"
    convert.__doc__ = f"paddle.atleast_{ndim}d: one input gives a tensor, several a list."
    return convert


def stacker(name: str) -> Any:
    """paddle.vstack/hstack/dstack/column_stack/row_stack: the torch function of the same name on the list."""

    def convert(a: dict[str, Any]) -> Any:
        return getattr(torch_module(), name)(list(a["x"]))

    convert.__name__ = name
    convert.__doc__ = f"torch.{name} on the list of tensors."
    return convert


def broadcast_tensors(a: dict[str, Any]) -> Any:
    """torch.broadcast_tensors on the list; Paddle returns a list."""
    return list(torch_module().broadcast_tensors(*a["input"]))


def as_complex(a: dict[str, Any]) -> Any:
    """``complex(x[..., 0], x[..., 1])`` (torch.view_as_complex refuses empty tensors: no stride-1 last dim)."""
    x = a["x"]
    return torch_module().complex(x[..., 0], x[..., 1])


def as_real(a: dict[str, Any]) -> Any:
    """torch.view_as_real."""
    return torch_module().view_as_real(a["x"])


# ---------------------------------------------------------------- splitting


def _sections(size: int, sections: list[int]) -> list[int]:
    """Section sizes with one -1 inferred."""
    if -1 in sections:
        known = sum(s for s in sections if s != -1)
        sections = [size - known if s == -1 else s for s in sections]
    return sections


def split(a: dict[str, Any]) -> Any:
    """An int splits into that many equal parts; a list gives the sizes (one -1 inferred); axis may be a tensor."""
    x, dim = a["x"], to_int(a["axis"])
    n = a["num_or_sections"]
    if isinstance(n, (list, tuple)) or (_is_tensor(n) and n.dim() > 0):
        sections = _sections(x.shape[dim], to_ints(n))
        if x.numel() == 0 and sum(sections) != x.shape[dim]:
            return [x.clone() for _ in sections]  # Paddle gives each part x's empty shape
        return list(torch_module().split(x, sections, dim))
    n = to_int(n)
    return list(torch_module().tensor_split(x, n, dim))


def chunk(a: dict[str, Any]) -> Any:
    """Paddle's chunk needs equal parts: torch.tensor_split (torch.chunk returns fewer parts for empty dims)."""
    return list(torch_module().tensor_split(a["x"], to_int(a["chunks"]), to_int(a["axis"])))


def tensor_split(a: dict[str, Any]) -> Any:
    """torch.tensor_split with an int or a list/tuple of split indices."""
    n = a["num_or_indices"]
    n = to_ints(n) if isinstance(n, (list, tuple)) else to_int(n)
    return list(torch_module().tensor_split(a["x"], n, to_int(a["axis"])))


def splitter(name: str) -> Any:
    """paddle.vsplit/hsplit/dsplit: torch's function of the same name with an int or list of indices."""

    def convert(a: dict[str, Any]) -> Any:
        n = a["num_or_indices"]
        n = to_ints(n) if isinstance(n, (list, tuple)) else to_int(n)
        return list(getattr(torch_module(), name)(a["x"], n))

    convert.__name__ = name
    convert.__doc__ = f"torch.{name}, a list out."
    return convert


def unbind(a: dict[str, Any]) -> Any:
    """torch.unbind; Paddle returns a list; ``axis`` may be a tensor."""
    return list(torch_module().unbind(a["input"], to_int(a["axis"])))


def unstack(a: dict[str, Any]) -> Any:
    """torch.unbind (``num`` must equal the axis size, so it changes nothing)."""
    return list(torch_module().unbind(a["x"], to_int(a["axis"])))


def unfold(a: dict[str, Any]) -> Any:
    """paddle.unfold is Tensor.unfold: windows of ``size`` every ``step`` along ``axis``, as a new last dim."""
    return a["x"].unfold(to_int(a["axis"]), to_int(a["size"]), to_int(a["step"]))


# ---------------------------------------------------------------- gather / scatter


def gather(a: dict[str, Any]) -> Any:
    """index_select along ``axis`` (None = 0); a 0-D index drops that axis, a [N, 1] index is flattened."""
    torch = torch_module()
    x, index = a["x"], a["index"]
    axis = 0 if a["axis"] is None else to_int(a["axis"])
    if index.dim() == 0:
        return torch.index_select(x, axis, index.reshape(1)).squeeze(axis)
    return torch.index_select(x, axis, index.reshape(-1))


def index_select(a: dict[str, Any]) -> Any:
    """torch.index_select with ``dim``; Paddle also takes a [N, 1] index, flattened here."""
    return torch_module().index_select(a["x"], to_int(a["axis"]), a["index"].reshape(-1))


def _nd_index(index: Any) -> tuple[Any, ...]:
    """The last dim of an N-D index as a tuple of integer index tensors (one per leading dim of x)."""
    index = index.long()
    return tuple(index[..., i] for i in range(index.shape[-1]))


def gather_nd(a: dict[str, Any]) -> Any:
    """``x[index[..., 0], index[..., 1], ...]``: the last dim of index addresses x's leading dims."""
    x, index = a["x"], a["index"]
    if index.shape[-1] == 0:
        return x.expand(*index.shape[:-1], *x.shape)
    return x[_nd_index(index)]


def scatter_nd_add(a: dict[str, Any]) -> Any:
    """A copy of x with ``updates`` added at the positions the last dim of index addresses (repeats add up)."""
    x = a["x"]
    return x.index_put(_nd_index(a["index"]), a["updates"].to(x.dtype), accumulate=True)


def scatter_nd(a: dict[str, Any]) -> Any:
    """scatter_nd_add into zeros of ``shape``."""
    updates = a["updates"]
    zeros = torch_module().zeros(to_ints(a["shape"]), dtype=updates.dtype)
    return zeros.index_put(_nd_index(a["index"]), updates, accumulate=True)


def scatter(a: dict[str, Any]) -> Any:
    """Rows of x at ``index`` replaced by ``updates`` (overwrite) or zeroed then summed into (overwrite=False)."""
    x, index, updates = a["x"], a["index"].reshape(-1).long(), a["updates"].to(a["x"].dtype)
    if a["overwrite"]:
        return x.index_copy(0, index, updates.reshape(index.shape[0], *x.shape[1:]))
    zeroed = x.index_fill(0, index, 0)
    return zeroed.index_add(0, index, updates.reshape(index.shape[0], *x.shape[1:]))


def index_sample(a: dict[str, Any]) -> Any:
    """Per row i, ``x[i, index[i, j]]``: torch.gather along dim 1."""
    return torch_module().gather(a["x"], 1, a["index"].long())


def take_along_axis(a: dict[str, Any]) -> Any:
    """torch.gather after Paddle's broadcast of ``indices`` and ``arr`` (every dim but ``axis``)."""
    torch = torch_module()
    arr, indices, axis = a["arr"], a["indices"].long(), to_int(a["axis"]) % max(a["arr"].dim(), 1)
    if a["broadcast"]:
        shape = [0 if (i == 0 or s == 0) else max(s, i) for s, i in zip(arr.shape, indices.shape, strict=True)]
        shape[axis] = indices.shape[axis]
        indices = indices.expand(shape)
        shape[axis] = arr.shape[axis]
        arr = arr.expand(shape)
    return torch.gather(arr, axis, indices)


_REDUCE = {"add": "sum", "mul": "prod", "multiply": "prod", "mean": "mean", "amin": "amin", "amax": "amax"}


def put_along_axis(a: dict[str, Any]) -> Any:
    """torch.scatter / scatter_reduce after Paddle's broadcast of ``indices`` and ``values``."""
    torch = torch_module()
    arr, indices, axis = a["arr"], a["indices"].long(), to_int(a["axis"]) % max(a["arr"].dim(), 1)
    values = _as_value(a["values"], arr)
    if a["broadcast"]:
        shape = list(arr.shape)
        shape[axis] = indices.shape[axis]
        if all(s >= i for s, i in zip(arr.shape, indices.shape, strict=True)):
            indices = indices.expand(shape)
            values = values.expand(shape)
        else:
            values = values.expand(indices.shape)
    elif values.numel() == 1:
        values = values.expand(indices.shape)
    values = values[tuple(slice(0, n) for n in indices.shape)]  # the part the scatter reads (torch's backward wants it)
    reduce = a["reduce"]
    if reduce == "assign":
        return torch.scatter(arr, axis, indices, values)
    return torch.scatter_reduce(arr, axis, indices, values, _REDUCE[reduce], include_self=bool(a["include_self"]))


def index_put(a: dict[str, Any]) -> Any:
    """torch.index_put with int (as int64) or bool index tensors; value cast to x's dtype."""
    x = a["x"]
    torch = torch_module()
    indices = tuple(i if i.dtype == torch.bool else i.long() for i in a["indices"])
    return torch.index_put(x, indices, _as_value(a["value"], x), accumulate=bool(a["accumulate"]))


def index_add(a: dict[str, Any]) -> Any:
    """torch.index_add (``alpha`` scales ``value``)."""
    x = a["x"]
    return torch_module().index_add(x, to_int(a["axis"]), a["index"].long(), a["value"].to(x.dtype),
                                    alpha=scalar(a["alpha"]))


def index_fill(a: dict[str, Any]) -> Any:
    """torch.index_fill; ``value`` a number or a 0-D tensor."""
    x = a["x"]
    if x.numel() == 0:
        return x.clone()  # torch refuses any index into an empty tensor; Paddle returns it as it is
    value = a["value"]
    value = value.to(x.dtype).reshape(()) if _is_tensor(value) else value
    return torch_module().index_fill(x, to_int(a["axis"]), a["index"].long().reshape(-1), value)


def masked_fill(a: dict[str, Any]) -> Any:
    """``where(mask, value, x)``: Paddle broadcasts x and mask both ways and keeps x's dtype."""
    x = a["x"]
    return torch_module().where(a["mask"], _as_value(a["value"], x), x)


def masked_scatter(a: dict[str, Any]) -> Any:
    """torch.masked_scatter (x and mask broadcast together)."""
    x, mask = a["x"], a["mask"]
    torch = torch_module()
    x, mask = torch.broadcast_tensors(x, mask)
    return torch.masked_scatter(x, mask, a["value"].to(x.dtype))


def select_scatter(a: dict[str, Any]) -> Any:
    """torch.select_scatter."""
    x = a["x"]
    return torch_module().select_scatter(x, _as_value(a["values"], x), to_int(a["axis"]), to_int(a["index"]))


def diagonal_scatter(a: dict[str, Any]) -> Any:
    """torch.diagonal_scatter."""
    x = a["x"]
    return torch_module().diagonal_scatter(x, a["y"].to(x.dtype), to_int(a["offset"]), to_int(a["axis1"]),
                                           to_int(a["axis2"]))


def take(a: dict[str, Any]) -> Any:
    """Flat-index gather; ``mode`` 'raise' (negatives count from the end), 'wrap' (modulo) or 'clip'."""
    x, index = a["x"], a["index"].long()
    n = x.numel()
    mode = a["mode"]
    if mode == "wrap":
        index = index.remainder(n)
    elif mode == "clip":
        index = index.clamp(0, n - 1)
    return torch_module().take(x, index)


def repeat_interleave(a: dict[str, Any]) -> Any:
    """torch.repeat_interleave; ``repeats`` an int or a tensor (one element means an int); axis None flattens."""
    repeats = a["repeats"]
    if _is_tensor(repeats) and repeats.numel() == 1 and repeats.dim() <= 1:
        repeats = int(repeats.reshape(()).item())
    dim = None if a["axis"] is None else to_int(a["axis"])
    return torch_module().repeat_interleave(a["x"], repeats, dim)


def shard_index(a: dict[str, Any]) -> Any:
    """Index ``v`` -> ``v % shard_size`` when it falls in shard ``shard_id``, else ``ignore_value``."""
    x = a["input"]
    size = (int(a["index_num"]) + int(a["nshards"]) - 1) // int(a["nshards"])
    inside = x.div(size, rounding_mode="floor") == int(a["shard_id"])
    return torch_module().where(inside, x.remainder(size), torch_module().full_like(x, int(a["ignore_value"])))


# ---------------------------------------------------------------- differences and integrals


def diff(a: dict[str, Any]) -> Any:
    """torch.diff (bool tensors differ by XOR in both)."""
    return torch_module().diff(a["x"], n=to_int(a["n"]), dim=to_int(a["axis"]), prepend=a["prepend"],
                               append=a["append"])


def trapezoid(a: dict[str, Any]) -> Any:
    """torch.trapezoid: sample points ``x`` or a spacing ``dx`` (default 1)."""
    torch = torch_module()
    if a["x"] is not None:
        return torch.trapezoid(a["y"], a["x"], dim=to_int(a["axis"]))
    return torch.trapezoid(a["y"], dx=1.0 if a["dx"] is None else scalar(a["dx"]), dim=to_int(a["axis"]))


def cumulative_trapezoid(a: dict[str, Any]) -> Any:
    """torch.cumulative_trapezoid: sample points ``x`` or a spacing ``dx`` (default 1)."""
    torch = torch_module()
    if a["x"] is not None:
        return torch.cumulative_trapezoid(a["y"], a["x"], dim=to_int(a["axis"]))
    dx = 1.0 if a["dx"] is None else scalar(a["dx"])
    return torch.cumulative_trapezoid(a["y"], dx=dx, dim=to_int(a["axis"]))


def pdist(a: dict[str, Any]) -> Any:
    """torch.pdist; fewer than two rows give an empty result here (torch's backward dies of SIGFPE on them)."""
    x = a["x"]
    if x.shape[0] < 2:
        return x.reshape(-1)[:0] * 1
    return torch_module().pdist(x, p=float(scalar(a["p"])))


def combinations(a: dict[str, Any]) -> Any:
    """torch.combinations."""
    return torch_module().combinations(a["x"], to_int(a["r"]), bool(a["with_replacement"]))
