"""Converters for ``paddle.nn.functional`` convolution, pooling, resampling and padding.

Paddle differs from torch in the same few ways across this family: a ``data_format`` that may be
channel-last (moved to channel-first here and back), paddings given as "SAME"/"VALID" strings,
per-side lists or per-dim pairs (applied here with an explicit ``F.pad`` when torch's symmetric
padding cannot express them), and pooling masks that are int32 flat indices into the unpadded input.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from opbench.mapping.converters import scalar, to_int, to_ints, torch_module
from opbench.mapping.spec import MappingUnsupported

# --- shared helpers -----------------------------------------------------------------------------------------


def _ranked(impl: Callable[[dict[str, Any], int], Any], name: str, ranks: tuple[int, ...]) -> list[Callable]:
    """One converter per spatial rank ``n`` from ``impl(a, n)``, named ``name`` with ``{n}`` filled in."""
    out = []
    for n in ranks:
        def convert(a: dict[str, Any], n: int = n) -> Any:
            return impl(a, n)

        convert.__name__ = convert.__qualname__ = name.format(n=n)
        convert.__doc__ = impl.__doc__
        out.append(convert)
    return out


def _F() -> Any:
    return torch_module().nn.functional


def _channel_last(data_format: str | None) -> bool:
    """True for NLC/NWC/NHWC/NDHWC; channel-first layouts and None are False."""
    return bool(data_format) and len(data_format) > 2 and data_format.upper()[-1] == "C"


def _cf(x: Any, data_format: str | None) -> Any:
    return x.movedim(-1, 1) if _channel_last(data_format) else x


def _back(x: Any, data_format: str | None) -> Any:
    return x.movedim(1, -1) if _channel_last(data_format) else x


def _tuple_n(v: Any, n: int) -> list[int]:
    """An int or a list of ints (or tensors) as ``n`` ints."""
    vals = to_ints(v)
    if len(vals) == 1:
        return vals * n
    if len(vals) != n:
        raise MappingUnsupported(f"expected {n} values, got {vals}")
    return vals


def _pads(padding: Any, n: int, data_format: str | None, kernel: list[int], stride: list[int],
          spatial: list[int], dilation: list[int] | None = None) -> tuple[list[tuple[int, int]], list[int] | None]:
    """Paddle's padding forms as (before, after) per spatial dim, plus the dilation SAME resets to 1.

    Forms: int; "SAME"/"VALID" (any case); n ints (symmetric); 2n ints (before/after per dim, first dim
    first); n+2 pairs including the batch and channel dims (which must be [0, 0]).
    """
    if isinstance(padding, str):
        algo = padding.upper()
        if algo == "VALID":
            return [(0, 0)] * n, dilation
        if algo != "SAME":
            raise MappingUnsupported(f"padding={padding!r}")
        out = []
        for i in range(n):
            o = (spatial[i] + stride[i] - 1) // stride[i]
            total = max((o - 1) * stride[i] + kernel[i] - spatial[i], 0)
            out.append((total // 2, total - total // 2))
        return out, None if dilation is None else [1] * n
    if hasattr(padding, "tolist"):
        padding = padding.tolist()
    if isinstance(padding, (int, float)):
        return [(int(padding), int(padding))] * n, dilation
    padding = list(padding)
    if padding and isinstance(padding[0], (list, tuple)):
        pairs = [tuple(to_ints(p)) for p in padding]
        if len(pairs) != n + 2:
            raise MappingUnsupported(f"padding={padding}")
        body = pairs[1:-1] if _channel_last(data_format) else pairs[2:]
        return [(int(a), int(b)) for a, b in body], dilation
    vals = to_ints(padding)
    if len(vals) == 1:
        return [(vals[0], vals[0])] * n, dilation
    if len(vals) == n:
        return [(v, v) for v in vals], dilation
    if len(vals) == 2 * n:
        return [(vals[2 * i], vals[2 * i + 1]) for i in range(n)], dilation
    raise MappingUnsupported(f"padding={padding}")


def _torch_pad(pairs: list[tuple[int, int]]) -> list[int]:
    """(before, after) pairs, first spatial dim first, as torch's F.pad list (last dim first)."""
    out: list[int] = []
    for a, b in reversed(pairs):
        out += [a, b]
    return out


def _symmetric(pairs: list[tuple[int, int]]) -> bool:
    return all(a == b for a, b in pairs)


# --- convolution --------------------------------------------------------------------------------------------


def _conv_geometry(a: dict[str, Any], n: int) -> tuple[Any, ...]:
    """What a convolution and its transpose both read: layout, channel-first x, weight, stride, dilation,
    kernel size and Paddle's padding as (before, after) pairs per spatial dim."""
    fmt = a["data_format"]
    x = _cf(a["x"], fmt)
    w = a["weight"]
    stride = _tuple_n(a["stride"], n)
    dilation = _tuple_n(a["dilation"], n)
    kernel = list(w.shape[2:])
    pairs, dilation = _pads(a["padding"], n, fmt, kernel, stride, list(x.shape[2:]), dilation)
    return fmt, x, w, stride, dilation, kernel, pairs


def _conv(a: dict[str, Any], n: int) -> Any:
    """Paddle's conv{n}d: NHWC layout, SAME/VALID and per-side paddings (SAME resets dilation to 1)."""
    F = _F()
    fmt, x, w, stride, dilation, kernel, pairs = _conv_geometry(a, n)
    if _symmetric(pairs):
        padding = [p for p, _ in pairs]
    else:
        x = F.pad(x, _torch_pad(pairs))
        padding = [0] * n
    fn = (F.conv1d, F.conv2d, F.conv3d)[n - 1]
    out = fn(x, w, None, stride=stride, padding=padding, dilation=dilation, groups=int(a["groups"]))
    return _back(_add_bias(out, a["bias"]), fmt)


conv1d, conv2d, conv3d = _ranked(_conv, "conv{n}d", (1, 2, 3))


def _add_bias(out: Any, bias: Any) -> Any:
    """Paddle broadcasts the bias over the channels (a one-element bias is allowed; torch's conv refuses it)."""
    return out if bias is None else out + bias.reshape([1, -1] + [1] * (out.ndim - 2))


def _conv_transpose(a: dict[str, Any], n: int) -> Any:
    """Paddle's conv{n}d_transpose: NHWC layout, SAME/VALID/per-side paddings and ``output_size``."""
    F = _F()
    fmt, x, w, stride, dilation, kernel, pairs = _conv_geometry(a, n)
    out_pad = _tuple_n(a["output_padding"], n)
    spatial = list(x.shape[2:])
    # Transposed convolution with padding p is the unpadded result with p cropped from each side.
    base = [(spatial[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1 - pairs[i][0] - pairs[i][1]
            for i in range(n)]
    if a["output_size"] is not None:
        size = a["output_size"]
        size = _tuple_n(size.tolist() if hasattr(size, "tolist") else size, n)
        out_pad = [size[i] - base[i] for i in range(n)]
    fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[n - 1]
    if _symmetric(pairs) and all(0 <= p < max(s, d) for p, s, d in zip(out_pad, stride, dilation, strict=True)):
        out = fn(x, w, None, stride=stride, padding=[p for p, _ in pairs], output_padding=out_pad,
                 groups=int(a["groups"]), dilation=dilation)
        return _back(_add_bias(out, a["bias"]), fmt)
    full = fn(x, w, None, stride=stride, padding=0, groups=int(a["groups"]), dilation=dilation)
    full_len = list(full.shape[2:])
    # Grow (zeros) or crop the end for output_padding, then crop the paddings.
    grow = [max(0, pairs[i][0] + base[i] + out_pad[i] - full_len[i]) for i in range(n)]
    if any(grow):
        full = F.pad(full, _torch_pad([(0, g) for g in grow]))
    index = [slice(None), slice(None)] + [slice(pairs[i][0], pairs[i][0] + base[i] + out_pad[i]) for i in range(n)]
    return _back(_add_bias(full[tuple(index)], a["bias"]), fmt)


# --- pooling ------------------------------------------------------------------------------------------------


conv1d_transpose, conv2d_transpose, conv3d_transpose = _ranked(_conv_transpose, "conv{n}d_transpose", (1, 2, 3))


def _pool_geometry(a: dict[str, Any], x: Any, n: int) -> tuple[list[int], list[int], list[tuple[int, int]]]:
    kernel = _tuple_n(a["kernel_size"], n)
    stride = kernel if a["stride"] is None else _tuple_n(a["stride"], n)
    pairs, _ = _pads(a["padding"], n, a.get("data_format"), kernel, stride, list(x.shape[2:]))
    return kernel, stride, pairs


def _paddle_out_len(size: int, k: int, s: int, pb: int, pa: int, ceil: bool) -> int:
    total = size + pb + pa - k
    return (total + s - 1) // s + 1 if ceil else total // s + 1


def _fit(x: Any, kernel: list[int], stride: list[int], pairs: list[tuple[int, int]], ceil: bool,
         value: float) -> tuple[Any, list[int]]:
    """x padded explicitly (with ``value``) so that floor-mode pooling gives Paddle's output length."""
    F = _F()
    n = len(kernel)
    spatial = list(x.shape[2:])
    outs = [_paddle_out_len(spatial[i], kernel[i], stride[i], *pairs[i], ceil) for i in range(n)]
    full = [(outs[i] - 1) * stride[i] + kernel[i] for i in range(n)]
    ext = [(pairs[i][0], full[i] - spatial[i] - pairs[i][0]) for i in range(n)]
    if any(b < 0 for _, b in ext):  # trailing elements no window reaches: crop them
        idx = [slice(None), slice(None)] + [slice(0, spatial[i] + min(0, ext[i][1])) for i in range(n)]
        x = x[tuple(idx)]
        ext = [(b, max(0, e)) for b, e in ext]
    if any(b or e for b, e in ext):
        x = F.pad(x, _torch_pad(ext), value=value)
    return x, outs


def _max_pool(a: dict[str, Any], n: int) -> Any:
    """Paddle's max_pool{n}d: NHWC, SAME/VALID/per-side paddings, Paddle's ceil_mode sizes, int32 mask."""
    torch = torch_module()
    F = _F()
    fmt = a.get("data_format")
    x = _cf(a["x"], fmt)
    kernel, stride, pairs = _pool_geometry(a, x, n)
    spatial = list(x.shape[2:])
    fill = -math.inf if x.is_floating_point() else torch.iinfo(x.dtype).min
    xp, _ = _fit(x, kernel, stride, pairs, bool(a["ceil_mode"]), fill)
    fn = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[n - 1]
    out, idx = fn(xp, kernel, stride, 0, return_indices=True)
    if not a["return_mask"]:
        return _back(out, fmt)
    # torch's indices are flat into the padded input; Paddle's into the unpadded one.
    padded = list(xp.shape[2:])
    coords, rem = [], idx
    for size in reversed(padded):
        coords.append(rem % size)
        rem = rem // size
    coords.reverse()
    flat = torch.zeros_like(idx)
    for i in range(n):
        flat = flat * spatial[i] + (coords[i] - pairs[i][0])
    return _back(out, fmt), _back(flat.to(torch.int32), fmt)


max_pool1d, max_pool2d, max_pool3d = _ranked(_max_pool, "max_pool{n}d", (1, 2, 3))


def _avg_pool(a: dict[str, Any], n: int) -> Any:
    """Paddle's avg_pool{n}d: ``exclusive`` (in-input count) or the full window, NHWC, SAME/VALID/per-side pads."""
    torch = torch_module()
    fmt = a.get("data_format")
    x = _cf(a["x"], fmt)
    kernel, stride, pairs = _pool_geometry(a, x, n)
    ceil = bool(a["ceil_mode"])
    xp, _ = _fit(x, kernel, stride, pairs, ceil, 0.0)
    ones = torch.ones((1, 1, *x.shape[2:]), dtype=x.dtype, device=x.device)
    onesp, _ = _fit(ones, kernel, stride, pairs, ceil, 0.0)
    sums = _strided_sum(xp, kernel, stride)
    if a["exclusive"]:  # in-input elements only
        count = _strided_sum(onesp, kernel, stride)
    else:  # input and padding, not the part of a ceil_mode window past the padding
        padded = _F().pad(ones, _torch_pad(pairs), value=1.0)
        count = _strided_sum(_fit(padded, kernel, stride, [(0, 0)] * n, ceil, 0.0)[0], kernel, stride)
    out = sums / count
    divisor = a.get("divisor_override")
    if divisor:  # Paddle rescales its (exclusive) mean by the window size over the override
        out = out * (math.prod(kernel) / float(divisor))
    return _back(out, fmt)


avg_pool1d, avg_pool2d, avg_pool3d = _ranked(_avg_pool, "avg_pool{n}d", (1, 2, 3))


def _strided_sum(x: Any, kernel: list[int], stride: list[int]) -> Any:
    """Window sums with torch's avg pool (divisor 1), floor mode, no padding."""
    F = _F()
    n = len(kernel)
    if n == 1:
        y = F.avg_pool2d(x.unsqueeze(-1), [kernel[0], 1], [stride[0], 1], 0, divisor_override=1)
        return y.squeeze(-1)
    fn = F.avg_pool2d if n == 2 else F.avg_pool3d
    return fn(x, kernel, stride, 0, divisor_override=1)


def _lp_pool(a: dict[str, Any], n: int) -> Any:
    """(sum over the window of x^p)^(1/p), Paddle's padding and ceil_mode applied like its pools."""
    fmt = a.get("data_format")
    x = _cf(a["x"], fmt)
    p = float(scalar(a["norm_type"]))
    kernel, stride, pairs = _pool_geometry(a, x, n)
    if p == -math.inf:
        raise MappingUnsupported("norm_type=-inf")
    if math.isinf(p):
        xp, _ = _fit(x, kernel, stride, pairs, bool(a["ceil_mode"]), -math.inf)
        fn = (_F().max_pool1d, _F().max_pool2d, _F().max_pool3d)[n - 1]
        return _back(fn(xp, kernel, stride), fmt)
    xp, _ = _fit(x, kernel, stride, pairs, bool(a["ceil_mode"]), 0.0)
    sums = _strided_sum(xp.pow(p), kernel, stride)
    return _back(sums.pow(1.0 / p), fmt)


lp_pool1d, lp_pool2d = _ranked(_lp_pool, "lp_pool{n}d", (1, 2))


def _adaptive_size(output_size: Any, x: Any, n: int) -> list[int]:
    """Paddle's output_size (int, list with None entries keeping the input size, tensor) as ints."""
    if hasattr(output_size, "tolist"):
        output_size = output_size.tolist()
    if isinstance(output_size, (int, float)):
        return [int(output_size)] * n
    sizes = list(output_size)
    if len(sizes) == 1:
        sizes = sizes * n
    return [int(x.shape[2 + i]) if s is None else to_int(s) for i, s in enumerate(sizes)]


def _adaptive_avg(a: dict[str, Any], n: int) -> Any:
    """torch's adaptive_avg_pool{n}d with Paddle's output_size forms (None keeps a size) and NHWC."""
    F = _F()
    fmt = a.get("data_format")
    x = _cf(a["x"], fmt)
    size = _adaptive_size(a["output_size"], x, n)
    fn = (F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d)[n - 1]
    return _back(fn(x, size), fmt)


adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d = _ranked(
    _adaptive_avg, "adaptive_avg_pool{n}d", (1, 2, 3))


def _adaptive_max(a: dict[str, Any], n: int) -> Any:
    """torch's adaptive_max_pool{n}d; Paddle's mask is int32."""
    torch = torch_module()
    F = _F()
    x = a["x"]
    size = _adaptive_size(a["output_size"], x, n)
    fn = (F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d)[n - 1]
    out, idx = fn(x, size, return_indices=True)
    return (out, idx.to(torch.int32)) if a["return_mask"] else out


adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d = _ranked(
    _adaptive_max, "adaptive_max_pool{n}d", (1, 2, 3))


def _max_unpool(a: dict[str, Any], n: int) -> Any:
    """torch's max_unpool{n}d with Paddle's int32 indices and layout option."""
    torch = torch_module()
    F = _F()
    fmt = a.get("data_format")
    x = _cf(a["x"], fmt)
    idx = _cf(a["indices"], fmt).to(torch.int64)
    kernel = _tuple_n(a["kernel_size"], n)
    stride = kernel if a["stride"] is None else _tuple_n(a["stride"], n)
    padding = _tuple_n(a["padding"], n)
    if a["output_size"] is not None:
        size = to_ints(a["output_size"])[-n:]
    else:
        size = [(x.shape[2 + i] - 1) * stride[i] - 2 * padding[i] + kernel[i] for i in range(n)]
    fn = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[n - 1]
    if not x.is_floating_point():  # torch has no integer unpool kernel; float64 carries the values exactly
        return _back(fn(x.double(), idx, kernel, stride, padding, output_size=size).to(x.dtype), fmt)
    return _back(fn(x, idx, kernel, stride, padding, output_size=size), fmt)


# --- resampling ---------------------------------------------------------------------------------------------

_LINEAR = {"linear", "bilinear", "trilinear"}


max_unpool1d, max_unpool2d, max_unpool3d = _ranked(_max_unpool, "max_unpool{n}d", (1, 2, 3))


def _f32(v: float) -> float:
    """A Python float rounded to float32, as Paddle's kernels hold their ratios."""
    import struct

    return struct.unpack("f", struct.pack("f", v))[0]


def _ratio(out_len: int, in_len: int, scale: float | None, align_corners: bool) -> float:
    if align_corners:
        return _f32((in_len - 1) / (out_len - 1)) if out_len > 1 else 0.0
    return _f32(1.0 / scale) if scale else _f32(in_len / out_len)


def _linear_taps(out_len: int, in_len: int, ratio: float, align_flag: bool, coordinate: str) -> tuple[Any, ...]:
    """Each output's two source indices and their weights along one axis, rounded as Paddle's CPU kernels round
    them: the index from the double ``ratio * (dst + 0.5) - 0.5`` (``align_flag``: align_mode 0 without
    align_corners) or the float ``ratio * l``, truncated. ``coordinate`` says how the aligned source coordinate
    and the weights are held: "double" (the 1-D kernel on float64), "float of double" (the coordinate computed
    in double, then held and weighed in float32: the 2-D kernel's rows) or "float" (float32 throughout)."""
    f, dst = np.float32, np.arange(out_len)
    real = np.float64 if coordinate == "double" else f
    if align_flag:
        wide = np.float64(ratio) * (dst + 0.5) - 0.5
        lo = np.maximum(np.trunc(wide), 0).astype(np.int64)
        src = f(ratio) * (dst.astype(f) + f(0.5)) - f(0.5) if coordinate == "float" else wide.astype(real)
        near = np.maximum(src, 0).astype(real) - lo.astype(real)
    else:
        scaled = f(ratio) * dst.astype(f)
        lo = np.trunc(scaled).astype(np.int64)
        near = (scaled - lo.astype(f)).astype(real)
    hi = np.where(lo < in_len - 1, lo + 1, lo)
    return lo, hi, (real(1) - near).astype(real), near


# How each linear kernel holds the aligned source coordinate, per spatial axis (_linear_taps), by rank
_COORDINATES = {1: ("double",), 2: ("float of double", "float"), 3: ("float", "float", "float")}


def _linear_axis(x: Any, axis: int, out_len: int, scale: float | None, align_corners: bool, align_mode: int,
                 coordinate: str) -> Any:
    """Linear interpolation along one axis, the way Paddle's kernels place and weigh the source samples."""
    torch = torch_module()
    in_len = x.shape[axis]
    ratio = _ratio(out_len, in_len, scale, align_corners)
    if coordinate == "double" and x.dtype != torch.float64:
        coordinate = "float of double"
    lo, hi, w_lo, w_hi = _linear_taps(out_len, in_len, ratio, align_mode == 0 and not align_corners, coordinate)
    shape = [1] * x.ndim
    shape[axis] = out_len

    def tap(idx: Any, w: Any) -> Any:
        """The samples at ``idx`` along the axis, times their weights (held exactly in float64 on the way)."""
        weight = torch.from_numpy(w.astype(np.float64)).to(device=x.device, dtype=x.dtype).reshape(shape)
        return x.index_select(axis, torch.from_numpy(idx).to(x.device)) * weight

    return tap(lo, w_lo) + tap(hi, w_hi)


def _cubic_axis(x: Any, axis: int, out_len: int, scale: float | None, align_corners: bool) -> Any:
    """Bicubic (A = -0.75) along one axis, Paddle's float32 source coordinates, edge taps clamped."""
    torch = torch_module()
    in_len = x.shape[axis]
    ratio = _ratio(out_len, in_len, scale, align_corners)
    dst = torch.arange(out_len, dtype=torch.float64, device=x.device)
    src = dst * ratio if align_corners else (dst + 0.5) * ratio - 0.5
    src = src.to(x.dtype if x.dtype == torch.float64 else torch.float32)
    base = src.floor()
    t = (src - base).to(x.dtype)
    A = -0.75
    w = [((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A,
         ((A + 2) * t - (A + 3)) * t * t + 1,
         ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1]
    w.append(1 - w[0] - w[1] - w[2])
    shape = [1] * x.ndim
    shape[axis] = out_len
    out = 0
    for k in range(4):
        idx = (base.to(torch.int64) + (k - 1)).clamp(0, in_len - 1)
        out = out + x.index_select(axis, idx) * w[k].reshape(shape)
    return out


def _nearest_axis(x: Any, axis: int, out_len: int, scale: float | None, align_corners: bool) -> Any:
    torch = torch_module()
    in_len = x.shape[axis]
    ratio = _ratio(out_len, in_len, scale, align_corners)
    dst = torch.arange(out_len, dtype=torch.float32, device=x.device) * torch.tensor(ratio, dtype=torch.float32)
    src = (dst + 0.5).floor() if align_corners else dst.floor()
    return x.index_select(axis, src.clamp(max=in_len - 1).to(torch.int64))


def _interp(a: dict[str, Any]) -> Any:
    F = _F()
    x = a["x"]
    mode = str(a["mode"]).lower()
    fmt = a["data_format"]
    x = _cf(x, fmt)
    n = x.ndim - 2
    size, scale = a["size"], a["scale_factor"]
    if size is not None:
        if hasattr(size, "tolist"):
            size = size.tolist()
        sizes = _tuple_n(size, n)
        scales: list[float | None] = [None] * n
    elif scale is not None:
        if hasattr(scale, "tolist"):
            scale = scale.tolist()
        vals = [float(scalar(s)) for s in (scale if isinstance(scale, (list, tuple)) else [scale])]
        scales = vals * n if len(vals) == 1 else vals
        sizes = [int(x.shape[2 + i] * scales[i]) for i in range(n)]
    else:
        raise MappingUnsupported("interpolate needs size or scale_factor")
    align_corners = bool(a["align_corners"])
    align_mode = int(a["align_mode"])
    if list(sizes) == list(x.shape[2:]):  # Paddle's kernels copy the input when no size changes
        return _back(x.clone(), fmt)
    if mode == "area":
        fn = (F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d)[n - 1]
        return _back(fn(x, sizes), fmt)
    if mode in _LINEAR:
        out = x
        for i in range(n):
            out = _linear_axis(out, 2 + i, sizes[i], scales[i], align_corners, align_mode, _COORDINATES[n][i])
        return _back(out, fmt)
    if mode == "nearest":
        out = x
        for i in range(n):
            out = _nearest_axis(out, 2 + i, sizes[i], scales[i], align_corners)
        return _back(out, fmt)
    if mode == "bicubic":
        out = x
        for i in range(n):
            out = _cubic_axis(out, 2 + i, sizes[i], scales[i], align_corners)
        return _back(out, fmt)
    raise MappingUnsupported(f"interpolate mode={mode!r}")


def interpolate(a: dict[str, Any]) -> Any:
    """Paddle's interpolate: align_mode=1 (asymmetric source index), nearest with align_corners, layouts."""
    if a.get("antialias"):
        raise MappingUnsupported("antialias=True")
    return _interp(a)


def upsample(a: dict[str, Any]) -> Any:
    """Paddle's upsample: the same resampling as its interpolate."""
    return _interp(a)


def grid_sample(a: dict[str, Any]) -> Any:
    """torch's grid_sample; Paddle defaults align_corners to True."""
    return _F().grid_sample(a["x"], a["grid"], mode=a["mode"], padding_mode=a["padding_mode"],
                            align_corners=bool(a["align_corners"]))


def affine_grid(a: dict[str, Any]) -> Any:
    """torch's affine_grid; Paddle's out_shape may be a tensor, align_corners defaults to True."""
    return _F().affine_grid(a["theta"], to_ints(a["out_shape"]), align_corners=bool(a["align_corners"]))


def pixel_shuffle(a: dict[str, Any]) -> Any:
    """torch's pixel_shuffle with Paddle's NHWC option."""
    fmt = a["data_format"]
    return _back(_F().pixel_shuffle(_cf(a["x"], fmt), int(a["upscale_factor"])), fmt)


def pixel_unshuffle(a: dict[str, Any]) -> Any:
    """torch's pixel_unshuffle with Paddle's NHWC option."""
    fmt = a["data_format"]
    return _back(_F().pixel_unshuffle(_cf(a["x"], fmt), int(a["downscale_factor"])), fmt)


def channel_shuffle(a: dict[str, Any]) -> Any:
    """Channel shuffle as a reshape/transpose (torch's native op has no autograd on CPU), NHWC option."""
    fmt = a["data_format"]
    x = _cf(a["x"], fmt)
    g = int(a["groups"])
    n, c = x.shape[:2]
    y = x.reshape(n, g, c // g, *x.shape[2:]).transpose(1, 2).reshape(x.shape)
    return _back(y, fmt)


def temporal_shift(a: dict[str, Any]) -> Any:
    """TSM's temporal shift: the first channel fold looks one segment back, the second one ahead."""
    torch = torch_module()
    fmt = a["data_format"]
    x = _cf(a["x"], fmt)
    seg = int(a["seg_num"])
    nt, c, h, w = x.shape
    v = x.reshape(nt // seg, seg, c, h, w)
    c1 = int(c * float(a["shift_ratio"]))
    c2 = int(c * 2 * float(a["shift_ratio"]))
    zero = torch.zeros_like(v[:, :1])
    back = torch.cat([zero[:, :, :c1], v[:, :-1, :c1]], dim=1)
    ahead = torch.cat([v[:, 1:, c1:c2], zero[:, :, c1:c2]], dim=1)
    out = torch.cat([back, ahead, v[:, :, c2:]], dim=2).reshape(nt, c, h, w)
    return _back(out, fmt)


# --- padding, unfold/fold -----------------------------------------------------------------------------------


def pad(a: dict[str, Any]) -> Any:
    """Paddle's pad: a constant pad of 2*ndim values runs first dim first; otherwise spatial dims, torch order."""
    F = _F()
    x, p, mode = a["x"], a["pad"], a["mode"]
    value = scalar(a["value"])
    value = float(value) if isinstance(value, (bool, int)) else value
    is_tensor = hasattr(p, "tolist")
    p = to_ints(p)
    if is_tensor and not p:
        return x.clone()
    nd = x.ndim
    if mode == "constant" and not is_tensor and len(p) != 2 * (nd - 2):
        if len(p) == 2 * nd and a["pad_from_left_axis"]:
            p = _torch_pad([(p[2 * i], p[2 * i + 1]) for i in range(nd)])
        return F.pad(x, p, mode="constant", value=value)
    fmt = a["data_format"]
    y = _cf(x, fmt)
    if mode == "constant":
        return _back(F.pad(y, p, mode="constant", value=value), fmt)
    return _back(F.pad(y, p, mode=mode), fmt)


def zeropad2d(a: dict[str, Any]) -> Any:
    """Paddle's zeropad2d: [left, right, top, bottom] zeros on H and W, NHWC option."""
    fmt = a["data_format"]
    p = _tuple_n(a["padding"], 4)
    return _back(_F().pad(_cf(a["x"], fmt), p), fmt)


def unfold(a: dict[str, Any]) -> Any:
    """torch's unfold; Paddle's paddings may give 4 values [top, left, bottom, right]."""
    F = _F()
    x = a["x"]
    k = _tuple_n(a["kernel_sizes"], 2)
    s = _tuple_n(a["strides"], 2)
    d = _tuple_n(a["dilations"], 2)
    p = to_ints(a["paddings"])
    if len(p) == 4:
        if p[0] == p[2] and p[1] == p[3]:
            p = [p[0], p[1]]
        else:
            x = F.pad(x, [p[1], p[3], p[0], p[2]])
            p = [0, 0]
    p = _tuple_n(p, 2)
    return F.unfold(x, k, dilation=d, padding=p, stride=s)


def fold(a: dict[str, Any]) -> Any:
    """torch's fold; Paddle's paddings may give 4 values [top, left, bottom, right] (symmetric only)."""
    p = to_ints(a["paddings"])
    if len(p) == 4:
        if p[0] != p[2] or p[1] != p[3]:
            raise MappingUnsupported(f"asymmetric fold paddings {p}")
        p = [p[0], p[1]]
    return _F().fold(a["x"], _tuple_n(a["output_sizes"], 2), _tuple_n(a["kernel_sizes"], 2),
                     dilation=_tuple_n(a["dilations"], 2), padding=_tuple_n(p, 2), stride=_tuple_n(a["strides"], 2))


def _fractional_windows(size: int, out: int, kernel: int, u: float) -> list[range]:
    """Each output index's input window along one dim, in Paddle's float32 arithmetic: a pseudo-random
    sequence of steps alpha = (size - kernel) / (out - 1 if kernel else out) apart, offset by ``u`` (scaled
    to the largest offset that keeps the windows inside when no ``kernel`` is given), each window ``kernel``
    long or reaching the next start."""
    f = np.float32
    alpha = f(size - kernel) / f(out - (1 if kernel else 0))
    if kernel:
        shift = f(u)
    else:
        base = size // out
        shift = f(u) * min(f(base + 2) / alpha - f(1), f(size + 1 - base) / alpha - f(out - 1))
    first = int(shift * alpha)
    starts = [int((f(i) + shift) * alpha) - first for i in range(out + 1)]
    ends = [starts[i] + kernel for i in range(out)] if kernel else starts[1:]
    return [range(max(a, 0), min(b, size)) for a, b in zip(starts, ends, strict=False)]


def _fractional_max_pool(a: dict[str, Any], dims: int) -> Any:
    """Max over Paddle's fractional windows (``random_u`` given; without it both sides draw their own), and
    with ``return_mask`` each maximum's flat position in its input plane (int32)."""
    torch = torch_module()
    x = a["x"]
    spatial = list(x.shape[2:])
    size = a["output_size"]
    outs = ([s if o is None else to_int(o) for o, s in zip(size, spatial, strict=True)]
            if isinstance(size, (list, tuple)) else _tuple_n(size, dims))  # None keeps the input's size
    kernel = [0] * dims if a["kernel_size"] is None else _tuple_n(a["kernel_size"], dims)
    u = 0.5 if a["random_u"] is None else float(scalar(a["random_u"]))
    if not x.numel() or 0 in outs:
        out = x.new_empty(*x.shape[:2], *outs)
        return (out, torch.zeros(out.shape, dtype=torch.int32, device=x.device)) if a["return_mask"] else out
    windows = [_fractional_windows(n, o, k, u) for n, o, k in zip(spatial, outs, kernel, strict=True)]
    strides = [math.prod(spatial[i + 1:]) for i in range(dims)]
    cells = []
    for per_dim in itertools.product(*windows):  # output positions in row-major order
        cells.append([sum(p * st for p, st in zip(pos, strides, strict=True)) for pos in itertools.product(*per_dim)])
    width = max((len(c) for c in cells), default=1)
    index = torch.tensor([c + c[:1] * (width - len(c)) for c in cells] or [[0]], device=x.device).reshape(-1)
    flat = x.reshape(*x.shape[:2], math.prod(spatial))
    picked = flat[..., index].reshape(*x.shape[:2], len(cells), width)
    values, arg = picked.max(dim=-1)
    out = values.reshape(*x.shape[:2], *outs)
    if not a["return_mask"]:
        return out
    mask = index.reshape(len(cells), width).expand(*x.shape[:2], -1, -1).gather(-1, arg.unsqueeze(-1))
    return out, mask.reshape(out.shape).to(torch.int32)


def fractional_max_pool2d(a: dict[str, Any]) -> Any:
    return _fractional_max_pool(a, 2)


def fractional_max_pool3d(a: dict[str, Any]) -> Any:
    return _fractional_max_pool(a, 3)
