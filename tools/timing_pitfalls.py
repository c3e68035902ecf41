"""``opbench tools timing-pitfalls``: the timing note's experiment, measured on this GPU.

One workload (the note's linear layer: (20, 8192) x (8192, 5120) fp16, as a matmul) timed
the naive ways -- an H2D copy inside the event pair, warm L2 (no flush between samples),
the first call -- each beside the benchmark's own figure (``op_benchmark.timers.EventTimer``:
CUDA events around one call, the L2 flushed and the launch queue padded before each sample,
median). The SM clock is read before and after, since a clock that moves stretches every figure.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np

from op_benchmark.timers import EventTimer
from opbench import nvml
from opbench.backends import Backend, flush_bytes
from opbench.cli import UsageError
from tools.gpu import med
from tools.report import Table, ToolResult, bar_plot, fmt_num, fmt_ratio

M, K, N = 20, 8192, 5120  # the note: F.linear(a (20, 8192), b (5120, 8192)), i.e. a @ b.T


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--samples", type=int, default=50, help="timed samples per method, median (default: 50)")
    p.add_argument("--mnk", default=f"{M},{K},{N}", metavar="M,K,N",
                   help=f"matmul sizes: (M, K) x (K, N) (default: {M},{K},{N}, the note's linear layer)")
    p.add_argument("--dtype", choices=("float16", "bfloat16", "float32"), default="float16")


def parse_mnk(text: str) -> tuple[int, int, int]:
    try:
        m, k, n = (int(x) for x in text.split(","))
    except ValueError:
        raise UsageError(f"--mnk wants three positive integers M,K,N, got {text!r}") from None
    if min(m, k, n) < 1:
        raise UsageError(f"--mnk wants three positive integers M,K,N, got {text!r}")
    return m, k, n


def check_args(args: argparse.Namespace) -> None:
    if args.samples < 3:
        raise UsageError("--samples must be at least 3")
    parse_mnk(args.mnk)


def _events_ms(b: Backend, before: Callable[[], Any], inside: Callable[[], Any], samples: int) -> list[float]:
    """``before()`` outside the pair, ``inside()`` between two CUDA events, one synchronize per sample."""
    out = []
    for _ in range(samples):
        before()
        start, end = b.event(), b.event()
        start.record()
        inside()
        end.record()
        b.synchronize()
        out.append(start.elapsed_ms(end))
    return out


def measure(b: Backend, mnk: tuple[int, int, int], dtype: str, samples: int) -> dict[str, Any]:
    """Medians in microseconds of each way of timing the same matmul, plus the SM clock around them."""
    m, k, n = mnk
    rng = np.random.default_rng(0)
    a_host = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    w_host = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    mm = b.resolve(f"{b.name}.matmul")
    h = nvml.handle()
    clock_before = nvml.clocks(h) if h is not None else None

    a, w = b.from_numpy(a_host, dtype), b.from_numpy(w_host, dtype)
    b.synchronize()
    first = _events_ms(b, lambda: None, lambda: mm(a, w), 1)[0]  # first call in the process: library set-up
    noop = lambda: None
    for _ in range(3):
        mm(a, w)
    sampler = EventTimer(b).bind(lambda: mm(a, w))  # exactly how `opbench bench` times a sample
    bench = [sampler() / 1e3 for _ in range(samples)]
    warm = _events_ms(b, noop, lambda: mm(a, w), samples)
    steady = bench  # steady state = the benchmark's own figure

    def copy_then_mm() -> None:
        mm(b.from_numpy(a_host, dtype), b.from_numpy(w_host, dtype))

    inside = _events_ms(b, b.flush_l2, copy_then_mm, samples)
    clock_after = nvml.clocks(h) if h is not None else None
    to_us = lambda xs: med(xs) * 1e3
    return {
        "workload": f"{b.name}.matmul ({m}, {k}) x ({k}, {n}) {dtype}", "samples": samples,
        "bench_us": to_us(bench), "bench_spread_us": [float(np.percentile(bench, 25)) * 1e3,
                                                       float(np.percentile(bench, 75)) * 1e3],
        "h2d_inside_us": to_us(inside), "warm_l2_us": to_us(warm), "first_call_us": first * 1e3,
        "steady_us": to_us(steady), "clock_before": clock_before, "clock_after": clock_after,
        "flush_bytes": flush_bytes(b.device_info().l2_bytes),
    }


PITFALLS = [
    ("h2d_inside_us", "H2D copy inside the event pair", "inputs copied from the host between start and end"),
    ("warm_l2_us", "warm L2 (no flush)", "the same inputs read again right away, partly from L2"),
    ("first_call_us", "first call", "the first call in the process: library and kernel set-up"),
]


def build_result(d: dict[str, Any]) -> ToolResult:
    bench = d["bench_us"]
    rows = []
    for key, name, what in PITFALLS:
        rows.append([name, what, fmt_num(d[key], 1), fmt_num(bench, 1), fmt_ratio(d[key] / bench if bench else None)])
    rows.append(["steady state (the benchmark)", "events around one call, L2 flushed before each, median",
                 fmt_num(bench, 1), fmt_num(bench, 1), fmt_ratio(1.0)])
    notes = [f"benchmark figure: CUDA events + L2 flush, median of {d['samples']}, interquartile "
             f"{d['bench_spread_us'][0]:.1f}-{d['bench_spread_us'][1]:.1f} us"]
    cb, ca = d.get("clock_before"), d.get("clock_after")
    if cb and ca and cb.get("sm_mhz") is not None:
        notes.append(f"SM clock {cb['sm_mhz']} MHz before, {ca['sm_mhz']} MHz after (max {cb.get('sm_max_mhz')}); "
                     "a clock that moves stretches every figure: see `opbench tools clocks`")
    else:
        notes.append("SM clock unknown (install nvidia-ml-py to read it); clock changes stretch every figure")
    table = Table(f"Timing pitfalls: {d['workload']} (us)", ["pitfall", "what happens", "naive figure",
                                                             "benchmark figure", "naive / benchmark"], rows)
    return ToolResult("timing-pitfalls", [table], notes, d, plot=plot)


def plot(fig: Any, data: dict[str, Any]) -> None:
    labels = [name for _, name, _ in PITFALLS]
    bar_plot(fig, labels, {"naive": [data[k] for k, _, _ in PITFALLS],
                           "benchmark": [data["bench_us"]] * len(PITFALLS)}, "us", data["workload"])


def run(args: argparse.Namespace, backend: Backend, progress: Callable[[str], None] | None = None) -> ToolResult:
    return build_result(measure(backend, parse_mnk(args.mnk), args.dtype, args.samples))
