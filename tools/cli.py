"""``opbench tools NAME``: the performance notes as tools that measure on your GPU.

Each tool prints a table; ``--json FILE`` keeps the figures and ``--png FILE`` a plot
(matplotlib). ``--framework torch|paddle`` picks the framework (default: torch when it
sees a CUDA GPU, else paddle). Without a CUDA GPU a tool says so in one line, exit 2.
"""

from __future__ import annotations

import argparse
import sys
from types import ModuleType
from typing import Any

from opbench.backends import FRAMEWORKS
from opbench.cli import UsageError
from tools import clocks, overlap, syncs, timing_pitfalls, transfer
from tools.gpu import NeedsGPU, gpu_backend

# name -> (module, one-line help, needs a framework)
TOOLS: dict[str, tuple[ModuleType, str, bool]] = {
    "transfer": (transfer, "H2D/D2H bandwidth and latency: pageable vs pinned, blocking vs non_blocking; "
                           "--preset offload", True),
    "overlap": (overlap, "H2D -> compute -> D2H over N layers on one stream vs K streams", True),
    "syncs": (syncs, "run a script under the profiler and list every hidden device<->host copy and sync", True),
    "timing-pitfalls": (timing_pitfalls, "an H2D copy in the event pair, warm L2, first call: naive figures "
                                         "beside the benchmark's", True),
    "clocks": (clocks, "SM and memory clocks, maxima and throttle reasons (NVML); --lock/--reset need root and "
                       "many shared GPUs forbid them", False),
}


def _common(with_framework: bool) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--json", default=None, metavar="FILE", help="write the figures as JSON")
    p.add_argument("--png", default=None, metavar="FILE", help="write a plot (needs matplotlib)")
    if with_framework:
        p.add_argument("--framework", choices=sorted(FRAMEWORKS), default=None,
                       help="default: torch if it sees a CUDA GPU, else paddle")
    return p


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _handler(name: str) -> Any:
    module, _, needs_framework = TOOLS[name]

    def handle(args: argparse.Namespace) -> int:
        from tools.report import emit

        try:
            module.check_args(args)
            backend = gpu_backend(args.framework) if needs_framework else None
            result = module.run(args, backend, progress=_progress)
        except (UsageError, NeedsGPU, NotImplementedError) as e:  # bad input, no GPU, a feature the framework lacks
            print(f"opbench tools {name}: {e}", file=sys.stderr)
            return 2
        if needs_framework and backend is not None:
            from opbench import env

            result.env = env.collect("gpu", measure_bandwidth=False)
        return emit(result, args.json, args.png)

    return handle


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("tools", help="transfer, overlap, syncs, timing-pitfalls, clocks: measured on your GPU",
                              description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="tool", metavar="TOOL")
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])
    for name, (module, help_line, needs_framework) in TOOLS.items():
        tp = sub.add_parser(name, help=help_line, description=(module.__doc__ or help_line).strip(),
                            parents=[_common(needs_framework)], formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(tp)
        tp.set_defaults(func=_handler(name))
