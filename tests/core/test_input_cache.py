"""InputCache (each case drawn once per run, within a byte budget) and the in-place drawing it caches: the same
bits as the expression forms they replace."""

from __future__ import annotations

import numpy as np
import pytest

from opbench import inputs
from opbench.cases import parse_line

SMALL = 'paddle.lerp(Tensor([8, 16],"float32"), Tensor([8, 16],"float32"), 0.5)'  # 1 KiB of inputs
BF16 = 'paddle.lerp(Tensor([64, 64],"bfloat16"), Tensor([64, 64],"bfloat16"), Tensor([64],"bfloat16"))'
TINY = 'paddle.lerp(Tensor([2],"float64"), Tensor([2],"float64"), 0.5)'


def _nbytes(arrays: list[np.ndarray]) -> int:
    return sum(a.nbytes for a in arrays)


@pytest.fixture
def draws(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The case lines :func:`inputs.generate` is called for, in order."""
    seen: list[str] = []
    real = inputs.generate

    def counting(case, seed=0):
        seen.append(case.to_line())
        return real(case, seed)

    monkeypatch.setattr(inputs, "generate", counting)
    return seen


def test_a_case_is_drawn_once_and_handed_out_as_the_same_arrays(draws: list[str]) -> None:
    cache = inputs.InputCache(1 << 20)
    case = parse_line(BF16)
    first = cache.get(case, 3)
    again = cache.get(parse_line(BF16), 3)  # another Case object of the same line
    assert again is first and draws == [case.to_line()]
    assert (cache.hits, cache.misses, len(cache), cache.nbytes) == (1, 1, 1, _nbytes(first))
    fresh = inputs.InputCache(0).get(case, 3)
    assert [a.tobytes() for a in first] == [a.tobytes() for a in fresh]  # what generate gives, bit for bit
    other_seed = cache.get(case, 4)
    assert other_seed is not first and len(draws) == 3  # the seed is part of the key


def test_the_budget_keeps_the_first_cases_that_fit_and_draws_the_rest_each_time(draws: list[str]) -> None:
    small, bf16, tiny = parse_line(SMALL), parse_line(BF16), parse_line(TINY)
    want = {c.to_line(): inputs.generate(c, 0) for c in (small, bf16, tiny)}
    sizes = {line: _nbytes(arrays) for line, arrays in want.items()}
    draws.clear()
    budget = sizes[small.to_line()] + sizes[tiny.to_line()]  # bf16 does not fit after small
    cache = inputs.InputCache(budget)
    for _ in range(3):  # three rounds over the same suite, in the same order
        for case in (small, bf16, tiny):
            values = cache.get(case, 0)
            assert [a.tobytes() for a in values] == [a.tobytes() for a in want[case.to_line()]]
            assert cache.nbytes <= budget
    # small and tiny kept after their first draw; bf16 (over the budget) drawn in every round
    assert draws.count(small.to_line()) == 1 and draws.count(tiny.to_line()) == 1
    assert draws.count(bf16.to_line()) == 3
    assert cache.nbytes == budget and len(cache) == 2 and cache.hits == 4
    cache.clear()
    assert (len(cache), cache.nbytes, cache.max_bytes) == (0, 0, budget)


def test_a_zero_budget_keeps_nothing(draws: list[str]) -> None:
    cache = inputs.InputCache(0)
    cache.get(parse_line(SMALL))
    cache.get(parse_line(SMALL))
    assert len(draws) == 2 and len(cache) == 0 and cache.nbytes == 0


def test_the_default_budget_is_documented_and_set_by_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from opbench.backends.base import host_free_memory

    monkeypatch.delenv(inputs.CACHE_ENV, raising=False)
    assert 0 < inputs.InputCache().max_bytes <= min(inputs.DEFAULT_CACHE_BYTES, host_free_memory() // 4 + (64 << 20))
    monkeypatch.setenv(inputs.CACHE_ENV, "1.5")
    assert inputs.InputCache().max_bytes == 3 << 19
    monkeypatch.setenv(inputs.CACHE_ENV, "0")
    assert inputs.InputCache().max_bytes == 0
    monkeypatch.setenv(inputs.CACHE_ENV, "lots")
    with pytest.raises(ValueError, match=inputs.CACHE_ENV):
        inputs.InputCache()


def _round_to_bfloat16_expression(a: np.ndarray) -> np.ndarray:
    """The expression form round_to_bfloat16 had before it worked in place (the reference)."""
    bits = np.asarray(a, dtype=np.float32, order="C").view(np.uint32)
    rounding = ((bits >> 16) & 1) + np.uint32(0x7FFF)
    out = ((bits + rounding) & np.uint32(0xFFFF0000)).astype(np.uint32)
    out = np.where(np.isnan(a), np.uint32(0x7FC00000), out).astype(np.uint32)
    return out.view(np.float32)


def test_bfloat16_rounding_gives_the_bits_of_the_expression_form() -> None:
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 3.4028235e38, -3.4028235e38, 0.0, -0.0, 1e-45,
                        1.00390625, 1.01171875, 1.0 + 2**-8 + 2**-20, 65504.0], dtype=np.float32)
    rng = np.random.default_rng(0)
    anything = rng.integers(0, 2**32, size=1 << 16, dtype=np.uint32).view(np.float32)  # NaN payloads included
    for a in (special, anything, anything.reshape(256, 256)[:, ::2], np.array(np.float32(np.nan)),
              np.array(np.float32(1.00390625))):
        got, want = inputs.round_to_bfloat16(a), _round_to_bfloat16_expression(a)
        assert got.shape == want.shape and got.dtype == np.float32 and got.tobytes() == want.tobytes()
    before = anything.copy()
    inputs.round_to_bfloat16(anything)
    assert anything.tobytes() == before.tobytes()  # the input is left alone


def test_uniform_in_place_gives_the_bits_of_the_expression_form() -> None:
    from opbench.domains import Domain

    for domain in (Domain(low=-1.0, high=1.0), Domain(low=0.1, high=7.3), Domain(low=-2.0, high=2.0, min_abs=0.5)):
        for dtype in ("float32", "float64"):
            got = inputs._uniform(np.random.default_rng(9), (33, 17), dtype, domain)
            values = np.random.default_rng(9).random((33, 17), dtype=np.float64) * (domain.high - domain.low) \
                + domain.low
            if domain.min_abs > 0:
                values = np.where(np.abs(values) < domain.min_abs, np.copysign(domain.min_abs, values) + values,
                                  values)
            assert got.dtype == np.dtype(dtype) and got.tobytes() == values.astype(dtype).tobytes()
