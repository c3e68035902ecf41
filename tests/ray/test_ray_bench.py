"""``opbench bench --executor ray`` on a local 3-CPU Ray cluster: the same set of records as a local run, progress
lines with the host, a per-host table, one environment block per host/GPU, and ``--resume`` after a SIGKILL."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("torch")

from opbench.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CASES = ['paddle.lerp(Tensor([16, 64],"float32"), Tensor([16, 64],"float32"), 0.5)',
         'paddle.nn.functional.relu(Tensor([32, 32],"float32"))',
         'paddle.exp(Tensor([64],"float32"))',
         'paddle.add(Tensor([8, 8],"float32"), Tensor([8],"float32"))']


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=3, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _records(path: Path) -> dict[tuple, dict]:
    return {(r["case"], r["provider"], r["direction"]): r for r in json.loads(path.read_text())["records"]}


def test_bench_ray_gives_the_same_records_as_local(cluster, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    base = ["bench", *CASES, "--device", "cpu", "--providers", "torch", "--budget", "20", "--warmup", "5",
            "--directions", "fwd,bwd", "--rounds", "2"]
    assert main([*base, "--no-progress", "--json", str(tmp_path / "local.json")]) == 0
    capsys.readouterr()
    assert main([*base, "--executor", "ray", "--json", str(tmp_path / "ray.json")]) == 0
    local, remote = _records(tmp_path / "local.json"), _records(tmp_path / "ray.json")
    assert set(local) == set(remote) and len(local) == len(CASES) * 2
    assert all(r["status"] == "ok" and r["gpu"] == "cpu" and r["host"] for r in remote.values())
    assert all(len(r["round_medians"]) == 2 for r in remote.values())
    assert all(local[k]["status"] == remote[k]["status"] for k in local)
    # the environment block of each host/GPU once per run, however many actors and passes
    workers = json.loads((tmp_path / "ray.json").read_text())["env"]["workers"]
    assert list(workers) == [f"{socket.gethostname()}/cpu"] and "python" in workers[f"{socket.gethostname()}/cpu"]
    journal = (tmp_path / "ray.json.cases.jsonl").read_text().splitlines()
    assert sum('"workers"' in x[:12] for x in journal) == 1
    # stderr is not a terminal: one line per finished case and pass, with done/total, ETA and host
    captured = capsys.readouterr()
    lines = [x for x in captured.err.splitlines() if x.startswith("round ")]
    assert len(lines) == len(CASES) * 2, captured.err
    for k in (1, 2):
        mine = [x for x in lines if x.startswith(f"round {k}/2: ")]
        assert [x.split()[2] for x in mine] == [f"{n}/{len(CASES)}" for n in range(1, len(CASES) + 1)]
        assert all(" ETA " in x and x.endswith(f" on {socket.gethostname()} (cpu)") for x in mine)
    table = captured.out[captured.out.index("### Per host"):].splitlines()
    assert [c.strip() for c in table[4].strip("|").split("|")] == [socket.gethostname(), "cpu",
                                                                   str(len(CASES) * 2), "0"]


def _slow_cases(n: int) -> list[str]:
    return [f'paddle.exp(Tensor([{i}, 16],"float32"), )' for i in range(1, n + 1)]


def _journaled_cases(journal: Path) -> list[dict]:
    """The journal's finished cases: its whole lines alone, as --resume reads them (a SIGKILL mid-write leaves a
    last line without its newline, which resume cuts off)."""
    text = journal.read_text()
    return [json.loads(x) for x in text[:text.rfind("\n") + 1].splitlines()[1:] if '"round"' in x[:10]]


@pytest.mark.parametrize("executor", ["local", "ray"])
def test_bench_sigkill_then_resume_keeps_finished_cases(cluster, tmp_path: Path, executor: str, kill_when) -> None:
    """A bench killed with SIGKILL and rerun with --resume keeps every case it finished and repeats none."""
    cases = _slow_cases(10)
    out = tmp_path / "b.json"
    journal = tmp_path / "b.json.cases.jsonl"
    args = [sys.executable, "-m", "opbench.cli", "bench", *cases, "--device", "cpu", "--providers", "torch",
            "--directions", "fwd", "--rounds", "1", "--budget", "400", "--noise", "0", "--warmup", "5",
            "--no-progress", "--json", str(out)]
    if executor == "ray":
        args += ["--executor", "ray", "--ray-address", ray.get_runtime_context().gcs_address, "--ray-workers", "2"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    kill_when(args, env, journal, marker=b'"round"', count=3)
    before = _journaled_cases(journal)
    assert 3 <= len(before) < len(cases)
    p = subprocess.run([*args, "--resume"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stderr[-2000:]
    assert f"resume: {len(before)} case runs already in" in p.stderr
    after = _journaled_cases(journal)
    assert sorted(x["case"] for x in after) == sorted(cases)  # each case journaled once
    result = json.loads(out.read_text())
    assert not result["interrupted"]
    keys = [(r["case"], r["provider"], r["direction"]) for r in result["records"]]
    assert len(keys) == len(set(keys)) == len(cases)
    assert [r["case"] for r in result["records"]] == cases  # case order, as a run in one go
    by_case = {r["case"]: r for r in result["records"]}
    for x in before:  # finished before the kill: kept as measured, not measured again
        assert by_case[x["case"]]["samples_us"] == x["records"][0]["samples_us"]


def test_bench_resume_refuses_other_options_and_needs_json(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    base = ["bench", CASES[2], "--device", "cpu", "--providers", "torch", "--directions", "fwd", "--budget", "5",
            "--rounds", "1", "--no-progress"]
    assert main([*base, "--resume"]) == 2
    assert "--resume needs --json" in capsys.readouterr().err
    assert main([*base, "--json", str(tmp_path / "r.json")]) == 0
    assert main([*base, "--json", str(tmp_path / "r.json"), "--resume"]) == 0  # all done: nothing measured
    assert "resume: 1 case runs already in" in capsys.readouterr().err
    assert main([*base, "--seed", "3", "--json", str(tmp_path / "r.json"), "--resume"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "other options" in err[0]
