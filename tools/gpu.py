"""Choosing the framework and GPU a tool runs on, and timing host-visible work.

Every tool but ``clocks`` needs a CUDA GPU through a framework; on a machine without
one it says so in one line and exits with status 2 (:class:`NeedsGPU`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from statistics import median
from typing import Any

from opbench.backends import FRAMEWORKS, Backend, FrameworkMissing, get_backend, installed


class NeedsGPU(Exception):
    """No framework sees a CUDA GPU here; the message is the one line the user sees."""


def _has_cuda(fw: str) -> bool:
    try:
        return get_backend(fw, "cpu").has_cuda()
    except FrameworkMissing:
        return False


def pick_framework(requested: str | None) -> str:
    """``requested`` if given, else torch when it sees a GPU, else paddle; raise :class:`NeedsGPU`."""
    candidates = [requested] if requested else list(reversed(FRAMEWORKS))  # torch first
    for fw in candidates:
        if installed(fw) and _has_cuda(fw):
            return fw
    seen = []
    for fw in candidates:
        if not installed(fw):
            seen.append(f"{fw} not installed")
        else:
            seen.append(f"{fw} {get_backend(fw, 'cpu').version()} sees none")
    raise NeedsGPU(f"needs a CUDA GPU ({'; '.join(seen)})")


def gpu_backend(requested: str | None) -> Backend:
    return get_backend(pick_framework(requested), "gpu")


def wall_ms(backend: Backend, fn: Callable[[], Any], repeats: int, warmup: int = 1) -> list[float]:
    """Host wall-clock milliseconds of ``fn()`` followed by a device synchronize, per repeat.

    Host time is what the user waits for: it includes launch, pinning and blocking costs
    that device events between two records would not show.
    """
    out = []
    for i in range(warmup + repeats):
        backend.synchronize()
        t0 = time.perf_counter()
        fn()
        backend.synchronize()
        if i >= warmup:
            out.append((time.perf_counter() - t0) * 1e3)
    return out


def med(xs: list[float]) -> float:
    return float(median(xs)) if xs else float("nan")
