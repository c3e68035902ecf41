import math

import numpy as np
import pytest

from op_benchmark.stats import Measurement, bootstrap_ratio_ci, geometric_mean, relative_noise


def test_measurement_statistics_on_known_samples():
    m = Measurement.of([1, 2, 3, 4, 5, 6, 7, 8, 9, 100])
    assert m.count == 10
    assert m.median == 5.5
    assert m.min == 1 and m.max == 100
    assert m.q1 == pytest.approx(3.25) and m.q3 == pytest.approx(7.75)
    assert m.iqr == pytest.approx(4.5)
    assert m.noise == pytest.approx(4.5 / 1.349 / 5.5)


def test_noise_matches_relative_stddev_for_normal_samples():
    rng = np.random.default_rng(1)
    s = rng.normal(100.0, 2.0, 20000)
    assert relative_noise(s) == pytest.approx(0.02, rel=0.05)


def test_noise_of_one_sample_is_infinite_and_empty_measurement_refused():
    assert math.isinf(relative_noise([3.0]))
    with pytest.raises(ValueError):
        Measurement.of([])


def test_bootstrap_ci_covers_true_ratio_and_is_deterministic():
    rng = np.random.default_rng(0)
    base = rng.normal(100, 3, 200)
    new = rng.normal(120, 3, 200)
    r, lo, hi = bootstrap_ratio_ci(base, new, seed=3)
    assert lo < 1.2 < hi
    assert hi - lo < 0.03
    assert r == pytest.approx(np.median(new) / np.median(base))
    assert bootstrap_ratio_ci(base, new, seed=3) == (r, lo, hi)


def test_bootstrap_ci_widens_with_noise():
    rng = np.random.default_rng(0)
    quiet = bootstrap_ratio_ci(rng.normal(100, 1, 100), rng.normal(100, 1, 100))
    noisy = bootstrap_ratio_ci(rng.normal(100, 20, 100), rng.normal(100, 20, 100))
    assert (noisy[2] - noisy[1]) > 5 * (quiet[2] - quiet[1])


def test_geometric_mean():
    assert geometric_mean([2.0, 0.5]) == pytest.approx(1.0)
    assert geometric_mean([4.0, 1.0]) == pytest.approx(2.0)
    with pytest.raises(ValueError):
        geometric_mean([1.0, 0.0])
