"""The CPU lerp's vectorized fp16/bf16 loads and stores (F16C, AVX2 integer rounding) against PyTorch's
conversions, value for value, on values that exercise the rounding: ties, carries into the exponent,
overflow to infinity, subnormals, infinities and NaNs; and the thread pool's dynamic blocks: the same bits
on 1, 2 and 3 threads."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ops

pytestmark = pytest.mark.slow


def _special_floats(n: int, seed: int) -> np.ndarray:
    """n float32 values: random bit patterns (every exponent), plus hand-picked edge cases."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)
    v = bits.view(np.float32).copy()
    edges = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 65504.0, 65520.0, 65519.99, 6e-8, 3e-8,
                      2.0**-24, 2.0**-25, 2.0**-14, 1.0 + 2.0**-8, 1.0 + 3 * 2.0**-9, 1.0 + 2.0**-9,
                      3.3895314e38, 3.4028235e38, 1e-40, -1e-45], dtype=np.float32)
    v[: len(edges)] = edges
    return v


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16"])
@pytest.mark.parametrize("n", [64, 1003, 4099])
def test_half_conversions_match_torch(torch_ext: Any, dtype_name: str, n: int) -> None:
    """lerp(x, y, w) rounds like PyTorch's float32 -> fp16/bf16 conversion of the same float32 result,
    with loads and stores of whole vectors and of the tail (n not a multiple of 8)."""
    torch = torch_ext
    dtype = getattr(torch, dtype_name)
    x = torch.from_numpy(_special_floats(n, 1)).to(dtype)
    y = torch.from_numpy(_special_floats(n, 2)).to(dtype)
    for w in (0.0, 0.3, 0.5, 1.0):
        got = ops.lerp(x, y, w)
        xf, yf = x.float(), y.float()
        d = yf - xf
        ref = (xf + w * d) if abs(w) < 0.5 else (yf + (w - 1.0) * d)
        want = ref.to(dtype)
        nan = torch.isnan(want)
        assert torch.equal(torch.isnan(got), nan), w
        assert torch.equal(got[~nan].view(torch.int16), want[~nan].view(torch.int16)), w
    # a tensor weight: the load path of every operand
    w = torch.from_numpy(np.random.default_rng(3).random(n, dtype=np.float32)).to(dtype)
    got = ops.lerp(x, y, w)
    xf, yf, wf = x.float(), y.float(), w.float()
    d = yf - xf
    want = torch.where(wf.abs() < 0.5, xf + wf * d, yf + (wf - 1.0) * d).to(dtype)
    nan = torch.isnan(want)
    assert torch.equal(torch.isnan(got), nan)
    assert torch.equal(got[~nan].view(torch.int16), want[~nan].view(torch.int16))


CASES = [
    ((64, 4096), (64, 4096), (64, 4096)),
    ((300000,), (300000,), (1,)),
    ((8, 1, 64, 256), (8, 8, 1, 256), 0.7),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in CASES])
def test_any_thread_count_same_bits(torch_ext: Any, case: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads take blocks from a shared counter, so which thread runs a block varies: results must not."""
    torch = torch_ext

    def run(threads: str) -> list[Any]:
        monkeypatch.setenv("OPBENCH_CPU_THREADS", threads)
        gen = torch.Generator().manual_seed(0)
        xs, ys, ws = case
        x = torch.randn(xs, generator=gen).requires_grad_()
        y = torch.randn(ys, generator=gen).requires_grad_()
        w = ws if isinstance(ws, float) else torch.rand(ws, generator=gen).requires_grad_()
        out = ops.lerp(x, y, w)
        g = torch.randn(out.shape, generator=gen)
        return [out.detach(), *torch.autograd.grad(out, [t for t in (x, y, w) if isinstance(t, torch.Tensor)], g)]

    one = run("1")
    for threads in ("2", "3"):
        for a, b in zip(one, run(threads), strict=True):
            assert torch.equal(a.view(torch.int32), b.view(torch.int32))
