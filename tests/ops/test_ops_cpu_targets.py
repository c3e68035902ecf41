"""docs/ops/ops_cpu.py's targets: each binding is judged against its own framework's kernel."""

from __future__ import annotations

from doc_scripts import load

from op_benchmark.results import Record

CASE = 'paddle.nn.functional.layer_norm(Tensor([2048, 768],"float32"), [768], None, None, 1e-05, )'


def _rec(provider: str, us: float) -> Record:
    return Record(case=CASE, api="paddle.nn.functional.layer_norm", provider=provider, direction="bwd", device="cpu",
                  method="wall", median_us=us, noise=0.01)


def test_each_binding_meets_its_own_frameworks_target_only() -> None:
    """paddle-ops at 0.4x of torch is no miss (PyTorch's autograd is not on its side); torch-ops at 0.4x is."""
    rows, missed = load("ops_cpu").rows([_rec("paddle", 20000), _rec("torch", 1000), _rec("paddle-ops", 2500),
                                    _rec("torch-ops", 1200)])
    assert [r[-1] for r in rows] == ["met", "met"]
    assert missed == []
    rows, missed = load("ops_cpu").rows([_rec("paddle", 2000), _rec("torch", 1000), _rec("paddle-ops", 2500),
                                    _rec("torch-ops", 2500)])
    assert [r[-1] for r in rows] == ["slower than paddle", "> 2x torch"]
    assert len(missed) == 2
