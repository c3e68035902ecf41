import pytest

from op_benchmark.stopping import MaxSamples, NoiseTarget, SamplingState, StopRule, TimeBudget, default_rule


def test_never_stops_before_min_samples_even_when_budget_is_spent():
    rule = default_rule(0.001, min_samples=10, noise=None)
    state = SamplingState([5.0] * 9, elapsed_s=10.0)
    assert rule.reason(state) is None
    state.samples_us.append(5.0)
    assert rule.reason(state) == "budget"


def test_budget_stops_a_noisy_run():
    rule = default_rule(0.1, min_samples=10)
    state = SamplingState([1.0, 3.0] * 50, elapsed_s=0.05)
    assert rule.reason(state) is None  # noisy, budget left
    state.elapsed_s = 0.1
    assert rule.reason(state) == "budget"


def test_low_noise_stops_early_but_only_after_20_samples():
    rule = default_rule(10.0, min_samples=10, noise=0.01, precision=None)
    quiet = [100.0, 100.1, 99.9, 100.05] * 3
    assert rule.reason(SamplingState(quiet[:12], 0.01)) is None
    assert rule.reason(SamplingState(quiet * 2, 0.01)) == "noise"


def test_max_samples_caps_and_custom_rules_compose():
    rule = StopRule(2, (NoiseTarget(0.0001), TimeBudget(5.0), MaxSamples(4)))
    assert rule.reason(SamplingState([1.0, 9.0, 1.0], 0.0)) is None
    assert rule.reason(SamplingState([1.0, 9.0, 1.0, 9.0], 0.0)) == "max-samples"


@pytest.mark.parametrize("kwargs", [dict(budget_s=0), dict(budget_s=1, min_samples=0),
                                    dict(budget_s=1, min_samples=20, max_samples=10)])
def test_default_rule_rejects_bad_settings(kwargs):
    with pytest.raises(ValueError):
        default_rule(**kwargs)


def test_precise_median_stops_early_and_a_wide_one_does_not():
    """The median within +-1%: a steady kernel stops at 20 samples, a bimodal one keeps sampling."""
    rule = default_rule(10.0, min_samples=10, noise=None, precision=0.01)
    steady = [100.0 + 0.1 * (i % 7) for i in range(20)]
    assert rule.reason(SamplingState(steady[:19], 0.01)) is None  # under the criterion's 20 samples
    assert rule.reason(SamplingState(steady, 0.01)) == "precision"
    bimodal = [100.0, 120.0] * 50
    assert rule.reason(SamplingState(bimodal, 0.01)) is None


def test_median_precision_is_the_order_statistics_interval():
    from op_benchmark.stats import median_precision

    samples = list(range(1, 101))  # n = 100: ranks floor(50 - 9.8) = 40 and ceil(1 + 50 + 9.8) = 61
    assert median_precision(samples) == pytest.approx((61 - 40) / 2 / 50.5)
    assert median_precision([1.0, 2.0]) == float("inf")


def test_checkpoints_thin_out_as_samples_grow():
    from op_benchmark.stopping import checkpoint

    assert all(checkpoint(n) for n in range(1, 21))
    assert sum(checkpoint(n) for n in range(1000, 2000)) <= 60  # not 1000 sorts
