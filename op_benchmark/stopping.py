"""When to stop sampling: small pluggable criteria, combined nvbench-style.

A :class:`StopRule` never stops before its minimum sample count; after that it stops
at the first criterion that is met (the median known precisely enough, noise low enough,
time budget spent, sample cap), and says which one in ``reason``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from op_benchmark.stats import median_precision, relative_noise

# Sampling time per case, provider and direction. 100 ms (with a 250 us pad and pipelined samples, 145d265)
# made the warm GPU main command 32 s on an H100 (39 s on an H200 with this budget), but three A/A pairs of the
# lerp suite then gave opbench compare a false FASTER row and a planted 5% slowdown was called in 81-84% of
# rows >= 20 us, against none and 94-100% with this budget and one sample at a time on the same machine.
DEFAULT_BUDGET_S = 0.3
DEFAULT_MIN_SAMPLES = 10
DEFAULT_MAX_SAMPLES = 10_000
DEFAULT_NOISE = 0.005  # nvbench's 0.5% relative noise
# Off by default: on an H100, three A/A pairs of the lerp suite stopped at +-0.5% flagged 2 of 144 rows
# FASTER/SLOWER in opbench compare (none with the full budget), and a planted 5% slowdown was called in
# 87-100% of rows of 20 us or more (97-100% without it); `--precision 0.5` trades that for a shorter run
# (AA_ARGS="--precision 0.5" bash docs/gpu_run.sh OUT compare-aa measures it).
DEFAULT_PRECISION = 0.0


def checkpoint(n: int) -> bool:
    """Whether a sort-based criterion looks at ``n`` samples: every count up to 20, then about every 5%
    more, so checking costs O(n log n) overall instead of a sort after every sample."""
    return n <= 20 or n % max(1, n // 20) == 0


@dataclass
class SamplingState:
    """What a criterion may look at: the samples so far (us) and the seconds spent taking them."""

    samples_us: list[float] = field(default_factory=list)
    elapsed_s: float = 0.0


class Criterion(Protocol):
    name: str

    def met(self, state: SamplingState) -> bool: ...


@dataclass(frozen=True)
class TimeBudget:
    """Stop once ``seconds`` of wall time went into sampling (flushes included)."""

    seconds: float
    name: str = "budget"

    def met(self, state: SamplingState) -> bool:
        return state.elapsed_s >= self.seconds


@dataclass(frozen=True)
class _BelowTarget:
    """Stop once a spread figure of the samples (``measure``) is below ``target``, checked from
    ``min_samples`` on at :func:`checkpoint` counts (the figures sort the samples)."""

    target: float
    min_samples: int = 20
    name: str = ""
    measure: Callable[[Sequence[float]], float] = field(default=relative_noise, repr=False)  # repr: run configs

    def met(self, state: SamplingState) -> bool:
        n = len(state.samples_us)
        return n >= self.min_samples and checkpoint(n) and self.measure(state.samples_us) < self.target


@dataclass(frozen=True)
class NoiseTarget(_BelowTarget):
    """Stop once the relative noise (IQR / 1.349 / median) is below ``target``."""

    name: str = "noise"


@dataclass(frozen=True)
class MedianPrecision(_BelowTarget):
    """Stop once the median is known within +-``target`` (relative half-width of its 95% confidence interval,
    distribution-free). The figure a table reports is the median: once it is pinned down, more samples only
    cost time (a kernel of steady timing stops after a few dozen)."""

    name: str = "precision"
    measure: Callable[[Sequence[float]], float] = field(default=median_precision, repr=False)


@dataclass(frozen=True)
class MaxSamples:
    """Stop at ``count`` samples whatever else holds."""

    count: int
    name: str = "max-samples"

    def met(self, state: SamplingState) -> bool:
        return len(state.samples_us) >= self.count


@dataclass(frozen=True)
class StopRule:
    """At least ``min_samples``; then stop at the first met criterion."""

    min_samples: int = DEFAULT_MIN_SAMPLES
    criteria: tuple[Criterion, ...] = ()

    def reason(self, state: SamplingState) -> str | None:
        """The name of the criterion that ends sampling, or None to go on."""
        if len(state.samples_us) < self.min_samples:
            return None
        for c in self.criteria:
            if c.met(state):
                return c.name
        return None


def default_rule(budget_s: float = DEFAULT_BUDGET_S, *, min_samples: int = DEFAULT_MIN_SAMPLES,
                 noise: float | None = DEFAULT_NOISE, max_samples: int = DEFAULT_MAX_SAMPLES,
                 precision: float | None = DEFAULT_PRECISION) -> StopRule:
    """Time budget + early stops (median precise enough, low noise) + a sample cap, never fewer than
    ``min_samples``; ``noise`` or ``precision`` None or 0 turns that early stop off."""
    if budget_s <= 0:
        raise ValueError("the time budget must be positive")
    if min_samples < 1 or max_samples < min_samples:
        raise ValueError("need 1 <= min_samples <= max_samples")
    criteria: Sequence[Criterion] = [TimeBudget(budget_s), MaxSamples(max_samples)]
    if noise is not None and noise > 0:
        criteria = [NoiseTarget(noise, max(min_samples, 20)), *criteria]
    if precision is not None and precision > 0:
        criteria = [MedianPrecision(precision, max(min_samples, 20)), *criteria]
    return StopRule(min_samples, tuple(criteria))
