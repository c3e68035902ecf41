"""Batched device comparison: a case's outputs and grads compared in one call, one host copy, the
same figures as one pair at a time and as the host path (the Triton kernel on the GPU too)."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from accuracy.check import Checker, Settings  # noqa: E402
from accuracy.compare import device_figures_batch, host_figures  # noqa: E402
from accuracy.tolerances import Tolerance  # noqa: E402
from opbench.backends import get_backend  # noqa: E402
from opbench.backends.torch_backend import TorchBackend  # noqa: E402
from opbench.cases import parse_line  # noqa: E402

TOLS = [Tolerance(1e-5, 1e-5), Tolerance(0.0, 0.0), Tolerance(1e-2, 1.6e-2)]


def _pair(rng: np.random.Generator, n: int, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """``expected`` and an ``actual`` with a few mismatches (NaN, infinities, zeros for floats)."""
    if dtype == "bool":
        e = rng.integers(0, 2, n).astype(bool)
        a = e.copy()
        a[n // 2] = not a[n // 2]
        return a, e
    if dtype in ("int32", "int64", "uint8", "int8", "int16"):
        e = rng.integers(0 if dtype == "uint8" else -50, 50, n)
    else:
        e = rng.random(n) - 0.3
    a = e.copy()
    a[[min(3, n - 1), n // 2, n - 1]] += 4
    if dtype.startswith("float") and n >= 12:
        a[5] = e[5] = np.nan  # NaN equals NaN
        a[6] = np.nan  # NaN vs a number: a mismatch, NaN maxima
        a[7] = e[7] = np.inf  # equal infinities are equal
        a[8], e[8] = -np.inf, np.inf
        a[9], e[9] = 1e-9, 0.0  # within atol, infinite relative error
        a[10], e[10] = 1.0, np.inf
    return a, e


def _same(x: float, y: float) -> bool:
    return (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, rel=1e-6)


def _check(b, pairs, tols, exact: bool) -> None:
    got = b.close_figures_batch([(ta, te, t.atol, t.rtol) for (ta, te), t in zip(pairs, tols, strict=True)])
    for (ta, te), t, (count, max_abs, max_rel, first) in zip(pairs, tols, got, strict=True):
        host = host_figures(b.to_numpy(ta), b.to_numpy(te), t)
        assert count == host.mismatches and first == host.first_index, (ta.dtype, host)
        if exact:  # float64 / int64 work, like the host path (float32 pairs work in float32)
            assert (math.isnan(max_abs) and math.isnan(host.max_abs)) or max_abs == host.max_abs
            assert (math.isnan(max_rel) and math.isnan(host.max_rel)) or max_rel == host.max_rel
        else:
            assert _same(max_abs, host.max_abs) and _same(max_rel, host.max_rel), (ta.dtype, host)


def test_batched_figures_equal_per_pair_figures_with_one_host_copy(monkeypatch):
    b = get_backend("torch", "cpu")
    rng = np.random.default_rng(3)
    pairs, tols = [], []
    for k, (dtype, n) in enumerate([("float32", 40), ("bfloat16", b.CLOSE_ROW + 9), ("int64", 7),
                                    ("float64", 1), ("float32", 0), ("bool", 5), ("complex64", 6)]):
        a, e = _pair(rng, max(n, 1), dtype)
        if dtype == "complex64":
            a, e = a + 1j * a, e + 1j * e
        if n == 0:
            a, e = a[:0], e[:0]
        pairs.append((b.from_numpy(a, dtype), b.from_numpy(e, dtype)))
        tols.append(TOLS[k % len(TOLS)])
    copies = []
    real = TorchBackend._figures_to_host
    monkeypatch.setattr(TorchBackend, "_figures_to_host", staticmethod(lambda s: copies.append(s) or real(s)))
    batched = b.close_figures_batch([(ta, te, t.atol, t.rtol) for (ta, te), t in zip(pairs, tols, strict=True)])
    assert len(copies) == 1 and tuple(copies[0].shape) == (6, 5)  # the empty pair needs no device work
    single = [b.close_figures(ta, te, t.atol, t.rtol) for (ta, te), t in zip(pairs, tols, strict=True)]
    assert len(copies) == 1 + 6
    for x, y in zip(batched, single, strict=True):
        assert x[0] == y[0] and x[3] == y[3] and all(_same(p, q) for p, q in zip(x[1:3], y[1:3], strict=True))
    assert batched[4] == (0, 0.0, 0.0, None)
    _check(b, pairs, tols, exact=False)
    figs = device_figures_batch(b, [(ta, te, t) for (ta, te), t in zip(pairs, tols, strict=True)])
    assert [f.mismatches for f in figs] == [x[0] for x in batched]


def test_checker_compares_a_case_in_one_batched_call(monkeypatch):
    calls = []
    real = TorchBackend.close_figures_batch

    def spy(self, pairs):
        calls.append(len(pairs))
        return real(self, pairs)

    monkeypatch.setattr(TorchBackend, "close_figures_batch", spy)
    case = parse_line('paddle.matmul(Tensor([2, 3, 8],"float32"), Tensor([8, 5],"float32"), )')
    cached = Checker(Settings(subject="torch", reference="torch", gpu_cache_bytes=2**20)).check(case)
    assert calls == [3]  # out, grad x, grad y: one call
    plain = Checker(Settings(subject="torch", reference="torch")).check(case)
    assert calls == [3]  # the default mode compares on the host
    assert cached["outcome"] == plain["outcome"] == "pass"
    key = ("name", "mismatches", "first_index", "passed")
    assert [[c.get(k) for k in key] for c in cached["comparisons"]] == \
           [[c.get(k) for k in key] for c in plain["comparisons"]]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16", "int32", "int64", "uint8", "bool"])
def test_triton_figures_equal_host_figures_on_the_gpu(dtype):
    from opbench.backends.torch_backend import _close_kernel

    b = get_backend("torch", "gpu")
    if _close_kernel() is None:
        pytest.skip("no Triton")
    rng = np.random.default_rng(4)
    step = b.CLOSE_PROGRAMS * b.CLOSE_BLOCK
    pairs, tols = [], []
    for k, n in enumerate([1, 17, b.CLOSE_BLOCK + 1, step, 2 * step + 777]):
        a, e = _pair(rng, n, dtype)
        pairs.append((b.from_numpy(a, dtype), b.from_numpy(e, dtype)))
        tols.append(TOLS[k % len(TOLS)])
    _check(b, pairs, tols, exact=dtype not in ("float32", "bfloat16", "float16"))
    assert b.close_path == "triton"


@pytest.mark.gpu
def test_triton_mixed_dtypes_and_views_on_the_gpu():
    b = get_backend("torch", "gpu")
    rng = np.random.default_rng(5)
    a, e = _pair(rng, 3000, "float32")
    ta, te = b.from_numpy(a, "float32"), b.from_numpy(np.nan_to_num(e, posinf=7, neginf=-7).round(), "int32")
    x = torch.arange(600, dtype=torch.float32, device="cuda").view(20, 30)
    y = x.clone()
    y[4, 2] += 1
    _check(b, [(ta, te)], TOLS[:1], exact=True)  # float32 vs int32: float64 work
    _check(b, [(x.t(), y.t()), (x[:, 1:], y[:, 1:])], TOLS[1:], exact=False)
