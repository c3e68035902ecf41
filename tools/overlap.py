"""``opbench tools overlap``: an H2D -> compute -> D2H pipeline on one stream vs K streams.

The transfer note's experiment: N layers, each copied in from a pinned buffer, scaled in
place ``intensity`` times, copied out to a pinned buffer. On one stream the three phases
run back to back; spread over K streams the copy engines (one per direction) and the SMs
work at the same time. Reports each phase alone, their sum, both pipelines, the overlap
achieved and the speedup, and checks that the K-stream results equal the one-stream ones
(read only after a synchronize: the copies into pinned memory are non_blocking).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from opbench.backends import Backend
from opbench.cli import UsageError
from tools.gpu import med, wall_ms
from tools.report import Table, ToolResult, bar_plot, fmt_num, fmt_ratio

PRESET = {"layers": 30, "shape": (1, 16800, 1536), "dtype": "float16", "intensity": 20, "streams": 2}
# The in-place "compute" of one layer, per framework (x *= 1.001 as in the note).
SCALE_API = {"torch": ("torch.Tensor.mul_", 1.001), "paddle": ("paddle.Tensor.scale_", 1.001)}


def parse_shape(text: str) -> tuple[int, ...]:
    try:
        shape = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a shape: {text!r} (example: 1,16800,1536)") from None
    if not shape or any(d < 1 for d in shape):
        raise argparse.ArgumentTypeError(f"not a shape: {text!r} (dims must be positive)")
    return shape


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--streams", type=int, default=PRESET["streams"], metavar="K", help="streams to spread layers over "
                   "(default: 2)")
    p.add_argument("--layers", type=int, default=PRESET["layers"], help="layers (default: 30)")
    p.add_argument("--shape", type=parse_shape, default=PRESET["shape"], help="one layer's shape "
                   "(default: 1,16800,1536)")
    p.add_argument("--dtype", choices=("float16", "bfloat16", "float32"), default=PRESET["dtype"])
    p.add_argument("--intensity", type=int, default=PRESET["intensity"],
                   help="in-place scalings per layer, the compute (default: 20)")
    p.add_argument("--repeats", type=int, default=5, help="timed runs of each pipeline, median (default: 5)")


def check_args(args: argparse.Namespace) -> None:
    if args.streams < 1:
        raise UsageError("--streams must be at least 1")
    if args.layers < 1 or args.intensity < 0 or args.repeats < 1:
        raise UsageError("--layers and --repeats must be at least 1, --intensity at least 0")


class Pipeline:
    """Pinned sources and destinations and device buffers for ``layers`` layers, and the runs over them."""

    def __init__(self, b: Backend, layers: int, shape: tuple[int, ...], dtype: str, intensity: int) -> None:
        self.b, self.intensity = b, intensity
        api, self.factor = SCALE_API[b.name]
        self.scale = b.resolve(api)
        self.src = [b.host_empty(shape, dtype, pinned=True) for _ in range(layers)]
        self.dst = [b.host_empty(shape, dtype, pinned=True) for _ in range(layers)]
        self.dev = [b.zeros(shape, dtype) for _ in range(layers)]
        for i, s in enumerate(self.src):  # random values, so a wrong or missing copy shows
            b.copy_async(s, b.random(shape, dtype, seed=i), non_blocking=False)
        self.zero = b.to_host(b.zeros(shape, dtype))
        b.synchronize()

    def compute(self, i: int) -> None:
        for _ in range(self.intensity):
            self.scale(self.dev[i], self.factor)

    def h2d(self) -> None:
        for i in range(len(self.src)):
            self.b.copy_async(self.dev[i], self.src[i], True)

    def compute_all(self) -> None:
        for i in range(len(self.dev)):
            self.compute(i)

    def d2h(self) -> None:
        for i in range(len(self.dev)):
            self.b.copy_async(self.dst[i], self.dev[i], True)

    def pipelined(self, streams: Sequence[Any]) -> None:
        """Layer i runs H2D, compute, D2H on ``streams[i % K]``; all streams first wait for the current one."""
        b = self.b
        cur = b.current_stream()
        for s in streams:
            b.wait_stream(s, cur)
        for i in range(len(self.src)):
            with b.stream_guard(streams[i % len(streams)]):
                b.copy_async(self.dev[i], self.src[i], True)
                self.compute(i)
                b.copy_async(self.dst[i], self.dev[i], True)
        for s in streams:
            b.wait_stream(cur, s)

    def clear_dst(self) -> None:
        for d in self.dst:
            self.b.copy_async(d, self.zero, False)

    def results(self) -> list[np.ndarray]:
        """Host copies of the destinations; synchronizes first (the D2H copies were non_blocking)."""
        self.b.synchronize()
        return [self.b.to_numpy(d).copy() for d in self.dst]


def measure(b: Backend, layers: int, shape: tuple[int, ...], dtype: str, intensity: int, streams: int,
            repeats: int) -> dict[str, Any]:
    """Milliseconds (host wall time, median of ``repeats``) of each phase and of both pipelines."""
    p = Pipeline(b, layers, shape, dtype, intensity)
    t = {"h2d_ms": med(wall_ms(b, p.h2d, repeats)),
         "compute_ms": med(wall_ms(b, p.compute_all, repeats)),
         "d2h_ms": med(wall_ms(b, p.d2h, repeats))}
    one = [b.current_stream()]
    p.clear_dst()
    t["single_ms"] = med(wall_ms(b, lambda: p.pipelined(one), repeats))
    reference = p.results()
    many = [b.new_stream() for _ in range(streams)]
    p.clear_dst()
    t["multi_ms"] = med(wall_ms(b, lambda: p.pipelined(many), repeats))
    got = p.results()
    mismatched = [i for i, (r, g) in enumerate(zip(reference, got, strict=True)) if not np.array_equal(r, g)]
    nonzero = any(np.any(r != 0) for r in reference)
    return {"layers": layers, "shape": list(shape), "dtype": dtype, "intensity": intensity, "streams": streams,
            "repeats": repeats, "layer_bytes": int(math.prod(shape)) * (4 if dtype == "float32" else 2),
            **t, "results_match": not mismatched and nonzero, "mismatched_layers": mismatched}


def derive(m: dict[str, Any]) -> dict[str, float]:
    """Sum of phases, the ideal (longest phase), speedup and the share of the hideable time hidden."""
    total = m["h2d_ms"] + m["compute_ms"] + m["d2h_ms"]
    ideal = max(m["h2d_ms"], m["compute_ms"], m["d2h_ms"])
    hideable = m["single_ms"] - ideal
    overlap = (m["single_ms"] - m["multi_ms"]) / hideable if hideable > 0 else float("nan")
    return {"sum_ms": total, "ideal_ms": ideal, "speedup": m["single_ms"] / m["multi_ms"],
            "overlap": max(0.0, min(1.0, overlap)) if not math.isnan(overlap) else overlap}


def build_result(m: dict[str, Any]) -> ToolResult:
    d = derive(m)
    k = m["streams"]
    rows = [
        ["H2D alone (all layers)", fmt_num(m["h2d_ms"], 2), "pinned -> device, non_blocking"],
        ["compute alone", fmt_num(m["compute_ms"], 2), f"{m['intensity']} in-place scalings per layer"],
        ["D2H alone", fmt_num(m["d2h_ms"], 2), "device -> pinned, non_blocking"],
        ["sum of phases", fmt_num(d["sum_ms"], 2), "what no overlap costs"],
        ["one stream, pipelined", fmt_num(m["single_ms"], 2), "H2D, compute, D2H per layer, in order"],
        [f"{k} streams, pipelined", fmt_num(m["multi_ms"], 2), f"layer i on stream i % {k}"],
        ["ideal (longest phase)", fmt_num(d["ideal_ms"], 2), "copy engines and SMs fully overlapped"],
    ]
    title = (f"Overlap: {m['layers']} layers of {tuple(m['shape'])} {m['dtype']}, one stream vs {k} "
             f"(host time, median of {m['repeats']})")
    summary = [["speedup", fmt_ratio(d["speedup"])],
               ["overlap achieved",
                "-" if math.isnan(d["overlap"]) else f"{d['overlap'] * 100:.0f}% of the hideable time"],
               ["results match one stream", "yes" if m["results_match"] else
                f"NO (layers {m['mismatched_layers'][:5]})"]]
    notes = ["overlap needs pinned host memory, non_blocking copies and non-default streams; the D2H results "
             "are read only after a synchronize"]
    if not m["results_match"]:
        notes.append("the multi-stream results differ from the one-stream run: a missing wait_stream or a read "
                     "before synchronize")
    return ToolResult("overlap", [Table(title, ["phase / pipeline", "ms", "what"], rows),
                                  Table("", ["figure", "value"], summary)],
                      notes, {**m, **d}, plot=plot, exit_code=0 if m["results_match"] else 1)


def plot(fig: Any, data: dict[str, Any]) -> None:
    labels = ["H2D", "compute", "D2H", "sum", "1 stream", f"{data['streams']} streams"]
    vals = [data["h2d_ms"], data["compute_ms"], data["d2h_ms"], data["sum_ms"], data["single_ms"], data["multi_ms"]]
    bar_plot(fig, labels, {"ms": vals}, "ms (host time)", f"overlap, speedup {data['speedup']:.2f}x")


def run(args: argparse.Namespace, backend: Backend, progress: Callable[[str], None] | None = None) -> ToolResult:
    return build_result(measure(backend, args.layers, tuple(args.shape), args.dtype, args.intensity, args.streams,
                                args.repeats))
