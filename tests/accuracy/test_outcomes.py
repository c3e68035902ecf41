"""Every outcome a case can have, produced on purpose, in this process (no workers)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from accuracy import outcomes as oc  # noqa: E402
from accuracy.check import Checker, Settings  # noqa: E402
from opbench.cases import parse_line  # noqa: E402

MUL = 'paddle.multiply(Tensor([4, 8],"float32"), Tensor([4, 8],"float32"), )'
ADD = 'paddle.add(Tensor([4, 8],"float32"), Tensor([8],"float32"), )'


def check(line: str, subject: str = "torch", reference: str = "torch", **kw) -> dict:
    return Checker(Settings(subject=subject, reference=reference, **kw)).check(parse_line(line))


def test_pass_records_figures_for_outputs_and_every_input_grad():
    rec = check(ADD)
    assert rec["outcome"] == oc.PASS
    names = [(c["direction"], c["name"]) for c in rec["comparisons"]]
    assert names == [("forward", "out"), ("backward", "grad x"), ("backward", "grad y")]
    for c in rec["comparisons"]:
        assert c["passed"] is True and c["mismatches"] == 0 and c["max_abs"] == 0.0
    assert rec["comparisons"][2]["shape"] == [8]  # broadcast input's grad is reduced


def test_wrong_op_is_accuracy_fail_with_figures_and_float64_opinion(plugin_env):
    rec = check(MUL, subject="test-wrong")
    assert rec["outcome"] == oc.ACCURACY_FAIL
    assert "forward out" in rec["failed"]
    out = rec["comparisons"][0]
    assert out["mismatches"] > 0 and out["first_index"] is not None and out["max_abs"] > 0
    assert out["float64"]["closer"] == "reference"
    assert out["float64"]["subject_max_abs"] > out["float64"]["reference_max_abs"]
    assert oc.is_failing(rec)


def test_backward_error_is_an_error_never_a_pass(plugin_env):
    rec = check(MUL, subject="test-bwd-error")
    assert rec["outcome"] == oc.TORCH_ERROR
    assert rec["error_side"] == "subject" and rec["error_stage"] == "backward"
    assert "backward failed" in rec["error"]
    assert oc.is_failing(rec)  # the subject's own error fails whatever its framework


def test_reference_error_alone_is_torch_error_not_failing(plugin_env):
    rec = check(MUL, reference="test-raise")
    assert rec["outcome"] == oc.TORCH_ERROR and rec["error_side"] == "reference"
    assert not oc.is_failing(rec)


def test_oom_is_its_own_outcome_and_restarts_the_worker(plugin_env):
    rec = check(MUL, subject="test-oom")
    assert rec["outcome"] == oc.OOM and rec.get("fatal") is True


def test_missing_grad_is_visible_but_not_a_failure(plugin_env):
    rec = check(MUL, subject="test-nograd")
    assert rec["outcome"] == oc.PASS
    notes = {c["name"]: c.get("note") for c in rec["comparisons"]}
    assert notes["grad x"] == "not compared (subject has no grad)"
    assert rec["comparisons"][-1]["passed"] is True  # grad y still compared


def test_mapping_missing():
    rec = check('paddle.nosuchapi(Tensor([2],"float32"), )')
    assert rec["outcome"] == oc.MAPPING_MISSING and "no PyTorch mapping" in rec["error"]
    assert not oc.is_failing(rec)


def test_paddle_error_keeps_its_kind():
    pytest.importorskip("paddle")
    rec = check('paddle.add(Tensor([3, 4],"float32"), Tensor([5],"float32"), )', subject="paddle")
    assert rec["outcome"] == oc.PADDLE_ERROR and rec["error_side"] == "subject"
    assert rec["error_kind"] == "InvalidArgument"
    assert oc.is_failing(rec)


def test_paddle_vs_torch_pass_forward_and_backward():
    pytest.importorskip("paddle")
    rec = check('paddle.lerp(Tensor([4, 8],"float32"), Tensor([4, 8],"float32"), 0.3, )', subject="paddle")
    assert rec["outcome"] == oc.PASS, rec
    assert {c["name"] for c in rec["comparisons"]} == {"out", "grad x", "grad y"}


def test_device_cache_mode_gives_the_same_verdicts(plugin_env):
    lines = [ADD, MUL, 'paddle.exp(Tensor([3, 5],"float64"), )', 'paddle.cast(Tensor([6],"int32"), "float32", )']
    for subject in ("torch", "test-wrong"):
        plain = Checker(Settings(subject=subject))
        cached = Checker(Settings(subject=subject, gpu_cache_bytes=2**20))
        got = [(plain.check(parse_line(x))["outcome"], cached.check(parse_line(x))["outcome"]) for x in lines]
        assert all(a == b for a, b in got), got
    assert cached.cache.hits > 0  # the second pass over equal tensors reused them


def test_error_kind_and_outcome_from_exception_types():
    class OutOfMemoryError(RuntimeError):
        pass

    assert oc.error_outcome(OutOfMemoryError("x"), "torch") == oc.OOM
    assert oc.error_outcome(ValueError("(InvalidArgument) bad"), "paddle") == oc.PADDLE_ERROR
    assert oc.error_kind(ValueError("(InvalidArgument) shape mismatch"), "paddle") == "InvalidArgument"
    assert oc.error_kind(ValueError("(InvalidArgument) x"), "torch") == "ValueError"
