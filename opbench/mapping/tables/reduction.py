"""Reductions, scans, sorting, search and statistics: ``paddle.sum``, ``paddle.topk``, ``paddle.quantile``, ..."""

from __future__ import annotations

from opbench.domains import DISTINCT, SORTED, Domain
from opbench.mapping.converters import reduction as cv
from opbench.mapping.spec import ApiMapping as M

# A count given as an int tensor (topk's ``k``): at least 1, small enough for any test shape.
_COUNT = Domain(low=1.0, high=3.0)
# Non-negative integers to count (bincount's ``x``) and a small ``minlength``.
_BINS = Domain(low=0.0, high=8.0)

ENTRIES: list[M] = [
    M("paddle.sum", convert=cv.reduce_sum, benchmark_op="sum"),
    M("paddle.mean", convert=cv.mean, benchmark_op="mean"),
    M("paddle.max", convert=cv.reduce_max, domains={"x": DISTINCT}, benchmark_op="max"),
    M("paddle.min", convert=cv.reduce_min, domains={"x": DISTINCT}, benchmark_op="min"),
    M("paddle.amax", convert=cv.amax),
    M("paddle.amin", convert=cv.amin),
    M("paddle.prod", convert=cv.prod, benchmark_op="prod"),
    M("paddle.logsumexp", convert=cv.logsumexp, benchmark_op="logsumexp"),
    M("paddle.all", convert=cv.reduce_all),
    M("paddle.any", convert=cv.reduce_any),
    M("paddle.std", convert=cv.std),
    M("paddle.var", convert=cv.var),
    M("paddle.nansum", convert=cv.nansum),
    M("paddle.nanmean", convert=cv.nanmean),
    M("paddle.median", convert=cv.median),
    M("paddle.nanmedian", convert=cv.nanmedian),
    M("paddle.quantile", convert=cv.quantile),
    M("paddle.nanquantile", convert=cv.nanquantile),
    M("paddle.count_nonzero", convert=cv.count_nonzero),
    M("paddle.reduce_as", convert=cv.reduce_as),
    M("paddle.cumsum", convert=cv.cumsum, benchmark_op="cumsum"),
    M("paddle.cumprod", convert=cv.cumprod),
    M("paddle.logcumsumexp", convert=cv.logcumsumexp),
    M("paddle.cummax", convert=cv.cummax, domains={"x": DISTINCT}),
    M("paddle.cummin", convert=cv.cummin, domains={"x": DISTINCT}),
    M("paddle.argmax", convert=cv.argmax, domains={"x": DISTINCT}, benchmark_op="argmax"),
    M("paddle.argmin", convert=cv.argmin, domains={"x": DISTINCT}, benchmark_op="argmin"),
    M("paddle.topk", convert=cv.topk, domains={"x": DISTINCT, "k": _COUNT}, benchmark_op="topk"),
    M("paddle.sort", convert=cv.sort, domains={"x": DISTINCT}),
    M("paddle.argsort", convert=cv.argsort, domains={"x": DISTINCT}, benchmark_op="argsort"),
    M("paddle.kthvalue", convert=cv.kthvalue, domains={"x": DISTINCT}),
    M("paddle.mode", convert=cv.mode),
    M("paddle.nonzero", convert=cv.nonzero),
    M("paddle.masked_select", convert=cv.masked_select, nondiff=("mask",)),
    M("paddle.allclose", convert=cv.allclose),
    M("paddle.isclose", convert=cv.isclose),
    M("paddle.equal_all", convert=cv.equal_all),
    M("paddle.searchsorted", convert=cv.searchsorted, domains={"sorted_sequence": SORTED}),
    M("paddle.bucketize", convert=cv.bucketize, domains={"sorted_sequence": SORTED}),
    M("paddle.bincount", convert=cv.bincount, domains={"x": _BINS, "minlength": _BINS}),
    M("paddle.unique", convert=cv.unique),
    M("paddle.unique_consecutive", convert=cv.unique_consecutive),
    M("paddle.histogram", convert=cv.histogram),
    M("paddle.histogram_bin_edges", convert=cv.histogram_bin_edges),
    M("paddle.histogramdd", convert=cv.histogramdd, nondiff=("weights",)),
]
