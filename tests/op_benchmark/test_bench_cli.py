"""End to end on the CPU: bench (paddle and torch, tiny budget) -> JSON/markdown/CSV -> compare -> report."""

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("paddle")

from opbench.cli import main  # noqa: E402

CASES = ['paddle.lerp(Tensor([16, 64],"float32"), Tensor([16, 64],"float32"), 0.5)',
         'paddle.nn.functional.relu(Tensor([32, 32],"float32"))',
         'paddle.not_an_api(Tensor([4],"float32"))']


@pytest.fixture(scope="module")
def bench_json(tmp_path_factory):
    d = tmp_path_factory.mktemp("bench")
    rc = main(["bench", *CASES, "--device", "cpu", "--providers", "paddle,torch", "--budget", "60",
               "--warmup", "10", "--directions", "fwd,bwd,fwd+bwd", "--json", str(d / "r.json"),
               "--markdown", str(d / "r.md"),
               "--csv", str(d / "r.csv"), "--no-progress"])
    return rc, d


def test_bench_writes_every_record(bench_json):
    rc, d = bench_json
    assert rc == 0
    data = json.loads((d / "r.json").read_text())
    assert data["env"]["device"] == "cpu" and "frameworks" in data["env"]
    recs = data["records"]
    assert len(recs) == 3 * 2 * 3  # cases x providers x directions
    status = {(r["case"].split("(")[0], r["provider"], r["direction"]): r["status"] for r in recs}
    assert status[("paddle.lerp", "paddle", "bwd")] == "ok"
    assert status[("paddle.nn.functional.relu", "torch", "fwd+bwd")] == "ok"
    assert status[("paddle.not_an_api", "paddle", "fwd")] == "not_applicable"
    assert all(r["samples"] >= 10 for r in recs if r["status"] == "ok")
    md = (d / "r.md").read_text()
    assert md.count("### ") == 3 and "torch vs paddle" in md
    assert (d / "r.csv").read_text().count("\n") == 1 + len(recs)


def test_compare_same_file_passes_and_slower_file_fails(bench_json, tmp_path, capsys):
    _, d = bench_json
    assert main(["compare", str(d / "r.json"), str(d / "r.json")]) == 0
    out = capsys.readouterr().out
    # identical samples: ratio 1 exactly; noisy CPU samples may leave the CI wider than +-2% (AMBIGUOUS)
    assert "SLOWER" not in out and "FASTER" not in out and "| 1.000 " in out
    # A planted 4x slowdown: the fixture's 20 ms passes on a busy 2-core CPU can differ by tens of percent,
    # which compare counts as drift (a row once showed +-150% detectable), so a 1.5x one was sometimes SAME.
    factor = 4.0
    data = json.loads((d / "r.json").read_text())
    for r in data["records"]:
        if r["status"] == "ok":
            r["samples_us"] = [s * factor for s in r["samples_us"]]
            r["median_us"] *= factor
            r["round_medians"] = [m * factor for m in r["round_medians"] or []] or None
    slow = tmp_path / "slow.json"
    slow.write_text(json.dumps(data))
    assert main(["compare", str(d / "r.json"), str(slow), "--markdown", str(tmp_path / "c.md")]) == 1
    assert "SLOWER" in (tmp_path / "c.md").read_text()
    assert main(["compare", str(d / "r.json"), str(slow), "--fail-on-slower", "400"]) == 0


def test_report(bench_json, tmp_path, capsys):
    _, d = bench_json
    assert main(["report", str(d / "r.json"), "--png", str(tmp_path / "r.png")]) == 0
    out = capsys.readouterr()
    assert "torch vs paddle" in out.out and "geomean" in out.out
    assert (tmp_path / "r.png").exists() or "matplotlib is not installed" in out.err


@pytest.mark.parametrize("argv", [["bench", CASES[0], "--providers", "tensorflow", "--device", "cpu"],
                                  ["bench", CASES[0], "--directions", "sideways", "--device", "cpu"],
                                  ["bench", CASES[0], "--method", "kernel", "--device", "cpu"],
                                  ["bench", "no_such_suite", "--device", "cpu"],
                                  ["bench", CASES[0], "--threads", "0", "--device", "cpu"],
                                  ["compare", "missing1.json", "missing2.json"]])
def test_usage_errors_exit_2(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("opbench ")


def test_malformed_line_is_reported_and_others_still_run(tmp_path, capsys):
    f = tmp_path / "cases.txt"
    f.write_text(CASES[1] + "\npaddle.add(Tensor([2],\"float32\"\n")
    rc = main(["bench", str(f), "--device", "cpu", "--providers", "torch", "--directions", "fwd",
               "--budget", "2", "--warmup", "0", "--no-progress"])
    out = capsys.readouterr()
    assert rc == 2 and "cases.txt:2" in out.err and "relu" in out.out


def test_threads_set_every_framework_alike(tmp_path):
    """--threads N: each framework's CPU ops (and ours, which follow them) run on N threads, recorded in the run."""
    import paddle
    import torch

    before = torch.get_num_threads()
    try:
        assert main(["bench", CASES[0], "--device", "cpu", "--providers", "paddle,torch", "--threads", "1",
                     "--budget", "20", "--warmup", "5", "--rounds", "1", "--json", str(tmp_path / "r.json"),
                     "--no-progress"]) == 0
        assert torch.get_num_threads() == 1
        data = json.loads((tmp_path / "r.json").read_text())
        assert data["env"]["cpu"]["threads"] == 1 and data["config"]["cpu_threads"] == 1
    finally:
        torch.set_num_threads(before)
        paddle.base.core.set_num_threads(1)
