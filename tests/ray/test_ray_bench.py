"""``opbench bench --executor ray`` on a local 3-CPU Ray cluster: the same set of records as a local run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("torch")

from opbench.cli import main  # noqa: E402

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


def test_bench_ray_gives_the_same_records_as_local(cluster, tmp_path: Path) -> None:
    base = ["bench", *CASES, "--device", "cpu", "--providers", "torch", "--budget", "20", "--warmup", "5",
            "--directions", "fwd,bwd", "--rounds", "2", "--no-progress"]
    assert main([*base, "--json", str(tmp_path / "local.json")]) == 0
    assert main([*base, "--executor", "ray", "--json", str(tmp_path / "ray.json")]) == 0
    local, remote = _records(tmp_path / "local.json"), _records(tmp_path / "ray.json")
    assert set(local) == set(remote) and len(local) == len(CASES) * 2
    assert all(r["status"] == "ok" and r["gpu"] == "cpu" and r["host"] for r in remote.values())
    assert all(len(r["round_medians"]) == 2 for r in remote.values())
    assert all(local[k]["status"] == remote[k]["status"] for k in local)
    workers = json.loads((tmp_path / "ray.json").read_text())["env"]["workers"]
    assert workers and all(k.endswith("/cpu") and "python" in v for k, v in workers.items())
