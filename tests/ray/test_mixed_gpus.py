"""``opbench compare`` / ``opbench report`` refuse results of different GPU models unless --allow-mixed-gpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from op_benchmark.results import BenchResult, Record, check_one_gpu_model, write_json
from opbench.cli import main


def _result(path: Path, gpu: str | None, workers: dict | None = None) -> str:
    env = {"gpu": {"name": gpu}} if gpu else {}
    if workers:
        env["workers"] = workers
    rec = Record(case="c", api="paddle.x", provider="torch", direction="fwd", device="gpu", method="events",
                 median_us=10.0, samples=3, samples_us=[10.0, 10.0, 10.0])
    write_json(BenchResult(env, {}, [rec]), path)
    return str(path)


def test_compare_refuses_two_gpu_models(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    a = _result(tmp_path / "a.json", "NVIDIA H100 80GB HBM3")
    b = _result(tmp_path / "b.json", "NVIDIA H200")
    assert main(["compare", a, b]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--allow-mixed-gpus" in err[0] and "H200" in err[0]
    assert main(["compare", a, b, "--allow-mixed-gpus"]) == 0


def test_report_refuses_workers_of_two_gpu_models(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    workers = {"h1/0": {"gpu": {"name": "NVIDIA H100"}}, "h2/0": {"gpu": {"name": "NVIDIA A100"}}}
    r = _result(tmp_path / "r.json", None, workers)
    assert main(["report", r]) == 2
    assert "A100" in capsys.readouterr().err


def test_same_model_and_cpu_results_pass(tmp_path: Path) -> None:
    a = BenchResult({"gpu": {"name": "NVIDIA H100"}}, {}, [])
    b = BenchResult({"workers": {"h/0": {"gpu": {"name": "NVIDIA H100"}}}}, {}, [])
    check_one_gpu_model({"a": a, "b": b})
    check_one_gpu_model({"cpu": BenchResult({}, {}, []), "a": a})
