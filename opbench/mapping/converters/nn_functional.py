"""Converters for ``paddle.nn.functional``: activations, losses, normalization, dropout, attention."""

from __future__ import annotations

import functools
from typing import Any

from opbench.mapping.converters import dtype_or_none, scalar, to_int, to_ints, torch_module
from opbench.mapping.spec import MappingUnsupported


def _reduce(loss: Any, reduction: str | None) -> Any:
    """Paddle's ``reduction``: 'mean' over every element, 'sum', or 'none'."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction in ("none", None):
        return loss
    raise MappingUnsupported(f"reduction={reduction!r}")


def _channel_last(data_format: str | None) -> bool:
    """True for Paddle's channel-last layouts (NLC, NHWC, NDHWC); NC and NC... are channel-first."""
    return bool(data_format) and len(data_format) > 2 and data_format[-1] == "C"


def _to_channel_first(x: Any, data_format: str | None) -> Any:
    return x.movedim(-1, 1) if _channel_last(data_format) else x


def _from_channel_first(x: Any, data_format: str | None) -> Any:
    return x.movedim(1, -1) if _channel_last(data_format) else x


# --- activations -----------------------------------------------------------------------------------------------


def gelu(a: dict[str, Any]) -> Any:
    """Paddle's ``approximate`` is a bool (or 'tanh'/'none'); torch wants the string."""
    approx = a["approximate"]
    mode = approx if isinstance(approx, str) else ("tanh" if approx else "none")
    return torch_module().nn.functional.gelu(a["x"], approximate=mode)


def hardsigmoid(a: dict[str, Any]) -> Any:
    """Paddle's hardsigmoid takes ``slope`` and ``offset`` (torch's is fixed at 1/6 and 0.5)."""
    return (a["x"] * float(a["slope"]) + float(a["offset"])).clamp(0.0, 1.0)


def selu(a: dict[str, Any]) -> Any:
    """Paddle's selu takes ``scale`` and ``alpha`` (torch's are fixed constants)."""
    torch = torch_module()
    x, scale, alpha = a["x"], float(a["scale"]), float(a["alpha"])
    return scale * torch.where(x > 0, x, alpha * torch.expm1(x))


def prelu(a: dict[str, Any]) -> Any:
    """Paddle's weight holds one slope or one per channel, the channel axis set by ``data_format``."""
    torch = torch_module()
    x, w = a["x"], a["weight"]
    if w.numel() > 1:
        shape = [1] * x.ndim
        shape[-1 if a["data_format"][1] != "C" else 1] = w.numel()
        w = w.reshape(shape)
    else:
        w = w.reshape([])
    return torch.where(x > 0, x, w * x)


def maxout(a: dict[str, Any]) -> Any:
    """Max over ``groups`` consecutive channels of axis ``axis``; torch has no maxout."""
    x, groups = a["x"], int(a["groups"])
    axis = int(a["axis"]) % x.ndim
    shape = [*x.shape[:axis], x.shape[axis] // groups, groups, *x.shape[axis + 1:]]
    return x.reshape(shape).amax(dim=axis + 1)


def rrelu(a: dict[str, Any]) -> Any:
    """torch's rrelu with Paddle's ``lower``/``upper``; in eval the slope is their mean in both."""
    return torch_module().nn.functional.rrelu(
        a["x"], float(a["lower"]), float(a["upper"]), training=bool(a["training"]))


def gumbel_softmax(a: dict[str, Any]) -> Any:
    """Paddle's ``temperature``/``axis`` are torch's ``tau``/``dim``."""
    return torch_module().nn.functional.gumbel_softmax(
        a["x"], tau=float(a["temperature"]), hard=bool(a["hard"]), dim=int(a["axis"]))


# --- dropout -------------------------------------------------------------------------------------------------------


def drops_at_random(a: dict[str, Any]) -> bool:
    """Dropout draws a random mask only when training with ``0 < p``; otherwise its values are exact."""
    p = a["p"]
    return bool(a["training"]) and not (isinstance(p, (int, float)) and p <= 0)


def dropout(a: dict[str, Any]) -> Any:
    """Paddle's ``axis`` shares the mask along the other axes and ``mode`` may scale at inference instead."""
    torch = torch_module()
    x, p, axis, mode = a["x"], float(scalar(a["p"])), a["axis"], a["mode"]
    upscale = mode in ("upscale_in_train", None)
    if not a["training"]:
        return x if upscale else x * (1.0 - p)
    if p == 0.0:
        return x.clone() if upscale else x * 1.0
    if p == 1.0:
        return x * 0.0
    dims = to_ints(axis)
    shape = list(x.shape) if dims is None else [s if i in {d % x.ndim for d in dims} else 1
                                                for i, s in enumerate(x.shape)]
    keep = (torch.rand(shape, device=x.device) >= p).to(x.dtype)
    return x * keep / (1.0 - p) if upscale else x * keep


def _feature_dropout(a: dict[str, Any], spatial: int) -> Any:
    torch = torch_module()
    x, p = a["x"], float(scalar(a["p"]))
    if not a["training"] or p == 0.0:
        return x.clone()
    xf = _to_channel_first(x, a["data_format"])
    keep = (torch.rand([*xf.shape[:2], *[1] * spatial], device=x.device) >= p).to(x.dtype)
    return _from_channel_first(xf * keep / (1.0 - p) if p < 1.0 else xf * 0.0, a["data_format"])


def dropout2d(a: dict[str, Any]) -> Any:
    """Channel dropout on NCHW or NHWC input (torch's dropout2d is channel-first only)."""
    return _feature_dropout(a, 2)


def dropout3d(a: dict[str, Any]) -> Any:
    """Channel dropout on NCDHW or NDHWC input (torch's dropout3d is channel-first only)."""
    return _feature_dropout(a, 3)


# --- losses --------------------------------------------------------------------------------------------------------


def binary_cross_entropy(a: dict[str, Any]) -> Any:
    """torch's BCE; Paddle's ``weight`` broadcasts against the loss the same way."""
    return torch_module().nn.functional.binary_cross_entropy(
        a["input"], a["label"].to(a["input"].dtype), weight=a["weight"], reduction=a["reduction"])


def one_hot(a: dict[str, Any]) -> Any:
    """Paddle's one_hot returns float32 (torch's int64) and takes ``num_classes`` as an int or a tensor."""
    torch = torch_module()
    return torch.nn.functional.one_hot(a["x"].long(), to_int(a["num_classes"])).to(torch.float32)


def _hard_label_loss(logp: Any, label: Any, axis: int, ignore_index: int) -> tuple[Any, Any]:
    """-logp at ``label`` along ``axis`` (kept, size 1) and the mask of labels not ignored."""
    torch = torch_module()
    valid = label != ignore_index
    idx = torch.where(valid, label, torch.zeros_like(label)).long()
    picked = -torch.gather(logp, axis, idx)
    return torch.where(valid, picked, torch.zeros_like(picked)), valid


def _soft_label_loss(x: Any, logp: Any, label: Any, axis: int, softmax: bool) -> Any:
    """-sum(label * logp) along ``axis`` (kept), with the gradient Paddle's kernel defines for it.

    Paddle's softmax cross-entropy backward is softmax(x) - label, exact for labels that sum to 1
    (distributions); autograd would give softmax(x) * sum(label) - label. The zero-valued term below
    adds softmax(x) * (1 - sum(label)) to x's gradient so both agree on any label.
    """
    out = -(label * logp).sum(dim=axis, keepdim=True)
    if not softmax:
        return out
    lse = x.logsumexp(dim=axis, keepdim=True)
    fix = lse * (1 - label.detach().sum(dim=axis, keepdim=True))
    return out + (fix - fix.detach())


def cross_entropy(a: dict[str, Any]) -> Any:
    """Paddle's cross_entropy: soft or hard labels on any axis, optional softmax, weights, ignore_index, smoothing.

    Follows paddle.nn.functional.cross_entropy: the loss keeps the class axis (size 1) unless the
    label had one axis fewer; 'mean' divides by the weights gathered (or the count of kept labels
    when ignore_index >= 0), else by the number of elements.
    """
    torch = torch_module()
    x, label, weight = a["input"], a["label"], a["weight"]
    axis = int(a["axis"]) % x.ndim
    ignore_index, reduction = int(a["ignore_index"]), a["reduction"]
    soft = bool(a["soft_label"])
    smoothing = float(a["label_smoothing"] or 0.0)
    squeeze = x.ndim - 1 == label.ndim
    if squeeze:
        label = label.unsqueeze(axis)
    if smoothing > 0.0:
        soft = True
        if squeeze:
            label = torch.nn.functional.one_hot(label.squeeze(axis).long(), x.shape[-1]).to(x.dtype)
        label = (1.0 - smoothing) * label.to(x.dtype) + smoothing / label.shape[-1]
        squeeze = False
    logp = torch.log_softmax(x, dim=axis) if a["use_softmax"] else torch.log(x)
    if soft:
        label = label.to(logp.dtype)
        out = _soft_label_loss(x, logp, label, axis, bool(a["use_softmax"]))
        valid = None
        w = None
        if weight is not None:
            w = torch.matmul(label.movedim(axis, -1), weight.to(label.dtype)).unsqueeze(-1).movedim(-1, axis)
            out = out.to(weight.dtype) * w
    else:
        out, valid = _hard_label_loss(logp, label, axis, ignore_index)
        w = None
        if weight is not None:
            idx = torch.where(valid, label, torch.zeros_like(label)).long()
            w = weight[idx] * valid.to(weight.dtype)
            out = out.to(weight.dtype) * w
    if reduction == "sum":
        return out.sum()
    if reduction == "mean":
        if ignore_index >= 0 and not soft:
            denom = valid.to(out.dtype).sum() if w is None else (w * valid.to(w.dtype)).sum()
            return out.sum() / (denom + (denom == 0).to(denom.dtype))
        if w is not None:
            total = w.sum()
            return out.sum() / (total + (total == 0).to(total.dtype))
        return out.mean()
    return out.squeeze(axis) if squeeze else out


def softmax_with_cross_entropy(a: dict[str, Any]) -> Any:
    """The loss keeps the class axis (size 1); ``return_softmax`` also returns the softmax."""
    torch = torch_module()
    logits, label = a["logits"], a["label"]
    axis = int(a["axis"]) % logits.ndim
    logp = torch.log_softmax(logits, dim=axis)
    if a["soft_label"]:
        loss = _soft_label_loss(logits, logp, label, axis, True)
    else:
        if label.ndim == logits.ndim - 1:
            label = label.unsqueeze(axis)
        loss, _ = _hard_label_loss(logp, label, axis, int(a["ignore_index"]))
    # Paddle's backward takes the loss's gradient only: the returned softmax carries none.
    return (loss, torch.softmax(logits, dim=axis).detach()) if a["return_softmax"] else loss


def binary_cross_entropy_with_logits(a: dict[str, Any]) -> Any:
    """Paddle's ``logit``; ``pos_weight`` and ``weight`` as in torch."""
    return torch_module().nn.functional.binary_cross_entropy_with_logits(
        a["logit"], a["label"].to(a["logit"].dtype), weight=a["weight"], reduction=a["reduction"],
        pos_weight=a["pos_weight"])


def smooth_l1_loss(a: dict[str, Any]) -> Any:
    """Paddle's loss is Huber with ``delta`` (torch.huber_loss); ``is_huber=False`` divides it by delta (smooth L1)."""
    F = torch_module().nn.functional
    x, y = _promoted(a["input"], a["label"])
    delta = float(a["delta"])
    if a["is_huber"]:
        loss = F.huber_loss(x, y, reduction="none", delta=delta)
    else:
        loss = F.smooth_l1_loss(x, y, reduction="none", beta=delta)
    return _reduce(loss, a["reduction"])


def sigmoid_focal_loss(a: dict[str, Any]) -> Any:
    """Focal loss as Paddle computes it: alpha- and gamma-weighted BCE with logits, over ``normalizer``."""
    torch = torch_module()
    logit, label = a["logit"], a["label"].to(a["logit"].dtype)
    alpha, gamma = float(a["alpha"]), float(a["gamma"])
    loss = torch.nn.functional.binary_cross_entropy_with_logits(logit, label, reduction="none")
    pred = torch.sigmoid(logit)
    p_t = pred * label + (1 - pred) * (1 - label)
    loss = (alpha * label + (1 - alpha) * (1 - label)) * loss
    loss = torch.pow(1 - p_t, gamma) * loss
    if a["normalizer"] is not None:
        loss = loss / a["normalizer"]
    return _reduce(loss, a["reduction"])


def _promoted(x: Any, y: Any) -> tuple[Any, Any]:
    """Both tensors in their promoted dtype (Paddle promotes float16/float32/float64 mixes, as torch does)."""
    dtype = torch_module().promote_types(x.dtype, y.dtype)
    return x.to(dtype), y.to(dtype)


def _pair_loss(fn_name: str, promote: bool) -> Any:
    def convert(a: dict[str, Any]) -> Any:
        fn = getattr(torch_module().nn.functional, fn_name)
        x, y = a["input"], a["label"]
        x, y = _promoted(x, y) if promote else (x, y.to(x.dtype))
        return fn(x, y, reduction=a["reduction"])

    how = "both sides promoted to a common dtype" if promote else "the label cast to the input's dtype"
    convert.__doc__ = f"torch.nn.functional.{fn_name}, {how}, as Paddle does."
    convert.__name__ = fn_name
    return convert


l1_loss = _pair_loss("l1_loss", promote=True)
mse_loss = _pair_loss("mse_loss", promote=True)
soft_margin_loss = _pair_loss("soft_margin_loss", promote=False)


def square_error_cost(a: dict[str, Any]) -> Any:
    """Elementwise (input - label)^2, Paddle-only."""
    return torch_module().square(a["input"] - a["label"])


def log_loss(a: dict[str, Any]) -> Any:
    """Paddle's log_loss: -y*log(p+eps) - (1-y)*log(1-p+eps), elementwise."""
    torch = torch_module()
    p, y, eps = a["input"], a["label"], float(a["epsilon"])
    return -y * torch.log(p + eps) - (1 - y) * torch.log(1 - p + eps)


def nll_loss(a: dict[str, Any]) -> Any:
    """torch's nll_loss; Paddle's ``label`` may be int32."""
    return torch_module().nn.functional.nll_loss(
        a["input"], a["label"].long(), weight=a["weight"], ignore_index=int(a["ignore_index"]),
        reduction=a["reduction"])


def kl_div(a: dict[str, Any]) -> Any:
    """Paddle promotes float32/float64 mixes to float64; 'mean' averages every element, as torch's does."""
    torch = torch_module()
    x, y = a["input"], a["label"]
    dtype = torch.promote_types(x.dtype, y.dtype)
    loss = torch.nn.functional.kl_div(x.to(dtype), y.to(dtype), reduction="none", log_target=bool(a["log_target"]))
    if a["reduction"] == "batchmean":
        return loss.sum() / x.shape[0] if x.ndim > 0 else loss
    return _reduce(loss, a["reduction"])


def margin_ranking_loss(a: dict[str, Any]) -> Any:
    """torch's margin_ranking_loss, Paddle's ``other`` as the second input."""
    return torch_module().nn.functional.margin_ranking_loss(
        a["input"], a["other"], a["label"], margin=float(a["margin"]), reduction=a["reduction"])


def hinge_embedding_loss(a: dict[str, Any]) -> Any:
    """Paddle counts only labels exactly 1 (input) or -1 (relu(margin - input)); torch treats any label != 1 as -1."""
    torch = torch_module()
    x, y, margin = a["input"], a["label"], float(a["margin"])
    zero = torch.zeros_like(x)
    loss = torch.where(y == 1.0, x, zero) + torch.where(y == -1.0, torch.relu(margin - x), zero)
    return _reduce(loss, a["reduction"])


def cosine_embedding_loss(a: dict[str, Any]) -> Any:
    """Paddle's formula: cosine with 1e-11 added to each squared norm; labels other than 1/-1 give 0."""
    torch = torch_module()
    x1, x2, y, margin = a["input1"], a["input2"], a["label"], float(a["margin"])
    prod = (x1 * x2).sum(-1)
    denom = torch.sqrt(((x1 * x1).sum(-1) + 10e-12) * ((x2 * x2).sum(-1) + 10e-12))
    cos = prod / denom
    zero = torch.zeros_like(cos)
    loss = torch.where(y == 1, 1 - cos, zero) + torch.where(y == -1, (cos - margin).clamp(min=0), zero)
    return _reduce(loss, a["reduction"])


def gaussian_nll_loss(a: dict[str, Any]) -> Any:
    """torch's gaussian_nll_loss (Paddle's ``variance``/``epsilon``; both clamp the variance without grad)."""
    return torch_module().nn.functional.gaussian_nll_loss(
        a["input"], a["label"], a["variance"], full=bool(a["full"]), eps=float(a["epsilon"]), reduction=a["reduction"])


def poisson_nll_loss(a: dict[str, Any]) -> Any:
    """torch's poisson_nll_loss (Paddle's ``epsilon``)."""
    x, y = _promoted(a["input"], a["label"])
    return torch_module().nn.functional.poisson_nll_loss(
        x, y, log_input=bool(a["log_input"]), full=bool(a["full"]), eps=float(a["epsilon"]),
        reduction=a["reduction"])


def triplet_margin_with_distance_loss(a: dict[str, Any]) -> Any:
    """torch's triplet_margin_with_distance_loss; a config line cannot pass a ``distance_function``."""
    if a["distance_function"] is not None:
        raise MappingUnsupported("distance_function")
    return torch_module().nn.functional.triplet_margin_with_distance_loss(
        a["input"], a["positive"], a["negative"], margin=float(a["margin"]), swap=bool(a["swap"]),
        reduction=a["reduction"])


def triplet_margin_loss(a: dict[str, Any]) -> Any:
    """torch's triplet_margin_loss (Paddle's ``epsilon`` is torch's ``eps``)."""
    return torch_module().nn.functional.triplet_margin_loss(
        a["input"], a["positive"], a["negative"], margin=float(a["margin"]), p=float(a["p"]),
        eps=float(a["epsilon"]), swap=bool(a["swap"]), reduction=a["reduction"])


def multi_margin_loss(a: dict[str, Any]) -> Any:
    """torch's multi_margin_loss; Paddle's ``label`` may be int32."""
    return torch_module().nn.functional.multi_margin_loss(
        a["input"], a["label"].long(), p=int(a["p"]), margin=float(a["margin"]), weight=a["weight"],
        reduction=a["reduction"])


def multi_label_soft_margin_loss(a: dict[str, Any]) -> Any:
    """torch's multilabel_soft_margin_loss (spelled without the underscore)."""
    x = a["input"]
    return torch_module().nn.functional.multilabel_soft_margin_loss(
        x, a["label"].to(x.dtype), weight=a["weight"], reduction=a["reduction"])


def dice_loss(a: dict[str, Any]) -> Any:
    """Paddle-only: 1 - 2|X∩Y| / (|X| + |Y| + eps) per sample, Y the one-hot of the [..., 1] label, then the mean."""
    torch = torch_module()
    x = a["input"]
    y = torch.nn.functional.one_hot(a["label"].squeeze(-1).long(), x.shape[-1]).to(x.dtype)
    dims = list(range(1, x.ndim))
    inse = (x * y).sum(dim=dims)
    denom = x.sum(dim=dims) + y.sum(dim=dims)
    return (1 - inse * 2 / (denom + float(a["epsilon"]))).mean()


def ctc_loss(a: dict[str, Any]) -> Any:
    """Paddle's ctc_loss (warpctc) takes unnormalized logits: log_softmax them first; 'none' keeps [batch]."""
    torch = torch_module()
    if a["norm_by_times"]:
        raise MappingUnsupported("norm_by_times=True")
    logp = torch.log_softmax(a["log_probs"], dim=-1)
    return torch.nn.functional.ctc_loss(
        logp, a["labels"].long(), a["input_lengths"].long(), a["label_lengths"].long(), blank=int(a["blank"]),
        reduction=a["reduction"], zero_infinity=bool(a["zero_infinity"]))


def label_smooth(a: dict[str, Any]) -> Any:
    """Paddle-only: (1 - eps) * label + eps * prior (uniform 1/C when ``prior_dist`` is None)."""
    label, prior, eps = a["label"], a["prior_dist"], float(a["epsilon"])
    if prior is None:
        prior = 1.0 / label.shape[-1] if label.shape[-1] else 0.0
    return (1.0 - eps) * label + eps * prior


# --- normalization -------------------------------------------------------------------------------------------------


def layer_norm(a: dict[str, Any]) -> Any:
    """``normalized_shape`` may be an int; Paddle's weight/bias may be flat, torch wants that shape.

    Parameters of another dtype than ``x`` (float32 ones beside a float16 input, as Paddle's AMP keeps them)
    are computed in the wider dtype and the output rounded once to ``x``'s: PyTorch's CUDA kernel refuses some
    of these mixes (a float16 row of 7 with float32 weights) and its CPU one a float64 input with float32 ones.
    """
    torch = torch_module()
    x, shape, eps = a["x"], to_ints(a["normalized_shape"]), float(a["epsilon"])
    params = [None if p is None else p.reshape(shape) for p in (a["weight"], a["bias"])]
    given = [p.dtype for p in params if p is not None]
    if all(d == x.dtype for d in given):
        return torch.nn.functional.layer_norm(x, shape, *params, eps=eps)
    wide = functools.reduce(torch.promote_types, given, x.dtype)
    w, b = (None if p is None else p.to(wide) for p in params)
    return torch.nn.functional.layer_norm(x.to(wide), shape, w, b, eps=eps).to(x.dtype)


def batch_norm(a: dict[str, Any]) -> Any:
    """Paddle's momentum weighs the old running value (torch's the new); ``use_global_stats`` picks the running stats.

    The running statistics are cloned: updating them is a side effect, not an output.
    """
    torch = torch_module()
    fmt = a["data_format"]
    use_global = a["use_global_stats"]
    training = bool(a["training"]) if use_global is None else not use_global
    x = _to_channel_first(a["x"], fmt)
    out = torch.nn.functional.batch_norm(
        x, a["running_mean"].detach().clone(), a["running_var"].detach().clone(), a["weight"], a["bias"],
        training=training, momentum=1.0 - float(a["momentum"]), eps=float(a["epsilon"]))
    return _from_channel_first(out, fmt)


def instance_norm(a: dict[str, Any]) -> Any:
    """torch's instance_norm on channel-first input; Paddle's ``eps`` and channel-last ``data_format``."""
    torch = torch_module()
    fmt = a["data_format"]
    rm, rv = a["running_mean"], a["running_var"]
    out = torch.nn.functional.instance_norm(
        _to_channel_first(a["x"], fmt), None if rm is None else rm.detach().clone(),
        None if rv is None else rv.detach().clone(), a["weight"], a["bias"],
        use_input_stats=bool(a["use_input_stats"]), momentum=1.0 - float(a["momentum"]), eps=float(a["eps"]))
    return _from_channel_first(out, fmt)


def group_norm(a: dict[str, Any]) -> Any:
    """torch's group_norm on channel-first input; Paddle's ``epsilon`` and channel-last ``data_format``."""
    fmt = a["data_format"]
    out = torch_module().nn.functional.group_norm(
        _to_channel_first(a["x"], fmt), int(a["num_groups"]), a["weight"], a["bias"], eps=float(a["epsilon"]))
    return _from_channel_first(out, fmt)


def local_response_norm(a: dict[str, Any]) -> Any:
    """torch's local_response_norm on channel-first input; Paddle's channel-last ``data_format``."""
    fmt = a["data_format"]
    out = torch_module().nn.functional.local_response_norm(
        _to_channel_first(a["x"], fmt), int(a["size"]), alpha=float(a["alpha"]), beta=float(a["beta"]),
        k=float(a["k"]))
    return _from_channel_first(out, fmt)


# --- attention, distances, misc ----------------------------------------------------------------------------------


def scaled_dot_product_attention(a: dict[str, Any]) -> Any:
    """Paddle's layout is [batch, seq, heads, dim] (torch's [batch, heads, seq, dim]); causal ignores the mask.

    Paddle's CPU (math) path applies only the causal mask when ``is_causal`` is set; key/value heads
    are repeated for grouped-query attention.
    """
    torch = torch_module()
    q, k, v, mask = a["query"], a["key"], a["value"], a["attn_mask"]
    batched = q.ndim == 4
    if not batched:
        q, k, v = q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0)
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    if k.shape[1] and q.shape[1] != k.shape[1]:
        rep = q.shape[1] // k.shape[1]
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
    causal = bool(a["is_causal"])
    if causal:
        mask = None
    elif mask is not None and mask.dtype == torch.bool:
        mask = torch.where(mask, 0.0, float("-inf")).to(q.dtype)
    p = float(a["dropout_p"]) if a["training"] else 0.0
    out = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=mask, dropout_p=p, is_causal=causal, scale=a["scale"])
    out = out.transpose(1, 2)
    return out if batched else out.squeeze(0)


def sequence_mask(a: dict[str, Any]) -> Any:
    """Paddle-only: mask[..., j] = j < x[...], ``maxlen`` (None or -1: max of x) columns, in ``dtype``."""
    torch = torch_module()
    x = a["x"]
    maxlen = to_int(a["maxlen"])
    if maxlen is None or maxlen < 0:
        maxlen = int(x.max().item()) if x.numel() else 0
    out = torch.arange(maxlen, device=x.device) < x.unsqueeze(-1)
    return out.to(dtype_or_none(a["dtype"]) or torch.int64)


def pairwise_distance(a: dict[str, Any]) -> Any:
    """p-norm of x - y + epsilon over the last axis, as torch's pairwise_distance."""
    return torch_module().nn.functional.pairwise_distance(
        a["x"], a["y"], p=float(a["p"]), eps=float(a["epsilon"]), keepdim=bool(a["keepdim"]))


def normalize(a: dict[str, Any]) -> Any:
    """x / max(||x||_p, epsilon) along ``axis``, as torch's normalize."""
    return torch_module().nn.functional.normalize(
        a["x"], p=float(a["p"]), dim=to_int(a["axis"]), eps=float(a["epsilon"]))


def linear(a: dict[str, Any]) -> Any:
    """Paddle's weight is [in, out], torch.nn.functional.linear wants [out, in]: pass its transpose."""
    return torch_module().nn.functional.linear(a["x"], a["weight"].t(), a["bias"])


def embedding(a: dict[str, Any]) -> Any:
    """Paddle zeroes the output rows of ``padding_idx`` in the forward; torch only skips their gradient.

    With ``sparse`` Paddle's weight gradient is SelectedRows (a row per lookup, not a dense
    tensor), so torch's side leaves the weight out of autograd: only the output is compared.
    """
    torch = torch_module()
    x, w, pad = a["x"], a["weight"], a["padding_idx"]
    if a["sparse"]:
        w = w.detach()
    out = torch.nn.functional.embedding(
        x, w, padding_idx=pad, max_norm=a["max_norm"], norm_type=float(a["norm_type"]),
        scale_grad_by_freq=a["scale_grad_by_freq"],
    )
    if pad is None:
        return out
    pad = pad if pad >= 0 else pad + w.shape[0]
    return out * (x != pad).unsqueeze(-1).to(out.dtype)


def gather_tree(a: dict[str, Any]) -> Any:
    """Beam-search paths ([steps, batch, beam]): from the last step back, each beam's id at a step is read at the
    beam its later step came from (``parents``)."""
    ids, parents = a["ids"], a["parents"]
    out = ids.clone()
    if not ids.shape[0]:
        return out
    beam = parents[-1]
    for t in range(ids.shape[0] - 2, -1, -1):
        out[t] = ids[t].gather(-1, beam)
        beam = parents[t].gather(-1, beam)
    return out
