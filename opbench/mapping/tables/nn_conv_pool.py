"""``paddle.nn.functional`` convolution, pooling, resampling and padding."""

from __future__ import annotations

from opbench.domains import PLANE_POSITIONS, POSITIVE, Domain
from opbench.mapping.converters import nn_conv_pool as cv
from opbench.mapping.spec import ApiMapping as M

F = "paddle.nn.functional."


# Sizes and paddings given as int tensors: small non-negative (sizes: positive) values.
SMALL_PAD = Domain(low=0.0, high=2.0)
SMALL_SIZE = Domain(low=1.0, high=8.0)

ENTRIES: list[M] = [
    # convolution
    M(F + "conv1d", convert=cv.conv1d, benchmark_op="conv1d"),
    M(F + "conv2d", convert=cv.conv2d, benchmark_op="conv2d"),
    M(F + "conv3d", convert=cv.conv3d, benchmark_op="conv3d"),
    M(F + "conv1d_transpose", convert=cv.conv1d_transpose, benchmark_op="conv1d_transpose"),
    M(F + "conv2d_transpose", convert=cv.conv2d_transpose, benchmark_op="conv2d_transpose"),
    M(F + "conv3d_transpose", convert=cv.conv3d_transpose, benchmark_op="conv3d_transpose"),
    # pooling
    M(F + "max_pool1d", convert=cv.max_pool1d, benchmark_op="max_pool1d"),
    M(F + "max_pool2d", convert=cv.max_pool2d, benchmark_op="max_pool2d"),
    M(F + "max_pool3d", convert=cv.max_pool3d, benchmark_op="max_pool3d"),
    M(F + "avg_pool1d", convert=cv.avg_pool1d, benchmark_op="avg_pool1d"),
    M(F + "avg_pool2d", convert=cv.avg_pool2d, benchmark_op="avg_pool2d"),
    M(F + "avg_pool3d", convert=cv.avg_pool3d, benchmark_op="avg_pool3d"),
    M(F + "lp_pool1d", convert=cv.lp_pool1d, domains={"x": POSITIVE}),
    M(F + "lp_pool2d", convert=cv.lp_pool2d, domains={"x": POSITIVE}),
    M(F + "adaptive_avg_pool1d", convert=cv.adaptive_avg_pool1d, benchmark_op="adaptive_avg_pool1d"),
    M(F + "adaptive_avg_pool2d", convert=cv.adaptive_avg_pool2d, benchmark_op="adaptive_avg_pool2d"),
    M(F + "adaptive_avg_pool3d", convert=cv.adaptive_avg_pool3d, benchmark_op="adaptive_avg_pool3d"),
    M(F + "adaptive_max_pool1d", convert=cv.adaptive_max_pool1d),
    M(F + "adaptive_max_pool2d", convert=cv.adaptive_max_pool2d),
    M(F + "adaptive_max_pool3d", convert=cv.adaptive_max_pool3d),
    # without random_u both sides draw their own windows
    M(F + "fractional_max_pool2d", convert=cv.fractional_max_pool2d, random=lambda a: a["random_u"] is None),
    M(F + "fractional_max_pool3d", convert=cv.fractional_max_pool3d, random=lambda a: a["random_u"] is None),
    M(F + "max_unpool1d", convert=cv.max_unpool1d, domains={"indices": PLANE_POSITIONS}, nondiff=("indices",)),
    M(F + "max_unpool2d", convert=cv.max_unpool2d, domains={"indices": PLANE_POSITIONS}, nondiff=("indices",)),
    M(F + "max_unpool3d", convert=cv.max_unpool3d, domains={"indices": PLANE_POSITIONS}, nondiff=("indices",)),
    # resampling
    M(F + "interpolate", convert=cv.interpolate, domains={"size": SMALL_SIZE}, benchmark_op="interpolate"),
    M(F + "upsample", convert=cv.upsample, domains={"size": SMALL_SIZE}),
    M(F + "grid_sample", convert=cv.grid_sample, benchmark_op="grid_sample"),
    M(F + "affine_grid", convert=cv.affine_grid),
    M(F + "pixel_shuffle", convert=cv.pixel_shuffle, benchmark_op="pixel_shuffle"),
    M(F + "pixel_unshuffle", convert=cv.pixel_unshuffle),
    M(F + "channel_shuffle", convert=cv.channel_shuffle),
    M(F + "temporal_shift", convert=cv.temporal_shift),
    # padding, unfold/fold
    M(F + "pad", convert=cv.pad, domains={"pad": SMALL_PAD}, benchmark_op="pad"),
    M(F + "zeropad2d", convert=cv.zeropad2d),
    M(F + "unfold", convert=cv.unfold),
    M(F + "fold", convert=cv.fold),
]
