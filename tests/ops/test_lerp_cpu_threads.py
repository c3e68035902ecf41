"""The multi-threaded CPU lerp: the same bits for 1, 2 and 3 threads, and right against float64, on cases
large enough to be split across threads and whose reductions span several fixed chunks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ops

pytestmark = pytest.mark.slow

# (x shape, y shape, weight: a shape or a float). Each output has >= 2^17 elements, so 2+ threads run;
# the reductions cover the rows path (innermost dim reduced: per-row weight, one-element weight, 2^17+
# reduced positions in several 65,536-position chunks) and the columns path (innermost dim kept).
CASES = [
    ((64, 4096), (64, 4096), 0.3),                  # same shape, scalar weight
    ((64, 4096), (64, 4096), (64, 4096)),           # same shape, tensor weight (fused full-shape pass)
    ((64, 4096), (64, 4096), (64, 1)),              # per-row weight: rows
    ((300000,), (300000,), (1,)),                   # one-element weight over 5 chunks: rows
    ((4096,), (40, 4096), (40, 4096)),              # x broadcast along a leading dim: columns
    ((3, 1, 224), (2, 3, 224, 224), (224,)),        # x and weight broadcast in middle and leading dims
    ((8, 1, 64, 256), (8, 8, 1, 256), 0.7),         # x and y broadcast in different middle dims
]


def _run(torch: Any, case: tuple, dtype: Any, threads: int, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    monkeypatch.setenv("OPBENCH_CPU_THREADS", str(threads))
    gen = torch.Generator().manual_seed(0)
    xs, ys, ws = case
    x = torch.randn(xs, generator=gen).to(dtype).requires_grad_()
    y = torch.randn(ys, generator=gen).to(dtype).requires_grad_()
    w = ws if isinstance(ws, float) else torch.rand(ws, generator=gen).to(dtype).requires_grad_()
    out = ops.lerp(x, y, w)
    g = torch.randn(out.shape, generator=gen).to(dtype)
    grads = torch.autograd.grad(out, [t for t in (x, y, w) if isinstance(t, torch.Tensor)], g)
    return [out.detach(), *grads, x.detach(), y.detach(), w if isinstance(w, float) else w.detach(), g]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in CASES])
@pytest.mark.parametrize("dtype_name", ["float32", "bfloat16"])
def test_same_bits_for_any_thread_count(torch_ext: Any, case: tuple, dtype_name: str,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    torch = torch_ext
    dtype = getattr(torch, dtype_name)
    one = _run(torch, case, dtype, 1, monkeypatch)
    for threads in (2, 3):
        other = _run(torch, case, dtype, threads, monkeypatch)
        for a, b in zip(one[:-4], other[:-4], strict=True):
            assert torch.equal(a.view(torch.int16 if dtype == torch.bfloat16 else torch.int32),
                               b.view(torch.int16 if dtype == torch.bfloat16 else torch.int32)), threads


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in CASES])
def test_float32_against_float64(torch_ext: Any, case: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    torch = torch_ext
    res = _run(torch, case, torch.float32, 2, monkeypatch)
    x, y, w, g = (v if isinstance(v, float) else v.double().numpy() for v in res[-4:])
    wv = w if isinstance(w, float) else w
    d = y - x
    ref_out = np.where(np.abs(wv) < 0.5, x + wv * d, y - d * (1 - wv))
    np.testing.assert_allclose(res[0].numpy(), ref_out, rtol=1e-6, atol=1e-6)

    def reduce_to(a: np.ndarray, shape: tuple) -> np.ndarray:
        lead = a.ndim - len(shape)
        a = a.sum(axis=tuple(range(lead))) if lead else a
        return a.sum(axis=tuple(i for i, s in enumerate(shape) if s == 1), keepdims=True)

    full = np.broadcast_shapes(np.shape(x), np.shape(y), np.shape(wv))
    gw = np.broadcast_to(wv, full)
    expect = [reduce_to(g * (1 - gw), np.shape(x)), reduce_to(g * gw, np.shape(y))]
    if not isinstance(w, float):
        expect.append(reduce_to(g * (np.broadcast_to(y, full) - np.broadcast_to(x, full)), np.shape(w)))
    for got, want in zip(res[1:1 + len(expect)], expect, strict=True):
        scale = np.abs(want).max() + 1
        np.testing.assert_allclose(got.numpy(), want.reshape(got.shape), rtol=1e-5, atol=1e-5 * scale)


@pytest.mark.parametrize("case", CASES[:4] + CASES[5:6], ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in CASES[:4] + CASES[5:6]])
def test_paddle_same_bits_for_any_thread_count(paddle_ext: Any, case: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Paddle binding runs the kernels on the core's own thread pool (common/cpu_parallel.h); like
    Paddle's lerp it gives gradients for x and y only."""
    paddle = paddle_ext

    def run(threads: int) -> list[np.ndarray]:
        monkeypatch.setenv("OPBENCH_CPU_THREADS", str(threads))
        rng = np.random.default_rng(0)
        xs, ys, ws = case
        x = paddle.to_tensor(rng.standard_normal(xs, dtype=np.float32), stop_gradient=False)
        y = paddle.to_tensor(rng.standard_normal(ys, dtype=np.float32), stop_gradient=False)
        w = ws if isinstance(ws, float) else paddle.to_tensor(rng.random(ws, dtype=np.float32))
        out = ops.lerp(x, y, w)
        g = paddle.to_tensor(rng.standard_normal(out.shape, dtype=np.float32))
        grads = paddle.grad([out], [x, y], [g])
        return [out.numpy(), *(t.numpy() for t in grads)]

    one = run(1)
    for threads in (2, 3):
        for a, b in zip(one, run(threads), strict=True):
            assert np.array_equal(a.view(np.int32), b.view(np.int32)), threads
