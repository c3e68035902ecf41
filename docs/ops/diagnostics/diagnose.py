"""Diagnostics behind lerp-design.md and norms-design.md, on a CUDA host with the torch extension built.

    python docs/ops/diagnostics/diagnose.py ncu-target 'CASE|PROVIDER|DIRECTION' ...
    python docs/ops/diagnostics/diagnose.py timeline [--providers P,...] [--directions D,...] CASE ...
    python docs/ops/diagnostics/diagnose.py inductor
    python docs/ops/diagnostics/diagnose.py sass [PATTERN ...]

``ncu-target`` runs each spec once inside an NVTX range ``measure`` (for ``ncu --nvtx-include``; forward
kernels only: autograd launches backward kernels from its own thread, outside the range) and between
``cudaProfilerStart``/``Stop``, which hold for every thread (for ``ncu --profile-from-start off``: backward
kernels too). ``timeline``
prints, for one flushed and padded sample per provider and direction, when each kernel starts after the
last flush (default: torch, torch-compile and torch-ops; fwd and bwd).
``inductor`` prints the code ``torch.compile`` generates for lerp's training graph with a full-size weight
(what its forward saves for backward, hence what its backward reads). ``sass`` counts the SASS instructions
of every kernel of the built extension whose name contains a pattern (default: fwd_nd fwd_bcast).
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


COMMANDS = {"ncu-target": ncu_target, "timeline": timeline, "inductor": inductor, "sass": sass}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(f"usage: diagnose.py {{{'|'.join(COMMANDS)}}} [ARGS ...]")
    COMMANDS[sys.argv[1]](sys.argv[2:])
