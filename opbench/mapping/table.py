"""The Paddle -> PyTorch mapping table: one :class:`ApiMapping` per Paddle API, as data.

Signatures follow ``inspect.signature`` on paddle 3.3.1 (``name`` and ``out``
left out; ``tests/mapping/test_mapping_table.py`` checks them). An entry is a
plain rename when only names differ, or points at a converter in
:mod:`opbench.mapping.converters` when the semantics differ. ``benchmark_op``
is the ``--api_name`` PaddlePaddle/benchmark uses for the API.
"""

from __future__ import annotations

from opbench.domains import NONZERO, POSITIVE, index_into
from opbench.mapping import converters as cv
from opbench.mapping.flops import bmm_flops, linear_flops, matmul_flops
from opbench.mapping.spec import REQUIRED, ApiMapping, Param

X = Param("x")
Y = Param("y")
_UNARY = (X,)
_BINARY = (X, Y)
_REDUCE = (X, Param("axis", None), Param("keepdim", False))
_TORCH_UNARY = {"x": "input"}
_TORCH_BINARY = {"x": "input", "y": "other"}

F = "paddle.nn.functional."

TABLE: list[ApiMapping] = [
    # ---- elementwise binary -------------------------------------------------------------
    ApiMapping(
        "paddle.lerp", (X, Y, Param("weight")), torch="torch.lerp",
        rename={"x": "input", "y": "end"}, benchmark_op="lerp",
    ),
    ApiMapping(
        "paddle.add", (X, Y, Param("alpha", 1, keyword_only=True)), torch="torch.add",
        rename=_TORCH_BINARY, benchmark_op="add",
    ),
    ApiMapping(
        "paddle.subtract", (X, Y, Param("alpha", 1, keyword_only=True)), torch="torch.sub",
        rename=_TORCH_BINARY, benchmark_op="subtract",
    ),
    ApiMapping("paddle.multiply", _BINARY, torch="torch.mul", rename=_TORCH_BINARY, benchmark_op="multiply"),
    ApiMapping(
        "paddle.divide", (X, Y, Param("rounding_mode", None, keyword_only=True)), torch="torch.div",
        rename=_TORCH_BINARY, domains={"y": NONZERO}, benchmark_op="divide",
    ),
    ApiMapping(
        "paddle.maximum", _BINARY, torch="torch.maximum", rename=_TORCH_BINARY, benchmark_op="maximum",
    ),
    ApiMapping(
        "paddle.minimum", _BINARY, torch="torch.minimum", rename=_TORCH_BINARY, benchmark_op="minimum",
    ),
    ApiMapping(
        # A positive base keeps fractional exponents real (and the gradient finite).
        "paddle.pow", _BINARY, torch="torch.pow", rename={"x": "input", "y": "exponent"},
        domains={"x": POSITIVE}, benchmark_op="pow",
    ),
    ApiMapping(
        "paddle.where", (Param("condition"), Param("x", None), Param("y", None)), convert=cv.where,
        nondiff=("condition",), benchmark_op="where",
    ),
    # ---- elementwise unary --------------------------------------------------------------
    ApiMapping("paddle.abs", _UNARY, torch="torch.abs", rename=_TORCH_UNARY, benchmark_op="abs"),
    ApiMapping("paddle.exp", _UNARY, torch="torch.exp", rename=_TORCH_UNARY, benchmark_op="exp"),
    ApiMapping(
        "paddle.log", _UNARY, torch="torch.log", rename=_TORCH_UNARY, domains={"x": POSITIVE},
        benchmark_op="log",
    ),
    ApiMapping(
        "paddle.sqrt", _UNARY, torch="torch.sqrt", rename=_TORCH_UNARY, domains={"x": POSITIVE},
        benchmark_op="sqrt",
    ),
    ApiMapping(
        "paddle.rsqrt", _UNARY, torch="torch.rsqrt", rename=_TORCH_UNARY, domains={"x": POSITIVE},
        benchmark_op="rsqrt",
    ),
    ApiMapping("paddle.sin", _UNARY, torch="torch.sin", rename=_TORCH_UNARY, benchmark_op="sin"),
    ApiMapping("paddle.cos", _UNARY, torch="torch.cos", rename=_TORCH_UNARY, benchmark_op="cos"),
    ApiMapping("paddle.tanh", _UNARY, torch="torch.tanh", rename=_TORCH_UNARY, benchmark_op="tanh"),
    ApiMapping("paddle.erf", _UNARY, torch="torch.erf", rename=_TORCH_UNARY, benchmark_op="erf"),
    ApiMapping("paddle.square", _UNARY, torch="torch.square", rename=_TORCH_UNARY, benchmark_op="square"),
    ApiMapping(
        "paddle.reciprocal", _UNARY, torch="torch.reciprocal", rename=_TORCH_UNARY,
        domains={"x": NONZERO}, benchmark_op="reciprocal",
    ),
    ApiMapping("paddle.floor", _UNARY, torch="torch.floor", rename=_TORCH_UNARY, benchmark_op="floor"),
    ApiMapping(
        "paddle.clip", (X, Param("min", None), Param("max", None)), convert=cv.clip, benchmark_op="clip",
    ),
    ApiMapping(
        "paddle.scale",
        (X, Param("scale", 1.0), Param("bias", 0.0), Param("bias_after_scale", True), Param("act", None)),
        convert=cv.scale, benchmark_op="scale",
    ),
    ApiMapping("paddle.cast", (X, Param("dtype")), convert=cv.cast, benchmark_op="cast"),
    # ---- reductions and scans -----------------------------------------------------------
    ApiMapping(
        "paddle.sum", (X, Param("axis", None), Param("dtype", None), Param("keepdim", False)),
        convert=cv.reduce_sum, benchmark_op="sum",
    ),
    ApiMapping(
        "paddle.mean", (*_REDUCE, Param("dtype", None, keyword_only=True)), convert=cv.mean,
        benchmark_op="mean",
    ),
    ApiMapping("paddle.max", _REDUCE, convert=cv.reduce_max, benchmark_op="max"),
    ApiMapping("paddle.min", _REDUCE, convert=cv.reduce_min, benchmark_op="min"),
    ApiMapping("paddle.prod", (*_REDUCE, Param("dtype", None)), convert=cv.prod, benchmark_op="prod"),
    ApiMapping("paddle.logsumexp", _REDUCE, convert=cv.logsumexp, benchmark_op="logsumexp"),
    ApiMapping(
        "paddle.cumsum", (X, Param("axis", None), Param("dtype", None)), convert=cv.cumsum,
        benchmark_op="cumsum",
    ),
    ApiMapping(
        "paddle.argmax", (X, Param("axis", None), Param("keepdim", False), Param("dtype", "int64")),
        convert=cv.argmax, benchmark_op="argmax",
    ),
    # ---- matrix products ----------------------------------------------------------------
    ApiMapping(
        "paddle.matmul", (X, Y, Param("transpose_x", False), Param("transpose_y", False)),
        convert=cv.matmul, benchmark_op="matmul", flops=matmul_flops,
    ),
    ApiMapping(
        "paddle.bmm", _BINARY, torch="torch.bmm", rename={"x": "input", "y": "mat2"},
        benchmark_op="bmm", flops=bmm_flops,
    ),
    # ---- shape and indexing -------------------------------------------------------------
    ApiMapping("paddle.reshape", (X, Param("shape")), convert=cv.reshape, benchmark_op="reshape"),
    ApiMapping("paddle.transpose", (X, Param("perm")), convert=cv.transpose, benchmark_op="transpose"),
    ApiMapping("paddle.concat", (X, Param("axis", 0)), convert=cv.concat, benchmark_op="concat"),
    ApiMapping("paddle.stack", (X, Param("axis", 0)), convert=cv.stack, benchmark_op="stack"),
    ApiMapping("paddle.squeeze", (X, Param("axis", None)), convert=cv.squeeze, benchmark_op="squeeze"),
    ApiMapping("paddle.unsqueeze", (X, Param("axis")), convert=cv.unsqueeze, benchmark_op="unsqueeze"),
    ApiMapping("paddle.expand", (X, Param("shape")), convert=cv.expand, benchmark_op="expand"),
    ApiMapping(
        "paddle.gather", (X, Param("index"), Param("axis", None)), convert=cv.gather,
        domains={"index": index_into("x")}, nondiff=("index",), benchmark_op="gather",
    ),
    ApiMapping(
        "paddle.index_select", (X, Param("index"), Param("axis", 0)), convert=cv.index_select,
        domains={"index": index_into("x")}, nondiff=("index",), benchmark_op="index_select",
    ),
    # ---- paddle.nn.functional -----------------------------------------------------------
    ApiMapping(F + "relu", _UNARY, torch="torch.relu", rename=_TORCH_UNARY, benchmark_op="relu"),
    ApiMapping(F + "gelu", (X, Param("approximate", False)), convert=cv.gelu, benchmark_op="gelu"),
    ApiMapping(
        F + "silu", (X, Param("inplace", False)), torch="torch.nn.functional.silu",
        rename={"x": "input", "inplace": None}, benchmark_op="silu",
    ),
    ApiMapping(F + "sigmoid", _UNARY, torch="torch.sigmoid", rename=_TORCH_UNARY, benchmark_op="sigmoid"),
    ApiMapping(
        F + "leaky_relu", (X, Param("negative_slope", 0.01)), torch="torch.nn.functional.leaky_relu",
        rename={"x": "input"}, benchmark_op="leaky_relu",
    ),
    ApiMapping(
        F + "softmax", (X, Param("axis", -1), Param("dtype", None)), torch="torch.nn.functional.softmax",
        rename={"x": "input", "axis": "dim"}, benchmark_op="softmax",
    ),
    ApiMapping(
        F + "log_softmax", (X, Param("axis", -1), Param("dtype", None)),
        torch="torch.nn.functional.log_softmax", rename={"x": "input", "axis": "dim"},
        benchmark_op="log_softmax",
    ),
    ApiMapping(
        F + "layer_norm",
        (X, Param("normalized_shape"), Param("weight", None), Param("bias", None), Param("epsilon", 1e-05)),
        convert=cv.layer_norm, benchmark_op="layer_norm",
    ),
    ApiMapping(
        F + "linear", (X, Param("weight"), Param("bias", None)), convert=cv.linear,
        benchmark_op="linear", flops=linear_flops,
    ),
    ApiMapping(
        F + "embedding",
        (
            X, Param("weight"), Param("padding_idx", None), Param("max_norm", None), Param("norm_type", 2.0),
            Param("sparse", False), Param("scale_grad_by_freq", False),
        ),
        convert=cv.embedding, domains={"x": index_into("weight", axis_param=None, axis=0)}, nondiff=("x",),
        benchmark_op="embedding",
    ),
]

#: PaddlePaddle/benchmark config families (the ``op`` field shared by several APIs) and the
#: API each runs when no ``--api_name`` is given.
BENCHMARK_FAMILIES: dict[str, str] = {
    "elementwise": "paddle.add",
    "reduce": "paddle.mean",
    "activation": "paddle.cos",
    "arg": "paddle.argmax",
}

__all__ = ["BENCHMARK_FAMILIES", "REQUIRED", "TABLE"]
