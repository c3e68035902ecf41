"""Reductions, scans, sorting and search: ``paddle.sum``, ``paddle.cumsum``, ``paddle.argmax``, ..."""

from __future__ import annotations

from opbench.mapping.converters import reduction as cv
from opbench.mapping.spec import ApiMapping as M

ENTRIES: list[M] = [
    M("paddle.sum", convert=cv.reduce_sum, benchmark_op="sum"),
    M("paddle.mean", convert=cv.mean, benchmark_op="mean"),
    M("paddle.max", convert=cv.reduce_max, benchmark_op="max"),
    M("paddle.min", convert=cv.reduce_min, benchmark_op="min"),
    M("paddle.prod", convert=cv.prod, benchmark_op="prod"),
    M("paddle.logsumexp", convert=cv.logsumexp, benchmark_op="logsumexp"),
    M("paddle.cumsum", convert=cv.cumsum, benchmark_op="cumsum"),
    M("paddle.argmax", convert=cv.argmax, benchmark_op="argmax"),
]
