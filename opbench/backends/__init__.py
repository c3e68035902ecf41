"""Framework adapters: the only place the suite talks to Paddle or PyTorch (ops' bindings aside).

``get_backend("torch", "gpu")`` returns a :class:`~opbench.backends.base.Backend`;
importing this package imports neither framework until a backend is asked for.
"""

from __future__ import annotations

import importlib.util
import re
from functools import cache

from opbench.backends.base import (
    Backend,
    DeviceInfo,
    DeviceUnavailable,
    Event,
    FrameworkMissing,
    flush_bytes,
)

FRAMEWORKS = ("paddle", "torch")

# How each framework says it has no kernel for an op or its dtype on this device: Paddle's error kind
# NotFound for an unregistered kernel, keyed by dtype ("The kernel with key (CPU, ..., float16) of kernel
# `lerp` is not registered") or for the op as a whole ("The kernel `rms_norm` is not registered": Paddle
# 3.3.1's CPU build has no rms_norm kernel), torch's "not implemented for 'Half'".
_NO_KERNEL = {
    "paddle": re.compile(r"^\(NotFound\) The kernel (with key .* of kernel )?`[^`]+` is not registered"),
    "torch": re.compile(r"not implemented for '[A-Za-z0-9]+'"),
}


def no_kernel(framework: str, exc: BaseException) -> bool:
    """True when ``exc`` says the framework cannot run this op here (no kernel for it or its dtype on this device)."""
    if isinstance(exc, NotImplementedError):
        return True
    pattern = _NO_KERNEL.get(framework, _NO_KERNEL["torch"])
    return bool(pattern.search(str(exc)[:300]))


def installed(framework: str) -> bool:
    """True when the framework's package can be imported (checked without importing it)."""
    try:
        return importlib.util.find_spec(framework) is not None
    except ValueError:  # present in sys.modules as None: import blocked
        return False


@cache
def get_backend(framework: str, device: str = "cpu") -> Backend:
    """The adapter for ``framework`` on ``device``; one instance per pair, reused."""
    if framework == "torch":
        from opbench.backends.torch_backend import TorchBackend

        return TorchBackend(device)
    if framework == "paddle":
        from opbench.backends.paddle_backend import PaddleBackend

        return PaddleBackend(device)
    raise ValueError(f"unknown framework {framework!r} (known: {', '.join(FRAMEWORKS)})")


def gpu_available() -> bool:
    """True when any installed framework sees a CUDA GPU (the default ``--device``)."""
    for fw in FRAMEWORKS:
        if not installed(fw):
            continue
        try:
            if get_backend(fw, "cpu").has_cuda():
                return True
        except FrameworkMissing:
            continue
    return False


def free_memory(device: str) -> int:
    """Bytes free on ``device`` now, as the first installed framework sees it (the default memory limit)."""
    from opbench.backends.base import host_free_memory

    for fw in FRAMEWORKS:
        if installed(fw) and (device == "cpu" or get_backend(fw, "cpu").has_cuda()):
            return get_backend(fw, device).free_memory()
    return host_free_memory()


def default_device() -> str:
    return "gpu" if gpu_available() else "cpu"


__all__ = [
    "FRAMEWORKS",
    "Backend",
    "DeviceInfo",
    "DeviceUnavailable",
    "Event",
    "FrameworkMissing",
    "default_device",
    "flush_bytes",
    "free_memory",
    "get_backend",
    "gpu_available",
    "installed",
]
