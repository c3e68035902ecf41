"""``opbench tools transfer``: host<->device bandwidth and latency by host memory kind and blocking.

Measures, over sizes from 4 KiB to 1 GiB, copies from/to pageable memory, memory pinned
on every call (``.pin_memory()``, and the costly ``.cpu().pin_memory()``) and pinned
buffers allocated once, each blocking and ``non_blocking``. ``--preset offload`` runs the
offload experiment of the transfer note: 30 layers x 2 activations of (1, 16800, 1536)
fp16 stored to the host and loaded back with three schemes.

Each sample issues a batch of copies (more for small sizes, so ``non_blocking`` can
pipeline them) and then synchronizes; the figure is host wall time per copy, median.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from opbench.backends import Backend
from opbench.cli import UsageError, parse_bytes
from tools.gpu import med, wall_ms
from tools.report import Table, ToolResult, bar_plot, fmt_bytes, fmt_num, fmt_ratio

DEFAULT_SIZES = [4 * 2**10 * 4**i for i in range(11)]  # 4 KiB .. 4 GiB
DEFAULT_SIZES = [s for s in DEFAULT_SIZES if s <= 2**30]  # up to 1 GiB
BATCH_BYTES = 64 * 2**20  # a sample moves about this much when copies are small
MAX_BATCH = 64
SAMPLE_BUDGET = 4 * 2**30  # bytes moved per (size, method) at most, so 1 GiB runs a few times only
ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}
OFFLOAD = {"layers": 30, "per_layer": 2, "shape": (1, 16800, 1536), "dtype": "float16"}


@dataclass(frozen=True)
class Method:
    """One way to move data: direction, host memory kind, blocking; ``label`` is the code it stands for."""

    key: str
    direction: str  # "H2D" or "D2H"
    memory: str  # "pageable", "pinned per call", "pre-allocated pinned"
    non_blocking: bool
    label: str


METHODS = [
    Method("h2d_pageable", "H2D", "pageable", False, "x.to(dev)"),
    Method("h2d_pageable_nb", "H2D", "pageable", True, "x.to(dev, non_blocking=True)"),
    Method("h2d_pin_call", "H2D", "pinned per call", False, "x.pin_memory().to(dev)"),
    Method("h2d_pin_call_nb", "H2D", "pinned per call", True, "x.pin_memory().to(dev, non_blocking=True)"),
    Method("h2d_pinned", "H2D", "pre-allocated pinned", False, "d.copy_(pinned)"),
    Method("h2d_pinned_nb", "H2D", "pre-allocated pinned", True, "d.copy_(pinned, non_blocking=True)"),
    Method("d2h_pageable", "D2H", "pageable", False, "g.cpu()"),
    Method("d2h_pageable_nb", "D2H", "new host tensor", True, "g.to('cpu', non_blocking=True)"),
    Method("d2h_pin_call", "D2H", "pinned per call", False, "g.cpu().pin_memory()"),
    Method("d2h_pinned", "D2H", "pre-allocated pinned", False, "pinned.copy_(g)"),
    Method("d2h_pinned_nb", "D2H", "pre-allocated pinned", True, "pinned.copy_(g, non_blocking=True)"),
]
METHOD_KEYS = [m.key for m in METHODS]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sizes", type=lambda s: [parse_bytes(x) for x in s.split(",")], default=None,
                   metavar="LIST", help="comma-separated sizes (default: 4KiB,16KiB,...,1GiB)")
    p.add_argument("--max-size", type=parse_bytes, default=None, metavar="SIZE",
                   help="drop default sizes above this (e.g. 256MiB on a small host)")
    p.add_argument("--methods", default=None, metavar="LIST",
                   help=f"comma-separated subset of: {', '.join(METHOD_KEYS)}")
    p.add_argument("--repeats", type=int, default=10, help="samples per size and method (default: 10)")
    p.add_argument("--preset", choices=("offload",), default=None,
                   help="offload: the note's 30 layers x 2 of (1, 16800, 1536) fp16, store and load")
    p.add_argument("--layers", type=int, default=OFFLOAD["layers"], help="offload preset layers (default: 30)")


def check_args(args: argparse.Namespace) -> None:
    """Reject bad arguments before any GPU work (exit 2)."""
    if args.repeats < 1:
        raise UsageError("--repeats must be at least 1")
    if args.layers < 1:
        raise UsageError("--layers must be at least 1")
    if args.sizes is not None and any(s < 4 for s in args.sizes):
        raise UsageError("--sizes must be at least 4 bytes (copies move float32 elements)")
    if args.methods:
        bad = [m for m in args.methods.split(",") if m not in METHOD_KEYS]
        if bad:
            raise UsageError(f"unknown method {bad[0]!r} (known: {', '.join(METHOD_KEYS)})")
    selected_sizes(args)


def selected_sizes(args: argparse.Namespace) -> list[int]:
    sizes = list(args.sizes) if args.sizes else list(DEFAULT_SIZES)
    if args.max_size:
        sizes = [s for s in sizes if s <= args.max_size]
    if not sizes:
        raise UsageError("no sizes left to measure (check --sizes / --max-size)")
    return sizes


# -- measuring ---------------------------------------------------------------------------------------
def _copy_fn(b: Backend, m: Method, size: int, batch: int) -> tuple[Callable[[], Any], Callable[[], None]]:
    """The function one sample runs (``batch`` copies) and a cleanup; buffers are made here, not timed."""
    n = size // 4
    keep: list[Any] = []
    if m.direction == "H2D":
        host = b.host_empty((n,), "float32", pinned=m.memory == "pre-allocated pinned")
        b.copy_async(host, b.zeros((n,), "float32"), non_blocking=False)  # fault the pages in
        if m.memory == "pre-allocated pinned":
            dev = [b.zeros((n,), "float32") for _ in range(batch)]

            def fn() -> None:
                for d in dev:
                    b.copy_async(d, host, m.non_blocking)
        elif m.memory == "pinned per call":
            def fn() -> None:
                keep[:] = [b.to_device(b.pin_memory(host), m.non_blocking) for _ in range(batch)]
        else:
            def fn() -> None:
                keep[:] = [b.to_device(host, m.non_blocking) for _ in range(batch)]
    else:
        src = b.zeros((n,), "float32")
        if m.memory == "pre-allocated pinned":
            bufs = [b.host_empty((n,), "float32", pinned=True) for _ in range(batch)]

            def fn() -> None:
                for h in bufs:
                    b.copy_async(h, src, m.non_blocking)
        elif m.memory == "pinned per call":
            def fn() -> None:
                keep[:] = [b.pin_memory(b.to_host(src)) for _ in range(batch)]
        else:
            def fn() -> None:
                keep[:] = [b.to_host(src, m.non_blocking) for _ in range(batch)]
    return fn, keep.clear


def measure_sweep(b: Backend, sizes: list[int], methods: list[Method], repeats: int,
                  progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """``{"sizes": [...], "methods": {key: {"label", "direction", "memory", "non_blocking", "ms": [per size]}}}``
    where ``ms`` is the median host time per copy (``None`` where the size could not be allocated)."""
    out: dict[str, Any] = {"sizes": sizes, "methods": {}}
    for m in methods:
        ms_list: list[float | None] = []
        for size in sizes:
            batch = max(1, min(MAX_BATCH, BATCH_BYTES // size))
            reps = max(3, min(repeats, SAMPLE_BUDGET // (size * batch)))
            try:
                fn, cleanup = _copy_fn(b, m, size, batch)
                times = wall_ms(b, fn, reps, warmup=1)
                cleanup()
                ms_list.append(med(times) / batch)
            except (RuntimeError, MemoryError) as e:  # out of host or device memory at this size
                if progress:
                    progress(f"{m.key} at {fmt_bytes(size)}: skipped ({str(e).splitlines()[0][:80]})")
                ms_list.append(None)
            b.empty_cache()
        out["methods"][m.key] = {"label": m.label, "direction": m.direction, "memory": m.memory,
                                 "non_blocking": m.non_blocking, "ms": ms_list}
        if progress:
            progress(f"measured {m.key}")
    return out


def measure_offload(b: Backend, layers: int = OFFLOAD["layers"], per_layer: int = OFFLOAD["per_layer"],
                    shape: tuple[int, ...] = OFFLOAD["shape"], dtype: str = OFFLOAD["dtype"]) -> dict[str, Any]:
    """The note's offload experiment: store ``layers * per_layer`` GPU tensors to the host and load them back."""
    count = layers * per_layer
    gpu = [b.random(shape, dtype, seed=i) for i in range(count)]
    nbytes = math.prod(shape) * ITEMSIZE[dtype]
    pinned = [b.host_empty(shape, dtype, pinned=True) for _ in range(count)]
    schemes: dict[str, dict[str, Any]] = {}

    def run(name: str, store: Callable[[int, Any], Any], load: Callable[[Any], Any]) -> None:
        stored: list[Any] = []

        def do_store() -> None:
            stored[:] = [store(i, g) for i, g in enumerate(gpu)]

        loaded: list[Any] = []

        def do_load() -> None:
            loaded[:] = [load(s) for s in stored]

        store_ms = med(wall_ms(b, do_store, 1, warmup=1))
        load_ms = med(wall_ms(b, do_load, 1, warmup=1))
        schemes[name] = {"store_ms": store_ms, "load_ms": load_ms,
                         "store_gbps": count * nbytes / store_ms / 1e6, "load_gbps": count * nbytes / load_ms / 1e6}
        stored.clear()
        loaded.clear()
        b.empty_cache()

    run(".cpu() / .to(dev)", lambda i, g: b.to_host(g), lambda h: b.to_device(h))
    run(".cpu().pin_memory() / .to(dev, non_blocking=True)", lambda i, g: b.pin_memory(b.to_host(g)),
        lambda h: b.to_device(h, True))

    def store_pinned(i: int, g: Any) -> Any:
        b.copy_async(pinned[i], g, True)
        return pinned[i]

    run("pre-allocated pinned: copy_(g, non_blocking=True) / .to(dev, non_blocking=True)", store_pinned,
        lambda h: b.to_device(h, True))
    return {"layers": layers, "per_layer": per_layer, "shape": list(shape), "dtype": dtype,
            "tensor_bytes": nbytes, "total_bytes": count * nbytes, "schemes": schemes}


# -- reporting ---------------------------------------------------------------------------------------
def _gbps(size: int, ms: float | None) -> float | None:
    return None if ms is None or ms <= 0 else size / ms / 1e6


def _find(sweep: dict[str, Any], key: str, min_size: int) -> tuple[int, float | None] | None:
    """Largest measured size >= ``min_size`` for method ``key`` and its ms."""
    m = sweep["methods"].get(key)
    if not m:
        return None
    pairs = [(s, t) for s, t in zip(sweep["sizes"], m["ms"], strict=True) if s >= min_size and t is not None]
    return pairs[-1] if pairs else None


def summary(sweep: dict[str, Any]) -> dict[str, Any]:
    """The headline ratios: pinned vs pageable H2D at >= 64 MiB, ``.cpu().pin_memory()`` vs a pinned buffer."""
    out: dict[str, Any] = {}
    sizes = sweep["sizes"]
    big = _find(sweep, "h2d_pageable", 64 * 2**20)
    pinned_key = "h2d_pinned_nb" if "h2d_pinned_nb" in sweep["methods"] else "h2d_pinned"
    pin = _find(sweep, pinned_key, 64 * 2**20)
    if big and pin and big[0] == pin[0] and big[1] and pin[1]:
        out["h2d_pinned_vs_pageable"] = {"size": big[0], "pageable_gbps": _gbps(big[0], big[1]),
                                         "pinned_gbps": _gbps(pin[0], pin[1]), "ratio": big[1] / pin[1]}
    costly, right = sweep["methods"].get("d2h_pin_call"), sweep["methods"].get("d2h_pinned_nb")
    if costly and right:
        pairs = [(s, a, c) for s, a, c in zip(sizes, costly["ms"], right["ms"], strict=True) if a and c]
        if pairs:
            s, a, c = pairs[-1]
            out["d2h_cpu_pin_vs_prealloc"] = {"size": s, "cpu_pin_memory_ms": a, "prealloc_pinned_ms": c,
                                              "ratio": a / c}
    for key in ("h2d_pinned_nb", "d2h_pinned_nb", "h2d_pageable", "d2h_pageable"):
        m = sweep["methods"].get(key)
        if m and m["ms"] and m["ms"][0] is not None:
            out.setdefault("latency_us", {})[key] = {"size": sizes[0], "us": m["ms"][0] * 1e3}
    return out


def _size_label(s: int) -> str:
    return fmt_bytes(s).replace(" ", "").replace("iB", "")


def build_result(sweep: dict[str, Any] | None, offload: dict[str, Any] | None) -> ToolResult:
    """Tables and notes from recorded figures (no GPU needed: tests feed recorded dicts)."""
    tables, notes, data = [], [], {}
    if sweep:
        sizes = sweep["sizes"]
        headers = ["dir", "host memory", "non_blocking", "code", f"latency us ({_size_label(sizes[0])})"]
        headers += [f"{_size_label(s)} GB/s" for s in sizes]
        rows = []
        for m in sweep["methods"].values():
            lat = m["ms"][0] * 1e3 if m["ms"][0] is not None else None
            rows.append([m["direction"], m["memory"], "yes" if m["non_blocking"] else "no", m["label"],
                         fmt_num(lat, 1)] + [fmt_num(_gbps(s, t), 1) for s, t in zip(sizes, m["ms"], strict=True)])
        tables.append(Table("Host<->device copies: host time per copy (median), GB/s = 1e9 bytes/s", headers, rows))
        s = summary(sweep)
        data["sweep"], data["summary"] = sweep, s
        if "h2d_pinned_vs_pageable" in s:
            r = s["h2d_pinned_vs_pageable"]
            notes.append(f"H2D at {fmt_bytes(r['size'])}: pinned {r['pinned_gbps']:.1f} GB/s vs pageable "
                         f"{r['pageable_gbps']:.1f} GB/s ({fmt_ratio(r['ratio'])}): allocate host tensors pinned once")
        if "d2h_cpu_pin_vs_prealloc" in s:
            r = s["d2h_cpu_pin_vs_prealloc"]
            notes.append(f"D2H at {fmt_bytes(r['size'])}: g.cpu().pin_memory() {r['cpu_pin_memory_ms']:.2f} ms vs "
                         f"pinned.copy_(g, non_blocking=True) {r['prealloc_pinned_ms']:.2f} ms "
                         f"({fmt_ratio(r['ratio'])} slower): copy into a pre-allocated pinned buffer instead")
        notes.append("non_blocking copies touching pinned memory must be followed by a synchronize (or an event "
                     "wait) before the host reads or rewrites that memory")
    if offload:
        rows = []
        base = None
        for name, f in offload["schemes"].items():
            base = base or f
            rows.append([name, fmt_num(f["store_ms"], 1), fmt_num(f["store_gbps"], 1), fmt_num(f["load_ms"], 1),
                         fmt_num(f["load_gbps"], 1)])
        title = (f"Offload preset: {offload['layers']} layers x {offload['per_layer']} tensors of "
                 f"{tuple(offload['shape'])} {offload['dtype']} ({fmt_bytes(offload['total_bytes'])} each way)")
        tables.append(Table(title, ["scheme (store / load)", "store ms", "store GB/s", "load ms", "load GB/s"], rows))
        data["offload"] = offload
        notes.append("offload: .cpu().pin_memory() copies twice (device->pageable, pageable->pinned); a pinned "
                     "buffer allocated once is the fast store (its allocation is not timed, as in the note)")
    return ToolResult("transfer", tables, notes, data, plot=plot)


def plot(fig: Any, data: dict[str, Any]) -> None:
    if "sweep" in data:
        sweep = data["sweep"]
        ax = fig.add_subplot(1, 2 if "offload" in data else 1, 1)
        for m in sweep["methods"].values():
            pts = [(s, _gbps(s, t)) for s, t in zip(sweep["sizes"], m["ms"], strict=True) if t]
            if pts:
                style = "-" if m["direction"] == "H2D" else "--"
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker=".",
                        label=f"{m['direction']} {m['label']}")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("bytes per copy")
        ax.set_ylabel("GB/s (host time)")
        ax.set_title("host<->device copies")
        ax.legend(fontsize=6)
    if "offload" in data and "sweep" not in data:
        sch = data["offload"]["schemes"]
        bar_plot(fig, list(sch), {"store ms": [v["store_ms"] for v in sch.values()],
                                  "load ms": [v["load_ms"] for v in sch.values()]}, "ms", "offload preset")


def run(args: argparse.Namespace, backend: Backend, progress: Callable[[str], None] | None = None) -> ToolResult:
    if args.preset == "offload":
        return build_result(None, measure_offload(backend, layers=args.layers))
    methods = [m for m in METHODS if not args.methods or m.key in args.methods.split(",")]
    return build_result(measure_sweep(backend, selected_sizes(args), methods, args.repeats, progress), None)
