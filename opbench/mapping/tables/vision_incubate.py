"""``paddle.vision.ops``, ``paddle.incubate`` and ``paddle.geometric`` APIs that PyTorch can express."""

from __future__ import annotations

from opbench.domains import Domain, boxes_in, index_into, sections_of
from opbench.mapping.converters import vision_incubate as cv
from opbench.mapping.converters.nn_functional import drops_at_random
from opbench.mapping.spec import ApiMapping as M

IF = "paddle.incubate.nn.functional."
G = "paddle.geometric."

# Segment ids: small non-negative integers, sorted (Paddle's segment ops require sorted ids).
SEGMENT_IDS = Domain(kind="sorted", low=0.0, high=3.0)
SRC = index_into("x", axis_param=None, axis=0)
# Distinct sources where the edges allow: a max/min over two copies of one row splits its gradient in torch.
DISTINCT_SRC = index_into("x", axis_param=None, axis=0, distinct=True)


def _segment(api: str, fn: object) -> M:
    return M(api, convert=fn, domains={"segment_ids": SEGMENT_IDS}, nondiff=("segment_ids",))


ENTRIES: list[M] = [
    M("paddle.vision.ops.roi_align", convert=cv.roi_align, benchmark_op="roi_align",
      domains={"boxes": boxes_in("x"), "boxes_num": sections_of("boxes", axis_param=None)},
      nondiff=("boxes", "boxes_num"),
      known="Paddle's CPU backward disagrees with finite differences of its own forward for aligned boxes "
            "(0.063 max on a [1,3,8,8] float64 case, where the forward agrees to 8e-16); the torch side is the "
            "exact gradient of the same forward"),
    M("paddle.vision.ops.roi_pool", convert=cv.roi_pool,
      domains={"boxes": boxes_in("x"), "boxes_num": sections_of("boxes", axis_param=None)},
      nondiff=("boxes", "boxes_num")),
    M("paddle.vision.ops.psroi_pool", convert=cv.psroi_pool,
      domains={"boxes": boxes_in("x"), "boxes_num": sections_of("boxes", axis_param=None)},
      nondiff=("boxes", "boxes_num")),
    M("paddle.vision.ops.prior_box", convert=cv.prior_box, nondiff=("input", "image")),
    M("paddle.vision.ops.box_coder", convert=cv.box_coder,
      known="Paddle 3.3.1's float64 decode misreads a prior_box_var given as four numbers: it differs from "
            "its own float32 kernel's by up to 0.8 on unit-size boxes, where the float32 kernel and torch agree "
            "(a variance tensor, float32, and encode agree)"),
    M(IF + "swiglu", convert=cv.swiglu),
    # Paddle's CPU build has no fused_rms_norm grad kernel: forward only.
    M(IF + "fused_rms_norm", convert=cv.fused_rms_norm, backward=False),
    # Paddle has no gradient for fused_layer_norm (an inference op): forward only.
    M(IF + "fused_layer_norm", convert=cv.fused_layer_norm, backward=False),
    M(IF + "fused_dropout_add", convert=cv.fused_dropout_add, random=drops_at_random),
    M("paddle.incubate.softmax_mask_fuse", convert=cv.softmax_mask_fuse, nondiff=("mask",)),
    *(_segment(ns + "segment_" + r, getattr(cv, "segment_" + r))
      for ns in (G, "paddle.incubate.") for r in ("sum", "mean", "max", "min")),
    M(G + "send_u_recv", convert=cv.send_u_recv, domains={"src_index": DISTINCT_SRC, "dst_index": SRC},
      nondiff=("src_index", "dst_index")),
    M(G + "send_ue_recv", convert=cv.send_ue_recv, domains={"src_index": DISTINCT_SRC, "dst_index": SRC},
      nondiff=("src_index", "dst_index")),
    M(G + "send_uv", convert=cv.send_uv, domains={"src_index": SRC, "dst_index": index_into("y", None, 0)},
      nondiff=("src_index", "dst_index")),
]
