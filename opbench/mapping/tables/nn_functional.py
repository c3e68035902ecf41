"""``paddle.nn.functional``: activations, normalization, losses, convolution, pooling, ..."""

from __future__ import annotations

from opbench.domains import index_into
from opbench.mapping.converters import nn_functional as cv
from opbench.mapping.flops import linear_flops
from opbench.mapping.spec import ApiMapping as M

F = "paddle.nn.functional."

ENTRIES: list[M] = [
    M(F + "relu", "torch.relu(x)", benchmark_op="relu"),
    M(F + "gelu", convert=cv.gelu, benchmark_op="gelu"),
    M(F + "silu", "torch.nn.functional.silu(x)", ignore=("inplace",), benchmark_op="silu"),
    M(F + "sigmoid", "torch.sigmoid(x)", benchmark_op="sigmoid"),
    M(F + "leaky_relu", "torch.nn.functional.leaky_relu(x, negative_slope)", benchmark_op="leaky_relu"),
    M(F + "softmax", "torch.nn.functional.softmax(x, dim=axis, dtype=dtype(dtype))", benchmark_op="softmax"),
    M(F + "log_softmax", "torch.nn.functional.log_softmax(x, dim=axis, dtype=dtype(dtype))",
      benchmark_op="log_softmax"),
    M(F + "layer_norm", convert=cv.layer_norm, benchmark_op="layer_norm"),
    M(F + "linear", convert=cv.linear, benchmark_op="linear", flops=linear_flops),
    M(F + "embedding", convert=cv.embedding, domains={"x": index_into("weight", axis_param=None, axis=0)},
      nondiff=("x",), benchmark_op="embedding"),
]
