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
    rule = default_rule(10.0, min_samples=10, noise=0.01)
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
