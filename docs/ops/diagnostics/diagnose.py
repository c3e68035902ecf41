"""Diagnostics behind lerp-design.md and norms-design.md, on a CUDA host with the torch extension built.

    python docs/ops/diagnostics/diagnose.py ncu-target 'CASE|PROVIDER|DIRECTION' ...
    python docs/ops/diagnostics/diagnose.py timeline [--providers P,...] [--directions D,...] CASE ...
    python docs/ops/diagnostics/diagnose.py inductor
    python docs/ops/diagnostics/diagnose.py sass [PATTERN ...]
    python docs/ops/diagnostics/diagnose.py fwd-shapes OUTDIR [SUITE ...]
    python docs/ops/diagnostics/diagnose.py bwd-shapes OUTDIR [SUITE ...]

``ncu-target`` runs each spec once inside an NVTX range ``measure`` (for ``ncu --nvtx-include``; forward
kernels only: autograd launches backward kernels from its own thread, outside the range) and between
``cudaProfilerStart``/``Stop``, which hold for every thread (for ``ncu --profile-from-start off``: backward
kernels too). ``timeline`` prints, for one flushed and padded sample per provider and direction, when each
kernel starts after the last flush (default: torch, torch-compile and torch-ops; fwd and bwd).
``inductor`` prints the code ``torch.compile`` generates for lerp's training graph with a full-size weight
(what its forward saves for backward, hence what its backward reads). ``sass`` counts the SASS instructions
of every kernel of the built extension whose name contains a pattern (default: fwd_nd fwd_bcast).
``fwd-shapes`` times the norm forward (torch-ops, events, L2 flushed) of every case of the suites (default:
the norm sweeps and named suites) whose rows fit a block, once as the path choice takes it and once per
block shape of norm_tables.cuh's forward table (threads a row x packs a thread) that holds the row at no
more than 8 times its packs (rows of its element size, for a shape the table holds for one), forced by
NORM_FWD_TPR/NORM_FWD_VECS: one bench process per shape, JSON under
OUTDIR, then a row per case (us) on stdout. ``bwd-shapes`` does the same for the backward (rows of up to a
512 x 4 block, shapes of the backward table at no more than 4 times the row's packs, NORM_BWD_TPR/NORM_BWD_VECS),
the shapes the fits take only for some grids, or none, included.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
from typing import Any

from op_benchmark import directions


def timed(line: str, provider: str, direction: str, seed: int = 0) -> tuple[Any, directions.TimedCall]:
    """The prepared call and the timed callable the benchmark would time for this case."""
    from opbench import inputs
    from opbench.cases import parse_line
    from opbench.providers import get_provider

    case = parse_line(line)
    call = get_provider(provider, "gpu").prepare(case, seed, values=inputs.generate(case, seed),
                                                 requires_grad=direction != "fwd")
    return call, directions.build(call, direction, seed)


def ncu_target(specs: list[str]) -> None:
    import torch

    for spec in specs:
        line, provider, direction = spec.split("|")
        call, t = timed(line, provider, direction)
        for _ in range(3):
            t.fn()
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        torch.cuda.nvtx.range_push("measure")
        t.fn()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        torch.cuda.profiler.stop()
        print("ran", provider, direction, line, flush=True)
        del call, t


def timeline(args: list[str]) -> None:
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    from op_benchmark.timers import EventTimer

    opts = {"--providers": "torch,torch-compile,torch-ops", "--directions": "fwd,bwd"}
    while args and args[0] in opts:
        opts[args[0]], args = args[1], args[2:]
    for line in args:
        for direction in opts["--directions"].split(","):
            for provider in opts["--providers"].split(","):
                call, t = timed(line, provider, direction)
                b = call.backend
                for _ in range(5):
                    t.fn()
                pads = 1 + EventTimer(b).pad_flushes(t.fn)
                b.synchronize()
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    for _ in range(pads):
                        b.flush_l2()
                    t.fn()
                    b.synchronize()
                ev = sorted((e for e in prof.profiler.kineto_results.events() if e.device_type() == DeviceType.CUDA),
                            key=lambda e: e.start_ns())
                # The first `pads` kernels are the flushes (a fill each); the call's own kernels may fill too.
                last = min(pads, len(ev)) - 1
                print(f"== {provider} {direction} {line} (pad flushes: {pads})")
                for e in ev[last + 1:]:
                    print(f"   start +{(e.start_ns() - ev[last].end_ns()) / 1e3:7.2f} us"
                          f"  dur {e.duration_ns() / 1e3:7.2f} us  {e.name()[:80]}")
                del call, t


def inductor(_: list[str]) -> None:
    import torch
    from torch._inductor.utils import run_and_get_code

    x, y, w = (torch.rand(8192, 8192, device="cuda", requires_grad=True) for _ in range(3))
    f = torch.compile(lambda a, b, c: torch.lerp(a, b, c), dynamic=False)

    def step() -> Any:
        out = f(x, y, w)
        return torch.autograd.grad(out, (x, y, w), torch.ones_like(out))

    for code in run_and_get_code(step)[1]:
        print("=" * 100)
        print(code)


def sass(patterns: list[str]) -> None:
    from ops.build import cache_root

    pats = patterns or ["fwd_nd", "fwd_bcast"]
    if shutil.which("cuobjdump") is None:
        sys.exit("cuobjdump not found: it comes with the CUDA toolkit (run this on the GPU host)")
    libs = sorted(glob.glob(os.path.join(str(cache_root()), "torch-*", "*lerp*.so")), key=os.path.getmtime)
    if not libs:
        sys.exit(f"no built torch lerp extension under {cache_root()}: run `opbench ops build` first")
    text = subprocess.run(["cuobjdump", "-sass", libs[-1]], capture_output=True, text=True, check=True).stdout
    counts: dict[str, int] = {}
    name = None
    for line in text.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            name = m.group(1)
            counts[name] = 0
        elif name and re.match(r"\s+/\*[0-9a-f]{4}\*/", line):
            counts[name] += 1
    for name, n in sorted(counts.items()):
        if any(p in name for p in pats):
            print(n, re.sub(r"^_ZN9lerp_core3gpu\d+", "", name))


# The non-cluster shapes (threads a row, packs a thread) of kFwdConfigs and kBwdConfigs that fwd-shapes and
# bwd-shapes force, and the most packs a block's shape holds (longer rows take clusters).
FWD_SHAPES = [(32, 1), (32, 2), (32, 4), (128, 1), (128, 2), (128, 4), (160, 4), (256, 1), (256, 4), (384, 4),
              (512, 1), (512, 4), (384, 8), (512, 8), (512, 2)]
# Shapes one element size's rows only can take (the forward's RegConfig::v, the backward's two tables), by
# direction: forced on other rows they are not taken, so those rows are not timed under them.
SHAPE_ELEMENT_BYTES = {("fwd", 384, 8): 4, ("bwd", 160, 4): 2}
BWD_SHAPES = [(32, 1), (32, 2), (32, 4), (128, 4), (160, 4), (256, 4), (384, 4), (512, 4), (128, 2), (256, 2),
              (512, 2)]
BLOCK_PACKS = {"fwd": 4096, "bwd": 2048}
# A shape is timed on rows that fill more than 1/SPARE[direction] of its pack slots.
SPARE = {"fwd": 8, "bwd": 4}


def shapes(direction: str, shape_list: list[tuple[int, int]], args: list[str]) -> None:
    """Times the norm `direction` of every case of the suites whose rows fit a block, as the path choice takes
    it and under each block shape that holds the row (NORM_<FWD|BWD>_TPR / _VECS), one bench process a shape;
    prints a row per case (us)."""
    import json

    from opbench.cases import resolve

    out, suites = args[0], args[1:] or ["rms_norm-sweep", "layer_norm-sweep", "rms_norm", "layer_norm"]
    os.makedirs(out, exist_ok=True)
    cases: dict[str, tuple[int, int]] = {}  # line -> (packs of 16 bytes a row, bytes an element)
    for case in resolve(suites, None, device="gpu").cases:
        x = case.args[0]
        size = 4 if x.dtype == "float32" else 2
        packs = -(-x.shape[-1] * size // 16)
        if packs <= BLOCK_PACKS[direction]:
            cases.setdefault(case.to_line(), (packs, size))
    knob = direction.upper()
    runs = [("default", {}, list(cases))]
    for t, v in shape_list:
        only = SHAPE_ELEMENT_BYTES.get((direction, t, v))
        sel = [line for line, (packs, size) in cases.items()
               if packs <= t * v < SPARE[direction] * packs and only in (None, size)]
        if sel:
            runs.append((f"{t}x{v}", {f"NORM_{knob}_TPR": str(t), f"NORM_{knob}_VECS": str(v)}, sel))
    times: dict[str, dict[str, float]] = {line: {} for line in cases}
    for name, env, sel in runs:
        path = os.path.join(out, f"{direction}_{name}")
        with open(path + ".txt", "w") as f:
            f.write("\n".join(sel) + "\n")
        subprocess.run([sys.executable, "-m", "opbench", "bench", path + ".txt", "--providers", "torch-ops",
                        "--directions", direction, "--method", "events", "--budget", "40", "--warmup", "10",
                        "--no-progress", "--json", path + ".json"], env={**os.environ, **env},
                       stdout=subprocess.DEVNULL, check=False)
        if not os.path.exists(path + ".json"):
            print(f"{name}: the bench run wrote no results", file=sys.stderr)
            continue
        with open(path + ".json") as f:
            for r in json.load(f)["records"]:
                if r["status"] == "ok":
                    times[r["case"]][name] = r["median_us"]
    for line, t in times.items():
        print(line, " ".join(f"{k}:{v:.1f}" for k, v in t.items()))


def fwd_shapes(args: list[str]) -> None:
    shapes("fwd", FWD_SHAPES, args)


def bwd_shapes(args: list[str]) -> None:
    shapes("bwd", BWD_SHAPES, args)


COMMANDS = {"ncu-target": ncu_target, "timeline": timeline, "inductor": inductor, "sass": sass,
            "fwd-shapes": fwd_shapes, "bwd-shapes": bwd_shapes}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(f"usage: diagnose.py {{{'|'.join(COMMANDS)}}} [ARGS ...]")
    COMMANDS[sys.argv[1]](sys.argv[2:])
