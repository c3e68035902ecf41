"""Matrix products and ``paddle.linalg``."""

from __future__ import annotations

from opbench.mapping.converters import linalg as cv
from opbench.mapping.flops import bmm_flops, matmul_flops
from opbench.mapping.spec import ApiMapping as M

ENTRIES: list[M] = [
    M("paddle.matmul", convert=cv.matmul, benchmark_op="matmul", flops=matmul_flops),
    M("paddle.bmm", "torch.bmm(x, y)", benchmark_op="bmm", flops=bmm_flops),
]
