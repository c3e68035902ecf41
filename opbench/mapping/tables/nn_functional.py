"""``paddle.nn.functional``: activations, losses, normalization, dropout, attention, distances."""

from __future__ import annotations

from opbench.domains import POSITIVE, Domain, bounded_by, index_into
from opbench.mapping.converters import nn_functional as cv
from opbench.mapping.flops import linear_flops
from opbench.mapping.spec import ApiMapping as M

F = "paddle.nn.functional."
T = "torch.nn.functional."

# Probabilities strictly inside (0, 1): BCE and log losses take log(p) and log(1 - p).
PROB = Domain(low=0.02, high=0.98)
# Class indices along the class axis: axis 1 of [N, C, ...] inputs (nll_loss, multi_margin_loss).
CLASS_AXIS1 = index_into("input", axis_param=None, axis=1)



def _training(a: dict) -> bool:
    """rrelu draws its slopes at random only when training."""
    return bool(a["training"])


ENTRIES: list[M] = [
    # activations
    M(F + "relu", "torch.relu(x)", benchmark_op="relu"),
    M(F + "gelu", convert=cv.gelu, benchmark_op="gelu"),
    M(F + "silu", T + "silu(x)", ignore=("inplace",), benchmark_op="silu"),
    M(F + "swish", T + "silu(x)", benchmark_op="swish"),
    M(F + "sigmoid", "torch.sigmoid(x)", benchmark_op="sigmoid"),
    M(F + "tanh", "torch.tanh(x)", benchmark_op="tanh"),
    M(F + "leaky_relu", T + "leaky_relu(x, float(negative_slope))", benchmark_op="leaky_relu"),
    M(F + "softmax", T + "softmax(x, dim=int(axis), dtype=dtype(dtype))", benchmark_op="softmax"),
    M(F + "log_softmax", T + "log_softmax(x, dim=int(axis), dtype=dtype(dtype))", benchmark_op="log_softmax"),
    M(F + "hardswish", T + "hardswish(x)", benchmark_op="hard_swish"),
    M(F + "hardsigmoid", convert=cv.hardsigmoid, benchmark_op="hard_sigmoid"),
    M(F + "hardtanh", "torch.clamp(x, float(min), float(max))", benchmark_op="hardtanh"),
    M(F + "hardshrink", T + "hardshrink(x, float(threshold))", benchmark_op="hard_shrink"),
    M(F + "softshrink", T + "softshrink(x, float(threshold))", benchmark_op="softshrink"),
    M(F + "tanhshrink", T + "tanhshrink(x)", benchmark_op="tanh_shrink"),
    M(F + "relu6", T + "relu6(x)", benchmark_op="relu6"),
    M(F + "elu", T + "elu(x, float(alpha))", benchmark_op="elu"),
    M(F + "celu", T + "celu(x, float(alpha))", benchmark_op="celu"),
    M(F + "selu", convert=cv.selu, benchmark_op="selu"),
    M(F + "softplus", T + "softplus(x, float(beta), float(threshold))", benchmark_op="softplus"),
    M(F + "softsign", T + "softsign(x)", benchmark_op="softsign"),
    M(F + "mish", T + "mish(x)", benchmark_op="mish"),
    M(F + "log_sigmoid", T + "logsigmoid(x)", benchmark_op="logsigmoid"),
    M(F + "thresholded_relu", T + "threshold(x, float(threshold), float(value))", benchmark_op="thresholded_relu"),
    M(F + "glu", T + "glu(x, dim=int(axis))", benchmark_op="glu"),
    M(F + "prelu", convert=cv.prelu, benchmark_op="prelu"),
    M(F + "maxout", convert=cv.maxout, benchmark_op="maxout"),
    M(F + "rrelu", convert=cv.rrelu, random=_training),
    M(F + "gumbel_softmax", convert=cv.gumbel_softmax, random=True),
    # dropout: with p > 0 in training both sides draw their own mask
    M(F + "dropout", convert=cv.dropout, ignore=("inplace",), random=cv.drops_at_random, benchmark_op="dropout"),
    M(F + "dropout2d", convert=cv.dropout2d, random=cv.drops_at_random),
    M(F + "dropout3d", convert=cv.dropout3d, random=cv.drops_at_random),
    M(F + "alpha_dropout", T + "alpha_dropout(x, float(p), training)", random=cv.drops_at_random),
    M(F + "feature_alpha_dropout", T + "feature_alpha_dropout(x, float(p), training)", random=cv.drops_at_random),
    # losses
    M(F + "binary_cross_entropy", convert=cv.binary_cross_entropy, domains={"input": PROB, "label": PROB},
      nondiff=("label", "weight"), benchmark_op="binary_cross_entropy"),
    M(F + "binary_cross_entropy_with_logits", convert=cv.binary_cross_entropy_with_logits,
      domains={"label": PROB}, nondiff=("weight", "pos_weight"),
      benchmark_op="binary_cross_entropy_with_logits"),
    # Paddle's softmax cross-entropy kernel gives soft labels no gradient: labels are targets.
    M(F + "cross_entropy", convert=cv.cross_entropy, domains={"label": index_into("input", axis=-1)},
      nondiff=("label",), benchmark_op="cross_entropy"),
    M(F + "softmax_with_cross_entropy", convert=cv.softmax_with_cross_entropy,
      domains={"label": index_into("logits", axis=-1)}, nondiff=("label",), benchmark_op="softmax_with_cross_entropy"),
    M(F + "one_hot", convert=cv.one_hot, domains={"x": bounded_by("num_classes")}, benchmark_op="one_hot"),
    M(F + "smooth_l1_loss", convert=cv.smooth_l1_loss, benchmark_op="smooth_l1_loss"),
    M(F + "sigmoid_focal_loss", convert=cv.sigmoid_focal_loss, domains={"label": PROB, "normalizer": POSITIVE},
      nondiff=("label",),
      benchmark_op="sigmoid_focal_loss"),
    M(F + "l1_loss", convert=cv.l1_loss, benchmark_op="l1_loss"),
    M(F + "mse_loss", convert=cv.mse_loss, benchmark_op="mse_loss"),
    M(F + "square_error_cost", convert=cv.square_error_cost),
    M(F + "soft_margin_loss", convert=cv.soft_margin_loss, nondiff=("label",)),
    M(F + "log_loss", convert=cv.log_loss, domains={"input": PROB, "label": PROB}),
    M(F + "nll_loss", convert=cv.nll_loss, domains={"label": CLASS_AXIS1}, nondiff=("weight",),
      benchmark_op="nll_loss"),
    M(F + "kl_div", convert=cv.kl_div, domains={"label": PROB}, benchmark_op="kl_div"),
    M(F + "margin_ranking_loss", convert=cv.margin_ranking_loss),
    M(F + "hinge_embedding_loss", convert=cv.hinge_embedding_loss, nondiff=("label",)),
    M(F + "cosine_embedding_loss", convert=cv.cosine_embedding_loss, nondiff=("label",)),
    M(F + "gaussian_nll_loss", convert=cv.gaussian_nll_loss, domains={"variance": POSITIVE}),
    M(F + "poisson_nll_loss", convert=cv.poisson_nll_loss, domains={"input": POSITIVE, "label": POSITIVE},
      nondiff=("label",)),
    M(F + "triplet_margin_loss", convert=cv.triplet_margin_loss),
    M(F + "triplet_margin_with_distance_loss", convert=cv.triplet_margin_with_distance_loss),
    M(F + "multi_margin_loss", convert=cv.multi_margin_loss, domains={"label": CLASS_AXIS1}, nondiff=("weight",)),
    M(F + "multi_label_soft_margin_loss", convert=cv.multi_label_soft_margin_loss, domains={"label": PROB},
      nondiff=("label",)),
    M(F + "dice_loss", convert=cv.dice_loss, domains={"input": PROB, "label": index_into("input", None, -1)}),
    M(F + "label_smooth", convert=cv.label_smooth, domains={"label": PROB}),
    # normalization
    M(F + "layer_norm", convert=cv.layer_norm, benchmark_op="layer_norm"),
    M(F + "rms_norm", T + "rms_norm(input, ints(normalized_shape), weight, eps=float(eps))",
      known="Paddle 3.3.1's CPU build registers no rms_norm kernel (GPU only): on the CPU the Paddle side errors"),
    M(F + "batch_norm", convert=cv.batch_norm, domains={"running_var": POSITIVE},
      nondiff=("running_mean", "running_var"), benchmark_op="batch_norm"),
    M(F + "instance_norm", convert=cv.instance_norm, domains={"running_var": POSITIVE},
      nondiff=("running_mean", "running_var"), benchmark_op="instance_norm"),
    M(F + "group_norm", convert=cv.group_norm, benchmark_op="group_norm"),
    M(F + "local_response_norm", convert=cv.local_response_norm),
    M(F + "normalize", convert=cv.normalize, benchmark_op="normalize"),
    # attention, distances, embedding, misc
    M(F + "scaled_dot_product_attention", convert=cv.scaled_dot_product_attention, ignore=("backend", "enable_gqa"),
      nondiff=("attn_mask",), benchmark_op="scaled_dot_product_attention"),
    M(F + "cosine_similarity", T + "cosine_similarity(x1, x2, dim=int(axis), eps=float(eps))",
      benchmark_op="cosine_similarity"),
    M(F + "pairwise_distance", convert=cv.pairwise_distance, benchmark_op="pairwise_distance"),
    M(F + "sequence_mask", convert=cv.sequence_mask,
      domains={"x": Domain(low=0.0, high=8.0), "maxlen": Domain(low=1.0, high=8.0)}),
    M(F + "linear", convert=cv.linear, benchmark_op="linear", flops=linear_flops),
    M(F + "embedding", convert=cv.embedding, domains={"x": index_into("weight", axis_param=None, axis=0)},
      nondiff=("x",), benchmark_op="embedding"),
    # parents: beams of the step before, inside the beam dim
    M(F + "gather_tree", convert=cv.gather_tree,
      domains={"parents": index_into("ids", axis_param=None, axis=2)}, nondiff=("ids", "parents")),
]
