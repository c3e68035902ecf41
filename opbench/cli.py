"""The ``opbench`` command: ``env``, ``cases``, and the subcommands each part of the suite registers.

Each part (``ops``, ``op_benchmark``, ``accuracy``, ``tools``) has a ``cli`` module
with ``register(subparsers)``; a handler returns the exit code. Exit codes: 0 ok,
1 a failure the command exists to report, 2 bad usage or malformed input.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import re
import sys
from collections.abc import Sequence

from opbench import __version__

PARTS = ("ops", "op_benchmark", "accuracy", "tools")
_UNITS = {"": 1, "b": 1, "k": 2**10, "kb": 10**3, "kib": 2**10, "m": 2**20, "mb": 10**6, "mib": 2**20,
          "g": 2**30, "gb": 10**9, "gib": 2**30, "t": 2**40, "tb": 10**12, "tib": 2**40}


class UsageError(Exception):
    """Bad arguments; printed as one line, exit status 2."""


def parse_bytes(text: str) -> int:
    """``"8GiB"``, ``"512MB"``, ``"1e9"`` -> bytes (an argparse ``type``)."""
    m = re.fullmatch(r"\s*([0-9.eE+]+)\s*([a-zA-Z]*)\s*", text)
    if not m or m.group(2).lower() not in _UNITS:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (examples: 512MiB, 8GiB, 1e9)")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def add_case_arguments(parser: argparse.ArgumentParser) -> None:
    """The CASES arguments shared by ``cases``, ``bench`` and ``accuracy``."""
    parser.add_argument("cases", nargs="+", metavar="CASES",
                        help="built-in suite names, case files, PaddlePaddle/benchmark JSON configs or config lines")
    parser.add_argument("--unknown-dim", type=int, default=16, metavar="N",
                        help="value for -1 dims in JSON configs (default: 16)")
    parser.add_argument("--memory-limit", type=parse_bytes, default=None, metavar="SIZE",
                        help="refuse cases whose inputs need more (default: what the device has free)")


def _cmd_env(args: argparse.Namespace) -> int:
    from opbench import env
    from opbench.backends import default_device

    device = args.device or default_device()
    info = env.collect(device, measure_bandwidth=not args.no_measure)
    if args.json:
        import json

        print(json.dumps(info, indent=2))
    else:
        print(env.format_env(info))
    return 0


def _cmd_cases(args: argparse.Namespace) -> int:
    from opbench.backends import default_device, free_memory
    from opbench.cases import SizeRefused, check_memory, resolve
    from opbench.mapping import is_mapped

    device = args.device or default_device()
    try:
        found = resolve(args.cases, None, unknown_dim=args.unknown_dim, device=device)
    except FileNotFoundError as e:
        raise UsageError(str(e)) from None
    if args.summary:
        from opbench.coverage import Coverage, summary

        cov = Coverage().add([*found.cases, *found.errors])
        print(summary(cov, top=args.top))
        return 2 if found.errors else 0
    limit = args.memory_limit if args.memory_limit is not None else free_memory(device)
    too_large: list[SizeRefused] = []
    for case in found.cases:
        try:
            check_memory(case, limit)
        except SizeRefused as e:
            too_large.append(e)
            continue
        status = "mapped" if is_mapped(case.api) else "unmapped"
        print(f"{case.where}: [{status}] {case.to_line()}")
    for e in sorted([*found.errors, *too_large], key=lambda e: (e.source, e.lineno)):
        print(str(e), file=sys.stderr)
    print(f"{len(found.cases) - len(too_large)} cases, {len(found.errors)} errors, {len(too_large)} too large",
          file=sys.stderr)
    return 2 if found.errors else 0


_CASES_EPILOG = """Each valid case is printed normalized on stdout as FILE:LINE: [mapped|unmapped] LINE.
On stderr: malformed lines (and files that are not UTF-8 text) as FILE:LINE:COL: reason,
cases whose inputs need more than --memory-limit as FILE:LINE:COL: too large: ...,
then "N cases, M errors, K too large". With --summary, the coverage table instead.
Exit status: 2 when any line is malformed; 0 otherwise, also when some cases are too large
(they are well-formed, just not runnable here)."""


def _cmd_suites(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from opbench import suites

    rows = [(s.name, s.cases, "" if s.cpu_cases is None else s.cpu_cases, s.purpose) for s in suites.describe()]
    print(tabulate(rows, headers=("suite", "cases", "cpu cases", "purpose"), tablefmt="github"))
    print("\ncpu cases: a suite with its own CPU sizes (opbench/suites/cpu/) runs them when the device is the CPU")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="opbench", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"opbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("env", help="frameworks, CUDA, GPU, clocks and peak bandwidth")
    p.add_argument("--device", choices=("cpu", "gpu"), default=None, help="default: gpu when available")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--no-measure", action="store_true", help="do not measure the peak bandwidth if not cached")
    p.set_defaults(func=_cmd_env)

    p = sub.add_parser("suites", help="the built-in suites, their case counts and purpose")
    p.set_defaults(func=_cmd_suites)

    p = sub.add_parser("cases", help="validate case files and print each case normalized", epilog=_CASES_EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_case_arguments(p)
    p.add_argument("--summary", action="store_true",
                   help="print coverage instead of the cases: parsed / mapped / unmapped counts, overall and "
                        "per API (unmapped APIs ranked by how many lines need them)")
    p.add_argument("--top", type=int, default=30, metavar="N", help="rows of each --summary ranking (default: 30)")
    p.add_argument("--device", choices=("cpu", "gpu"), default=None,
                   help="whose sizes a built-in suite takes and whose free memory limits cases (default: gpu when "
                        "available)")
    p.set_defaults(func=_cmd_cases)

    for part in PARTS:
        if importlib.util.find_spec(f"{part}.cli") is not None:
            importlib.import_module(f"{part}.cli").register(sub)
    return parser


# OpenMP workers that sleep as soon as their team's work is done. The suite runs several frameworks' CPU ops in
# turn (and samples providers round-robin); a runtime's default is to spin after each parallel region (Intel's
# libiomp5 for 200 ms), and spinning workers of one framework's team took the cores from the next provider's
# call: on 2 cores, PyTorch's and our ops through Paddle took 8 ms a call instead of 0.3-1 ms. Read by each
# runtime when it loads, so set before any framework is imported; the environment's own value wins.
OPENMP_WAIT_POLICY = "PASSIVE"


def main(argv: Sequence[str] | None = None) -> int:
    os.environ.setdefault("OMP_WAIT_POLICY", OPENMP_WAIT_POLICY)
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except UsageError as e:
        print(f"opbench {args.command}: {e}", file=sys.stderr)
        return 2
    except ImportError as e:  # a framework the command needs is missing
        print(f"opbench {args.command}: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # run as `python -m opbench.cli`: use the importable module's classes
    from opbench.cli import main as _main

    sys.exit(_main())
