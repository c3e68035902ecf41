"""`syncs` attribution on recorded traces (hand-built fixtures in the torch.profiler and paddle.profiler formats)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools import sync_attribution as sa

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def torch_trace() -> dict:
    return json.loads((FIXTURES / "torch_trace.json").read_text())


@pytest.fixture(scope="module")
def paddle_trace() -> dict:
    return json.loads((FIXTURES / "paddle_trace.json").read_text())


def by_api(findings: list[sa.Finding]) -> dict[str, sa.Finding]:
    return {f.api: f for f in findings}


def test_torch_trace_names_each_call_its_place_and_cost(torch_trace):
    found = by_api(sa.attribute(torch_trace, user_paths=["/home/dev/proj/train_step.py"]))
    assert set(found) == {"Tensor.item (aten::item)", "aten::index", "torch.tensor", "torch.cuda.synchronize"}
    item = found["Tensor.item (aten::item)"]
    assert (item.calls, item.copies, item.syncs, item.nbytes) == (2, 2, 2, 8)
    assert item.what == "D2H copy (pinned) + stream sync"  # torch reads scalars through pinned memory
    assert item.where == "train_step.py:18 (step)"
    assert item.host_us == pytest.approx(2 * (10 + 254))  # cudaMemcpyAsync + cudaStreamSynchronize per step
    assert item.device_us == pytest.approx(2 * 1.4)
    assert item.ops == "aten::item > aten::_local_scalar_dense"
    idx = found["aten::index"]
    assert idx.what == "D2H copy (pinned) + stream sync" and idx.ops == "aten::index > aten::nonzero"
    h2d = found["torch.tensor"]
    assert h2d.what == "H2D copy (pageable) + stream sync" and h2d.nbytes == 32
    sync = found["torch.cuda.synchronize"]
    assert (sync.calls, sync.syncs, sync.copies, sync.where) == (1, 1, 0, "train_step.py:28 (main)")


def test_torch_trace_sorted_by_blocked_host_time(torch_trace):
    found = sa.attribute(torch_trace)
    assert [f.host_us for f in found] == sorted((f.host_us for f in found), reverse=True)
    assert found[0].api == "Tensor.item (aten::item)"


def test_tool_own_sync_device_copies_and_launches_are_left_out(torch_trace):
    found = sa.attribute(torch_trace)
    # three cudaDeviceSynchronize calls: the script's, the tool's after the script, the profiler's stop; the
    # frames of whoever called the tool ("<string>(1): <module>" for python -c) must not make them the user's
    assert sum(f.syncs for f in found if "synchronize" in f.api) == 1
    assert all("<string>" not in f.where and "opbench" not in f.api for f in found)
    assert all("DtoD" not in f.what and "D2D" not in f.what for f in found)
    assert not any("Launch" in f.ops for f in found)
    with_d2d = sa.attribute(torch_trace, include_d2d=True)
    assert any(f.what.startswith("D2D copy") for f in with_d2d)


def test_advice_fits_the_cause(torch_trace):
    found = by_api(sa.attribute(torch_trace))
    assert "torch.where" in found["Tensor.item (aten::item)"].advice
    assert "output size depends on the data" in found["aten::index"].advice
    assert "device_guard" in found["torch.tensor"].advice
    assert "explicit synchronize" in found["torch.cuda.synchronize"].advice


def test_paddle_trace_attributes_to_operators(paddle_trace):
    found = by_api(sa.attribute(paddle_trace))
    assert set(found) == {"slice", "crop"}  # the tool's final cudaDeviceSynchronize is dropped
    assert (found["slice"].calls, found["slice"].what) == (3, "H2D copy + stream sync")
    assert found["crop"].what == "D2H copy + stream sync" and found["crop"].nbytes == 48
    assert found["slice"].where == "-" and "device_guard" in found["slice"].advice
    assert found["crop"].host_us == pytest.approx(3 * (8 + 101))


def test_no_copies_no_findings():
    trace = {"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 5},
                             {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                              "ts": 1, "dur": 2, "args": {"correlation": 3}}]}
    assert sa.attribute(trace) == []


def test_not_a_trace_is_a_clear_error():
    with pytest.raises(ValueError, match="traceEvents"):
        sa.attribute({"events": []})


@pytest.mark.parametrize(("frame", "api"), [
    ("<built-in method item of Tensor object at 0x7f2cee318b90>", "Tensor.item"),
    ("<built-in method nonzero of type object at 0x7f64a72cea40>", "torch.nonzero"),
    ("<built-in function len>", "len"),
    ("torch/cuda/__init__.py(1083): synchronize", "torch.cuda.synchronize"),
    ("/usr/lib/python3/site-packages/paddle/tensor/math.py(12): add", "paddle.tensor.math.add"),
])
def test_api_names(frame, api):
    assert sa.api_name(frame) == api


@pytest.mark.parametrize(("frame", "user"), [
    ("train_step.py(18): step", True),
    ("/home/dev/proj/model.py(3): forward", True),
    ("torch/nn/modules/module.py(1750): _call_impl", False),
    ("<frozen runpy>(262): run_path", False),
    ("enum.py(1230): __hash__", False),
    ("json/decoder.py(337): decode", False),
    ("/usr/lib/python3.11/site-packages/numpy/core/x.py(1): f", False),
    ("tools/syncs.py(93): target", False),
    ("<built-in method item of Tensor object at 0x1>", False),
])
def test_user_frames(frame, user):
    assert sa.is_user_frame(frame) is user


def test_user_paths_win_over_library_roots():
    assert sa.is_user_frame("tools/examples/hidden_sync.py(18): step",
                            ["/repo/tools/examples/hidden_sync.py"]) is True
    assert sa.is_user_frame("tools/examples/hidden_sync.py(18): step") is False


def test_paddle_names_are_cleaned():
    assert sa.clean_name("nonzero pybind_imperative_func[24.095 us]") == "nonzero"
    assert sa.clean_name("cudaMemcpyAsync[1.200 ms]") == "cudaMemcpyAsync"


def test_a_sync_inside_library_code_names_the_users_call_and_the_inner_api():
    def x(cat, name, ts, dur, **args):
        return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": args}

    trace = {"traceEvents": [
        x("python_function", "train.py(10): step", 0, 100),
        x("python_function", "torch/nn/modules/module.py(1750): _call_impl", 5, 90),
        x("python_function", "<built-in method item of Tensor object at 0x1>", 10, 50),
        x("cpu_op", "aten::item", 12, 45),
        x("cuda_runtime", "cudaMemcpyAsync", 15, 5, correlation=7),
        x("cuda_runtime", "cudaStreamSynchronize", 21, 30, correlation=8),
        x("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 30, 1, correlation=7, bytes=4),
    ]}
    (f,) = sa.attribute(trace)
    assert f.api == "torch.nn.modules.module._call_impl > Tensor.item" and f.where == "train.py:10 (step)"
    assert (f.calls, f.copies, f.syncs, f.nbytes, f.host_us) == (1, 1, 1, 4, 35)
