"""The float64 verdict: bounds on known-condition cases, planted defects caught, honest differences passed."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

import accuracy.planted  # noqa: E402,F401 - registers the planted-defect providers
from accuracy import outcomes as oc  # noqa: E402
from accuracy.bound import UNIT, count_terms, judge  # noqa: E402
from accuracy.check import Checker, Settings  # noqa: E402
from accuracy.summary import compared_line  # noqa: E402
from opbench.cases import parse_line  # noqa: E402


def test_subject_as_close_as_the_reference_never_fails() -> None:
    rng = np.random.default_rng(0)
    truth = rng.standard_normal(1000)
    ref = (truth + rng.standard_normal(1000) * 40 * UNIT["float32"]).astype(np.float32)  # a sloppy reference
    sub = (truth + rng.standard_normal(1000) * 30 * UNIT["float32"]).astype(np.float32)
    assert judge(sub, ref, truth, None, 1.0, "float32").passed


def test_a_reduction_is_allowed_log2_of_its_terms() -> None:
    rng = np.random.default_rng(1)
    terms = rng.uniform(-1, 1, (64, 4096))
    truth = terms.sum(axis=1)
    magnitude = np.abs(terms).sum(axis=1)
    exact = truth.astype(np.float32)
    off = (truth + 10 * UNIT["float32"] * magnitude).astype(np.float32)  # 10 units: within 3 + log2(4096)
    far = (truth + 40 * UNIT["float32"] * magnitude).astype(np.float32)
    assert judge(off, exact, truth, magnitude, 4096.0, "float32").passed
    v = judge(far, exact, truth, magnitude, 4096.0, "float32")
    assert not v.passed and v.allowed_units == pytest.approx(15.0) and v.subject_units > 35


def test_term_counts_come_only_from_whole_numbers() -> None:
    assert count_terms(np.array([128.0, np.e, 0.25, np.nan])).tolist() == [128.0, 1.0, 1.0, 1.0]


def test_nonfinite_truth_is_judged_by_equality_with_the_reference() -> None:
    truth = np.array([np.inf, np.nan, 1.0])
    assert judge(np.array([np.inf, np.nan, 1.0]), np.array([np.inf, np.nan, 1.0]), truth, None, 1.0,
                 "float32").passed
    assert not judge(np.array([1.0, np.nan, 1.0]), np.array([np.inf, np.nan, 1.0]), truth, None, 1.0,
                     "float32").passed


def _check(line: str, subject: str, reference: str = "torch") -> dict:
    return Checker(Settings(subject=subject, reference=reference)).check(parse_line(line))


@pytest.mark.parametrize(("defect", "line"), [
    ("planted-bias", 'paddle.exp(Tensor([32, 64],"float32"), )'),
    ("planted-bias", 'paddle.multiply(Tensor([16, 40],"bfloat16"), Tensor([16, 40],"bfloat16"), )'),
    ("planted-drop", 'paddle.sum(Tensor([8, 128],"float32"), axis=-1, )'),
    ("planted-drop", 'paddle.matmul(Tensor([64, 64],"float32"), Tensor([64, 64],"float32"), )'),
    ("planted-axis", 'paddle.add(Tensor([32, 32],"float32"), Tensor([32],"float32"), )'),
    ("planted-axis", 'paddle.lerp(Tensor([16, 16],"float16"), Tensor([16],"float16"), 0.4, )'),
    ("planted-bf16", 'paddle.nn.functional.gelu(Tensor([8, 48],"float32"), )'),
    ("planted-bf16", 'paddle.mean(Tensor([16, 64],"float32"), axis=0, )'),
])
def test_planted_defects_are_caught_with_float64_figures(defect: str, line: str) -> None:
    rec = _check(line, defect)
    assert rec["outcome"] == oc.ACCURACY_FAIL, rec
    failed = [c for c in rec["comparisons"] if c["passed"] is False]
    assert failed and all("float64" in c and "bound" in c for c in failed)
    assert all(c["bound"]["subject_units"] > c["bound"]["allowed_units"] for c in failed)


def test_the_divide_case_passes_and_records_its_bound() -> None:
    pytest.importorskip("paddle")
    rec = _check('paddle.divide(Tensor([128, 256],"float32"), Tensor([256],"float32"), )', "paddle")
    assert rec["outcome"] == oc.PASS, rec
    grad_y = next(c for c in rec["comparisons"] if c["name"] == "grad y")
    if "bound" in grad_y:  # the sides differed by more than a unit: the float64 bound decided
        assert grad_y["bound"]["terms"] == 128 and grad_y["bound"]["subject_units"] < grad_y["bound"]["allowed_units"]


def test_float64_outputs_keep_the_tolerance_table() -> None:
    rec = _check('paddle.exp(Tensor([8, 8],"float64"), )', "planted-bias")  # float64: 4 eps is inside 1e-7
    assert rec["outcome"] == oc.PASS


def test_the_last_line_says_which_cases_were_not_compared() -> None:
    recs = [{"outcome": "pass"}, {"outcome": "unsupported"}, {"outcome": "mapping_missing"},
            {"outcome": "accuracy_fail"}]
    assert compared_line(recs) == "2 of 4 cases not compared: 1 unsupported, 1 mapping_missing."
    assert compared_line(recs[:1]) == "All 1 cases compared."


@pytest.mark.parametrize("api", ["argsort", "sort"])
def test_a_sort_of_many_values_is_compared_without_ties(api: str) -> None:
    """50,304 float32 values drawn uniformly repeat 22-24 times, and Paddle and PyTorch order ties differently
    (the indices, and where the gradient goes): the sorting ops draw values that do not repeat."""
    pytest.importorskip("paddle")
    rec = _check(f'paddle.{api}(Tensor([1, 50304],"float32"), descending=True, )', "paddle")
    assert rec["outcome"] == oc.PASS, rec


def test_a_scatter_along_an_axis_is_compared_without_repeated_indices() -> None:
    """799 of 8,000 positions a row drawn with repeats hit some twice; Paddle gives the gradient to the value that
    landed, PyTorch to every value written there, so a repeat reads as a wrong gradient (PaddleAPITest's configs)."""
    pytest.importorskip("paddle")
    rec = _check('paddle.put_along_axis(Tensor([10, 8000],"float32"), Tensor([10, 799],"int64"), '
                 'Tensor([10, 799],"float32"), 1, )', "paddle")
    assert rec["outcome"] == oc.PASS, rec


def test_max_unpool_is_compared_without_two_values_at_one_position() -> None:
    """Indices drawn along the input's width repeated within a plane: which value landed there was the kernel's
    choice, and Paddle's and PyTorch's differ (1.7e6 units apart on this config line)."""
    pytest.importorskip("paddle")
    rec = _check('paddle.nn.functional.max_unpool1d(Tensor([1, 3, 8],"float32"), Tensor([1, 3, 8],"int64"), '
                 'kernel_size=2, stride=2, output_size=list[1,3,16,], )', "paddle")
    assert rec["outcome"] == oc.PASS, rec


@pytest.mark.parametrize(("line", "known"), [
    ('paddle.masked_fill(Tensor([168],"float32"), Tensor([168],"bool"), Tensor([1],"float32"), )',
     "Paddle's gradient for a Tensor `value`"),
    ('paddle.linalg.pinv(Tensor([3, 5, 5],"float32"), rcond=1e-15, hermitian=True, )',
     "with hermitian=True, Paddle 3.3.1's CPU backward is wrong for a batch"),
    ('paddle.linalg.eigvalsh(x=Tensor([4, 5, 5],"float64"), UPLO="U", )',
     "Paddle 3.3.1's CPU backward is wrong for a batch"),
    ('paddle.linalg.triangular_solve(x=Tensor([4, 4],"float64"), y=Tensor([4, 4],"float64"), upper=False, '
     'transpose=True, unitriangular=True, )', "Paddle 3.3.1's CPU backward gives x's other triangle"),
    ('paddle.multiplex(inputs=list[Tensor([4, 4],"float32"),Tensor([4, 4],"float32"),], '
     'index=Tensor([2, 1],"int32"), )', "Paddle's gradient of each input has index's row count"),
    ('paddle.vision.ops.box_coder(prior_box=Tensor([80, 4],"float64"), prior_box_var=tuple(0.1,0.1,0.2,0.2,), '
     'target_box=Tensor([20, 80, 4],"float64"), code_type="decode_center_size", box_normalized=False, )',
     "Paddle 3.3.1's float64 decode misreads a prior_box_var given as four numbers"),
])
def test_a_failure_the_mapping_documents_says_so_in_the_report(line: str, known: str) -> None:
    """Paddle's CPU kernels that the gate fails rightly (masked_fill's Tensor value gets a zero gradient; batched
    eigh-based backwards and triangular_solve's are wrong): the report names the difference the mapping entry
    documents (``known``) by the figures."""
    pytest.importorskip("paddle")
    from accuracy.summary import markdown

    rec = _check(line, "paddle")
    assert rec["outcome"] == oc.ACCURACY_FAIL and rec["known"].startswith(known), rec
    assert f"known difference (mapping): {known}" in markdown([rec])


def test_an_output_the_api_leaves_unwritten_is_not_compared() -> None:
    """fused_layer_norm with no norm weight or bias only adds (out = x + residual): Paddle leaves its residual,
    mean and 1/std outputs unwritten (old memory), so the mapping returns UNWRITTEN there and the record says
    they were not compared, while out is compared and passes."""
    pytest.importorskip("paddle")
    rec = _check('paddle.incubate.nn.functional.fused_layer_norm(Tensor([76, 64],"float32"), norm_weight=None, '
                 'norm_bias=None, epsilon=1e-06, begin_norm_axis=1, bias=None, residual=Tensor([76, 64],"float32"), )',
                 "paddle")
    assert rec["outcome"] == oc.PASS, rec
    forward = {c["name"]: c for c in rec["comparisons"] if c["direction"] == "forward"}
    assert forward["out[0]"]["passed"] is True
    for name in ("out[1]", "out[2]", "out[3]"):
        assert "passed" in forward[name] and forward[name]["passed"] is None
        assert "unwritten" in forward[name]["note"]


def test_a_passing_case_carries_no_known_difference() -> None:
    pytest.importorskip("paddle")
    rec = _check('paddle.masked_fill(Tensor([168],"float32"), Tensor([168],"bool"), 0.5, )', "paddle")
    assert rec["outcome"] == oc.PASS and "known" not in rec


def test_an_op_that_refuses_ones_is_still_judged_against_float64() -> None:
    """The run on ones counts terms; inv of a matrix of ones is singular, and that failure sent the whole case to the
    per-dtype tolerance (PaddleAPITest's 'paddle.Tensor.inverse(Tensor([36, 36],"float32"), )' failed there). The
    truth alone judges it now, and a defect is still caught."""
    pytest.importorskip("paddle")
    line = 'paddle.Tensor.inverse(Tensor([36, 36],"float32"), )'
    rec = _check(line, "paddle")
    assert rec["outcome"] == oc.PASS, rec
    judged = [c for c in rec["comparisons"] if "bound" in c]
    assert judged and all("float64 rerun failed" not in (c.get("note") or "") for c in rec["comparisons"])
    assert _check(line, "planted-bf16")["outcome"] == oc.ACCURACY_FAIL
