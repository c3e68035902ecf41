"""Shape, layout and indexing: reshape, transpose, concat, gather, ..."""

from __future__ import annotations

from opbench.domains import POSITIVE, Domain, index_into
from opbench.mapping.converters import manipulation as cv
from opbench.mapping.spec import ApiMapping as M

# Index tensors inside a __getitem__/__setitem__ index: drawn inside x's first dim (the
# smallest bound that fits every corpus line; see the family report for a per-position domain).
_ITEM = index_into("self", axis_param=None)

ENTRIES: list[M] = [
    # indexing
    M("paddle.Tensor.__getitem__", convert=cv.getitem, domains={"item": _ITEM}, nondiff=("item",)),
    M("paddle.Tensor.__setitem__", convert=cv.setitem, domains={"item": _ITEM}, nondiff=("item",)),
    M("paddle.slice", convert=cv.slice_, benchmark_op="slice"),
    M("paddle.strided_slice", convert=cv.strided_slice, benchmark_op="strided_slice"),
    M("paddle.slice_scatter", convert=cv.slice_scatter),
    M("paddle.crop", convert=cv.crop),
    # shapes and layout
    M("paddle.reshape", convert=cv.reshape, benchmark_op="reshape"),
    M("paddle.transpose", "torch.permute(x, ints(perm))", benchmark_op="transpose"),
    M("paddle.concat", convert=cv.concat, benchmark_op="concat"),
    M("paddle.stack", convert=cv.stack, benchmark_op="stack"),
    # index: which input each row comes from, 0 or 1 (every config line has at least two inputs)
    M("paddle.multiplex", convert=cv.multiplex, domains={"index": Domain(low=0.0, high=1.0)}, nondiff=("index",),
      known="Paddle's gradient of each input has index's row count, not the input's, where index has fewer rows "
            "than the inputs (a [2, 4] gradient for a [4, 4] input); torch's has the input's shape"),
    M("paddle.as_strided", convert=cv.as_strided),
    M("paddle.squeeze", convert=cv.squeeze, benchmark_op="squeeze"),
    M("paddle.unsqueeze", convert=cv.unsqueeze, benchmark_op="unsqueeze"),
    M("paddle.expand", "torch.Tensor.expand(x, ints(shape))", benchmark_op="expand"),
    M("paddle.broadcast_to", convert=cv.broadcast_to, benchmark_op="broadcast_to"),
    M("paddle.tile", convert=cv.tile, benchmark_op="tile"),
    M("paddle.flatten", convert=cv.flatten, benchmark_op="flatten"),
    M("paddle.unflatten", convert=cv.unflatten),
    M("paddle.view", convert=cv.view),
    M("paddle.view_as", "torch.Tensor.view_as(x, other)"),
    M("paddle.moveaxis", convert=cv.moveaxis),
    M("paddle.roll", convert=cv.roll, benchmark_op="roll"),
    M("paddle.flip", convert=cv.flip, benchmark_op="flip"),
    M("paddle.reverse", convert=cv.flip),
    M("paddle.rot90", convert=cv.rot90),
    M("paddle.atleast_1d", convert=cv.atleast(1)),
    M("paddle.atleast_2d", convert=cv.atleast(2)),
    M("paddle.atleast_3d", convert=cv.atleast(3)),
    M("paddle.vstack", convert=cv.stacker("vstack")),
    M("paddle.hstack", convert=cv.stacker("hstack")),
    M("paddle.dstack", convert=cv.stacker("dstack")),
    M("paddle.column_stack", convert=cv.stacker("column_stack")),
    M("paddle.row_stack", convert=cv.stacker("row_stack")),
    M("paddle.broadcast_tensors", convert=cv.broadcast_tensors),
    M("paddle.as_complex", convert=cv.as_complex),
    M("paddle.as_real", convert=cv.as_real),
    # splitting
    M("paddle.split", convert=cv.split, benchmark_op="split"),
    M("paddle.chunk", convert=cv.chunk),
    M("paddle.tensor_split", convert=cv.tensor_split),
    M("paddle.vsplit", convert=cv.splitter("vsplit")),
    M("paddle.hsplit", convert=cv.splitter("hsplit")),
    M("paddle.dsplit", convert=cv.splitter("dsplit")),
    M("paddle.unbind", convert=cv.unbind),
    M("paddle.unstack", convert=cv.unstack),
    M("paddle.unfold", convert=cv.unfold,
      known="Paddle's backward does not add up the gradients of overlapping windows (step < size); torch's does"),
    # gather / scatter
    M("paddle.gather", convert=cv.gather, domains={"index": index_into("x")}, nondiff=("index",),
      benchmark_op="gather"),
    M("paddle.index_select", convert=cv.index_select, domains={"index": index_into("x")}, nondiff=("index",),
      benchmark_op="index_select"),
    M("paddle.gather_nd", convert=cv.gather_nd, domains={"index": index_into("x", axis_param=None)},
      nondiff=("index",), benchmark_op="gather_nd"),
    M("paddle.scatter_nd_add", convert=cv.scatter_nd_add, domains={"index": index_into("x", axis_param=None)},
      nondiff=("index",), benchmark_op="scatter_nd_add"),
    M("paddle.scatter_nd", convert=cv.scatter_nd, nondiff=("index",)),
    # Distinct indices: with a repeat, which overwrite lands decides the result (and Paddle and torch differ).
    M("paddle.scatter", convert=cv.scatter, domains={"index": index_into("x", axis_param=None, distinct=True)},
      nondiff=("index",), benchmark_op="scatter"),
    M("paddle.index_sample", convert=cv.index_sample, domains={"index": index_into("x", axis_param=None, axis=1)},
      nondiff=("index",), benchmark_op="index_sample"),
    M("paddle.take_along_axis", convert=cv.take_along_axis, domains={"indices": index_into("arr")},
      nondiff=("indices",)),
    M("paddle.put_along_axis", convert=cv.put_along_axis, domains={"indices": index_into("arr", distinct=True)},
      nondiff=("indices",)),
    M("paddle.index_put", convert=cv.index_put, domains={"indices": index_into("x", axis_param=None)},
      nondiff=("indices",)),
    M("paddle.index_add", convert=cv.index_add, domains={"index": index_into("x")}, nondiff=("index",)),
    M("paddle.index_fill", convert=cv.index_fill, domains={"index": index_into("x")}, nondiff=("index",)),
    M("paddle.masked_fill", convert=cv.masked_fill, nondiff=("mask",),
      known="Paddle's gradient for a Tensor `value` is wrong (0 when x and mask have one shape); "
            "torch's sums the masked grads"),
    M("paddle.masked_scatter", convert=cv.masked_scatter, nondiff=("mask",)),
    M("paddle.select_scatter", convert=cv.select_scatter),
    M("paddle.diagonal_scatter", convert=cv.diagonal_scatter),
    M("paddle.take", convert=cv.take, domains={"index": index_into("x", axis_param=None)}, nondiff=("index",)),
    M("paddle.repeat_interleave", convert=cv.repeat_interleave, domains={"repeats": POSITIVE},
      nondiff=("repeats",)),
    M("paddle.shard_index", convert=cv.shard_index, domains={"input": POSITIVE}),
    # differences and integrals
    M("paddle.diff", convert=cv.diff),
    M("paddle.trapezoid", convert=cv.trapezoid),
    M("paddle.cumulative_trapezoid", convert=cv.cumulative_trapezoid),
    M("paddle.combinations", convert=cv.combinations),
    M("paddle.pdist", convert=cv.pdist),
]
