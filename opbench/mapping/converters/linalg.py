"""Converters for Matrix products and linear algebra."""

from __future__ import annotations

from typing import Any

from opbench.mapping.converters import axes, dtype_or_none, scalar, to_int, to_ints, torch_module


def _t(t: Any, flag: bool) -> Any:
    return t.transpose(-1, -2) if flag and t.dim() >= 2 else t


def _promoted(x: Any, y: Any) -> tuple[Any, Any]:
    dtype = torch_module().result_type(x, y)
    return x.to(dtype), y.to(dtype)


def matmul(a: dict[str, Any]) -> Any:
    """``transpose_x``/``transpose_y`` swap the last two dims first (no-op on 1-D); mixed dtypes
    (float32 @ complex64) are promoted first, as Paddle does (torch.matmul refuses them)."""
    x, y = _promoted(_t(a["x"], a["transpose_x"]), _t(a["y"], a["transpose_y"]))
    return torch_module().matmul(x, y)


def _int_list(v: Any) -> list[int]:
    v = v.tolist() if hasattr(v, "tolist") else v
    return [int(v)] if isinstance(v, (int, float)) else [to_int(e) for e in v]


def _is_int(v: Any) -> bool:
    return isinstance(v, int) or (hasattr(v, "dim") and v.dim() == 0)


def tensordot(a: dict[str, Any]) -> Any:
    """Paddle's ``axes``: int n, one flat list for both tensors, or ``[x_axes, y_axes]`` (the shorter
    padded from the longer); a size-1 contracted dim is summed out on the other side (broadcast)."""
    torch = torch_module()
    x, y, ax = a["x"], a["y"], a["axes"]
    if hasattr(ax, "tolist"):
        ax = ax.tolist()
    if isinstance(ax, (int, float)):
        n = int(ax)
        ax_x, ax_y = list(range(x.dim() - n, x.dim())), list(range(n))
    elif not ax or _is_int(ax[0]):
        ax_x, ax_y = _int_list(ax) if ax else [], []
    else:
        ax_x = _int_list(ax[0])
        ax_y = _int_list(ax[1]) if len(ax) > 1 else []
    if len(ax_x) < len(ax_y):
        ax_x += ax_y[len(ax_x):]
    elif len(ax_y) < len(ax_x):
        ax_y += ax_x[len(ax_y):]
    for dx, dy in zip(ax_x, ax_y, strict=True):
        if x.shape[dx] == 1 and y.shape[dy] != 1:
            y = y.sum(dy, keepdim=True)
        elif y.shape[dy] == 1 and x.shape[dx] != 1:
            x = x.sum(dx, keepdim=True)
    return torch.tensordot(x, y, dims=(ax_x, ax_y))


def einsum(a: dict[str, Any]) -> Any:
    """``operands`` arrive as Paddle's ``*operands`` tuple; torch.einsum takes the same equations."""
    return torch_module().einsum(a["equation"], *a["operands"])


def _norm_p(p: Any) -> Any:
    p = scalar(p)
    return p if isinstance(p, str) or p is None else float(p)


def vector_norm(a: dict[str, Any]) -> Any:
    """``axis`` int/list/None (None: every element); ``p`` 0 counts non-zeros, ±inf max/min |x|."""
    torch = torch_module()
    x = a["x"]
    dtype = dtype_or_none(a.get("dtype"))
    if dtype is not None:
        x = x.to(dtype)
    return torch.linalg.vector_norm(x, ord=_norm_p(a["p"]), dim=axes(a["axis"]), keepdim=a["keepdim"])


def matrix_norm(a: dict[str, Any]) -> Any:
    """``axis`` two dims (list or tuple); ``p`` 'fro', 'nuc', ±1, ±2, ±inf as in torch."""
    return torch_module().linalg.matrix_norm(a["x"], ord=_norm_p(a["p"]), dim=tuple(to_ints(a["axis"])),
                                             keepdim=a["keepdim"])


def norm(a: dict[str, Any]) -> Any:
    """Paddle's dispatch: 'fro' over None/one axis and any number ``p`` over None/one axis/3+ axes is a
    vector norm of the (flattened) elements; a two-axis list (or a string ``p``) is a matrix norm
    (torch.linalg.norm would take a numeric ``p`` over a 2-D x as a matrix norm)."""
    torch = torch_module()
    x, p, axis = a["x"], _norm_p(a["p"]), a["axis"]
    axis = axis.tolist() if hasattr(axis, "tolist") else axis
    if isinstance(axis, (list, tuple)):
        axis = [to_int(e) for e in axis]
        if len(axis) == 1:
            axis = axis[0]
    dtype = dtype_or_none(a["dtype"])
    if dtype is not None:
        x = x.to(dtype)
    keep = a["keepdim"]
    if isinstance(p, str):
        if p == "fro" and (axis is None or isinstance(axis, int)):
            return torch.linalg.vector_norm(x, ord=2, dim=axis, keepdim=keep)
        dims = tuple(range(x.dim())) if axis is None else tuple(axis)
        return torch.linalg.matrix_norm(x, ord=p, dim=dims, keepdim=keep)
    p = 2.0 if p is None else p
    if isinstance(axis, list) and len(axis) == 2:
        return torch.linalg.matrix_norm(x, ord=p, dim=tuple(axis), keepdim=keep)
    return torch.linalg.vector_norm(x, ord=p, dim=axes(axis), keepdim=keep)


def qr(a: dict[str, Any]) -> Any:
    """``mode`` 'r' returns R alone (torch returns an empty Q beside it)."""
    q, r = torch_module().linalg.qr(a["x"], mode=a["mode"])
    return r if a["mode"] == "r" else (q, r)


def cond(a: dict[str, Any]) -> Any:
    """``p`` None/±2: ratio of extreme singular values; else ``norm(x) * norm(inv(x))`` (composed here:
    torch.linalg.cond's own backward fails for those ``p`` with an in-place version error)."""
    torch = torch_module()
    x, p = a["x"], _norm_p(a["p"])
    if x.numel() == 0:  # Paddle gives 0 per (empty) matrix
        return x.new_zeros(x.shape[:-2], dtype=x.real.dtype if x.is_complex() else x.dtype)
    if p is None or p in (2.0, -2.0):
        s = torch.linalg.svdvals(x)
        big, small = s[..., 0], s[..., -1]
        return small / big if p == -2.0 else big / small
    return torch.linalg.matrix_norm(x, ord=p) * torch.linalg.matrix_norm(torch.linalg.inv(x), ord=p)


def matrix_rank(a: dict[str, Any]) -> Any:
    """``tol`` is an absolute singular-value threshold (``atol`` with ``rtol`` 0); without it ``atol``/
    ``rtol`` (numbers or tensors) apply as in torch; the count is int64 in both."""
    torch = torch_module()
    x = a["x"]
    if a["tol"] is not None:
        atol, rtol = a["tol"], 0.0
    else:
        atol, rtol = a["atol"], a["rtol"]
    if atol is None and rtol is None:
        return torch.linalg.matrix_rank(x, hermitian=a["hermitian"])
    real = x.real.dtype if x.is_complex() else x.dtype
    # torch takes both tolerances as floats or both as tensors
    as_t = [torch.as_tensor(v, dtype=real) if v is not None else None for v in (atol, rtol)]
    return torch.linalg.matrix_rank(x, atol=as_t[0], rtol=as_t[1], hermitian=a["hermitian"])


def lu(a: dict[str, Any]) -> Any:
    """(LU, pivots int32[, infos int32]) from torch.linalg.lu_factor_ex; ``get_infos`` adds the infos."""
    lu_, piv, info = torch_module().linalg.lu_factor_ex(a["x"], pivot=a["pivot"])
    return (lu_, piv, info) if a["get_infos"] else (lu_, piv)


def lu_unpack(a: dict[str, Any]) -> Any:
    """(P, L, U) as torch.lu_unpack, with Paddle's 1-based int32 pivots in ``y``; Paddle's P left unpacked
    (``unpack_pivots`` False) is an empty float32 tensor whatever x's dtype."""
    torch = torch_module()
    p, lower, upper = torch.lu_unpack(a["x"], a["y"], unpack_data=a["unpack_ludata"], unpack_pivots=a["unpack_pivots"])
    return (p if a["unpack_pivots"] else p.to(torch.float32)), lower, upper


def multi_dot(a: dict[str, Any]) -> Any:
    """``x`` is a list of tensors."""
    return torch_module().linalg.multi_dot(list(a["x"]))


def lstsq(a: dict[str, Any]) -> Any:
    """(solution, residuals, rank, singular_values); Paddle's rank is int32 except for 'gels' (empty int64)."""
    torch = torch_module()
    driver = a["driver"] or "gelsy"
    rcond = None if a["rcond"] is None else float(scalar(a["rcond"]))
    x, y = a["x"], a["y"]
    sol, res, rank, sv = torch.linalg.lstsq(x, y, rcond=rcond, driver=driver)
    if x.shape[-1] == 0 < x.shape[-2] and res.numel() > 0:  # no unknowns: the residual is all of y (torch gives 0)
        res = (y.abs() ** 2).sum(-2)
    return sol, res, rank if driver == "gels" else rank.to(torch.int32), sv


def cov(a: dict[str, Any]) -> Any:
    """``rowvar`` False transposes first; ``ddof`` bool is torch's ``correction`` 1/0."""
    torch = torch_module()
    x = a["x"] if a["rowvar"] or a["x"].dim() < 2 else a["x"].t()
    return torch.cov(x, correction=int(bool(a["ddof"])), fweights=a["fweights"], aweights=a["aweights"])


def corrcoef(a: dict[str, Any]) -> Any:
    """``rowvar`` False transposes first."""
    x = a["x"] if a["rowvar"] or a["x"].dim() < 2 else a["x"].t()
    return torch_module().corrcoef(x)


def cross(a: dict[str, Any]) -> Any:
    """``axis`` 9 (Paddle's default) is the first dim of size 3."""
    x, axis = a["x"], to_int(a["axis"])
    if axis == 9:
        axis = next(i for i, s in enumerate(x.shape) if s == 3)
    return torch_module().linalg.cross(x, a["y"], dim=axis)


def outer(a: dict[str, Any]) -> Any:
    """Paddle flattens N-D (and 0-D) inputs; torch.outer takes 1-D only."""
    return torch_module().outer(a["x"].reshape(-1), a["y"].reshape(-1))


def trace(a: dict[str, Any]) -> Any:
    """Sum of the ``offset`` diagonal over ``axis1``/``axis2`` of an N-D x (torch.trace is 2-D only)."""
    return torch_module().diagonal(a["x"], offset=a["offset"], dim1=a["axis1"], dim2=a["axis2"]).sum(-1)


def dot(a: dict[str, Any]) -> Any:
    """1-D: the dot product; 2-D: one per row (torch.dot is 1-D only); no conjugation."""
    x, y = a["x"], a["y"]
    if x.dim() == 1:
        return torch_module().dot(x, y)
    return (x * y).sum(-1)


def solve(a: dict[str, Any]) -> Any:
    """``left`` False solves ``X A = B``, as in torch."""
    return torch_module().linalg.solve(a["x"], a["y"], left=a["left"])


def triangular_solve(a: dict[str, Any]) -> Any:
    """Solve ``op(x) Z = y`` with ``op`` the transpose when ``transpose``; only x's ``upper`` triangle is read."""
    x, upper = a["x"], a["upper"]
    if a["transpose"]:
        x, upper = x.transpose(-1, -2), not upper
    return torch_module().linalg.solve_triangular(x, a["y"], upper=upper, left=True, unitriangular=a["unitriangular"])


def cholesky_solve(a: dict[str, Any]) -> Any:
    """Paddle's ``x`` is the right-hand side B and ``y`` the Cholesky factor, as in torch.cholesky_solve(B, L);
    only y's triangle is read, so only it gets a gradient (torch's backward also fills the other triangle)."""
    y = a["y"]
    tri = y.triu() if a["upper"] else y.tril()
    # forward value y, gradient only through the triangle the solve reads
    return torch_module().cholesky_solve(a["x"], tri + (y - tri).detach(), upper=a["upper"])


def cholesky_inverse(a: dict[str, Any]) -> Any:
    """Paddle computes ``inv(x @ x.T)`` (``inv(x.T @ x)`` when ``upper``) from the whole of x, where
    torch.cholesky_inverse reads one triangle only."""
    torch = torch_module()
    x = a["x"]
    return torch.linalg.inv(x.mT @ x if a["upper"] else x @ x.mT)


def pinv(a: dict[str, Any]) -> Any:
    """``rcond`` is the relative singular-value cutoff (torch's ``rtol``); composed from svd (eigh when
    ``hermitian``) because torch.linalg.pinv's own backward is wrong once the cutoff drops a value."""
    torch = torch_module()
    x, rcond = a["x"], float(scalar(a["rcond"]))
    if x.numel() == 0:
        return torch.linalg.pinv(x)
    if a["hermitian"]:
        w, v = torch.linalg.eigh(x)
        s = w.abs()
        keep = s > rcond * s.amax(-1, keepdim=True)
        w_inv = torch.where(keep, 1 / torch.where(keep, w, torch.ones_like(w)), torch.zeros_like(w))
        return (v * w_inv.unsqueeze(-2).to(v.dtype)) @ v.mH
    u, s, vh = torch.linalg.svd(x, full_matrices=False)
    keep = s > rcond * s.amax(-1, keepdim=True)
    s_inv = torch.where(keep, 1 / torch.where(keep, s, torch.ones_like(s)), torch.zeros_like(s))
    return (vh.mH * s_inv.unsqueeze(-2).to(u.dtype)) @ u.mH


def cartesian_prod(a: dict[str, Any]) -> Any:
    """``x`` is a list of 1-D tensors (one tensor gives itself back, as in torch)."""
    return torch_module().cartesian_prod(*a["x"])


def bilinear(a: dict[str, Any]) -> Any:
    """Paddle's ``bias`` is [1, out_features]; torch's is [out_features]."""
    bias = a["bias"]
    return torch_module().nn.functional.bilinear(a["x1"], a["x2"], a["weight"],
                                                 None if bias is None else bias.reshape(-1))


def slogdet(a: dict[str, Any]) -> Any:
    """Paddle stacks (sign, log|det|) into one tensor of shape [2, *batch]."""
    torch = torch_module()
    sign, logabs = torch.linalg.slogdet(a["x"])
    return torch.stack([sign, logabs.to(sign.dtype)])


def cdist(a: dict[str, Any]) -> Any:
    """``compute_mode`` as in torch; ``p`` a float."""
    return torch_module().cdist(a["x"], a["y"], p=float(a["p"]), compute_mode=a["compute_mode"])


def vander(a: dict[str, Any]) -> Any:
    """``n`` columns (None: len(x)), decreasing powers unless ``increasing``; built with cumprod as Paddle
    does (torch.vander's backward fails on its own in-place cumprod)."""
    torch = torch_module()
    x = a["x"]
    n = x.shape[0] if a["n"] is None else to_int(a["n"])
    cols = [torch.ones_like(x).unsqueeze(-1)] if n > 0 else [x.new_zeros(x.shape[0], 0)]
    if n > 1:
        cols.append(x.unsqueeze(-1).expand(x.shape[0], n - 1).cumprod(-1))
    out = torch.cat(cols, -1)
    return out if a["increasing"] else out.flip(-1)


def matrix_power(a: dict[str, Any]) -> Any:
    """``n`` may be negative (powers of the inverse)."""
    return torch_module().linalg.matrix_power(a["x"], to_int(a["n"]))


def renorm(a: dict[str, Any]) -> Any:
    """Sub-tensors along ``axis`` whose ``p``-norm exceeds ``max_norm`` are scaled down to it."""
    return torch_module().renorm(a["x"], p=float(a["p"]), dim=to_int(a["axis"]), maxnorm=float(a["max_norm"]))



def dist(a: dict[str, Any]) -> Any:
    """The ``p``-norm of ``x - y`` (broadcast) over every element; as torch.linalg.vector_norm because
    torch.dist's backward fails for ``p`` 0."""
    torch = torch_module()
    return torch.linalg.vector_norm(a["x"] - a["y"], ord=float(scalar(a["p"])))
