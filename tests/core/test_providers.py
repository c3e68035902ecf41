"""Providers bind a case once: the call a benchmark times does no mapping work."""

from __future__ import annotations

import numpy as np
import pytest

import opbench.mapping as mapping
from opbench.cases import parse_line
from opbench.providers import get_provider

pytest.importorskip("torch")

LINE = 'paddle.clip(Tensor([3, 4],"float32"), -0.5, 0.5, )'  # a converter entry


@pytest.mark.parametrize("line", [LINE, 'paddle.add(Tensor([3, 4],"float32"), Tensor([4],"float32"), )'])
def test_torch_forward_does_no_mapping_work_per_call(monkeypatch, line):
    call = get_provider("torch", "cpu").prepare(parse_line(line), seed=1)
    calls = []
    real_bind = mapping.bind
    monkeypatch.setattr(mapping, "bind", lambda *a, **k: calls.append(1) or real_bind(*a, **k))
    monkeypatch.setattr(mapping, "lookup", lambda api: pytest.fail("lookup in the timed call"))
    outs = [call.backend.to_numpy(call.forward()) for _ in range(3)]
    assert calls == []
    np.testing.assert_array_equal(outs[0], outs[2])


def test_prepared_call_matches_torch_call():
    case = parse_line(LINE)
    call = get_provider("torch", "cpu").prepare(case, seed=2)
    direct = mapping.torch_call(case.api, call.args, call.kwargs)
    np.testing.assert_array_equal(call.backend.to_numpy(call.forward()), call.backend.to_numpy(direct))
