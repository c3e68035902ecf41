"""Creation, random and utility APIs: full, zeros, arange, linspace, eye, rand, broadcast_shape, ..."""

from __future__ import annotations

from opbench.domains import POSITIVE, Domain
from opbench.mapping.converters import creation as cv
from opbench.mapping.spec import ApiMapping as M

# Sizes given as int tensors (a shape's entries, eye's rows, linspace's count, multinomial's samples).
_SIZE = Domain(low=1.0, high=5.0)
# arange's bounds given as tensors: start below end, a step of at least 1 for integer tensors.
_START, _END, _STEP = Domain(low=0.0, high=1.0), Domain(low=3.0, high=6.0), Domain(low=1.0, high=1.5)
# Probabilities bounded away from 0, so every multinomial row has mass.
_WEIGHTS = Domain(low=0.1, high=1.0)

ENTRIES: list[M] = [
    M("paddle.Tensor.astype", convert=cv.astype, benchmark_op="cast"),
    M("paddle.full", convert=cv.full, domains={"shape": _SIZE}, benchmark_op="full"),
    M("paddle.zeros", convert=cv.zeros, domains={"shape": _SIZE}, benchmark_op="zeros"),
    M("paddle.ones", convert=cv.ones, domains={"shape": _SIZE}, benchmark_op="ones"),
    M("paddle.empty", convert=cv.empty, domains={"shape": _SIZE}, random=True),
    M("paddle.full_like", convert=cv.full_like, benchmark_op="full_like"),
    M("paddle.zeros_like", convert=cv.zeros_like, benchmark_op="zeros_like"),
    M("paddle.ones_like", convert=cv.ones_like, benchmark_op="ones_like"),
    M("paddle.empty_like", convert=cv.empty_like, random=True),
    M("paddle.broadcast_shape", convert=cv.broadcast_shape),
    M("paddle.arange", convert=cv.arange, domains={"start": _START, "end": _END, "step": _STEP},
      benchmark_op="arange"),
    M("paddle.linspace", convert=cv.linspace, domains={"num": _SIZE}, benchmark_op="linspace"),
    M("paddle.logspace", convert=cv.logspace, domains={"num": _SIZE}),
    M("paddle.eye", convert=cv.eye, domains={"num_rows": _SIZE, "num_columns": _SIZE}),
    M("paddle.Tensor.clone", convert=cv.clone_self),
    M("paddle.Tensor.detach", convert=cv.detach),
    M("paddle.clone", convert=cv.clone),
    M("paddle.assign", convert=cv.assign, nondiff=("output",)),
    M("paddle.shape", convert=cv.shape),
    M("paddle.numel", convert=cv.numel),
    M("paddle.rank", convert=cv.rank),
    M("paddle.Tensor.rank", convert=cv.rank),
    M("paddle.Tensor.dim", convert=cv.dim),
    M("paddle.is_complex", convert=cv.is_complex),
    M("paddle.is_empty", convert=cv.is_empty),
    M("paddle.tolist", convert=cv.tolist),
    M("paddle.Tensor.item", convert=cv.item),
    M("paddle.meshgrid", convert=cv.meshgrid),
    M("paddle.triu", "torch.triu(x, diagonal=int(diagonal))", benchmark_op="triu"),
    M("paddle.tril", "torch.tril(x, diagonal=int(diagonal))", benchmark_op="tril"),
    M("paddle.diag", convert=cv.diag),
    M("paddle.diagflat", "torch.diagflat(x, offset=int(offset))"),
    M("paddle.diag_embed", "torch.diag_embed(input, offset=int(offset), dim1=int(dim1), dim2=int(dim2))"),
    M("paddle.Tensor.fill_diagonal_tensor", convert=cv.fill_diagonal_tensor),
    M("paddle.Tensor.fill_diagonal_", convert=cv.fill_diagonal, inplace=True),
    M("paddle.Tensor.zero_", convert=cv.zero_, inplace=True),
    M("paddle.Tensor.fill_", convert=cv.fill_, inplace=True),
    # x becomes a view of source's memory; Paddle gives set_ no gradient
    M("paddle.Tensor.set_", convert=cv.set_, inplace=True, backward=False),
    M("paddle.nn.utils.parameters_to_vector", convert=cv.parameters_to_vector),
    M("paddle.nn.utils.vector_to_parameters", convert=cv.vector_to_parameters),
    M("paddle.complex", convert=cv.complex_),
    M("paddle.polar", convert=cv.polar),
    M("paddle.frexp", convert=cv.frexp),
    M("paddle.tril_indices", convert=cv.tril_indices),
    M("paddle.triu_indices", convert=cv.triu_indices),
    # Random draws: only shapes and dtypes are compared.
    M("paddle.normal", convert=cv.normal, domains={"std": POSITIVE, "shape": _SIZE}, random=True),
    M("paddle.standard_normal", convert=cv.standard_normal, domains={"shape": _SIZE}, random=True),
    M("paddle.log_normal", convert=cv.log_normal, domains={"std": POSITIVE, "shape": _SIZE}, random=True),
    # a Gamma(x, 1) draw per element of the positive shapes x
    M("paddle.standard_gamma", "torch._standard_gamma(x)", domains={"x": POSITIVE}, random=True),
    M("paddle.multinomial", convert=cv.multinomial, domains={"x": _WEIGHTS, "num_samples": _SIZE}, random=True),
    M("paddle.bernoulli", convert=cv.bernoulli, domains={"x": Domain(low=0.0, high=1.0)}, random=True),
    M("paddle.poisson", convert=cv.poisson, domains={"x": POSITIVE}, random=True),
    M("paddle.Tensor.normal_", convert=cv.normal_, inplace=True, random=True),
    M("paddle.Tensor.exponential_", convert=cv.exponential_, inplace=True, random=True),
    M("paddle.Tensor.log_normal_", convert=cv.log_normal_, inplace=True, random=True),
    M("paddle.Tensor.cauchy_", convert=cv.cauchy_, inplace=True, random=True),
    M("paddle.Tensor.geometric_", convert=cv.geometric_, inplace=True, random=True),
    M("paddle.Tensor.bernoulli_", convert=cv.bernoulli_, inplace=True, random=True),
]
