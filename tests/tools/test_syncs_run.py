"""Running a script under the profiler (CPU backends: the plumbing, not CUDA copies), and the GPU paths."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tools import sync_attribution as sa
from tools import syncs

EXAMPLES = Path(__file__).resolve().parents[2] / "tools" / "examples"


@pytest.fixture(scope="module")
def torch_cpu():
    pytest.importorskip("torch")
    from opbench.backends import get_backend

    return get_backend("torch", "cpu")


def test_example_runs_under_the_profiler_with_python_frames(torch_cpu, tmp_path):
    trace_path = tmp_path / "t.json"
    argv = sys.argv[:]
    flagged, error = syncs.run_script(torch_cpu, EXAMPLES / "hidden_sync.py", ["--steps", "2", "--size", "32"],
                                      str(trace_path), sync_debug=False)
    assert error is None and flagged is None and sys.argv == argv
    trace = json.loads(trace_path.read_text())
    assert sa.has_python_frames(trace)
    names = {e["name"] for e in trace["traceEvents"] if e.get("cat") == "python_function"}
    assert any(n.endswith("hidden_sync.py(18): step") for n in names)
    assert sa.attribute(trace, user_paths=[str(EXAMPLES / "hidden_sync.py")]) == []  # no CUDA, no copies


def test_a_failing_script_keeps_its_trace(torch_cpu, tmp_path):
    script = tmp_path / "boom.py"
    script.write_text("import torch\nx = torch.ones(3).sum()\nraise ValueError('boom at step 3')\n")
    trace_path = tmp_path / "t.json"
    flagged, error = syncs.run_script(torch_cpu, script, [], str(trace_path), sync_debug=False)
    assert error == "ValueError: boom at step 3"
    trace = json.loads(trace_path.read_text())
    assert any(e.get("name") == "aten::sum" for e in trace["traceEvents"])


@pytest.mark.parametrize(("body", "error"), [
    ("import sys\nsys.exit(0)\n", None),
    ("import sys\nsys.exit(3)\n", "RuntimeError: the script exited with status 3"),
])
def test_script_exit_status(torch_cpu, tmp_path, body, error):
    script = tmp_path / "s.py"
    script.write_text(body)
    assert syncs.run_script(torch_cpu, script, [], str(tmp_path / "t.json"), sync_debug=False)[1] == error


def test_script_sees_its_own_argv(torch_cpu, tmp_path):
    script = tmp_path / "argv.py"
    out = tmp_path / "argv.txt"
    script.write_text(f"import sys\nopen({str(out)!r}, 'w').write(' '.join(sys.argv[1:]))\n")
    syncs.run_script(torch_cpu, script, ["--a", "1"], str(tmp_path / "t.json"), sync_debug=False)
    assert out.read_text() == "--a 1"


def test_paddle_profiler_trace_loads(tmp_path):
    pytest.importorskip("paddle")
    from opbench.backends import get_backend

    b = get_backend("paddle", "cpu")
    path = tmp_path / "p.json"
    b.profile_to_chrome_trace(lambda: b.module.nonzero(b.module.ones([4]) > 0), str(path))
    events = sa.load_events(json.loads(path.read_text()))
    assert any(e.name == "nonzero" and e.cat in sa.OP_CATS for e in events)


def test_paddle_has_no_sync_debug_mode():
    pytest.importorskip("paddle")
    from opbench.backends import get_backend

    with pytest.raises(NotImplementedError, match="no sync debug mode"):
        get_backend("paddle", "cpu").sync_debug("warn")


# -- GPU paths (skipped without CUDA) -------------------------------------------------------------------
@pytest.mark.gpu
def test_gpu_syncs_finds_the_hidden_sync_and_none_when_fixed(tmp_path):
    from opbench.cli import main

    hidden, fixed = tmp_path / "h.json", tmp_path / "f.json"
    assert main(["tools", "syncs", "--json", str(hidden), str(EXAMPLES / "hidden_sync.py"), "--steps", "5"]) == 1
    assert main(["tools", "syncs", "--json", str(fixed), str(EXAMPLES / "hidden_sync_fixed.py"), "--steps", "5"]) == 0
    found = json.loads(hidden.read_text())["data"]["findings"]
    apis = " ".join(f["api"] for f in found)
    assert "item" in apis and "index" in apis
    assert all("hidden_sync.py" in f["where"] for f in found)
    assert json.loads(fixed.read_text())["data"]["findings"] == []


@pytest.mark.gpu
def test_gpu_overlap_small_results_match():
    from opbench.backends import get_backend
    from tools import overlap

    m = overlap.measure(get_backend("torch", "gpu"), layers=4, shape=(1024, 1024), dtype="float16", intensity=4,
                        streams=2, repeats=2)
    assert m["results_match"] and m["multi_ms"] > 0


@pytest.mark.gpu
def test_gpu_transfer_and_pitfalls_small(capsys):
    from opbench.cli import main

    assert main(["tools", "transfer", "--sizes", "4KiB,1MiB", "--repeats", "3"]) == 0
    out = capsys.readouterr().out
    assert "g.cpu().pin_memory()" in out and "1M GB/s" in out
    assert main(["tools", "timing-pitfalls", "--samples", "5", "--mnk", "64,256,256"]) == 0
    assert "steady state (the benchmark)" in capsys.readouterr().out
