"""PyTorch adapter."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from opbench.backends.base import Backend, DeviceInfo, Event, FrameworkMissing, HostEvent, host_free_memory

try:
    import torch
except ImportError:  # pragma: no cover - exercised where torch is absent
    torch = None

_NAMES = {
    "bool": "bool", "uint8": "uint8", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "float16": "float16", "bfloat16": "bfloat16", "float32": "float32", "float64": "float64",
    "complex64": "complex64", "complex128": "complex128",
}


class _CudaEvent(Event):
    def __init__(self) -> None:
        self.e = torch.cuda.Event(enable_timing=True)

    def record(self) -> None:
        self.e.record()

    def elapsed_ms(self, end: Event) -> float:
        assert isinstance(end, _CudaEvent)
        return self.e.elapsed_time(end.e)


class TorchBackend(Backend):
    """PyTorch on the CPU or the current CUDA device."""

    name = "torch"

    def __init__(self, device: str = "cpu") -> None:
        if torch is None:
            raise FrameworkMissing("PyTorch is not installed: pip install torch==2.13.0 (CPU) or a CUDA build")
        super().__init__(device)
        self.torch_device = torch.device("cuda" if device == "gpu" else "cpu")

    @staticmethod
    def version() -> str:
        return torch.__version__ if torch is not None else ""

    @staticmethod
    def has_cuda() -> bool:
        return torch is not None and torch.cuda.is_available()

    @property
    def module(self) -> Any:
        return torch

    def framework_dtype(self, name: str) -> Any:
        return getattr(torch, _NAMES[name])

    def from_numpy(self, array: np.ndarray, dtype: str, requires_grad: bool = False) -> Any:
        t = torch.from_numpy(np.asarray(array, order="C")).to(self.torch_device)
        t = t.to(self.framework_dtype(dtype))
        return t.requires_grad_(requires_grad) if requires_grad else t

    def to_numpy(self, tensor: Any) -> np.ndarray:
        t = tensor.detach()
        if t.dtype == torch.bfloat16:
            t = t.float()
        return t.cpu().resolve_conj().numpy()

    def is_tensor(self, value: Any) -> bool:
        return isinstance(value, torch.Tensor)

    def dtype_name(self, tensor: Any) -> str:
        return str(tensor.dtype).removeprefix("torch.")

    def cast(self, tensor: Any, dtype: str) -> Any:
        return tensor.to(self.framework_dtype(dtype))

    def detach(self, tensor: Any, requires_grad: bool = False) -> Any:
        t = tensor.detach()
        return t.requires_grad_(True) if requires_grad else t

    def zeros(self, shape: tuple[int, ...], dtype: str) -> Any:
        return torch.zeros(shape, dtype=self.framework_dtype(dtype), device=self.torch_device)

    def copy_(self, dst: Any, src: Any) -> None:
        dst.copy_(src)

    def random(self, shape: tuple[int, ...], dtype: str, seed: int) -> Any:
        gen = torch.Generator(device=self.torch_device).manual_seed(seed % 2**63)
        t = torch.rand(shape, generator=gen, device=self.torch_device, dtype=torch.float32) * 2 - 1
        return t.to(self.framework_dtype(dtype))

    def requires_grad(self, tensor: Any) -> bool:
        return bool(tensor.requires_grad)

    def grad(self, outputs: Sequence[Any], inputs: Sequence[Any], grads: Sequence[Any],
             retain_graph: bool = False) -> list[Any]:
        return list(torch.autograd.grad(list(outputs), list(inputs), list(grads),
                                        retain_graph=retain_graph, allow_unused=True))

    def no_grad(self) -> Any:
        return torch.no_grad()

    def synchronize(self) -> None:
        if self.device == "gpu":
            torch.cuda.synchronize()

    def event(self) -> Event:
        return _CudaEvent() if self.device == "gpu" else HostEvent()

    def device_info(self) -> DeviceInfo:
        if self.device != "gpu":
            return DeviceInfo("cpu", "cpu", total_memory=None)
        p = torch.cuda.get_device_properties(torch.cuda.current_device())
        return DeviceInfo("gpu", p.name, total_memory=p.total_memory, l2_bytes=getattr(p, "L2_cache_size", None),
                          sm_count=p.multi_processor_count, capability=f"{p.major}.{p.minor}")

    def free_memory(self) -> int:
        if self.device != "gpu":
            return host_free_memory()
        free, _ = torch.cuda.mem_get_info()
        return free + torch.cuda.memory_reserved() - torch.cuda.memory_allocated()

    def empty_cache(self) -> None:
        if self.device == "gpu":
            torch.cuda.empty_cache()

    def _empty_int32(self, n: int) -> Any:
        return torch.empty(n, dtype=torch.int32, device=self.torch_device)

    def _zero(self, tensor: Any) -> None:
        tensor.zero_()

    def from_dlpack(self, tensor: Any) -> Any:
        return torch.from_dlpack(tensor)

    def data_ptr(self, tensor: Any) -> int:
        return tensor.data_ptr()

    def compile(self, fn: Any) -> Any:
        """``torch.compile`` with static shapes (the benchmark's ``torch-compile`` provider)."""
        return torch.compile(fn, dynamic=False)

    @contextlib.contextmanager
    def sync_debug(self, mode: str = "warn") -> Any:
        """``torch.cuda.set_sync_debug_mode`` for the duration (warns on hidden syncs)."""
        old = torch.cuda.get_sync_debug_mode()
        torch.cuda.set_sync_debug_mode(mode)
        try:
            yield
        finally:
            torch.cuda.set_sync_debug_mode(old)

    def profile_kernels(self, fn: Any) -> list[tuple[str, float]]:
        """One call of ``fn`` under ``torch.profiler`` (CUDA activity only): each kernel/memset/memcpy, in us."""
        if self.device != "gpu":
            raise NotImplementedError("kernel timing needs a GPU (use the wall clock on the CPU)")
        from torch.autograd import DeviceType
        from torch.profiler import ProfilerActivity, profile

        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        return [(e.name(), e.duration_ns() / 1e3) for e in prof.profiler.kineto_results.events()
                if e.device_type() == DeviceType.CUDA
                and not getattr(e, "is_user_annotation", lambda: False)()]

    def capture_graph(self, fn: Any) -> Any:
        """``torch.cuda.CUDAGraph`` of one call of ``fn``, warmed up on a side stream as the docs ask."""
        if self.device != "gpu":
            raise NotImplementedError("CUDA-graph timing needs a GPU")
        current = torch.cuda.current_stream()
        if current == torch.cuda.default_stream():  # capture needs a side stream; warm up there too
            stream = torch.cuda.Stream()
            stream.wait_stream(current)
        else:  # inside graph_stream(): keep the stream a retained forward's backward will run on
            stream = current
        with torch.cuda.stream(stream):
            for _ in range(3):
                fn()
        current.wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=stream):
            fn()
        torch.cuda.synchronize()
        return graph.replay

    def graph_stream(self) -> Any:
        """``torch.cuda.stream`` of one side stream kept for this backend (null context on the CPU)."""
        if self.device != "gpu":
            return contextlib.nullcontext()
        if getattr(self, "_graph_stream", None) is None:
            self._graph_stream = torch.cuda.Stream()
        return torch.cuda.stream(self._graph_stream)

    def host_empty(self, shape: tuple[int, ...], dtype: str, pinned: bool = False) -> Any:
        return torch.empty(shape, dtype=self.framework_dtype(dtype), device="cpu", pin_memory=pinned)

    def pin_memory(self, tensor: Any) -> Any:
        return tensor.pin_memory()

    def to_device(self, tensor: Any, non_blocking: bool = False) -> Any:
        return tensor.to("cuda", non_blocking=non_blocking)

    def to_host(self, tensor: Any, non_blocking: bool = False) -> Any:
        return tensor.to("cpu", non_blocking=non_blocking)

    def copy_async(self, dst: Any, src: Any, non_blocking: bool = True) -> None:
        dst.copy_(src, non_blocking=non_blocking)

    def new_stream(self) -> Any:
        return torch.cuda.Stream()

    def current_stream(self) -> Any:
        return torch.cuda.current_stream()

    def stream_guard(self, stream: Any) -> Any:
        return torch.cuda.stream(stream)

    def wait_stream(self, stream: Any, other: Any) -> None:
        stream.wait_stream(other)

    def stream_synchronize(self, stream: Any) -> None:
        stream.synchronize()

    def profile_to_chrome_trace(self, fn: Any, path: str, with_stack: bool = True) -> None:
        """torch.profiler with CPU and CUDA activity, Python stacks, and CUDA sync events where offered."""
        acts = [torch.profiler.ProfilerActivity.CPU]
        if self.device == "gpu":
            acts.append(torch.profiler.ProfilerActivity.CUDA)
            with contextlib.suppress(AttributeError, RuntimeError):  # private switch; absent in old releases
                torch._C._profiler._set_cuda_sync_enabled_val(True)
        prof = torch.profiler.profile(activities=acts, with_stack=with_stack)
        try:
            with prof:
                try:
                    fn()
                finally:
                    self.synchronize()
        finally:
            prof.export_chrome_trace(str(path))

    # close_figures reduces rows of CLOSE_ROW elements: per-row partial figures in one pass (one fused
    # kernel on the GPU, through torch.compile), then a small reduction over the rows. Rows keep the
    # reduction parallel at any size; eager mode would make ~15 passes over the data instead.
    CLOSE_ROW = 2**15
    close_path = ""  # "compiled" or "eager": what the last close_figures ran (for overhead reports)

    def close_figures(self, actual: Any, expected: Any, atol: float, rtol: float
                      ) -> tuple[int, float, float, tuple[int, ...] | None]:
        a, e = actual.detach(), expected.detach()
        if a.shape != e.shape:
            raise ValueError(f"close_figures: shapes differ {tuple(a.shape)} vs {tuple(e.shape)}")
        if a.numel() == 0:
            return 0, 0.0, 0.0, None
        dts = (a.dtype, e.dtype)
        if any(d.is_complex for d in dts):
            work = torch.complex128
        elif torch.float64 in dts or (any(d.is_floating_point for d in dts)
                                      and not all(d.is_floating_point for d in dts)):
            work = torch.float64
        elif all(d.is_floating_point for d in dts):
            work = torch.float32
        else:
            work = torch.int64
        a1, e1 = a.reshape(-1), e.reshape(-1)
        n, row = a1.numel(), self.CLOSE_ROW
        full = n // row * row
        views = [(a1[:full].view(-1, row), e1[:full].view(-1, row))] if full else []
        if n > full:
            views.append((a1[full:].view(1, -1), e1[full:].view(1, -1)))
        compile_ok = n >= row
        parts = [self._close_rows_call(x, y, atol, rtol, work, compile_ok) for x, y in views]
        p = parts[0] if len(parts) == 1 else torch.cat(parts, dim=1)
        stats = torch.cat([p[0].sum().view(1), p[1:].amax(dim=1)])
        count, max_abs, max_rel = stats.tolist()  # the one device-to-host copy of a passing comparison
        first = None
        if count:  # failure path: find the first bad element (eager, once)
            bad = TorchBackend._close_bad(a1, e1, atol, rtol, work)
            flat = int(torch.nonzero(bad)[0, 0])
            first = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), tuple(a.shape)))
        return int(count), float(max_abs), float(max_rel), first

    def _close_rows_call(self, a: Any, e: Any, atol: float, rtol: float, work: Any, compile_ok: bool) -> Any:
        fn = TorchBackend._close_rows
        if self.device == "gpu" and compile_ok:  # small tensors are launch-bound either way: eager
            compiled = getattr(TorchBackend, "_close_rows_compiled", None)
            if compiled is None:
                compiled = torch.compile(TorchBackend._close_rows, dynamic=True)
                TorchBackend._close_rows_compiled = compiled
            fn = compiled
        try:
            out = fn(a, e, atol, rtol, work)
        except Exception:  # noqa: BLE001 - a compiler failure must not fail the comparison
            if fn is TorchBackend._close_rows:
                raise
            TorchBackend._close_rows_compiled = TorchBackend._close_rows
            fn = TorchBackend._close_rows
            out = fn(a, e, atol, rtol, work)
        self.close_path = "eager" if fn is TorchBackend._close_rows else "compiled"
        return out

    @staticmethod
    def _close_parts(a: Any, e: Any, atol: float, rtol: float, work: Any) -> tuple[Any, Any, Any]:
        """Elementwise: mismatch mask, abs error, rel error (0 where equal, NaN equal to NaN)."""
        a, e = a.to(work), e.to(work)
        same = a == e
        if work != torch.int64:
            same = same | (a.isnan() & e.isnan())
        diff = (a - e).abs()
        if not diff.is_floating_point():
            diff = diff.to(torch.float64)
        diff = torch.where(same, 0, diff)
        ref = e.abs().to(diff.dtype)
        bad = ~(diff <= atol + rtol * ref) & ~same
        rel = torch.where(same, 0, diff / ref)
        return bad, diff, rel

    @staticmethod
    def _close_rows(a: Any, e: Any, atol: float, rtol: float, work: Any) -> Any:
        """Per-row [mismatches, max abs, max rel] of 2-D inputs, as a float64 [3, rows] tensor."""
        bad, diff, rel = TorchBackend._close_parts(a, e, atol, rtol, work)
        return torch.stack([bad.sum(dim=1).to(torch.float64), diff.amax(dim=1).to(torch.float64),
                            rel.amax(dim=1).to(torch.float64)])

    @staticmethod
    def _close_bad(a: Any, e: Any, atol: float, rtol: float, work: Any) -> Any:
        return TorchBackend._close_parts(a, e, atol, rtol, work)[0]
