"""docs/gpu_run.sh's ab step (one build of the ops against another) on the CPU: the two trees are built side by
side, the same cases timed in each (and again in the other order), and opbench compare's table written; a missing
base is a one-line error. Also the script itself: an unknown step is a one-line error before any step runs, and
PACK=1 leaves one tarball of the outputs."""
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CASE = 'paddle.nn.functional.rms_norm(Tensor([16, 256],"float32"), [256], Tensor([256],"float32"), 1e-06, )'


def run_steps(out: Path, *steps: str, **env: str) -> subprocess.CompletedProcess:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # the script's `python` is ours
    return subprocess.run(["bash", "docs/gpu_run.sh", str(out), *steps], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PATH": path, **env}, timeout=1200)


def run_ab(out: Path, **env: str) -> subprocess.CompletedProcess:
    return run_steps(out, "ab", **env)


def test_unknown_step_fails_in_one_line_before_any_runs(tmp_path):
    r = run_steps(tmp_path / "out", "ab", "bogus", AB_DEVICE="cpu")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpu_run.sh: no step 'bogus' (steps: ab ")
    assert " tests " in lines[0] and " paddle-check " in lines[0]
    assert not (tmp_path / "out" / "ab.log").exists()  # ab, named first, did not run


def test_pack_leaves_one_tarball(tmp_path):
    r = run_steps(tmp_path / "out", "ab", PACK="1", AB_ORDERS="3", AB_DEVICE="cpu")
    assert r.returncode == 1  # the step failed (a bad AB_ORDERS), and its log is packed all the same
    assert not (tmp_path / "out").exists()
    with tarfile.open(tmp_path / "out.tgz") as t:
        assert {"out/env.log", "out/ab.log", "out/steps.log"} <= set(t.getnames())
        log = t.extractfile("out/ab.log")
        assert log is not None and log.read().decode().strip() == "ab: AB_ORDERS must be 1 or 2, not '3'"


def test_ab_without_a_base_fails_in_one_line(tmp_path):
    r = run_ab(tmp_path / "out", AB_BASE=str(tmp_path / "none.tgz"), AB_DEVICE="cpu")
    assert r.returncode == 1
    assert "ab: FAILED" in (tmp_path / "out" / "steps.log").read_text()
    assert (tmp_path / "out" / "ab.log").read_text().strip() == f"ab: no base tarball {tmp_path / 'none.tgz'} " \
        f"(git archive REV | gzip >{tmp_path / 'none.tgz'})"


def test_ab_with_a_bad_order_count_fails_in_one_line(tmp_path):
    r = run_ab(tmp_path / "out", AB_ORDERS="3", AB_DEVICE="cpu")
    assert r.returncode == 1
    assert (tmp_path / "out" / "ab.log").read_text().strip() == "ab: AB_ORDERS must be 1 or 2, not '3'"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs a git checkout")
def test_ab_builds_both_trees_and_compares(tmp_path):
    tgz = tmp_path / "base.tgz"
    with open(tgz, "wb") as f:  # the base: this checkout's HEAD
        archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True, check=True).stdout
        f.write(subprocess.run(["gzip"], input=archive, capture_output=True, check=True).stdout)
    cases = tmp_path / "cases.txt"
    cases.write_text(CASE + "\n")
    out = tmp_path / "out"
    r = run_ab(out, AB_BASE=str(tgz), AB_DEVICE="cpu", AB_CASES=str(cases), AB_WORK=str(tmp_path / "work"),
               BUILD_EXT="norm", AB_ORDERS="2")
    assert r.returncode == 0, (out / "ab.log").read_text()
    for run in ("base", "new", "new2", "base2"):  # AB_ORDERS=2: timed again, new first
        records = json.loads((out / f"ab_{run}.json").read_text())["records"]
        assert {(x["provider"], x["direction"], x["status"]) for x in records} == {
            ("torch-ops", "fwd", "ok"), ("torch-ops", "bwd", "ok")}
    table = (out / "ab_compare.md").read_text()
    assert "Per API, provider and direction:" in table and "`paddle.nn.functional.rms_norm`" in table
    assert (tmp_path / "work" / "base" / "docs" / "gpu_run.sh").exists()  # the base tree was unpacked there
    # AB_DIRECTIONS narrows the timing (the builds are cached in AB_WORK from the run above)
    out1 = tmp_path / "out_bwd"
    r = run_ab(out1, AB_BASE=str(tgz), AB_DEVICE="cpu", AB_CASES=str(cases), AB_WORK=str(tmp_path / "work"),
               BUILD_EXT="norm", AB_DIRECTIONS="bwd")
    assert r.returncode == 0, (out1 / "ab.log").read_text()
    for run in ("base", "new"):
        records = json.loads((out1 / f"ab_{run}.json").read_text())["records"]
        assert {(x["provider"], x["direction"], x["status"]) for x in records} == {("torch-ops", "bwd", "ok")}
    assert not (out1 / "ab_new2.json").exists()
