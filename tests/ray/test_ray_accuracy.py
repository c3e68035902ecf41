"""``opbench accuracy --executor ray`` on a local 3-CPU Ray cluster: same records as a local run, crashes recorded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("torch")

from opbench.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PLUGIN_DIR = ROOT / "tests" / "accuracy"
TIMING_FIELDS = {"timings", "host", "gpu"}


@pytest.fixture(scope="module")
def cluster():
    """One local Ray cluster (3 CPUs) per module; the test plugin is importable in its workers."""
    path = os.pathsep.join([str(PLUGIN_DIR), str(ROOT)])
    sys.path.insert(0, str(PLUGIN_DIR))
    ray.init(num_cpus=3, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": path, "OPBENCH_ACCURACY_PLUGINS": "opbench_accuracy_testplugin"}})
    yield
    ray.shutdown()


def _records(path: Path) -> dict[str, dict]:
    recs = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    recs = [r for r in recs if "key" in r]
    return {r["key"]: r for r in recs}


def _strip(rec: dict) -> dict:
    return {k: v for k, v in rec.items() if k not in TIMING_FIELDS}


def _cases(tmp_path: Path, lines: list[str]) -> str:
    f = tmp_path / "cases.txt"
    f.write_text("\n".join(lines) + "\n")
    return str(f)


def test_ray_records_equal_local(cluster, tmp_path: Path) -> None:
    """The whole core suite (Paddle vs PyTorch): the same records on Ray as in a local run."""
    lines = [x for x in (ROOT / "opbench/suites/core.txt").read_text().splitlines()
             if x.strip() and not x.startswith("#")]
    cases = _cases(tmp_path, lines)
    base = ["accuracy", cases, "--device", "cpu", "--subject", "paddle", "--reference", "torch", "--seed", "7"]
    main([*base, "--workers", "0", "--out", str(tmp_path / "local.jsonl")])
    main([*base, "--executor", "ray", "--out", str(tmp_path / "ray.jsonl")])
    local, remote = _records(tmp_path / "local.jsonl"), _records(tmp_path / "ray.jsonl")
    assert set(local) == set(remote) and len(local) == len(set(lines)) >= 280
    for key in local:
        assert _strip(local[key]) == _strip(remote[key]), key
    assert all(r["host"] and r["gpu"] == "cpu" for r in remote.values())
    assert all("host" in r for r in local.values())


def test_actor_crash_recorded_and_run_goes_on(cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPBENCH_ACCURACY_PLUGINS", "opbench_accuracy_testplugin")
    lines = ['paddle.add(Tensor([4, 8],"float32"), Tensor([8],"float32"), )',
             'paddle.multiply(Tensor([4, 8],"float32"), Tensor([4, 8],"float32"), )',
             'paddle.exp(Tensor([6],"float32"), )',
             'paddle.sum(Tensor([4, 5],"float32"), axis=1, )',
             'paddle.multiply(Tensor([2, 3],"float32"), Tensor([2, 3],"float32"), )',
             'paddle.subtract(Tensor([3, 5],"float64"), Tensor([3, 5],"float64"), )']
    out = tmp_path / "crash.jsonl"
    code = main(["accuracy", _cases(tmp_path, lines), "--device", "cpu", "--subject", "test-crash",
                 "--reference", "torch", "--executor", "ray", "--ray-workers", "2", "--out", str(out)])
    recs = _records(out)
    assert len(recs) == len(lines)
    outcomes = {k: r["outcome"] for k, r in recs.items()}
    crashed = [k for k, o in outcomes.items() if o == "crash"]
    assert len(crashed) == 2 and all("multiply" in k for k in crashed)
    assert all(o == "pass" for k, o in outcomes.items() if "multiply" not in k)
    assert code == 1


def test_driver_sigkill_then_resume_loses_nothing_and_records_nothing_twice(cluster, tmp_path: Path,
                                                                               kill_when) -> None:
    lines = [f'paddle.add(Tensor([{i}, 3],"float32"), Tensor([3],"float32"), )' for i in range(1, 31)]
    out = tmp_path / "r.jsonl"
    address = ray.get_runtime_context().gcs_address
    args = [sys.executable, "-m", "opbench.cli", "accuracy", _cases(tmp_path, lines), "--device", "cpu",
            "--subject", "test-slow", "--reference", "torch", "--executor", "ray", "--ray-address", address,
            "--ray-workers", "2", "--out", str(out)]
    env = {**os.environ, "OPBENCH_ACCURACY_PLUGINS": "opbench_accuracy_testplugin",
           "PYTHONPATH": os.pathsep.join([str(PLUGIN_DIR), str(ROOT)])}
    kill_when(args, env, out, timeout=90)
    before = [json.loads(x) for x in out.read_text().splitlines()]  # whole lines only
    assert 5 <= len(before) < len(lines)
    p = subprocess.run([*args, "--resume"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    after = [json.loads(x) for x in out.read_text().splitlines()]
    keys = [r["key"] for r in after]
    assert len(keys) == len(set(keys)) == len(lines)
    assert after[: len(before)] == before


def test_per_case_timeout_progress_lines_and_host_table(cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture) -> None:
    """A hung case is recorded ``timeout`` after --timeout (actor start-up not counted) and the run goes on;
    stderr (not a terminal) has one line per case with done/total, ETA and host; the summary a per-host table."""
    import socket

    monkeypatch.setenv("OPBENCH_ACCURACY_PLUGINS", "opbench_accuracy_testplugin")
    lines = ['paddle.add(Tensor([4, 8],"float32"), Tensor([8],"float32"), )',
             'paddle.multiply(Tensor([4, 8],"float32"), Tensor([4, 8],"float32"), )',
             'paddle.exp(Tensor([6],"float32"), )']
    out = tmp_path / "hang.jsonl"
    t0 = time.monotonic()
    code = main(["accuracy", _cases(tmp_path, lines), "--device", "cpu", "--subject", "test-sleep",
                 "--reference", "torch", "--executor", "ray", "--ray-workers", "2", "--timeout", "15",
                 "--out", str(out)])
    assert time.monotonic() - t0 < 100  # the hang is 120 s
    recs = _records(out)
    outcomes = {r["config"].split("(")[0]: r["outcome"] for r in recs.values()}
    assert outcomes == {"paddle.add": "pass", "paddle.multiply": "timeout", "paddle.exp": "pass"}
    hung = next(r for r in recs.values() if r["outcome"] == "timeout")
    assert "no result after 15 s" in hung["error"] and hung["host"] == socket.gethostname()
    assert code == 1
    captured = capsys.readouterr()
    progress = [x for x in captured.err.splitlines() if x.startswith("accuracy: ")]
    assert len(progress) == 3, captured.err
    for n, line in enumerate(progress, start=1):
        assert line.startswith(f"accuracy: {n}/3 ") and " ETA " in line
        assert line.endswith(f" on {socket.gethostname()} (cpu)")
    assert any(" timeout paddle.multiply(" in x for x in progress)
    table = captured.out[captured.out.index("### Per host"):].splitlines()
    assert table[2].startswith("| host") and [c.strip() for c in table[4].strip("|").split("|")] == [
        socket.gethostname(), "cpu", "3", "1"]


def test_missing_ray_message() -> None:
    from opbench.executors import RAY_MISSING

    assert 'pip install -e ".[ray]"' in RAY_MISSING
