"""The rows a normalization's statistics sum, which the float64 bound allows log2 of for every element."""

from __future__ import annotations

import numpy as np
import pytest

from accuracy.bound import UNIT, judge
from accuracy.row_terms import ROW_TERMS, row_terms
from opbench.cases import parse_line
from opbench.mapping import is_mapped

F = "paddle.nn.functional."


@pytest.mark.parametrize(("line", "terms"), [
    (F + 'layer_norm(Tensor([16, 65536],"float32"), [65536], )', 65536),
    (F + 'layer_norm(Tensor([16, 128, 768],"float32"), normalized_shape=[128, 768], epsilon=1e-05, )', 98304),
    (F + 'layer_norm(Tensor([4, 768],"float16"), 768, )', 768),
    (F + 'rms_norm(Tensor([4, 8],"float32"), [8], Tensor([8],"float32"), 1e-06, )', 8),
    (F + 'softmax(Tensor([32, 12, 128, 96],"float32"), )', 96),
    (F + 'softmax(Tensor([32, 12, 128, 96],"float32"), axis=1, )', 12),
    (F + 'log_softmax(Tensor([8, 300],"float32"), -1, )', 300),
    (F + 'normalize(Tensor([8, 16, 3],"float32"), )', 16),
    (F + 'group_norm(Tensor([2, 32, 8, 8],"float32"), num_groups=8, )', 4 * 64),
    (F + 'group_norm(Tensor([2, 8, 8, 32],"float32"), num_groups=8, data_format="NHWC", )', 4 * 64),
    (F + 'instance_norm(Tensor([2, 3, 8, 8],"float32"), )', 64),
    (F + 'batch_norm(Tensor([4, 3, 8, 8],"float32"), Tensor([3],"float32"), Tensor([3],"float32"), '
         'training=True, )', 4 * 64),
    (F + 'batch_norm(Tensor([4, 3, 8, 8],"float32"), Tensor([3],"float32"), Tensor([3],"float32"), )', 1),
    ('paddle.incubate.nn.functional.fused_rms_norm(Tensor([4, 16, 32],"float32"), Tensor([512],"float32"), '
     'Tensor([512],"float32"), 1e-06, 1, )', 512),
    ('paddle.logcumsumexp(Tensor([10, 10, 10],"float32"), )', 1000),  # no axis: the flattened input
    ('paddle.logcumsumexp(Tensor([10, 20, 30],"float32"), axis=1, )', 20),
    ('paddle.Tensor.logcumsumexp(Tensor([10, 20, 30],"float32"), -1, )', 30),
    ('paddle.linalg.corrcoef(Tensor([4, 5],"float32"), rowvar=False, )', 4),
    ('paddle.linalg.cov(Tensor([4, 50],"float32"), )', 50),
    ('paddle.Tensor.cov(Tensor([30],"float32"), )', 30),
    ('paddle.exp(Tensor([4, 8],"float32"), )', 1),
    (F + 'softmax(Tensor([4, 8],"float32"), axis=5, )', 1),  # an axis out of range: the call errors anyway
])
def test_the_row_each_element_is_normalized_by(line: str, terms: int) -> None:
    assert row_terms(parse_line(line)) == terms


def test_every_entry_is_a_mapped_api() -> None:
    assert all(is_mapped(api) for api in ROW_TERMS)


def test_a_float32_row_statistic_needs_its_rows_terms() -> None:
    """layer_norm in float32 with its variance the difference of two pairwise sums over 65,536 elements (each
    row shifted by its first element, 4 spreads from the mean) is 9-10 units from float64: more than one
    operation's rounding allows, well within what a 65,536-term row does."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 65536)).astype(np.float32)
    x[:, 0] = 4.0
    truth = (x - x.mean(axis=1, dtype=np.float64, keepdims=True)) / x.std(axis=1, dtype=np.float64, keepdims=True)
    n = np.float32(x.shape[1])
    u = x - x[:, :1]
    d = u.sum(axis=1, dtype=np.float32, keepdims=True) / n
    var = (u * u).sum(axis=1, dtype=np.float32, keepdims=True) / n - d * d
    sub = ((x - x[:, :1] - d) / np.sqrt(var)).astype(np.float32)
    ref = truth.astype(np.float32)
    assert not judge(sub, ref, truth, None, 1.0, "float32").passed
    row = row_terms(parse_line(F + 'layer_norm(Tensor([4, 65536],"float32"), 65536, )'))
    v = judge(sub, ref, truth, None, row, "float32")
    assert v.passed and v.allowed_units == pytest.approx(3 + 16) and v.subject_units > 5
    bias = (truth * (1 + 30 * UNIT["float32"])).astype(np.float32)  # 30 units off everywhere: still caught
    assert not judge(bias, ref, truth, None, row, "float32").passed


def test_paddles_own_long_row_layer_norm_is_not_a_failure() -> None:
    """Paddle's CPU layer_norm over 65,536 elements, about 4 units from float64, where torch's is about 1, failed
    the gate when its row counted as one term."""
    pytest.importorskip("paddle")
    pytest.importorskip("torch")
    from accuracy import outcomes as oc
    from accuracy.check import Checker, Settings

    line = (F + 'layer_norm(Tensor([16, 65536],"float32"), [65536], Tensor([65536],"float32"), '
            'Tensor([65536],"float32"), 1e-05, )')
    rec = Checker(Settings(subject="paddle", reference="torch")).check(parse_line(line))
    assert rec["outcome"] == oc.PASS, rec
    judged = [c for c in rec["comparisons"] if "bound" in c]
    assert all(c["bound"]["terms"] >= 65536 for c in judged)


def test_paddles_own_logcumsumexp_is_not_a_failure() -> None:
    """Paddle's CPU logcumsumexp over 1,000 elements is about 4 units from float64 (torch's 0.3): a running sum of
    1,000 terms, where the run on ones (1 + log(k) each) counted one (PaddleAPITest's configs)."""
    pytest.importorskip("paddle")
    pytest.importorskip("torch")
    from accuracy import outcomes as oc
    from accuracy.check import Checker, Settings

    rec = Checker(Settings(subject="paddle", reference="torch")).check(
        parse_line('paddle.logcumsumexp(Tensor([10, 10, 10],"float32"), )'))
    assert rec["outcome"] == oc.PASS, rec
