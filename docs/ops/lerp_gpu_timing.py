"""Time our lerp against torch.lerp (eager and torch.compile) on a CUDA GPU.

How the figures in lerp-design.md were taken: CUDA events around each call, a 256 MiB
buffer zeroed before every sample (cold L2), median of BENCH_N samples (default 50).
Run from the repository root on the GPU host:

    PYTHONPATH=. python docs/ops/lerp_gpu_timing.py            # all cases
    BENCH_CASES=0,4 BENCH_COMPILE=0 PYTHONPATH=. python docs/ops/lerp_gpu_timing.py

Columns: fwd (no grad); bwd_kernel = our lerp_backward op called directly; bwd = through
autograd (torch.autograd.grad on a retained graph), x and y grads; GB/s counts only the
bytes that must move (each input read once, each output written once).
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable
from typing import Any

import torch

from ops import lerp

N = int(os.environ.get("BENCH_N", "50"))
CASES: list[tuple[str, list[int], list[int], Any, torch.dtype]] = [
    ("x,y[16,102400] f32 w0.2", [16, 102400], [16, 102400], 0.2, torch.float32),
    ("x,y[16,204800] f64 w0.2", [16, 204800], [16, 204800], 0.2, torch.float64),
    ("x[16,1,1,1] y[16,3,224,224] w[3,1,224] f32", [16, 1, 1, 1], [16, 3, 224, 224], [3, 1, 224],
     torch.float32),
    ("x[16,1,1,1] y[16,3,224,224] w0.5 f32", [16, 1, 1, 1], [16, 3, 224, 224], 0.5, torch.float32),
    ("x,y[8192,8192] bf16 w0.3", [8192, 8192], [8192, 8192], 0.3, torch.bfloat16),
    ("x,y,w[8192,8192] f32", [8192, 8192], [8192, 8192], [8192, 8192], torch.float32),
    ("x[64,1,128,256] y[64,32,1,256] f16 w0.3", [64, 1, 128, 256], [64, 32, 1, 256], 0.3, torch.float16),
]


def timeit(fn: Callable[[], Any], flush: torch.Tensor, n: int = N) -> float:
    """Median microseconds of fn with a cold L2 (flush zeroed before each sample)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e) * 1000)
    ts.sort()
    return ts[len(ts) // 2]


def run_case(name: str, xs: list[int], ys: list[int], w: Any, dt: torch.dtype, flush: torch.Tensor,
             compile_too: bool) -> dict[str, Any]:
    """All timings of one case."""
    ops_ns = torch.ops.opbench_lerp
    x = torch.randn(xs, device="cuda", dtype=dt, requires_grad=True)
    y = torch.randn(ys, device="cuda", dtype=dt, requires_grad=True)
    wt = w if isinstance(w, float) else torch.rand(w, device="cuda", dtype=dt)
    w_t = None if isinstance(wt, float) else wt
    sw = float(wt) if w_t is None else 0.0
    out_shape = torch.broadcast_shapes(x.shape, y.shape, *([] if w_t is None else [w_t.shape]))
    g = torch.randn(out_shape, device="cuda", dtype=dt)
    es = x.element_size()
    wbytes = 0 if w_t is None else w_t.numel() * es
    moved = (x.numel() + y.numel() + g.numel()) * es + wbytes  # same for fwd and bwd
    r: dict[str, Any] = {"case": name}
    with torch.no_grad():
        r["ours_fwd"] = timeit(lambda: lerp(x, y, wt), flush)
        r["eager_fwd"] = timeit(lambda: torch.lerp(x, y, wt), flush)
    r["ours_bwd_kernel"] = timeit(lambda: ops_ns.lerp_backward(g, x, y, w_t, sw, True, True, False), flush)
    o1, o2 = lerp(x, y, wt), torch.lerp(x, y, wt)
    r["ours_bwd"] = timeit(lambda: torch.autograd.grad(o1, (x, y), g, retain_graph=True), flush)
    r["eager_bwd"] = timeit(lambda: torch.autograd.grad(o2, (x, y), g, retain_graph=True), flush)
    if compile_too:
        cf = torch.compile(torch.lerp, dynamic=False)
        with torch.no_grad():
            r["compiled_fwd"] = timeit(lambda: cf(x, y, wt), flush)
        o3 = cf(x, y, wt)
        r["compiled_bwd"] = timeit(lambda: torch.autograd.grad(o3, (x, y), g, retain_graph=True), flush)
        torch._dynamo.reset()
    r["fwd_GBps"] = moved / (r["ours_fwd"] * 1e-6) / 1e9
    r["bwd_kernel_GBps"] = moved / (r["ours_bwd_kernel"] * 1e-6) / 1e9
    return r


def main() -> None:
    """Time the selected cases and print a table (JSON to $OUT/bench.json when OUT is set)."""
    importlib.import_module("ops.lerp")._torch_setup()
    flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")
    a = torch.empty(512 * 1024 * 1024 // 4, device="cuda")
    b = torch.empty_like(a)
    t_copy = timeit(lambda: b.copy_(a), flush, 20)
    print(f"{torch.cuda.get_device_name()}: copy 512 MB {t_copy:.1f} us = "
          f"{2 * a.numel() * 4 / (t_copy * 1e-6) / 1e12:.2f} TB/s")
    which = os.environ.get("BENCH_CASES")
    compile_too = os.environ.get("BENCH_COMPILE", "1") == "1"
    rows = []
    for i, (name, xs, ys, w, dt) in enumerate(CASES):
        if which and str(i) not in which.split(","):
            continue
        rows.append(run_case(name, xs, ys, w, dt, flush, compile_too))
        torch.cuda.empty_cache()
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "bench.json"), "w") as fh:
            json.dump(rows, fh, indent=1)
    keys = ["ours_fwd", "eager_fwd", "compiled_fwd", "ours_bwd_kernel", "ours_bwd", "eager_bwd", "compiled_bwd"]
    print(f"{'case':45s} " + " ".join(f"{k:>15s}" for k in keys) + "   fGB/s   bGB/s")
    for r in rows:
        cells = " ".join(f"{r[k]:15.1f}" if k in r else f"{'n/a':>15s}" for k in keys)
        print(f"{r['case'][:45]:45s} {cells} {r['fwd_GBps']:7.0f} {r['bwd_kernel_GBps']:7.0f}")


if __name__ == "__main__":
    main()
