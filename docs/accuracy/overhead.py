"""Per-case overhead of the accuracy checker outside the framework calls, default vs GPU cache mode.

Runs one case (by default the seed PR's bf16 ``[1,32,1024] x [1024,32768]`` matmul) again
and again with the stage profile on (device synchronized at every stage boundary), and
reports the steady-state input generation + to-device + comparison time per case in
both modes. Targets (issue 5): GPU cache mode <= 1 ms per case and >= 10x below the
default mode. On the GPU host (no Paddle there) subject and reference are both ``torch``.

    PYTHONPATH=. python docs/accuracy/overhead.py --out docs/accuracy

writes ``overhead.md`` and ``overhead.json`` (and ``overhead_stages.png`` with matplotlib).
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
from pathlib import Path

from accuracy import stages
from accuracy.check import Checker, Settings
from opbench.backends import default_device, get_backend
from opbench.cases import parse_line

CASE = 'paddle.matmul(Tensor([1, 32, 1024],"bfloat16"), Tensor([1024, 32768],"bfloat16"), )'
OVERHEAD = ("input_generation", "to_device", "compare")
TARGET_MS, TARGET_RATIO = 1.0, 10.0


def measure(case_line: str, gpu_cache: bool, iters: int, warmup: int, subject: str, reference: str,
            device: str) -> list[dict]:
    """Records of ``iters`` checks after ``warmup`` ones (first use: cache fill, compilation)."""
    settings = Settings(subject=subject, reference=reference, device=device, profile=True,
                        gpu_cache_bytes=4 * 2**30 if gpu_cache else None)
    checker = Checker(settings)
    case = parse_line(case_line)
    recs = [checker.check(case) for _ in range(warmup + iters)]
    bad = [r for r in recs if r["outcome"] != "pass"]
    if bad:
        raise SystemExit(f"the case does not pass ({bad[0]['outcome']}): {bad[0].get('error') or bad[0].get('failed')}")
    return recs[warmup:]


def overhead_ms(rec: dict) -> float:
    return sum(rec["timings"].get(s, 0.0) for s in OVERHEAD)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="folder for overhead.md / overhead.json")
    ap.add_argument("--case", default=CASE)
    ap.add_argument("--iters", type=int, default=20, help="measured checks in GPU cache mode (default 20)")
    ap.add_argument("--default-iters", type=int, default=4, help="measured checks in the default mode (default 4)")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--subject", default="torch")
    ap.add_argument("--reference", default="torch")
    ap.add_argument("--device", default=None, help="default: gpu when available")
    args = ap.parse_args()
    device = args.device or default_device()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    modes = {"default": measure(args.case, False, args.default_iters, args.warmup, args.subject,
                                args.reference, device),
             "gpu-cache": measure(args.case, True, args.iters, args.warmup, args.subject, args.reference, device)}
    info = get_backend(args.reference.split("-")[0] if args.reference != "paddle" else "paddle", device).device_info()
    summary: dict = {"case": args.case, "device": info.name, "date": datetime.datetime.now(datetime.UTC).isoformat(
        timespec="seconds"), "subject": args.subject, "reference": args.reference, "modes": {}}
    for mode, recs in modes.items():
        per_stage = {s: statistics.median(r["timings"].get(s, 0.0) for r in recs)
                     for s in stages.STAGES if s != "parse"}
        summary["modes"][mode] = {"iters": len(recs), "compare_path": recs[-1].get("compare_path", "host"),
                                  "overhead_ms_median": statistics.median(map(overhead_ms, recs)),
                                  "overhead_ms_mean": statistics.fmean(map(overhead_ms, recs)),
                                  "stage_ms_median": per_stage}
    d, c = summary["modes"]["default"]["overhead_ms_median"], summary["modes"]["gpu-cache"]["overhead_ms_median"]
    ratio = d / c if c else float("inf")
    summary.update(ratio=ratio, meets_1ms=c <= TARGET_MS, meets_10x=ratio >= TARGET_RATIO)

    rows = ["| stage (median ms/case) | default | gpu-cache |", "|---|---:|---:|"]
    for s in summary["modes"]["default"]["stage_ms_median"]:
        rows.append(f"| {s} | {summary['modes']['default']['stage_ms_median'][s]:.3f} | "
                    f"{summary['modes']['gpu-cache']['stage_ms_median'][s]:.3f} |")
    rows.append(f"| **overhead** ({' + '.join(OVERHEAD)}) | **{d:.3f}** | **{c:.3f}** |")
    md = [
        "# Accuracy checker: per-case overhead, default vs GPU cache mode", "",
        f"- case: `{args.case}`", f"- device: {info.name}; subject `{args.subject}`, reference `{args.reference}`",
        f"- date: {summary['date']}; steady state: medians over {summary['modes']['gpu-cache']['iters']} "
        f"(gpu-cache) and {summary['modes']['default']['iters']} (default) checks after {args.warmup} warm-up ones",
        "- stage profile on: the device is synchronized at every stage boundary; comparison: "
        f"{summary['modes']['gpu-cache']['compare_path']} on the device (gpu-cache), host NumPy (default)", "",
        *rows, "",
        f"GPU cache mode: {c:.3f} ms per case (target <= {TARGET_MS:g} ms: "
        f"{'met' if summary['meets_1ms'] else 'NOT met'}); {ratio:.0f}x below the default mode "
        f"(target >= {TARGET_RATIO:g}x: {'met' if summary['meets_10x'] else 'NOT met'}).", "",
        "Reproduce: `PYTHONPATH=. python docs/accuracy/overhead.py --out docs/accuracy`", "",
    ]
    (out / "overhead.md").write_text("\n".join(md))
    (out / "overhead.json").write_text(json.dumps(summary, indent=2))
    for mode, recs in modes.items():
        for i, r in enumerate(recs):
            r["label"] = f"{mode} #{i + 1}"
    note = stages.heatmap(modes["default"] + modes["gpu-cache"], out / "overhead_stages.png", slowest=False)
    print(note)
    print(f"overhead per case: default {d:.2f} ms, gpu-cache {c:.3f} ms "
          f"({summary['modes']['gpu-cache']['compare_path']} compare), {ratio:.0f}x "
          f"(<=1 ms: {summary['meets_1ms']}, >=10x: {summary['meets_10x']}) on {info.name}")
    return 0 if summary["meets_1ms"] and summary["meets_10x"] else 1


if __name__ == "__main__":
    sys.exit(main())
