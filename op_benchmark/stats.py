"""Statistics of timing samples: the :class:`Measurement` value object and a bootstrap ratio CI.

The median is the headline (robust to the occasional preempted sample); noise is a
robust relative spread, IQR / 1.349 / median, which equals the relative standard
deviation for normal samples, so it reads like nvbench's noise figure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

IQR_PER_SIGMA = 1.349  # IQR of a normal distribution in standard deviations


@dataclass(frozen=True)
class Measurement:
    """Samples of one timed callable, in microseconds, and what follows from them."""

    samples_us: tuple[float, ...]

    def __post_init__(self) -> None:
        if not self.samples_us:
            raise ValueError("a Measurement needs at least one sample")

    @classmethod
    def of(cls, samples_us: Sequence[float]) -> Measurement:
        return cls(tuple(float(s) for s in samples_us))

    @cached_property
    def _array(self) -> np.ndarray:
        return np.asarray(self.samples_us, dtype=np.float64)

    @property
    def count(self) -> int:
        return len(self.samples_us)

    @cached_property
    def median(self) -> float:
        return float(np.median(self._array))

    @property
    def min(self) -> float:
        return float(self._array.min())

    @property
    def max(self) -> float:
        return float(self._array.max())

    @cached_property
    def q1(self) -> float:
        return float(np.percentile(self._array, 25))

    @cached_property
    def q3(self) -> float:
        return float(np.percentile(self._array, 75))

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1

    @property
    def noise(self) -> float:
        """Robust relative noise: IQR / 1.349 / median (0 for one sample)."""
        return relative_noise(self.samples_us)


def relative_noise(samples: Sequence[float]) -> float:
    """IQR / 1.349 / median of ``samples``; ``inf`` when fewer than 2 or the median is 0."""
    if len(samples) < 2:
        return math.inf
    q1, med, q3 = np.percentile(np.asarray(samples, dtype=np.float64), [25, 50, 75])
    return float((q3 - q1) / IQR_PER_SIGMA / med) if med > 0 else math.inf


def median_precision(samples: Sequence[float], z: float = 1.96) -> float:
    """Relative half-width of the median's distribution-free confidence interval (``z`` = 1.96: 95%).

    The interval runs between the order statistics of ranks ``floor(n/2 - z*sqrt(n)/2)`` and
    ``ceil(1 + n/2 + z*sqrt(n)/2)`` (the binomial rank bounds of the median, 1-based), so it holds whatever
    the samples' distribution; ``inf`` below 3 samples or a zero median.
    """
    n = len(samples)
    if n < 3:
        return math.inf
    arr = np.sort(np.asarray(samples, dtype=np.float64))
    med = float(np.median(arr))
    reach = z * math.sqrt(n) / 2
    lo, hi = max(0, math.floor(n / 2 - reach) - 1), min(n - 1, math.ceil(1 + n / 2 + reach) - 1)
    return float((arr[hi] - arr[lo]) / 2 / med) if med > 0 else math.inf


def bootstrap_ratio_ci(base: Sequence[float], new: Sequence[float], *, level: float = 0.95,
                       resamples: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """``median(new) / median(base)`` and its ``level`` confidence interval (percentile bootstrap).

    Each run's samples are resampled with replacement independently, so the interval
    widens with either run's noise. Deterministic for a given ``seed``.
    """
    a = np.asarray(base, dtype=np.float64)
    b = np.asarray(new, dtype=np.float64)
    if a.size == 0 or b.size == 0:
        raise ValueError("bootstrap needs samples in both runs")
    rng = np.random.default_rng(seed)
    # Cap the resampled size so huge sample lists stay cheap; the median's spread is kept by
    # drawing at most 1000 per resample only when there are more (a slightly wider interval).
    na, nb = min(a.size, 1000), min(b.size, 1000)
    ma = np.median(rng.choice(a, size=(resamples, na), replace=True), axis=1)
    mb = np.median(rng.choice(b, size=(resamples, nb), replace=True), axis=1)
    ratios = mb / ma
    alpha = (1 - level) / 2
    lo, hi = np.quantile(ratios, [alpha, 1 - alpha])
    return float(np.median(b) / np.median(a)), float(lo), float(hi)


def geometric_mean(values: Sequence[float]) -> float:
    """Geometric mean of positive values (the right average of speedups)."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0 or (arr <= 0).any():
        raise ValueError("geometric mean needs positive values")
    return float(np.exp(np.log(arr).mean()))
