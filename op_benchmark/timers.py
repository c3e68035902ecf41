"""Sample takers: each binds a timed callable and returns a ``sample() -> microseconds`` function.

``events`` (the default on the GPU): one device-event pair per sample, the L2 flushed
before the pair, never inside it. ``kernel``: the sum of the GPU activities the
framework profiler saw during one call (the flush runs before the profiled region).
``graph``: one CUDA-graph replay per sample between events, flushed as for ``events``.
``wall``: the CPU's timer, a host clock around the call, synchronized on both sides.
"""

from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from opbench import nvml
from opbench.backends import Backend

METHODS = ("events", "kernel", "graph", "host")
THROTTLE_FRACTION = 0.75  # nvbench discards samples taken below 75% of the max SM clock
PAD_US = 1000.0  # keep the GPU busy this long before the start event, so launches are queued in time
MAX_PAD_FLUSHES = 64

Sampler = Callable[[], float]


class Timer(ABC):
    """Turns a callable into a sampler; one timer per backend and method."""

    method = ""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    @abstractmethod
    def bind(self, fn: Callable[[], Any]) -> Sampler:
        """A function that runs ``fn`` once and returns its time in microseconds."""


class EventTimer(Timer):
    """One device-event pair around each call; the L2 is flushed before the first event.

    The flush is repeated until it keeps the GPU busy for at least :data:`PAD_US` (and four times
    the call's host-side launch time), so every kernel of the call is queued before the start
    event runs: the pair then times the device, not the host's launch latency or jitter (the
    same idea as nvbench's blocking kernel). Without it, a slow moment on the host shows up as
    device time in launch-bound cases.
    """

    method = "events"
    drain = False  # synchronize after the flush, so the call starts on an idle GPU (HostTimer)

    def bind(self, fn: Callable[[], Any]) -> Sampler:
        b = self.backend
        start, end = b.event(), b.event()
        flushes = 1 + self.pad_flushes(fn)

        def sample() -> float:
            for _ in range(flushes):
                b.flush_l2()
            if self.drain:
                b.synchronize()
            start.record()
            fn()
            end.record()
            b.synchronize()
            return start.elapsed_ms(end) * 1e3

        return sample

    def pad_flushes(self, fn: Callable[[], Any]) -> int:
        """Extra flushes needed to cover the call's launch time (measured here, a few calls)."""
        b = self.backend
        start, end = b.event(), b.event()
        flush_us, host_us = [], []
        for _ in range(3):
            b.synchronize()
            start.record()
            b.flush_l2()
            end.record()
            b.synchronize()
            flush_us.append(start.elapsed_ms(end) * 1e3)
            b.flush_l2()  # keep the device busy while the host launches the call
            t0 = time.perf_counter()
            fn()
            host_us.append((time.perf_counter() - t0) * 1e6)
            b.synchronize()
        target = max(PAD_US, 4 * max(host_us))
        return min(MAX_PAD_FLUSHES, max(0, math.ceil(target / max(min(flush_us), 1.0)) - 1))


class GraphTimer(EventTimer):
    """Events around one replay of a CUDA graph of the call (no launch overhead)."""

    method = "graph"

    def bind(self, fn: Callable[[], Any]) -> Sampler:
        return super().bind(self.backend.capture_graph(fn))


class HostTimer(EventTimer):
    """Events around each call started on an idle GPU (flush, then synchronize): device time plus the
    host's launch latency and the gaps between launches, i.e. what an eager caller waits for (the
    method of the project's founding reference figures). Use it to compare launch-bound paths
    (several small kernels, autograd on the host), `events` to compare kernels."""

    method = "host"
    drain = True

    def pad_flushes(self, fn: Callable[[], Any]) -> int:
        return 0


class KernelTimer(Timer):
    """The sum of the kernel, memset and memcpy durations the profiler recorded for one call."""

    method = "kernel"

    def bind(self, fn: Callable[[], Any]) -> Sampler:
        b = self.backend

        def sample() -> float:
            b.flush_l2()
            b.synchronize()
            return sum(us for _, us in b.profile_kernels(fn))

        return sample


class WallTimer(Timer):
    """Host wall clock around a synchronized call (the CPU's only method)."""

    method = "wall"

    def bind(self, fn: Callable[[], Any]) -> Sampler:
        b = self.backend

        def sample() -> float:
            b.synchronize()
            t0 = time.perf_counter()
            fn()
            b.synchronize()
            return (time.perf_counter() - t0) * 1e6

        return sample


_TIMERS: dict[str, type[Timer]] = {"events": EventTimer, "kernel": KernelTimer, "graph": GraphTimer,
                                   "host": HostTimer}


def effective_method(method: str, device: str) -> str:
    """The method actually used: ``wall`` on the CPU, ``method`` on the GPU."""
    if method not in METHODS:
        raise ValueError(f"unknown timing method {method!r} (known: {', '.join(METHODS)})")
    return "wall" if device == "cpu" else method


def make_timer(backend: Backend, method: str) -> Timer:
    """The timer for ``method`` on ``backend``'s device (the wall clock on the CPU)."""
    if effective_method(method, backend.device) == "wall":
        return WallTimer(backend)
    return _TIMERS[method](backend)


class SmClock:
    """Reads the SM clock per sample through NVML (when present) and tells throttled samples."""

    def __init__(self, device: str) -> None:
        self.handle = nvml.handle() if device == "gpu" else None
        self.max_mhz: int | None = None
        if self.handle is not None:
            self.max_mhz = nvml.clocks(self.handle).get("sm_max_mhz")

    @property
    def available(self) -> bool:
        return self.handle is not None

    def read(self) -> int | None:
        return nvml.sm_clock_mhz(self.handle) if self.handle is not None else None

    def throttled(self, mhz: int | None) -> bool:
        """True when ``mhz`` is below 75% of the maximum SM clock."""
        return mhz is not None and bool(self.max_mhz) and mhz < THROTTLE_FRACTION * self.max_mhz
