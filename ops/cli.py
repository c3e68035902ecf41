"""``opbench ops build``: build the custom-op extensions ahead of time."""

from __future__ import annotations

import argparse
import sys

from ops import available, build
from ops.build import EXTENSIONS


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``ops`` subcommand (``ops build [--framework] [--device] [--ext]``) to the opbench CLI."""
    ops_p = subparsers.add_parser("ops", help="custom operators: build ahead of time")
    sub = ops_p.add_subparsers(dest="ops_command", required=True)
    b = sub.add_parser("build", help="build (or find cached) extensions and print where they live")
    b.add_argument("--framework", choices=["paddle", "torch", "all"], default="all")
    b.add_argument("--device", choices=["cpu", "gpu"], default=None,
                   help="default: gpu when the framework sees a CUDA GPU, else cpu")
    b.add_argument("--ext", choices=list(EXTENSIONS), default=None,
                   help="one extension only (default: all)")
    b.set_defaults(func=_build_cmd)


def _build_cmd(args: argparse.Namespace) -> int:
    """Build each requested framework's extension; 2 if a framework is missing, 1 if a build fails."""
    fws = ["paddle", "torch"] if args.framework == "all" else [args.framework]
    if args.framework == "all":
        fws = [f for f in fws if available(f) is None] or fws
    for fw in fws:
        reason = available(fw)
        if reason is not None:
            print(f"opbench ops build: {reason}", file=sys.stderr)
            return 2
    for fw in fws:
        try:
            path = build.build(fw, args.device, args.ext)
        except build.BuildError as exc:
            print(f"opbench ops build: {exc}", file=sys.stderr)
            return 1
        except RuntimeError as exc:
            print(f"opbench ops build: {fw}: {exc}", file=sys.stderr)
            return 2
        print(f"{fw}: {path}")
    return 0
