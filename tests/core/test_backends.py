"""Backends: the same surface for Paddle and PyTorch, parity on the CPU, zero-copy DLPack."""

from __future__ import annotations

import numpy as np
import pytest

from opbench.backends import flush_bytes, get_backend
from opbench.cases import parse_line
from opbench.providers import get_provider

paddle = pytest.importorskip("paddle")
torch = pytest.importorskip("torch")

DTYPES = ["float16", "bfloat16", "float32", "float64", "int32", "int64", "bool", "complex64"]


@pytest.mark.parametrize("framework", ["paddle", "torch"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_round_trip_is_exact(framework, dtype):
    from opbench import inputs
    from opbench.cases import TensorSpec
    from opbench.domains import DEFAULT

    b = get_backend(framework, "cpu")
    array = inputs.draw(TensorSpec((3, 5), dtype), DEFAULT, np.random.default_rng(0))
    t = b.from_numpy(array, dtype)
    assert b.dtype_name(t) == dtype
    back = b.to_numpy(t)
    np.testing.assert_array_equal(back, array)


def test_dlpack_shares_memory_both_ways():
    tb, pb = get_backend("torch", "cpu"), get_backend("paddle", "cpu")
    t = tb.from_numpy(np.arange(6, dtype=np.float32), "float32")
    p = pb.from_dlpack(t)
    assert pb.data_ptr(p) == tb.data_ptr(t)
    t.add_(1)  # a write on one side is seen on the other: same memory
    np.testing.assert_array_equal(pb.to_numpy(p), np.arange(6, dtype=np.float32) + 1)
    back = tb.from_dlpack(p)
    assert tb.data_ptr(back) == tb.data_ptr(t)


@pytest.mark.parametrize(
    "line",
    [
        'paddle.multiply(Tensor([4, 1, 3],"float32"), Tensor([5, 3],"float32"), )',
        'paddle.nn.functional.softmax(Tensor([3, 7],"float64"), axis=-1, )',
        'paddle.lerp(Tensor([2, 3],"float32"), Tensor([2, 3],"float32"), 0.3, )',
    ],
)
def test_backend_parity_forward_and_backward(line):
    case = parse_line(line)
    results = {}
    for name in ("paddle", "torch"):
        call = get_provider(name, "cpu").prepare(case, seed=11)
        b = call.backend
        out = call.forward()
        outs = call.differentiable_outputs(out)
        grads = [b.from_numpy(np.ones(tuple(o.shape), np.float64), b.dtype_name(o)) for o in outs]
        g = call.backward(outs, grads)
        results[name] = (b.to_numpy(out), [b.to_numpy(x) for x in g])
    (po, pg), (to, tg) = results["paddle"], results["torch"]
    np.testing.assert_allclose(po, to, rtol=1e-6, atol=1e-6)
    assert len(pg) == len(tg)
    for a, e in zip(pg, tg, strict=True):
        np.testing.assert_allclose(a, e, rtol=1e-6, atol=1e-6)


def test_grad_does_not_accumulate_and_retains_graph():
    b = get_backend("torch", "cpu")
    x = b.from_numpy(np.ones(3, np.float32), "float32", requires_grad=True)
    y = (x * x).sum()
    g1 = b.grad([y], [x], [torch.ones(())], retain_graph=True)
    g2 = b.grad([y], [x], [torch.ones(())], retain_graph=True)
    np.testing.assert_array_equal(b.to_numpy(g1[0]), b.to_numpy(g2[0]))
    assert x.grad is None


@pytest.mark.parametrize("framework", ["paddle", "torch"])
def test_cpu_surface(framework):
    b = get_backend(framework, "cpu")
    assert b.free_memory() > 0
    assert b.device_info().kind == "cpu"
    b.flush_l2()  # a no-op on the CPU
    e1, e2 = b.event(), b.event()
    e1.record()
    e2.record()
    assert e1.elapsed_ms(e2) >= 0
    z = b.zeros((2, 3), "float32")
    r = b.random((2, 3), "float32", seed=1)
    b.copy_(z, r)
    np.testing.assert_array_equal(b.to_numpy(z), b.to_numpy(r))
    assert np.abs(b.to_numpy(r)).max() <= 1
    np.testing.assert_array_equal(b.to_numpy(b.random((4,), "float32", 7)), b.to_numpy(b.random((4,), "float32", 7)))


def test_flush_buffer_size_rule():
    assert flush_bytes(None) == 256 * 2**20
    assert flush_bytes(50 * 2**20) == 256 * 2**20
    assert flush_bytes(200 * 2**20) == 400 * 2**20


def test_unknown_framework_and_device():
    with pytest.raises(ValueError, match="unknown framework"):
        get_backend("jax", "cpu")
    with pytest.raises(ValueError, match="device must be"):
        get_backend("torch", "tpu")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_gpu_events_and_flush():
    b = get_backend("torch", "gpu")
    b.flush_l2()
    e1, e2 = b.event(), b.event()
    e1.record()
    b.flush_l2()
    e2.record()
    b.synchronize()
    assert e1.elapsed_ms(e2) > 0
    assert b.device_info().l2_bytes


def test_torch_compile_never_falls_back_to_eager_silently():
    """Every case compiles the same wrapper: dynamo's recompile limit must not turn later cases eager."""
    import torch._dynamo

    b = get_backend("torch", "cpu")
    b.compile(lambda x: x + 1)
    cfg = torch._dynamo.config
    assert cfg.recompile_limit >= 4096
    assert cfg.fail_on_recompile_limit_hit is True
