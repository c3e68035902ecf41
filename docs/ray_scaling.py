"""Ray scaling of ``opbench accuracy``: wall time on 1 and on 2 actors (one per GPU), records identical.

Runs the same >= 400 cases (the core suite, then the lerp suite, deduplicated) with ``--executor ray
--gpu-cache`` once with ``--ray-workers 1`` and once with ``--ray-workers 2``, for each subject/reference
pair, checks that both runs give the same records (apart from host, GPU and timings), and writes
``docs/ray_scaling.md`` with the speedup (target: >= 1.8x on 2 GPUs). ``--device cpu --cases 8`` checks
the script's logic without a GPU.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITES = ("opbench/suites/core.txt", "opbench/suites/lerp.txt")
PAIRS = (("torch-ops", "torch"), ("torch", "torch"))
VOLATILE = {"timings", "host", "gpu"}
TARGET = 1.8


def case_lines(n: int) -> list[str]:
    """The first ``n`` distinct case lines of the core and lerp suites."""
    seen: dict[str, None] = {}
    for suite in SUITES:
        for line in (ROOT / suite).read_text().splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                seen.setdefault(line.strip(), None)
    return list(seen)[:n]


def run(cases: Path, out: Path, workers: int, subject: str, reference: str, device: str) -> float:
    """One accuracy run on ``workers`` Ray actors; its wall time in seconds (Ray start-up included)."""
    cmd = [sys.executable, "-m", "opbench.cli", "accuracy", str(cases), "--device", device, "--subject", subject,
           "--reference", reference, "--executor", "ray", "--ray-workers", str(workers), "--out", str(out)]
    if device == "gpu":
        cmd.append("--gpu-cache")
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode not in (0, 1):  # 1: some case failed, still a complete run
        raise SystemExit(f"accuracy run failed ({p.returncode}): {p.stderr.strip().splitlines()[-1:]}")
    return wall


def records(path: Path) -> dict[str, dict]:
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return {r["key"]: {k: v for k, v in r.items() if k not in VOLATILE} for r in rows}


def gpu_names(path: Path) -> list[str]:
    return sorted({json.loads(x).get("gpu", "?") for x in path.read_text().splitlines() if x.strip()})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=400, help="case count (default 400)")
    ap.add_argument("--device", choices=("gpu", "cpu"), default="gpu")
    ap.add_argument("--work", default="/tmp/ray_scaling", help="folder for the cases and the JSONL outputs")
    ap.add_argument("--out", default=str(ROOT / "docs/ray_scaling.md"))
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    lines = case_lines(args.cases)
    cases = work / "cases.txt"
    cases.write_text("\n".join(lines) + "\n")
    rows, ok = [], True
    for subject, reference in PAIRS:
        walls, recs, gpus = {}, {}, {}
        warm = work / "warm.txt"  # one untimed case first: builds the extensions into their on-disk cache
        warm.write_text(lines[0] + "\n")
        (work / "warm.jsonl").unlink(missing_ok=True)
        run(warm, work / "warm.jsonl", 1, subject, reference, args.device)
        for workers in (1, 2):
            out = work / f"{subject}_vs_{reference}_{workers}.jsonl"
            out.unlink(missing_ok=True)
            walls[workers] = run(cases, out, workers, subject, reference, args.device)
            recs[workers], gpus[workers] = records(out), gpu_names(out)
        same = recs[1] == recs[2]
        speedup = walls[1] / walls[2]
        ok = ok and same and (args.device != "gpu" or speedup >= TARGET)
        rows.append(f"| {subject} vs {reference} | {len(recs[2])} | {walls[1]:.1f} | {walls[2]:.1f} | "
                    f"{speedup:.2f}x | {'yes' if same else 'NO'} | {', '.join(gpus[2])} |")
    commit = os.environ.get("OPBENCH_GIT_COMMIT") or subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip() or "?"
    text = "\n".join([
        "# `opbench accuracy --executor ray`: 1 actor vs 2",
        "",
        f"- produced by `docs/ray_scaling.py` (`bash docs/gpu_run.sh OUT ray-scaling`); device: {args.device}; "
        f"host: {platform.node()}; date: {datetime.date.today().isoformat()}; commit: {commit}",
        f"- {len(lines)} cases (core suite, then lerp suite); {'`--gpu-cache`, ' if args.device == 'gpu' else ''}"
        "wall time of the whole command, Ray start-up included, extensions already built; target on 2 GPUs: >= "
        f"{TARGET}x with identical records (host, GPU and timings aside)",
        "",
        "| pair | cases | 1 actor (s) | 2 actors (s) | speedup | identical records | GPUs used (2 actors) |",
        "|---|---|---|---|---|---|---|",
        *rows, "",
    ])
    Path(args.out).write_text(text)
    print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
