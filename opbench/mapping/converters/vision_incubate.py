"""Converters for ``paddle.vision.ops``, ``paddle.incubate`` and ``paddle.geometric`` APIs that PyTorch can express."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from opbench.mapping.converters import scalar, torch_module
from opbench.mapping.converters.nn_functional import dropout
from opbench.mapping.spec import UNWRITTEN, MappingUnsupported


def swiglu(a: dict[str, Any]) -> Any:
    """silu(x) * y; with no ``y``, x's last axis split in halves (torch has no swiglu)."""
    torch = torch_module()
    x, y = a["x"], a["y"]
    if y is None:
        x, y = x.chunk(2, dim=-1)
    return torch.nn.functional.silu(x) * y


def fused_rms_norm(a: dict[str, Any]) -> Any:
    """RMS norm of x (+ bias + residual) from ``begin_norm_axis``; returns (out, residual sum or an empty tensor)."""
    torch = torch_module()
    if float(scalar(a["quant_scale"])) > 0:
        raise MappingUnsupported("int8 quantized output (quant_scale > 0)")
    x = a["x"]
    if a["bias"] is not None:
        x = x + a["bias"]
    if a["residual"] is not None:
        x = x + a["residual"]
    axis = int(a["begin_norm_axis"]) % x.ndim
    dims = tuple(range(axis, x.ndim))
    out = x * torch.rsqrt(x.pow(2).mean(dim=dims, keepdim=True) + float(a["epsilon"]))
    out = out * a["norm_weight"].reshape(x.shape[axis:])
    if a["norm_bias"] is not None:
        out = out + a["norm_bias"].reshape(x.shape[axis:])
    residual_out = x if a["residual"] is not None else torch.empty(0, dtype=x.dtype, device=x.device)
    return out, residual_out


def _c_round(v: float) -> int:
    """C's round(): halves away from zero (Python's round takes them to even)."""
    return int(math.copysign(math.floor(abs(v) + 0.5), v))


def _roi_args(a: dict[str, Any]) -> tuple[tuple[int, int], Any, list[int], Any]:
    """What the RoI pools share: the bins a side (``output_size``), x's precision as a NumPy type (Paddle's
    kernels compute the bins in it), each box's image (``boxes_num[i]`` boxes belong to image ``i``), and
    ``spatial_scale`` as the float32 the kernels take, in that precision."""
    torch = torch_module()
    size = a["output_size"]
    bins = (int(size), int(size)) if not isinstance(size, (list, tuple)) else (int(size[0]), int(size[1]))
    real = np.float64 if a["x"].dtype == torch.float64 else np.float32
    counts = a["boxes_num"].to(torch.int64).reshape(-1)
    image = torch.repeat_interleave(torch.arange(counts.numel()), counts.cpu()).tolist()
    return bins, real, image, real(np.float32(scalar(a["spatial_scale"])))


def roi_pool(a: dict[str, Any]) -> Any:
    """RoI max pooling as Paddle's kernel does it: each box times ``spatial_scale``, rounded to whole pixels
    (ends included), cut into ``output_size`` bins of the box's size over the bin count (in x's precision),
    each bin the max of its pixels (0 for a bin with none); ``boxes_num[i]`` boxes belong to image ``i``."""
    torch = torch_module()
    x, boxes = a["x"], a["boxes"]
    (ph, pw), real, image, scale = _roi_args(a)
    height, width = x.shape[-2], x.shape[-1]
    outs = []
    for k in range(boxes.shape[0]):
        x1, y1, x2, y2 = (_c_round(float(real(v) * scale)) for v in boxes[k].detach().tolist())
        bin_h, bin_w = real(max(y2 - y1 + 1, 1)) / real(ph), real(max(x2 - x1 + 1, 1)) / real(pw)
        plane = x[image[k]]
        cells = []
        for i in range(ph):
            h0 = min(max(int(math.floor(real(i) * bin_h)) + y1, 0), height)
            h1 = min(max(int(math.ceil(real(i + 1) * bin_h)) + y1, 0), height)
            for j in range(pw):
                w0 = min(max(int(math.floor(real(j) * bin_w)) + x1, 0), width)
                w1 = min(max(int(math.ceil(real(j + 1) * bin_w)) + x1, 0), width)
                region = plane[:, h0:h1, w0:w1].reshape(plane.shape[0], -1)
                cells.append(region.max(dim=1).values if region.shape[1] else plane.new_zeros(plane.shape[0]))
        outs.append(torch.stack(cells, dim=1).reshape(plane.shape[0], ph, pw))
    return torch.stack(outs) if outs else x.new_zeros(0, x.shape[1], ph, pw)


def psroi_pool(a: dict[str, Any]) -> Any:
    """Position-sensitive RoI average pooling (R-FCN) as Paddle computes it: box corners rounded (C's round),
    the far ones a pixel further, times ``spatial_scale``; each of the ``output_size`` bins averages its pixels
    of its own channel group (output channel c, bin (i, j) reads input channel (c * bins_h + i) * bins_w + j),
    0 for a bin with none."""
    torch = torch_module()
    x, boxes = a["x"], a["boxes"]
    (ph, pw), real, image, scale = _roi_args(a)
    height, width = x.shape[-2], x.shape[-1]
    groups = x.shape[1] // (ph * pw)
    outs = []
    for k in range(boxes.shape[0]):
        x1, y1, x2, y2 = (_c_round(float(v)) for v in boxes[k].detach().tolist())
        left, top = real(x1) * scale, real(y1) * scale
        bin_w = max(real(x2 + 1) * scale - left, real(0.1)) / real(pw)
        bin_h = max(real(y2 + 1) * scale - top, real(0.1)) / real(ph)
        maps = x[image[k]].reshape(groups, ph, pw, height, width)
        cells = []
        for i in range(ph):
            h0 = min(max(int(math.floor(real(i) * bin_h + top)), 0), height)
            h1 = min(max(int(math.ceil(real(i + 1) * bin_h + top)), 0), height)
            for j in range(pw):
                w0 = min(max(int(math.floor(real(j) * bin_w + left)), 0), width)
                w1 = min(max(int(math.ceil(real(j + 1) * bin_w + left)), 0), width)
                region = maps[:, i, j, h0:h1, w0:w1].reshape(groups, -1)
                cells.append(region.mean(dim=1) if region.shape[1] else x.new_zeros(groups))
        outs.append(torch.stack(cells, dim=1).reshape(groups, ph, pw))
    return torch.stack(outs) if outs else x.new_zeros(0, groups, ph, pw)


def prior_box(a: dict[str, Any]) -> Any:
    """SSD prior boxes for every cell of ``input``'s [H, W] map over ``image``, normalized to the image: per cell
    and min size, a box per aspect ratio (1 first, then each new ratio and with ``flip`` its inverse) and with
    ``max_sizes`` one of side sqrt(min * max) (after the ratio-1 box under ``min_max_aspect_ratios_order``);
    returns (boxes, variances), both [H, W, priors, 4] in input's dtype."""
    torch = torch_module()
    inp, img = a["input"], a["image"]
    h, w, ih, iw = inp.shape[2], inp.shape[3], img.shape[2], img.shape[3]
    ratios = [1.0]
    for r in (float(v) for v in a["aspect_ratios"]):
        for new in (r, 1.0 / r) if a["flip"] else (r,):
            if all(abs(new - old) >= 1e-6 for old in ratios):
                ratios.append(new)
    steps = [float(v) for v in a["steps"]]
    step_w, step_h = steps[0] or (iw / w if w else 0.0), steps[1] or (ih / h if h else 0.0)
    max_sizes = [float(v) for v in a["max_sizes"] or []]
    half_sizes: list[tuple[float, float]] = []  # (half width, half height) of each prior, in pixels
    for s, low in enumerate(float(v) for v in a["min_sizes"]):
        by_ratio = [(low * math.sqrt(r) / 2, low / math.sqrt(r) / 2) for r in ratios]
        big = [(math.sqrt(low * max_sizes[s]) / 2,) * 2] if max_sizes else []
        half_sizes += by_ratio[:1] + big + by_ratio[1:] if a["min_max_aspect_ratios_order"] else by_ratio + big
    off = float(scalar(a["offset"]))
    cx = (torch.arange(w, dtype=torch.float64) + off) * step_w
    cy = (torch.arange(h, dtype=torch.float64) + off) * step_h
    half = torch.tensor(half_sizes, dtype=torch.float64).reshape(-1, 2)
    centers = torch.stack(torch.meshgrid(cx, cy, indexing="xy"), dim=-1)[:, :, None, :]  # [H, W, 1, 2]
    scale = torch.tensor([iw, ih], dtype=torch.float64)
    boxes = torch.cat([(centers - half) / scale, (centers + half) / scale], dim=-1)
    if a["clip"]:
        boxes = boxes.clamp(0.0, 1.0)
    variances = torch.tensor([float(v) for v in a["variance"]], dtype=torch.float64).expand_as(boxes)
    return boxes.to(inp.dtype), variances.to(inp.dtype).contiguous()


def box_coder(a: dict[str, Any]) -> Any:
    """Boxes to and from center-size offsets against prior boxes (xmin, ymin, xmax, ymax; a pixel more a side
    unless ``box_normalized``), scaled by ``prior_box_var`` (a tensor like the priors, four numbers, or none).
    encode: [N, 4] targets (centered at the mean of their corners) against [M, 4] priors give [N, M, 4];
    decode: [N, M, 4] offsets give boxes, each against prior j (``axis`` 0) or i (``axis`` 1)."""
    torch = torch_module()
    prior, target, var = a["prior_box"], a["target_box"], a["prior_box_var"]
    one = 0.0 if a["box_normalized"] else 1.0
    if var is None:
        var = torch.ones(4, dtype=prior.dtype)
    elif not hasattr(var, "dtype"):
        var = torch.tensor([float(v) for v in var], dtype=prior.dtype)
    pw, ph = prior[:, 2] - prior[:, 0] + one, prior[:, 3] - prior[:, 1] + one
    pcx, pcy = prior[:, 0] + pw / 2, prior[:, 1] + ph / 2
    if a["code_type"] == "encode_center_size":
        tw, th = target[:, 2] - target[:, 0] + one, target[:, 3] - target[:, 1] + one
        tcx, tcy = ((target[:, 0] + target[:, 2]) / 2)[:, None], ((target[:, 1] + target[:, 3]) / 2)[:, None]
        var = var.reshape(-1, 4)
        return torch.stack([(tcx - pcx) / pw / var[..., 0], (tcy - pcy) / ph / var[..., 1],
                            torch.log((tw[:, None] / pw).abs()) / var[..., 2],
                            torch.log((th[:, None] / ph).abs()) / var[..., 3]], dim=-1)
    along = (lambda t: t[None, :]) if int(scalar(a["axis"])) == 0 else (lambda t: t[:, None])
    pw, ph, pcx, pcy = along(pw), along(ph), along(pcx), along(pcy)
    v = [along(var[:, k]) if var.ndim == 2 else var[k] for k in range(4)]
    cx = v[0] * target[..., 0] * pw + pcx
    cy = v[1] * target[..., 1] * ph + pcy
    w = torch.exp(v[2] * target[..., 2]) * pw
    h = torch.exp(v[3] * target[..., 3]) * ph
    return torch.stack([cx - w / 2, cy - h / 2, cx + w / 2 - one, cy + h / 2 - one], dim=-1)


def fused_layer_norm(a: dict[str, Any]) -> Any:
    """Layer norm of h = x + bias + residual_alpha * residual (bias only beside a residual, as Paddle's kernel
    adds it) over the dims from ``begin_norm_axis``, in float32 for 2-byte x; returns (out, h, each row's mean,
    its 1 / sqrt(var + epsilon)). Paddle leaves h unwritten without a residual, and with neither norm_weight nor
    norm_bias it only adds: out is h and the other three outputs are unwritten."""
    torch = torch_module()
    if float(scalar(a["quant_scale"])) > 0:
        raise MappingUnsupported("int8 quantized output (quant_scale > 0)")
    x, res, w, b = a["x"], a["residual"], a["norm_weight"], a["norm_bias"]
    h = x
    if res is not None:
        h = (x if a["bias"] is None else x + a["bias"]) + float(scalar(a["residual_alpha"])) * res
    if w is None and b is None:
        return h, UNWRITTEN, UNWRITTEN, UNWRITTEN
    axis = int(scalar(a["begin_norm_axis"])) % max(h.ndim, 1)
    acc = torch.float32 if h.dtype in (torch.float16, torch.bfloat16) else h.dtype
    rows = h.to(acc).reshape(math.prod(h.shape[:axis]), math.prod(h.shape[axis:]))
    mean = rows.mean(-1)
    centered = rows - mean[:, None]
    rstd = torch.rsqrt(centered.pow(2).mean(-1) + float(scalar(a["epsilon"])))
    y = centered * rstd[:, None]
    if w is not None:
        y = y * w.reshape(-1).to(acc)
    if b is not None:
        y = y + b.reshape(-1).to(acc)
    return y.to(x.dtype).reshape(h.shape), (h if res is not None else UNWRITTEN), mean, rstd


def fused_dropout_add(a: dict[str, Any]) -> Any:
    """dropout(x) + y, dropout as ``paddle.nn.functional.dropout`` with ``p``, ``training`` and ``mode``."""
    return dropout({"x": a["x"], "p": a["p"], "axis": None, "training": a["training"], "mode": a["mode"]}) + a["y"]


def _segment(a: dict[str, Any], reduce: str) -> Any:
    """Reduce rows of ``data`` by sorted ``segment_ids``; output has max(id)+1 rows, empty segments 0."""
    torch = torch_module()
    data, ids = a["data"], a["segment_ids"].to(torch.int64)
    rows = int(ids.max().item()) + 1 if ids.numel() else 0
    return _scatter(data, ids, rows, reduce)


def _scatter(values: Any, index: Any, rows: int, reduce: str) -> Any:
    """Rows of ``values`` reduced into ``rows`` slots by ``index`` (sum/mean/max/min; empty slots 0)."""
    torch = torch_module()
    out = torch.zeros((rows, *values.shape[1:]), dtype=values.dtype, device=values.device)
    idx = index.reshape(-1, *([1] * (values.ndim - 1))).expand_as(values)
    if reduce == "mean" and not values.is_floating_point():  # Paddle truncates the integer mean
        total = out.scatter_reduce(0, idx, values, reduce="sum", include_self=False)
        count = torch.zeros_like(out).scatter_add(0, idx, torch.ones_like(values)).clamp(min=1)
        return torch.div(total, count, rounding_mode="trunc")
    op = {"sum": "sum", "mean": "mean", "max": "amax", "min": "amin"}[reduce]
    return out.scatter_reduce(0, idx, values, reduce=op, include_self=False)


def segment_sum(a: dict[str, Any]) -> Any:
    """Paddle's segment_sum: a scatter-add over sorted segment ids."""
    return _segment(a, "sum")


def segment_mean(a: dict[str, Any]) -> Any:
    """Paddle's segment_mean: a scatter-mean over sorted segment ids."""
    return _segment(a, "mean")


def segment_max(a: dict[str, Any]) -> Any:
    """Paddle's segment_max: a scatter-amax over sorted segment ids (empty segments 0)."""
    return _segment(a, "max")


def segment_min(a: dict[str, Any]) -> Any:
    """Paddle's segment_min: a scatter-amin over sorted segment ids (empty segments 0)."""
    return _segment(a, "min")


_MESSAGE = {"add": "add", "sub": "sub", "mul": "mul", "div": "div"}


def _message(x: Any, y: Any, op: str) -> Any:
    torch = torch_module()
    op = str(op).lower()
    if op not in _MESSAGE:
        raise MappingUnsupported(f"message_op={op!r}")
    return getattr(torch, _MESSAGE[op])(x, y)


def _rows(a: dict[str, Any], x: Any) -> int:
    size = a.get("out_size")
    size = scalar(size.reshape(-1)[0]) if hasattr(size, "reshape") and size.numel() else size
    return int(size) if size is not None and int(size) > 0 else int(x.shape[0])


def send_u_recv(a: dict[str, Any]) -> Any:
    """Gather x at src_index, reduce into dst_index rows (graph message passing; torch has no such op)."""
    torch = torch_module()
    x = a["x"]
    msg = x.index_select(0, a["src_index"].to(torch.int64))
    return _scatter(msg, a["dst_index"].to(torch.int64), _rows(a, x), str(a["reduce_op"]).lower())


def send_ue_recv(a: dict[str, Any]) -> Any:
    """x[src] combined with edge features y by ``message_op``, reduced into dst_index rows."""
    torch = torch_module()
    x = a["x"]
    msg = _message(x.index_select(0, a["src_index"].to(torch.int64)), a["y"], a["message_op"])
    return _scatter(msg, a["dst_index"].to(torch.int64), _rows(a, x), str(a["reduce_op"]).lower())


def send_uv(a: dict[str, Any]) -> Any:
    """x[src] combined with y[dst] by ``message_op``: one message per edge."""
    torch = torch_module()
    xs = a["x"].index_select(0, a["src_index"].to(torch.int64))
    yd = a["y"].index_select(0, a["dst_index"].to(torch.int64))
    return _message(xs, yd, a["message_op"])


def softmax_mask_fuse(a: dict[str, Any]) -> Any:
    """softmax(x + mask) over the last axis."""
    return torch_module().softmax(a["x"] + a["mask"], dim=-1)


def roi_align(a: dict[str, Any]) -> Any:
    """RoIAlign in plain torch ops (torchvision is not a dependency), as Paddle computes it.

    Each box (``x1, y1, x2, y2`` in input coordinates, times ``spatial_scale``; half a pixel less
    when ``aligned``) is cut into ``output_size`` bins; each bin averages ``sampling_ratio`` x
    ``sampling_ratio`` bilinear samples (``ceil(bin size)`` per axis when it is not positive).
    A sample more than a pixel outside the map counts as zero; ``boxes_num[i]`` boxes belong to
    image ``i``.
    """
    torch = torch_module()
    x, boxes = a["x"], a["boxes"]
    size = a["output_size"]
    ph, pw = (size, size) if isinstance(size, int) else (int(size[0]), int(size[1]))
    scale, ratio, aligned = float(scalar(a["spatial_scale"])), int(a["sampling_ratio"]), bool(a["aligned"])
    counts = a["boxes_num"].to(torch.int64).reshape(-1)
    image = torch.repeat_interleave(torch.arange(counts.numel(), device=x.device), counts)
    height, width = x.shape[-2], x.shape[-1]
    offset = 0.5 if aligned else 0.0
    outs = []
    for k in range(boxes.shape[0]):
        x1, y1, x2, y2 = (float(v) * scale - offset for v in boxes[k].detach().tolist())
        rw, rh = x2 - x1, y2 - y1
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = ratio if ratio > 0 else max(int(math.ceil(rh / ph)), 1)
        gw = ratio if ratio > 0 else max(int(math.ceil(rw / pw)), 1)
        ys = y1 + (torch.arange(ph * gh, dtype=torch.float64) // gh) * bh + (
            torch.arange(ph * gh, dtype=torch.float64) % gh + 0.5) * bh / gh
        xs = x1 + (torch.arange(pw * gw, dtype=torch.float64) // gw) * bw + (
            torch.arange(pw * gw, dtype=torch.float64) % gw + 0.5) * bw / gw
        (yl, yh, ly), (xl, xh, lx) = _bilinear_axis(ys, height), _bilinear_axis(xs, width)
        valid = ((ys >= -1) & (ys <= height))[:, None] & ((xs >= -1) & (xs <= width))[None, :]
        f = x[image[k]]
        ly, lx = ly.to(x.dtype)[:, None], lx.to(x.dtype)[None, :]
        v = ((1 - ly) * (1 - lx) * f[:, yl[:, None], xl[None, :]] + (1 - ly) * lx * f[:, yl[:, None], xh[None, :]]
             + ly * (1 - lx) * f[:, yh[:, None], xl[None, :]] + ly * lx * f[:, yh[:, None], xh[None, :]])
        v = v * valid.to(x.dtype)
        outs.append(v.reshape(x.shape[1], ph, gh, pw, gw).sum(dim=(2, 4)) / (gh * gw))
    if not outs:
        return x.new_zeros((0, x.shape[1], ph, pw))
    return torch.stack(outs)


def _bilinear_axis(pos: Any, size: int) -> tuple[Any, Any, Any]:
    """Low and high neighbour indices and the weight of the high one, for sample positions on an axis
    of ``size`` (positions below 0 are read at 0, those at or past the last pixel at the last)."""
    torch = torch_module()
    p = pos.clamp(min=0)
    low = p.floor().to(torch.int64)
    last = low >= size - 1
    low = torch.where(last, torch.full_like(low, size - 1), low)
    high = torch.where(last, low, low + 1)
    p = torch.where(last, low.to(p.dtype), p)
    return low, high, p - low
