"""docs/op_benchmark/compare_validation.py on synthetic A/A runs: each pair alone and with the next pair in the
other order (compare --again) finds no false alarm, passes the gate, and calls a planted 1.5x slowdown in every
row."""

import subprocess
import sys
from pathlib import Path

import numpy as np

from op_benchmark.results import BenchResult, Record, write_json
from op_benchmark.stats import Measurement

ROOT = Path(__file__).resolve().parents[2]


def run_file(path: Path, seed: int) -> str:
    rng = np.random.default_rng(seed)
    records = []
    for i, median in enumerate(np.geomspace(5, 500, 24)):
        r = Record(case=f"c{i}", api="paddle.x", provider="torch", direction="fwd", device="gpu", method="events",
                   status="ok")
        passes = [rng.normal(median, median * 0.005, 60) for _ in range(3)]
        r.set_measurement(Measurement.of([float(x) for p in passes for x in p]))
        r.round_medians = [float(np.median(p)) for p in passes]
        records.append(r)
    write_json(BenchResult(env={}, config={"rounds": 3}, records=records), path)
    return str(path)


def test_both_orders_section(tmp_path):
    runs = [run_file(tmp_path / f"aa_run{i}.json", i) for i in range(1, 7)]
    out = tmp_path / "v.md"
    r = subprocess.run([sys.executable, "docs/op_benchmark/compare_validation.py", *runs, "--out", str(out)],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    section = text.split("## Both orders")[1]
    rows = [line for line in section.splitlines() if line.startswith("| aa_run")]
    assert [row.split("|")[1].strip() for row in rows] == [
        "aa_run1.json / aa_run2.json again aa_run4.json / aa_run3.json",
        "aa_run3.json / aa_run4.json again aa_run6.json / aa_run5.json",
        "aa_run5.json / aa_run6.json again aa_run2.json / aa_run1.json"]
    for row in rows:
        cells = [c.strip() for c in row.split("|")[1:-1]]
        assert cells[1:4] == ["24", "0", "exit 0"] and cells[5] == "24 of 24", row
