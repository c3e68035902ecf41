"""Shape, layout and indexing: reshape, transpose, concat, gather, ..."""

from __future__ import annotations

from opbench.domains import index_into
from opbench.mapping.converters import manipulation as cv
from opbench.mapping.spec import ApiMapping as M

ENTRIES: list[M] = [
    M("paddle.reshape", convert=cv.reshape, benchmark_op="reshape"),
    M("paddle.transpose", "torch.permute(x, ints(perm))", benchmark_op="transpose"),
    M("paddle.concat", convert=cv.concat, benchmark_op="concat"),
    M("paddle.stack", convert=cv.stack, benchmark_op="stack"),
    M("paddle.squeeze", convert=cv.squeeze, benchmark_op="squeeze"),
    M("paddle.unsqueeze", convert=cv.unsqueeze, benchmark_op="unsqueeze"),
    M("paddle.expand", "torch.Tensor.expand(x, ints(shape))", benchmark_op="expand"),
    M("paddle.gather", convert=cv.gather, domains={"index": index_into("x")}, nondiff=("index",),
      benchmark_op="gather"),
    M("paddle.index_select", convert=cv.index_select, domains={"index": index_into("x")}, nondiff=("index",),
      benchmark_op="index_select"),
]
