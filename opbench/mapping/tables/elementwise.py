"""Element-wise math: unary, binary, comparison, logical and bitwise APIs of ``paddle``."""

from __future__ import annotations

from opbench.domains import NONZERO, POSITIVE
from opbench.mapping.converters import elementwise as cv
from opbench.mapping.spec import ApiMapping as M

ENTRIES: list[M] = [
    M("paddle.lerp", "torch.lerp(x, y, weight)", benchmark_op="lerp"),
    M("paddle.add", "torch.add(x, y, alpha=alpha)", benchmark_op="add"),
    M("paddle.subtract", "torch.sub(x, y, alpha=alpha)", benchmark_op="subtract"),
    M("paddle.multiply", "torch.mul(x, y)", benchmark_op="multiply"),
    M("paddle.divide", "torch.div(x, y, rounding_mode=rounding_mode)", domains={"y": NONZERO},
      benchmark_op="divide"),
    M("paddle.maximum", "torch.maximum(x, y)", benchmark_op="maximum"),
    M("paddle.minimum", "torch.minimum(x, y)", benchmark_op="minimum"),
    # A positive base keeps fractional exponents real (and the gradient finite).
    M("paddle.pow", "torch.pow(x, y)", domains={"x": POSITIVE}, benchmark_op="pow"),
    M("paddle.where", convert=cv.where, nondiff=("condition",), benchmark_op="where"),
    M("paddle.abs", "torch.abs(x)", benchmark_op="abs"),
    M("paddle.exp", "torch.exp(x)", benchmark_op="exp"),
    M("paddle.log", "torch.log(x)", domains={"x": POSITIVE}, benchmark_op="log"),
    M("paddle.sqrt", "torch.sqrt(x)", domains={"x": POSITIVE}, benchmark_op="sqrt"),
    M("paddle.rsqrt", "torch.rsqrt(x)", domains={"x": POSITIVE}, benchmark_op="rsqrt"),
    M("paddle.sin", "torch.sin(x)", benchmark_op="sin"),
    M("paddle.cos", "torch.cos(x)", benchmark_op="cos"),
    M("paddle.tanh", "torch.tanh(x)", benchmark_op="tanh"),
    M("paddle.erf", "torch.erf(x)", benchmark_op="erf"),
    M("paddle.square", "torch.square(x)", benchmark_op="square"),
    M("paddle.reciprocal", "torch.reciprocal(x)", domains={"x": NONZERO}, benchmark_op="reciprocal"),
    M("paddle.floor", "torch.floor(x)", benchmark_op="floor"),
    M("paddle.clip", convert=cv.clip, benchmark_op="clip"),
    M("paddle.scale", convert=cv.scale, benchmark_op="scale"),
    M("paddle.cast", convert=cv.cast, benchmark_op="cast"),
]
