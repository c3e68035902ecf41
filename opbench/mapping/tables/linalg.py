"""Matrix products and ``paddle.linalg``."""

from __future__ import annotations

from opbench.domains import NONNEGATIVE, SPD, Domain
from opbench.mapping.converters import linalg as cv
from opbench.mapping.flops import bmm_flops, matmul_flops
from opbench.mapping.spec import ApiMapping as M

_SIGNS = ("singular/eigen-vectors are unique only up to a sign (a phase for complex) per vector; "
          "LAPACK's choice may differ between the two builds")

# LU pivots are 1-based row numbers: 1..3 is valid for every x with at least 3 rows (the corpus's shapes);
# a domain bounded by x's row count would cover the rest (not in opbench.domains yet).
_PIVOTS = Domain(low=1.0, high=3.0)

# Paddle 3.3.1's CPU eigh-based backward of a batch of more than one symmetric matrix is wrong (one matrix, or a
# batch of one, agrees with torch): finite differences of Paddle's own forward side with torch.
_BATCHED_EIGH = ("Paddle 3.3.1's CPU backward is wrong for a batch of more than one matrix; finite differences of "
                 "Paddle's own forward agree with torch's gradient")

# An int tensor ``axes`` of tensordot holds ones (contract dim 1 of each side): valid for the corpus's shapes.
_AXIS_ONE = Domain(low=0.5, high=1.0)

ENTRIES: list[M] = [
    # Products.
    M("paddle.matmul", convert=cv.matmul, benchmark_op="matmul", flops=matmul_flops),
    M("paddle.bmm", "torch.bmm(x, y)", benchmark_op="bmm", flops=bmm_flops),
    M("paddle.mm", "torch.matmul(input, mat2)"),
    M("paddle.mv", "torch.mv(x, vec)"),
    M("paddle.dot", convert=cv.dot),
    M("paddle.inner", "torch.inner(x, y)"),
    M("paddle.outer", convert=cv.outer),
    M("paddle.vecdot", "torch.linalg.vecdot(x, y, dim=axis)"),
    M("paddle.linalg.vecdot", "torch.linalg.vecdot(x, y, dim=axis)"),
    M("paddle.kron", "torch.kron(x, y)"),
    M("paddle.cross", convert=cv.cross),
    M("paddle.linalg.cross", convert=cv.cross),
    M("paddle.tensordot", convert=cv.tensordot, domains={"axes": _AXIS_ONE}),
    M("paddle.einsum", convert=cv.einsum),
    M("paddle.addmm", "torch.addmm(input, x, y, beta=float(beta), alpha=float(alpha))"),
    M("paddle.linalg.multi_dot", convert=cv.multi_dot),
    M("paddle.cartesian_prod", convert=cv.cartesian_prod),
    M("paddle.nn.functional.bilinear", convert=cv.bilinear),
    M("paddle.cdist", convert=cv.cdist),
    M("paddle.dist", convert=cv.dist),
    # Matrix views and reductions.
    M("paddle.t", "torch.t(input)"),
    M("paddle.matrix_transpose", "torch.transpose(x, -2, -1)"),
    M("paddle.linalg.matrix_transpose", "torch.transpose(x, -2, -1)"),
    M("paddle.diagonal", "torch.diagonal(x, offset=offset, dim1=axis1, dim2=axis2)"),
    M("paddle.trace", convert=cv.trace),
    M("paddle.vander", convert=cv.vander),
    M("paddle.renorm", convert=cv.renorm),
    M("paddle.linalg.cov", convert=cv.cov, domains={"fweights": NONNEGATIVE, "aweights": NONNEGATIVE}),
    M("paddle.linalg.corrcoef", convert=cv.corrcoef),
    # Norms.
    M("paddle.linalg.norm", convert=cv.norm),
    M("paddle.norm", convert=cv.norm),
    M("paddle.linalg.vector_norm", convert=cv.vector_norm),
    M("paddle.linalg.matrix_norm", convert=cv.matrix_norm),
    M("paddle.linalg.cond", convert=cv.cond),
    M("paddle.linalg.matrix_rank", convert=cv.matrix_rank),
    # Inverses, solves and determinants.
    M("paddle.linalg.inv", "torch.linalg.inv(x)"),
    M("paddle.inverse", "torch.linalg.inv(x)"),
    M("paddle.linalg.pinv", convert=cv.pinv,
      known="with hermitian=True, " + _BATCHED_EIGH),
    M("paddle.linalg.det", "torch.linalg.det(x)"),
    M("paddle.linalg.slogdet", convert=cv.slogdet),
    M("paddle.linalg.matrix_power", convert=cv.matrix_power),
    M("paddle.linalg.matrix_exp", "torch.linalg.matrix_exp(x)"),
    M("paddle.linalg.solve", convert=cv.solve),
    M("paddle.linalg.triangular_solve", convert=cv.triangular_solve, domains={"x": SPD},
      known="Paddle 3.3.1's CPU backward gives x's other triangle (and with unitriangular its diagonal) a gradient, "
            "though the forward never reads them; finite differences of Paddle's own forward agree with torch's"),
    M("paddle.linalg.lstsq", convert=cv.lstsq),
    # Decompositions.
    M("paddle.linalg.cholesky", "torch.linalg.cholesky(x, upper=upper)", domains={"x": SPD}),
    M("paddle.cholesky", "torch.linalg.cholesky(x, upper=upper)", domains={"x": SPD}),
    M("paddle.linalg.cholesky_solve", convert=cv.cholesky_solve, domains={"y": SPD}),
    M("paddle.linalg.cholesky_inverse", convert=cv.cholesky_inverse),
    M("paddle.linalg.lu", convert=cv.lu),
    M("paddle.linalg.lu_unpack", convert=cv.lu_unpack, domains={"y": _PIVOTS}),
    M("paddle.linalg.qr", convert=cv.qr),
    M("paddle.linalg.svd", "torch.linalg.svd(x, full_matrices=full_matrices)", known=_SIGNS),
    M("paddle.linalg.svdvals", "torch.linalg.svdvals(x)"),
    M("paddle.linalg.eig", "torch.linalg.eig(x)", known=_SIGNS),
    M("paddle.linalg.eigvals", "torch.linalg.eigvals(x)",
      known="a general matrix's eigenvalues come in no specified order; the two LAPACK builds may order them "
            "differently (the set agrees)"),
    M("paddle.linalg.eigh", "torch.linalg.eigh(x, UPLO=UPLO)", domains={"x": SPD},
      known=_SIGNS + "; " + _BATCHED_EIGH),
    M("paddle.linalg.eigvalsh", "torch.linalg.eigvalsh(x, UPLO=UPLO)", domains={"x": SPD},
      known=_BATCHED_EIGH),
    M("paddle.linalg.householder_product", "torch.linalg.householder_product(x, tau)",
      known="Paddle 3.3.1's householder_product backward raises an in-place version error on the CPU "
            "(the forward matches torch to 1e-16)"),
]
