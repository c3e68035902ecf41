"""The surface every framework adapter offers; the suite reaches Paddle and PyTorch only through it.

An adapter turns host arrays into framework tensors on a device and back,
resolves and calls APIs, runs backward, synchronizes, records device events,
flushes the L2 cache, exchanges tensors through DLPack and reports memory.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

# The flush buffer is at least this large, and at least twice the L2 (nvbench sizes
# it to the L2; Triton's do_bench zeroes 256 MiB; twice the L2 covers both).
MIN_FLUSH_BYTES = 256 * 2**20


class FrameworkMissing(ImportError):
    """A framework the command needs is not installed; the message says which and how to get it."""


class DeviceUnavailable(RuntimeError):
    """The requested device (a CUDA GPU) is not there for this framework."""


@dataclass(frozen=True)
class DeviceInfo:
    """What the suite reports about a device (``opbench env``, benchmark environment blocks)."""

    kind: str  # "cpu" or "gpu"
    name: str
    total_memory: int | None = None
    l2_bytes: int | None = None
    sm_count: int | None = None
    capability: str | None = None


def flush_bytes(l2_bytes: int | None) -> int:
    """Size of the L2-flush buffer for a device with ``l2_bytes`` of L2."""
    return max(2 * (l2_bytes or 0), MIN_FLUSH_BYTES)


def host_free_memory() -> int:
    """Bytes of host memory available now (the memory limit for CPU cases)."""
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return 8 * 2**30


class Event(ABC):
    """A device timing event (a CUDA event on the GPU, a host clock on the CPU)."""

    @abstractmethod
    def record(self) -> None: ...

    @abstractmethod
    def elapsed_ms(self, end: Event) -> float:
        """Milliseconds from this event to ``end``; both must have completed."""


class HostEvent(Event):
    """A wall-clock event for CPU timing; the caller synchronizes before recording."""

    def __init__(self) -> None:
        self.t = 0.0

    def record(self) -> None:
        import time

        self.t = time.perf_counter()

    def elapsed_ms(self, end: Event) -> float:
        assert isinstance(end, HostEvent)
        return (end.t - self.t) * 1e3


class Backend(ABC):
    """One framework on one device (``"cpu"`` or ``"gpu"``)."""

    name: str = ""

    def __init__(self, device: str = "cpu") -> None:
        if device not in ("cpu", "gpu"):
            raise ValueError(f"device must be 'cpu' or 'gpu', got {device!r}")
        if device == "gpu" and not self.has_cuda():
            raise DeviceUnavailable(f"{self.name} has no usable CUDA GPU here; use --device cpu")
        self.device = device
        self._flush_buffer: Any = None

    # -- framework ---------------------------------------------------------------------------
    @staticmethod
    @abstractmethod
    def version() -> str: ...

    @staticmethod
    @abstractmethod
    def has_cuda() -> bool: ...

    @property
    @abstractmethod
    def module(self) -> Any:
        """The framework's top-level module (``paddle`` / ``torch``)."""

    # -- tensors -----------------------------------------------------------------------------
    @abstractmethod
    def from_numpy(self, array: np.ndarray, dtype: str, requires_grad: bool = False) -> Any:
        """A tensor on this backend's device with ``array``'s values in case dtype ``dtype``."""

    @abstractmethod
    def to_numpy(self, tensor: Any) -> np.ndarray:
        """Host copy of a tensor (bfloat16 comes back as float32)."""

    @abstractmethod
    def is_tensor(self, value: Any) -> bool: ...

    @abstractmethod
    def dtype_name(self, tensor: Any) -> str:
        """The case dtype name of a tensor (``"float32"``, ``"bfloat16"``, ...)."""

    @abstractmethod
    def framework_dtype(self, name: str) -> Any:
        """The framework's dtype object for a case dtype name."""

    @abstractmethod
    def cast(self, tensor: Any, dtype: str) -> Any: ...

    @abstractmethod
    def detach(self, tensor: Any, requires_grad: bool = False) -> Any:
        """A tensor sharing storage, cut from any graph, optionally a new leaf requiring grad."""

    def is_floating(self, tensor: Any) -> bool:
        return self.dtype_name(tensor) in ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")

    def clone(self, tensor: Any) -> Any:
        """A differentiable copy (both frameworks spell it ``clone``): what an in-place API writes into."""
        return tensor.clone()

    @abstractmethod
    def zeros(self, shape: tuple[int, ...], dtype: str) -> Any:
        """A zero-filled tensor on the device."""

    @abstractmethod
    def copy_(self, dst: Any, src: Any) -> None:
        """Copy ``src`` into ``dst`` in place (same shape and device)."""

    @abstractmethod
    def random(self, shape: tuple[int, ...], dtype: str, seed: int) -> Any:
        """Uniform [-1, 1) values drawn on the device (output grads, GPU-cached inputs)."""

    # -- calls and autograd --------------------------------------------------------------------
    def resolve(self, api: str) -> Callable[..., Any]:
        """The callable a dotted API name names, e.g. ``paddle.nn.functional.relu``."""
        head, _, rest = api.partition(".")
        if head != self.module.__name__:
            raise AttributeError(f"{api} is not a {self.name} API")
        obj: Any = self.module
        for part in rest.split("."):
            obj = getattr(obj, part)
        if not callable(obj):
            raise AttributeError(f"{api} is not callable")
        return obj

    @abstractmethod
    def requires_grad(self, tensor: Any) -> bool:
        """True when autograd tracks the tensor (a leaf requiring grad or a result of one)."""

    @abstractmethod
    def grad(self, outputs: Sequence[Any], inputs: Sequence[Any], grads: Sequence[Any],
             retain_graph: bool = False) -> list[Any]:
        """Gradients of ``outputs`` (weighted by ``grads``) w.r.t. ``inputs``; ``None`` where unused."""

    @abstractmethod
    def no_grad(self) -> Any:
        """A context manager that turns autograd recording off."""

    # -- device ------------------------------------------------------------------------------
    @abstractmethod
    def synchronize(self) -> None: ...

    @abstractmethod
    def event(self) -> Event: ...

    @abstractmethod
    def device_info(self) -> DeviceInfo: ...

    @abstractmethod
    def free_memory(self) -> int:
        """Bytes free on the device now (host memory for the CPU)."""

    @abstractmethod
    def empty_cache(self) -> None: ...

    @abstractmethod
    def set_cpu_threads(self, n: int) -> None:
        """Run the framework's CPU ops on ``n`` threads (its intra-op/OpenMP setting, which ops/'s kernels
        follow through the framework's binding)."""

    def flush_l2(self) -> None:
        """Evict the L2 cache by zeroing a buffer of :func:`flush_bytes` (no-op on the CPU)."""
        if self.device != "gpu":
            return
        if self._flush_buffer is None:
            n = flush_bytes(self.device_info().l2_bytes) // 4
            self._flush_buffer = self._empty_int32(n)
        self._zero(self._flush_buffer)

    @abstractmethod
    def _empty_int32(self, n: int) -> Any: ...

    @abstractmethod
    def _zero(self, tensor: Any) -> None: ...

    # -- exchange ----------------------------------------------------------------------------
    @abstractmethod
    def from_dlpack(self, tensor: Any) -> Any:
        """A tensor of this framework sharing memory with ``tensor`` of another (no copy)."""

    @abstractmethod
    def data_ptr(self, tensor: Any) -> int:
        """The device address of a tensor's first element (to prove zero-copy exchange)."""

    # -- op_benchmark: profiler kernel times and CUDA graphs ---------------------------------
    def profile_kernels(self, fn: Callable[[], Any]) -> list[tuple[str, float]]:
        """Run ``fn`` once under the framework profiler: each GPU activity (kernel, memset, memcpy)
        it caused, as ``(name, microseconds)``. The caller keeps anything it must not count outside."""
        raise NotImplementedError(f"{self.name} on {self.device}: kernel timing through the profiler is not supported")

    def capture_graph(self, fn: Callable[[], Any]) -> Callable[[], None]:
        """Warm ``fn`` up, capture one call in a CUDA graph and return the graph's replay."""
        raise NotImplementedError(f"{self.name} on {self.device}: CUDA-graph timing is not supported")

    def graph_stream(self) -> Any:
        """A context manager putting work on a non-default stream, so a CUDA graph can later capture the
        backward of a forward run inside it (autograd runs backward ops on their forward's stream)."""
        import contextlib

        return contextlib.nullcontext()

    # -- host memory, streams and the profiler (``opbench tools``) ----------------------------
    def host_empty(self, shape: tuple[int, ...], dtype: str, pinned: bool = False) -> Any:
        """An uninitialized host (CPU) tensor, page-locked when ``pinned`` (allocated once, reused)."""
        raise NotImplementedError(f"{self.name}: host tensors are not supported")

    def pin_memory(self, tensor: Any) -> Any:
        """A page-locked copy of a host tensor (``.pin_memory()``: allocates and copies every call)."""
        raise NotImplementedError(f"{self.name}: pinned host memory is not supported")

    def to_device(self, tensor: Any, non_blocking: bool = False) -> Any:
        """A new GPU copy of a host tensor (``.to("cuda", non_blocking=...)``)."""
        raise NotImplementedError(f"{self.name}: host-to-device copies are not supported")

    def to_host(self, tensor: Any, non_blocking: bool = False) -> Any:
        """A new host copy of a device tensor (``.to("cpu", non_blocking=...)``)."""
        raise NotImplementedError(f"{self.name}: device-to-host copies are not supported")

    def copy_async(self, dst: Any, src: Any, non_blocking: bool = True) -> None:
        """``dst.copy_(src)`` across host and device; the caller synchronizes before reading ``dst``."""
        raise NotImplementedError(f"{self.name}: non_blocking copies are not supported")

    def new_stream(self) -> Any:
        """A new (non-default) device stream."""
        raise NotImplementedError(f"{self.name}: streams are not supported")

    def current_stream(self) -> Any:
        raise NotImplementedError(f"{self.name}: streams are not supported")

    def stream_guard(self, stream: Any) -> Any:
        """A context manager making ``stream`` current for the work launched inside it."""
        raise NotImplementedError(f"{self.name}: streams are not supported")

    def wait_stream(self, stream: Any, other: Any) -> None:
        """Make ``stream`` wait (on the device) for the work queued so far on ``other``."""
        stream.wait_stream(other)  # Paddle's and PyTorch's stream objects share this method

    def stream_synchronize(self, stream: Any) -> None:
        """Block the host until the work queued on ``stream`` is done."""
        stream.synchronize()

    def profile_to_chrome_trace(self, fn: Callable[[], Any], path: str, with_stack: bool = True) -> None:
        """Run ``fn`` under the framework profiler (host, runtime and device activity) and write a
        Chrome-trace JSON to ``path``; the trace is written even when ``fn`` raises (then re-raised)."""
        raise NotImplementedError(f"{self.name}: profiling to a Chrome trace is not supported")

    def sync_debug(self, mode: str = "warn") -> Any:
        """A context manager that warns on synchronizing calls (PyTorch's ``set_sync_debug_mode``)."""
        raise NotImplementedError(f"{self.name} has no sync debug mode (PyTorch's torch.cuda.set_sync_debug_mode)")

    def close_figures(self, actual: Any, expected: Any, atol: float, rtol: float
                      ) -> tuple[int, float, float, tuple[int, ...] | None]:
        """Compare two same-shape tensors on the device: (mismatches, max abs error, max rel error,
        first mismatching index or None), where a mismatch is ``|a - e| > atol + rtol * |e|``
        (NaN equals NaN). Only these few numbers leave the device (the accuracy checker's GPU mode)."""
        raise NotImplementedError(f"{self.name}: on-device comparison is not implemented")

    def close_figures_batch(self, pairs: Sequence[tuple[Any, Any, float, float]]
                            ) -> list[tuple[int, float, float, tuple[int, ...] | None]]:
        """:meth:`close_figures` of each ``(actual, expected, atol, rtol)``, in order. A backend may
        keep every pair's figures on the device and copy them to the host once (PyTorch does)."""
        return [self.close_figures(a, e, atol, rtol) for a, e, atol, rtol in pairs]
