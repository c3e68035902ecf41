"""FLOP counts of compute-bound ops from their input shapes (multiply-adds count as 2).

Only shapes are known here, not the transpose flags, so the contracted dim of a
matmul is found by shape matching; when several pairings match they give the
same count (the free dims are then equal), so the answer is well defined.
"""

from __future__ import annotations

import math


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    n = len(a) if len(a) >= len(b) else len(b)
    a = (1,) * (n - len(a)) + a
    b = (1,) * (n - len(b)) + b
    return tuple(x if y == 1 else y for x, y in zip(a, b, strict=True))


def matmul_flops(shapes: dict[str, tuple[int, ...]]) -> float:
    """``2 * batch * M * N * K`` for ``x @ y`` either operand maybe transposed; 1-D = vector."""
    x, y = tuple(shapes["x"]), tuple(shapes["y"])
    xm = (1, *x) if len(x) == 1 else x  # [K] -> [1, K]
    ym = (*y, 1) if len(y) == 1 else y  # [K] -> [K, 1]
    batch = math.prod(_broadcast(xm[:-2], ym[:-2]))
    xr, xc = xm[-2:]
    yr, yc = ym[-2:]
    for m, k, kk, n in ((xr, xc, yr, yc), (xr, xc, yc, yr), (xc, xr, yr, yc), (xc, xr, yc, yr)):
        if k == kk:
            return 2.0 * batch * m * n * k
    raise ValueError(f"matmul shapes do not contract: {x} x {y}")


def bmm_flops(shapes: dict[str, tuple[int, ...]]) -> float:
    """``2 * B * M * N * K`` for ``[B, M, K] @ [B, K, N]``."""
    b, m, k = shapes["x"]
    n = shapes["y"][-1]
    return 2.0 * b * m * n * k


def linear_flops(shapes: dict[str, tuple[int, ...]]) -> float:
    """``2 * rows * in * out`` for ``x[..., in] @ weight[in, out]`` (the bias add is not counted)."""
    x = shapes["x"]
    in_features, out_features = shapes["weight"]
    return 2.0 * math.prod(x[:-1]) * in_features * out_features
