"""The copy floor: how long the device's own streaming kernel takes to move the bytes a case must move.

The copy bandwidth (one large copy) says what the memory sustains; a case of a few megabytes
never reaches it, since a launch, the L2 flush and the memory's latency and ramp weigh on it
too. The framework's simplest kernel moving the same bytes in about the case's mix of reads
and writes, timed beside the case by the same timer, carries all of those: a copy (half read,
half written), or where the case reads about twice what it writes an add of two buffers into
a third. A kernel that moves its bytes no faster than that kernel does cannot take less. It is a practical
bound, not a physical one: a kernel can beat the framework's streaming kernel by a few percent (lerp's large
same-shape backwards run at 104% of the copy bandwidth, docs/ops/sweep_lerp_h200.md).
``opbench bench --copy-floor`` samples it with each case and direction and keeps its median on
the providers' records as ``copy_us``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

COPY_DTYPE = "float32"  # the element the floor moves; a contiguous same-type copy is a plain memcpy
COPY_SEED = 0
# Read shares from which the floor reads two buffers into a third: halfway between a copy's share (1/2) and
# an add's (2/3). A norm's backward (x and dy read, dx written) and lerp's forward (x and y) take the add.
TWO_READS_FROM = 7 / 12


def copy_call(backend: Any, nbytes: int, read_share: float = 0.5) -> Callable[[], None]:
    """A callable that moves ``nbytes`` bytes (rounded up to whole float32s) on ``backend``'s device: a copy
    of ``nbytes / 2`` into another buffer, or, for ``read_share`` of at least :data:`TWO_READS_FROM`, the sum
    of two buffers of ``nbytes / 3`` into a third. The sources hold random values, so no data-dependent path
    of the memory system sees only zeros."""
    if read_share >= TWO_READS_FROM:
        n = max(1, -(-nbytes // 12))  # float32 elements in each buffer: 8n read + 4n written >= nbytes
        a = backend.random((n,), COPY_DTYPE, COPY_SEED)
        b = backend.random((n,), COPY_DTYPE, COPY_SEED + 1)
        add = backend.resolve(f"{backend.module.__name__}.add")

        def run_add() -> None:
            add(a, b)

        return run_add
    n = max(1, -(-nbytes // 8))  # float32 elements in each buffer: 4n read + 4n written >= nbytes
    src = backend.random((n,), COPY_DTYPE, COPY_SEED)
    dst = backend.zeros((n,), COPY_DTYPE)

    def run() -> None:
        backend.copy_(dst, src)

    return run
