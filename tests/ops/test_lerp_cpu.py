"""Forward and backward of every lerp path x dtype on the CPU, against float64 NumPy,
``torch.lerp`` and ``paddle.lerp``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from lerp_testlib import (
    CASES,
    DTYPES,
    SAVED_DIFF_WEIGHTS,
    assert_close,
    draw,
    reference,
    run_torch_case,
    saved_by_forward,
    terms_of,
)

pytestmark = pytest.mark.slow


def _paddle_tensor(paddle: Any, a: np.ndarray, dtype: str, grad: bool = True) -> Any:
    t = paddle.to_tensor(np.asarray(a, dtype=np.float64)).astype(dtype)
    t.stop_gradient = not grad
    return t


def _paddle_np(t: Any) -> np.ndarray:
    return t.astype("float64").numpy()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(CASES))
def test_torch_vs_numpy(torch_ext: Any, case: str, dtype: str) -> None:
    run_torch_case(torch_ext, case, dtype, "cpu")


@pytest.mark.parametrize("needs", ["x", "y", "w", "xy", "xw", "yw"])
@pytest.mark.parametrize("case", ["same_shape", "bcast_issue", "bcast_middle_w", "bcast_y_small", "empty_bcast"])
def test_torch_gradient_subsets(torch_ext: Any, case: str, needs: str) -> None:
    """Only some inputs needing a gradient: those gradients against the float64 reference."""
    run_torch_case(torch_ext, case, "float32", "cpu", seed=6, needs=needs)


@pytest.mark.parametrize("case", [c for c in CASES if not c.startswith("empty")])
def test_torch_vs_torch_lerp(torch_ext: Any, case: str) -> None:
    """Same values and grads (x, y and tensor weight) as torch.lerp, float64."""
    torch = torch_ext
    from ops import lerp

    rng = np.random.default_rng(1)
    x, y, w = draw(case, rng)
    mk = lambda a: torch.tensor(a, dtype=torch.float64, requires_grad=True)  # noqa: E731
    tx, ty = mk(x), mk(y)
    tw = w if isinstance(w, float) else mk(w)
    ours, theirs = lerp(tx, ty, tw), torch.lerp(tx, ty, tw)
    torch.testing.assert_close(ours, theirs, rtol=1e-12, atol=1e-12)
    inputs = [tx, ty] + ([] if isinstance(w, float) else [tw])
    g = torch.randn(ours.shape, dtype=torch.float64)
    a = torch.autograd.grad(ours, inputs, g)
    b = torch.autograd.grad(theirs, inputs, g)
    for p, q in zip(a, b, strict=True):
        torch.testing.assert_close(p, q, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", ["cpp", "python"])
def test_torch_needs_input_grad(torch_ext: Any, mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only requested grads are computed (both autograd registrations); none for a float weight."""
    torch = torch_ext
    from ops import lerp

    monkeypatch.setenv("OPBENCH_TORCH_AUTOGRAD", mode)

    x = torch.randn(4, 5, requires_grad=True)
    y = torch.randn(4, 5)
    w = torch.rand(5)
    out = lerp(x, y, w)
    out.sum().backward()
    assert y.grad is None and w.grad is None
    torch.testing.assert_close(x.grad, (1 - w).expand(4, 5))
    w.requires_grad_(True)
    x.grad = None
    lerp(x, y, w).sum().backward()
    torch.testing.assert_close(w.grad, (y - x).sum(0).detach())


@pytest.mark.parametrize("case", ["bcast_issue", "bcast_middle_w", "scalar_lo", "zero_d"])
def test_torch_python_autograd(torch_ext: Any, case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The register_autograd path gives the same results as the C++ one."""
    monkeypatch.setenv("OPBENCH_TORCH_AUTOGRAD", "python")
    run_torch_case(torch_ext, case, "float32", "cpu")


def test_torch_compile_fake(torch_ext: Any) -> None:
    """register_fake lets torch.compile trace the op (forward and backward graph)."""
    torch = torch_ext
    x = torch.randn(3, 1, 4, requires_grad=True)
    y = torch.randn(3, 2, 4, requires_grad=True)
    w = torch.rand(4, requires_grad=True)
    utils = ("test_schema", "test_faketensor", "test_autograd_registration")
    ns = torch.ops.opbench_lerp
    for op in (ns.lerp.default, ns.lerp_autograd.default):
        torch.library.opcheck(op, (x, y, w, 0.0), test_utils=utils)
    a, b = torch.randn(3, 4), torch.randn(3, 4)
    for c in (torch.randn(3, 4), torch.randn(3, 1)):
        torch.library.opcheck(ns.lerp_save_diff.default, (a, b, c), test_utils=utils[:2])
        for need in ((True, True, True), (False, True, False)):
            torch.library.opcheck(ns.lerp_backward_from_diff.default, (a, b, c, *need), test_utils=utils[:2])


def test_torch_saved_diff_ops_cpu(torch_ext: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """On the CPU the training forward saves x, y, w (the saved diff is the GPU's); the saved-diff ops still
    give, bit for bit, lerp's output, y - x, and lerp_backward's gradients for each weight layout."""
    torch = torch_ext
    ns = torch.ops.opbench_lerp
    monkeypatch.setenv("OPBENCH_TORCH_AUTOGRAD", "cpp")
    gen = torch.Generator().manual_seed(5)
    for dtype in (torch.float32, torch.float64):
        x, y, g = (torch.randn(37, 53, generator=gen, dtype=dtype) for _ in range(3))
        for wshape in SAVED_DIFF_WEIGHTS:
            w = torch.randn(wshape, generator=gen, dtype=dtype)
            grad_args = (x.requires_grad_(), y.requires_grad_(), w.requires_grad_())
            assert len(saved_by_forward(torch, *grad_args)) == 3, wshape
            x, y, w = (t.detach() for t in grad_args)
            out, diff = ns.lerp_save_diff(x, y, w)
            assert torch.equal(out, ns.lerp(x, y, w, 0.0)) and torch.equal(diff, y - x), wshape
            for need in ((True, True, True), (False, False, True), (True, False, False)):
                got = ns.lerp_backward_from_diff(g, diff, w, *need)
                want = ns.lerp_backward(g, x, y, w, 0.0, *need)
                for flag, p, q in zip(need, got, want, strict=True):
                    assert not flag or torch.equal(p, q), (wshape, need)


def test_torch_saved_diff_ops_errors(torch_ext: Any) -> None:
    """The saved-diff ops name the shapes they cannot take."""
    torch = torch_ext
    ns = torch.ops.opbench_lerp
    a, b = torch.randn(3, 4), torch.randn(4)
    with pytest.raises(ValueError, match=r"lerp_save_diff: shapes \[3, 4\] and \[4\] differ"):
        ns.lerp_save_diff(a, b, a)
    with pytest.raises(ValueError, match=r"lerp_backward_from_diff: shapes \[3, 4\] and \[4\] differ"):
        ns.lerp_backward_from_diff(a, b, a, True, True, True)
    with pytest.raises(ValueError, match=r"weight shape \[2, 3, 4\] does not broadcast to \[3, 4\]"):
        ns.lerp_save_diff(a, a, torch.randn(2, 3, 4))
    six = torch.randn(2, 3, 2, 3, 2, 3)  # a weight varying along every other dim: 6 collapsed dims, no nd kernel
    with pytest.raises(ValueError, match="in a layout of the one-pass forward"):
        ns.lerp_save_diff(six, six, torch.randn(2, 1, 2, 1, 2, 1))
    with pytest.raises(TypeError, match="dtype"):
        ns.lerp_save_diff(a, a, a.double())
    h = a.half()
    with pytest.raises(TypeError, match="dtype Half is not taken"):
        ns.lerp_save_diff(h, h, h)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(CASES))
def test_paddle_vs_numpy(paddle_ext: Any, case: str, dtype: str) -> None:
    """Our Paddle op: forward and x/y grads (always initialized, reduced to input shapes)."""
    paddle = paddle_ext
    from ops import lerp

    rng = np.random.default_rng(2)
    x, y, w = draw(case, rng)
    px, py = _paddle_tensor(paddle, x, dtype), _paddle_tensor(paddle, y, dtype)
    pw = w if isinstance(w, float) else _paddle_tensor(paddle, w, dtype, grad=False)
    out = lerp(px, py, pw)
    wr = w if isinstance(w, float) else _paddle_np(pw)
    g = rng.standard_normal(tuple(out.shape))
    pg = _paddle_tensor(paddle, g, dtype, grad=False)
    ref = reference(_paddle_np(px), _paddle_np(py), wr, _paddle_np(pg))
    assert out.dtype == px.dtype
    assert_close(_paddle_np(out), ref["out"], dtype, f"{case} {dtype} out")
    if out.size == 0 and px.size == 0 and py.size == 0:
        return
    dx, dy = paddle.grad([out], [px, py], [pg], allow_unused=True)
    for name, t, gr in (("dx", px, dx), ("dy", py, dy)):
        assert gr is not None and list(gr.shape) == list(t.shape), f"{name}: {gr}"
        assert_close(_paddle_np(gr), ref[name], dtype, f"{case} {dtype} {name}",
                     terms_of(ref["out"].shape, tuple(t.shape)))


@pytest.mark.parametrize("case", [c for c in CASES if not c.startswith("empty")])
def test_paddle_vs_paddle_lerp(paddle_ext: Any, case: str) -> None:
    """Same values and x/y grads as paddle.lerp (float64)."""
    paddle = paddle_ext
    from ops import lerp

    rng = np.random.default_rng(3)
    x, y, w = draw(case, rng)
    px, py = _paddle_tensor(paddle, x, "float64"), _paddle_tensor(paddle, y, "float64")
    pw = (paddle.to_tensor(w, dtype="float64") if isinstance(w, float)
          else _paddle_tensor(paddle, w, "float64", grad=False))
    ours = lerp(px, py, w if isinstance(w, float) else pw)
    theirs = paddle.lerp(px, py, pw)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)
    g = paddle.randn(ours.shape, dtype="float64")
    a = paddle.grad([ours], [px, py], [g])
    b = paddle.grad([theirs], [px, py], [g])
    for p, q in zip(a, b, strict=True):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-12, atol=1e-12)


def test_paddle_grad_with_stop_gradient(paddle_ext: Any) -> None:
    """x needs a grad, y does not: the grad op still initializes both outputs (no Paddle error)."""
    paddle = paddle_ext
    from ops import lerp

    x = paddle.randn([4, 1, 3])
    x.stop_gradient = False
    y = paddle.randn([2, 3])
    out = lerp(x, y, 0.25)
    out.sum().backward()
    assert list(x.grad.shape) == [4, 1, 3]
    np.testing.assert_allclose(x.grad.numpy(), np.full([4, 1, 3], 1.5), rtol=1e-6)


def test_torch_compile_end_to_end(torch_ext: Any, tmp_path: Any, monkeypatch: Any) -> None:
    """torch.compile traces our op (fake impls with the real kernels' strides), fwd and bwd."""
    torch = torch_ext
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))  # no stale graphs from an older fake impl
    from ops import lerp

    x = torch.randn(5, 4, dtype=torch.float64).t().requires_grad_()  # non-contiguous input
    y = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    w = torch.rand(5, dtype=torch.float64, requires_grad=True)
    f = torch.compile(lambda a, b, c: lerp(a, b, c) * 2, fullgraph=True)  # inductor checks strides
    same = [torch.randn(4, 5, dtype=torch.float64, requires_grad=True) for _ in range(3)]  # saves y - x
    for args in ((x, y, w), same):
        out = f(*args)
        ref = torch.lerp(*args) * 2
        torch.testing.assert_close(out, ref)
        g = torch.randn_like(ref)
        for p, q in zip(torch.autograd.grad(out, args, g), torch.autograd.grad(ref, args, g), strict=True):
            torch.testing.assert_close(p, q)
