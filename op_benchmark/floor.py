"""The copy floor: how long the device's own copy takes to move the bytes a case must move.

The copy bandwidth (one large copy) says what the memory sustains; a case of a few megabytes
never reaches it, since a launch, the L2 flush and the memory's latency and ramp weigh on it
too. A device copy of the same bytes (half read, half written), timed beside the case by the
same timer, carries all of those: a kernel that moves its bytes no faster than a copy does
cannot take less. ``opbench bench --copy-floor`` samples it with each case and direction and
keeps its median on the providers' records as ``copy_us``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

COPY_DTYPE = "float32"  # the element the copy moves; a contiguous same-type copy is a plain memcpy
COPY_SEED = 0


def copy_call(backend: Any, nbytes: int) -> Callable[[], None]:
    """A callable that copies ``nbytes / 2`` bytes (rounded up to whole float32s) from one device buffer
    into another on ``backend``: ``nbytes`` moved in all. The source holds random values, so no
    data-dependent path of the memory system sees only zeros."""
    n = max(1, -(-nbytes // 8))  # float32 elements in each buffer: 4n read + 4n written >= nbytes
    src = backend.random((n,), COPY_DTYPE, COPY_SEED)
    dst = backend.zeros((n,), COPY_DTYPE)

    def run() -> None:
        backend.copy_(dst, src)

    return run
