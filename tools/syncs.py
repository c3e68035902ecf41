"""``opbench tools syncs SCRIPT [ARGS]``: hidden device<->host copies and synchronizations in a script.

Runs the user's script in this process under the framework profiler, then lists every
device<->host copy and synchronize with the API call and source line that caused it,
its count and total time, largest first, with the advice that fits
(:mod:`tools.sync_attribution` does the analysis). With PyTorch the script also runs
under ``torch.cuda.set_sync_debug_mode("warn")``, whose warnings name each synchronizing
call's line independently of the trace. Exit status 1 when anything was found, 0 when
the script ran clean, 2 when the script could not run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import runpy
import sys
import tempfile
import traceback
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from opbench.backends import Backend
from opbench.cli import UsageError
from tools import sync_attribution as sa
from tools.report import Table, ToolResult, bar_plot, fmt_bytes, fmt_num

SYNC_WARNING = "synchronizing"  # torch's sync-debug warning: "called a synchronizing CUDA operation"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("script", metavar="SCRIPT", help="the Python script to run (in this process, as __main__)")
    p.add_argument("script_args", nargs=argparse.REMAINDER, metavar="ARGS", help="arguments for the script")
    p.add_argument("--trace", default=None, metavar="FILE", help="also keep the profiler's Chrome trace here")
    p.add_argument("--no-sync-debug", action="store_true",
                   help="do not run under torch.cuda.set_sync_debug_mode('warn') (PyTorch only)")
    p.add_argument("--top", type=int, default=30, help="rows to show (default: 30; JSON has all)")


def check_args(args: argparse.Namespace) -> None:
    if not Path(args.script).is_file():
        raise UsageError(f"no such script: {args.script}")
    if args.top < 1:
        raise UsageError("--top must be at least 1")


@contextlib.contextmanager
def _script_argv(script: Path, script_args: list[str]) -> Iterator[None]:
    old_argv, old_path = sys.argv[:], sys.path[:]
    sys.argv = [str(script), *script_args]
    sys.path.insert(0, str(script.parent))
    try:
        yield
    finally:
        sys.argv, sys.path[:] = old_argv, old_path


@contextlib.contextmanager
def flagged_syncs(user_paths: list[str]) -> Iterator[Counter[str]]:
    """Count torch's sync-debug warnings by the user's source line that triggered them (the warning's own
    file/line can point inside the framework, so the Python stack at warning time is searched)."""
    hits: Counter[str] = Counter()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        previous = warnings.showwarning

        def show(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
            if SYNC_WARNING not in str(message):
                previous(message, category, filename, lineno, file, line)
                return
            loc = f"{os.path.basename(filename)}:{lineno}"
            for fr in reversed(traceback.extract_stack()[:-1]):
                if sa.is_user_frame(f"{fr.filename}({fr.lineno}): {fr.name}", user_paths):
                    loc = f"{os.path.basename(fr.filename)}:{fr.lineno} ({fr.name})"
                    break
            hits[loc] += 1

        warnings.showwarning = show
        yield hits


def run_script(backend: Backend, script: Path, script_args: list[str], trace_path: str,
               sync_debug: bool) -> tuple[Counter[str] | None, str | None]:
    """Run the script under the profiler (and sync-debug mode); returns (flagged lines, error line or None)."""
    user_paths = [str(script), str(script.parent)]
    error = None

    def target() -> None:
        with _script_argv(script, script_args):
            try:
                runpy.run_path(str(script), run_name="__main__")
            except SystemExit as e:
                if e.code not in (None, 0):
                    raise RuntimeError(f"the script exited with status {e.code}") from None

    flagged: Counter[str] | None = None
    with contextlib.ExitStack() as stack:
        if sync_debug:
            try:
                stack.enter_context(backend.sync_debug("warn"))
                flagged = stack.enter_context(flagged_syncs(user_paths))
            except NotImplementedError:
                flagged = None
        try:
            backend.profile_to_chrome_trace(target, trace_path)
        except Exception as e:  # the user's script failed: report what ran before, then say so
            error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}".rstrip(": ")
    return flagged, error


def build_result(findings: list[sa.Finding], flagged: Counter[str] | None, script: str, framework: str,
                 python_frames: bool, error: str | None = None, top: int = 30) -> ToolResult:
    advice: dict[str, int] = {}  # advice text -> its number under the table
    for f in findings[:top]:
        advice.setdefault(f.advice, len(advice) + 1)
    rows = [[f.api, f.where, f.what, f.calls, fmt_num(f.host_us / 1e3, 3), fmt_num(f.device_us / 1e3, 3),
             fmt_bytes(f.nbytes) if f.copies else "-", f"[{advice[f.advice]}]"] for f in findings[:top]]
    headers = ["API call", "where", "what", "calls", "host ms", "copy ms (device)", "bytes", "advice"]
    total_ms = sum(f.host_us for f in findings) / 1e3
    title = (f"Device<->host copies and syncs in {script} ({framework}): {len(findings)} kinds, "
             f"{sum(f.calls for f in findings)} calls, {total_ms:.3f} ms of host time blocked")
    tables = [Table(title, headers, rows)]
    notes = [f"[{n}] {text}" for text, n in advice.items()]
    if not findings:
        notes.append("no device<->host copy or synchronize found: the script keeps its work on the GPU")
    if len(findings) > top:
        notes.append(f"{len(findings) - top} more rows in the JSON (--top)")
    if flagged is not None:
        if flagged:
            tables.append(Table("torch.cuda.set_sync_debug_mode('warn') flagged these lines",
                                ["where", "synchronizing calls"], [[k, v] for k, v in flagged.most_common(top)]))
        else:
            notes.append("torch.cuda.set_sync_debug_mode('warn') flagged no synchronizing call")
    elif framework == "paddle":
        notes.append("paddle has no sync debug mode; Paddle traces have no Python frames, so findings name the "
                     "operator, not the source line")
    if python_frames and findings:
        notes.append("where = the user function that made the call, at its first line (the profiler records "
                     "functions, not lines)" + ("; the set_sync_debug_mode table names the lines" if flagged else ""))
    if not python_frames and framework != "paddle":
        notes.append("the trace has no Python frames: findings name the operator, not the source line")
    notes.append("host ms = time the host thread sat in the copy/synchronize calls; copy ms = the device's copy time")
    if error:
        notes.append(f"the script failed ({error}); the figures cover what ran before")
    data = {"script": script, "framework": framework, "findings": [f.as_dict() for f in findings],
            "sync_debug": dict(flagged) if flagged is not None else None, "error": error}
    code = 2 if error else (1 if findings else 0)
    return ToolResult("syncs", tables, notes, data, plot=plot, exit_code=code)


def plot(fig: Any, data: dict[str, Any]) -> None:
    rows = data["findings"][:12]
    bar_plot(fig, [f"{r['api']} @ {r['where']}" for r in rows], {"host ms": [r["host_us"] / 1e3 for r in rows]},
             "ms", "host time blocked by copies and syncs")


def run(args: argparse.Namespace, backend: Backend, progress: Callable[[str], None] | None = None) -> ToolResult:
    script = Path(args.script).resolve()
    keep = args.trace
    with tempfile.TemporaryDirectory() as tmp:
        trace_path = keep or os.path.join(tmp, "trace.json")
        flagged, error = run_script(backend, script, list(args.script_args), trace_path,
                                    sync_debug=not args.no_sync_debug and backend.name == "torch")
        try:
            trace = json.loads(Path(trace_path).read_text())
        except (OSError, ValueError) as e:
            raise UsageError(f"the profiler wrote no readable trace ({e}); script error: {error}") from None
    findings = sa.attribute(trace, user_paths=[str(script), str(script.parent)])
    return build_result(findings, flagged, args.script, backend.name, sa.has_python_frames(trace), error, args.top)
