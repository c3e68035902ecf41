"""``opbench tools clocks``: SM and memory clocks, their maxima and why they are held down (NVML).

Read-only by default. ``--lock MHZ`` pins the SM clock (like ``nvidia-smi -lgc``) and
``--reset`` undoes it; both need root, and many shared GPUs (clusters, cloud machines)
forbid them even for root. Never locked unless asked.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

from opbench import nvml
from opbench.cli import UsageError
from tools.gpu import NeedsGPU
from tools.report import Table, ToolResult, fmt_num

LOCK_HELP = ("lock the SM clock at MHZ (nvidia-smi -lgc); needs root, and many shared GPUs forbid it. "
             "Undo with --reset. Never done by default")
# nvbench discards samples taken below this share of the maximum SM clock.
LOW_CLOCK_SHARE = 0.75
ADVICE = {
    "sw_power_cap": "power-capped: the board is at its power limit; long runs settle at a lower clock",
    "hw_slowdown": "hardware slowdown (power brake or temperature): figures taken now are not comparable",
    "sw_thermal_slowdown": "thermal slowdown: let the GPU cool or compare only figures taken at the same clock",
    "hw_thermal_slowdown": "thermal slowdown: let the GPU cool or compare only figures taken at the same clock",
    "hw_power_brake_slowdown": "external power brake: figures taken now are not comparable",
    "gpu_idle": "idle: nothing runs, so the clock is low; it rises under load",
    "applications_clocks_setting": "application clocks set by an administrator cap the clock",
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--lock", type=int, default=None, metavar="MHZ", help=LOCK_HELP)
    g.add_argument("--reset", action="store_true", help="undo --lock (nvidia-smi -rgc); needs root")
    p.add_argument("--index", type=int, default=None, help="NVML index of the GPU (default: first of "
                   "CUDA_VISIBLE_DEVICES)")


def check_args(args: argparse.Namespace) -> None:
    if args.lock is not None and args.lock < 1:
        raise UsageError("--lock wants a clock in MHz, e.g. --lock 1410")


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def read(h: Any) -> dict[str, Any]:
    """Everything the table shows, as data."""
    c = nvml.clocks(h)
    mask = nvml.throttle_mask(h)
    return {"name": nvml.device_name(h), "driver": nvml.driver_version(), **c,
            "throttle_mask": mask, "throttle_reasons": nvml.decode_reasons(mask) if mask is not None else [],
            **nvml.readings(h), "supported_sm_mhz": nvml.supported_sm_clocks(h)[:8]}


def build_result(d: dict[str, Any], action: str | None = None) -> ToolResult:
    def pct(cur: int | None, mx: int | None) -> str:
        return f"{cur / mx * 100:.0f}%" if cur is not None and mx else "-"

    rows = [["SM", d.get("sm_mhz"), d.get("sm_max_mhz"), pct(d.get("sm_mhz"), d.get("sm_max_mhz"))],
            ["memory", d.get("mem_mhz"), d.get("mem_max_mhz"), pct(d.get("mem_mhz"), d.get("mem_max_mhz"))]]
    rows = [[r[0], "-" if r[1] is None else r[1], "-" if r[2] is None else r[2], r[3]] for r in rows]
    reasons = d.get("throttle_reasons") or []
    other = [["held down by", ", ".join(reasons) if reasons else "nothing"],
             ["temperature", "-" if d.get("temperature_c") is None else f"{d['temperature_c']} C"],
             ["power", f"{fmt_num(d.get('power_w'), 0)} W of {fmt_num(d.get('power_limit_w'), 0)} W"],
             ["utilization", "-" if d.get("utilization_pct") is None else f"{d['utilization_pct']}%"]]
    notes = [ADVICE[r] for r in reasons if r in ADVICE]
    sm, mx = d.get("sm_mhz"), d.get("sm_max_mhz")
    if sm and mx and sm < LOW_CLOCK_SHARE * mx and "gpu_idle" not in reasons:
        notes.append(f"SM clock below {LOW_CLOCK_SHARE:.0%} of its maximum while busy: timings now run slow "
                     "(nvbench discards such samples)")
    if action:
        notes.insert(0, action)
    notes.append("clocks are read, never changed, unless you pass --lock/--reset (root; many shared GPUs forbid it)")
    title = f"Clocks: {d.get('name') or 'GPU'} (driver {d.get('driver') or 'unknown'})"
    return ToolResult("clocks", [Table(title, ["clock", "now MHz", "max MHz", "now / max"], rows),
                                 Table("", ["reading", "value"], other)], notes, d)


def run(args: argparse.Namespace, backend: Any = None, progress: Callable[[str], None] | None = None) -> ToolResult:
    if not nvml.available():
        raise NeedsGPU("needs an NVIDIA GPU and nvidia-ml-py (pip install nvidia-ml-py); NVML found none")
    h = nvml.handle(args.index)
    if h is None:
        raise UsageError(f"no GPU at NVML index {args.index}")
    action = None
    if args.lock is not None or args.reset:
        if not _is_root():
            raise UsageError("--lock/--reset need root (sudo); many shared GPUs forbid changing clocks even for root")
        try:
            if args.reset:
                nvml.reset_sm_clock(h)
                action = "SM clock lock reset (nvidia-smi -rgc)"
            else:
                supported = nvml.supported_sm_clocks(h)
                if supported and args.lock not in supported:
                    near = min(supported, key=lambda c: abs(c - args.lock))
                    raise UsageError(f"--lock {args.lock}: not a supported SM clock; nearest is {near} MHz")
                nvml.lock_sm_clock(h, args.lock)
                action = f"SM clock locked at {args.lock} MHz; undo with --reset"
        except nvml.ClockLockError as e:
            result = build_result(read(h), str(e))
            result.exit_code = 1
            return result
    return build_result(read(h), action)
