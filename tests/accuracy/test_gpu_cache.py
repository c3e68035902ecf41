"""The device input cache: reuse, LRU eviction by bytes, zero-copy exchange, the GPU mode's speed path."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from accuracy.gpu_cache import DeviceCache  # noqa: E402
from opbench.backends import get_backend  # noqa: E402
from opbench.cases import parse_line  # noqa: E402

CASE = parse_line('paddle.add(Tensor([64, 64],"float32"), Tensor([64, 64],"float32"), )')


def test_equal_tensors_are_made_once_and_values_respect_the_domain():
    cache = DeviceCache(get_backend("torch", "cpu"), 2**20)
    first = cache.inputs(CASE, seed=0)
    again = cache.inputs(CASE, seed=0)
    assert all(a is b for a, b in zip(first, again, strict=True))
    assert cache.misses == 2 and cache.hits == 2
    assert not torch.equal(first[0], first[1])  # distinct seeds per position
    assert float(first[0].min()) >= -1.0 and float(first[0].max()) < 1.0
    log = parse_line('paddle.log(Tensor([1000],"float32"), )')
    (x,) = cache.inputs(log, seed=0)
    assert float(x.min()) > 0  # POSITIVE domain drawn on the device


def test_lru_evicts_least_recently_used_within_the_byte_bound():
    cache = DeviceCache(get_backend("torch", "cpu"), max_bytes=3 * 64 * 64 * 4)
    cache.inputs(CASE, seed=0)  # 2 tensors
    cache.inputs(CASE, seed=1)  # 2 more: the oldest is evicted
    assert len(cache) == 3 and cache.bytes <= cache.max_bytes
    before = cache.misses
    cache.inputs(CASE, seed=1)
    assert cache.misses == before  # still cached
    cache.inputs(CASE, seed=0)
    assert cache.misses > before  # seed 0's first tensor was evicted


def test_a_tensor_larger_than_the_bound_is_not_kept():
    cache = DeviceCache(get_backend("torch", "cpu"), max_bytes=100)
    cache.inputs(CASE, seed=0)
    assert len(cache) == 0 and cache.bytes == 0


def test_paddle_gets_the_same_memory_through_dlpack():
    pytest.importorskip("paddle")
    tb, pb = get_backend("torch", "cpu"), get_backend("paddle", "cpu")
    t = DeviceCache(tb).inputs(CASE, seed=0)[0]
    p = pb.from_dlpack(t)
    assert pb.data_ptr(p) == tb.data_ptr(t)


@pytest.mark.gpu
@pytest.mark.serial
def test_gpu_cache_matmul_bf16_steady_state_is_fast_and_passes():
    from accuracy.check import Checker, Settings

    case = parse_line('paddle.matmul(Tensor([1, 32, 1024],"bfloat16"), Tensor([1024, 32768],"bfloat16"), )')
    checker = Checker(Settings(subject="torch", reference="torch", device="gpu", gpu_cache_bytes=2**30,
                               profile=True))
    recs = [checker.check(case) for _ in range(6)]
    assert all(r["outcome"] == "pass" for r in recs), recs[-1]
    steady = recs[-1]["timings"]
    assert steady["input_generation"] + steady["compare"] < 5.0  # ms; the 1 ms target is docs/accuracy's
