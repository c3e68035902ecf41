"""PaddlePaddle adapter."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from opbench.backends.base import Backend, DeviceInfo, Event, FrameworkMissing, HostEvent, host_free_memory

try:
    with warnings.catch_warnings():  # paddle warns about a missing ccache on import
        warnings.simplefilter("ignore")
        import paddle
except ImportError:  # pragma: no cover - exercised where paddle is absent
    paddle = None


class _CudaEvent(Event):
    def __init__(self) -> None:
        self.e = paddle.device.Event(enable_timing=True)

    def record(self) -> None:
        self.e.record()

    def elapsed_ms(self, end: Event) -> float:
        assert isinstance(end, _CudaEvent)
        return self.e.elapsed_time(end.e)


class PaddleBackend(Backend):
    """PaddlePaddle on the CPU or GPU 0 of the visible devices."""

    name = "paddle"

    def __init__(self, device: str = "cpu") -> None:
        if paddle is None:
            raise FrameworkMissing(
                "PaddlePaddle is not installed: pip install paddlepaddle==3.3.1 (CPU), or paddlepaddle-gpu "
                "from Paddle's package index for CUDA"
            )
        super().__init__(device)
        self.place = paddle.CUDAPlace(0) if device == "gpu" else paddle.CPUPlace()
        paddle.device.set_device("gpu:0" if device == "gpu" else "cpu")

    @staticmethod
    def version() -> str:
        return paddle.__version__ if paddle is not None else ""

    @staticmethod
    def has_cuda() -> bool:
        return paddle is not None and paddle.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0

    @property
    def module(self) -> Any:
        return paddle

    def framework_dtype(self, name: str) -> Any:
        return getattr(paddle, name)

    def from_numpy(self, array: np.ndarray, dtype: str, requires_grad: bool = False) -> Any:
        t = paddle.to_tensor(np.asarray(array, order="C"), place=self.place)
        if self.dtype_name(t) != dtype:
            t = t.astype(dtype)
        t.stop_gradient = not requires_grad
        return t

    def to_numpy(self, tensor: Any) -> np.ndarray:
        t = tensor.detach()
        if t.dtype in (paddle.bfloat16, paddle.float8_e4m3fn, paddle.float8_e5m2):  # NumPy has no such dtypes
            t = t.astype("float32")
        return t.numpy()

    def is_tensor(self, value: Any) -> bool:
        return isinstance(value, paddle.Tensor)

    def dtype_name(self, tensor: Any) -> str:
        return str(tensor.dtype).removeprefix("paddle.")

    def cast(self, tensor: Any, dtype: str) -> Any:
        return tensor.astype(dtype)

    def detach(self, tensor: Any, requires_grad: bool = False) -> Any:
        t = tensor.detach()
        t.stop_gradient = not requires_grad
        return t

    def zeros(self, shape: tuple[int, ...], dtype: str) -> Any:
        return paddle.zeros(list(shape), dtype=dtype)

    def copy_(self, dst: Any, src: Any) -> None:
        paddle.assign(src, output=dst)

    def random(self, shape: tuple[int, ...], dtype: str, seed: int) -> Any:
        t = paddle.uniform(list(shape), dtype="float32", min=-1.0, max=1.0, seed=seed % (2**31 - 1) + 1)
        return t.astype(dtype) if dtype != "float32" else t

    def requires_grad(self, tensor: Any) -> bool:
        return not tensor.stop_gradient

    def grad(self, outputs: Sequence[Any], inputs: Sequence[Any], grads: Sequence[Any],
             retain_graph: bool = False) -> list[Any]:
        return list(paddle.grad(list(outputs), list(inputs), list(grads),
                                retain_graph=retain_graph, allow_unused=True))

    def no_grad(self) -> Any:
        return paddle.no_grad()

    def synchronize(self) -> None:
        if self.device == "gpu":
            paddle.device.synchronize()

    def event(self) -> Event:
        return _CudaEvent() if self.device == "gpu" else HostEvent()

    def device_info(self) -> DeviceInfo:
        if self.device != "gpu":
            return DeviceInfo("cpu", "cpu")
        p = paddle.device.cuda.get_device_properties(0)
        return DeviceInfo("gpu", p.name, total_memory=p.total_memory, l2_bytes=getattr(p, "L2_cache_size", None),
                          sm_count=p.multi_processor_count, capability=f"{p.major}.{p.minor}")

    def free_memory(self) -> int:
        if self.device != "gpu":
            return host_free_memory()
        info = self.device_info()
        return (info.total_memory or 0) - paddle.device.cuda.memory_allocated()

    def empty_cache(self) -> None:
        if self.device == "gpu":
            paddle.device.cuda.empty_cache()

    def set_cpu_threads(self, n: int) -> None:
        paddle.base.core.set_num_threads(n)  # its OpenMP runtime's count (Paddle sets OMP_NUM_THREADS=1 on import)

    def _empty_int32(self, n: int) -> Any:
        return paddle.empty([n], dtype="int32")

    def _zero(self, tensor: Any) -> None:
        tensor.zero_()

    def from_dlpack(self, tensor: Any) -> Any:
        return paddle.utils.dlpack.from_dlpack(tensor)

    def data_ptr(self, tensor: Any) -> int:
        return tensor.data_ptr()

    def profile_kernels(self, fn: Any) -> list[tuple[str, float]]:
        """One call of ``fn`` under ``paddle.profiler``: each kernel/memset/memcpy on the GPU, in us."""
        if self.device != "gpu":
            raise NotImplementedError("kernel timing needs a GPU (use the wall clock on the CPU)")
        import paddle.profiler as pp
        from paddle.profiler.profiler_statistic import TracerEventType, get_device_nodes

        paddle.device.synchronize()
        prof = pp.Profiler(targets=[pp.ProfilerTarget.CPU, pp.ProfilerTarget.GPU])
        prof.start()
        fn()
        paddle.device.synchronize()
        prof.stop()
        kinds = (TracerEventType.Kernel, TracerEventType.Memcpy, TracerEventType.Memset)
        out = [(d.name, (d.end_ns - d.start_ns) / 1e3) for root in prof.profiler_result.get_data().values()
               for d in get_device_nodes(root) if d.type in kinds]
        if not out:
            raise RuntimeError("paddle.profiler recorded no GPU activity for the call")
        return out

    def capture_graph(self, fn: Any) -> Any:
        """Not offered: Paddle's dygraph CUDA-graph capture is experimental and unverified here."""
        raise NotImplementedError("CUDA-graph timing is not supported for Paddle providers; use --method events")

    def host_empty(self, shape: tuple[int, ...], dtype: str, pinned: bool = False) -> Any:
        if dtype == "bfloat16":
            raise NotImplementedError("paddle: bfloat16 host buffers are not supported here; use float16")
        place = paddle.CUDAPinnedPlace() if pinned else paddle.CPUPlace()
        return paddle.to_tensor(np.empty(shape, dtype=np.dtype(dtype)), place=place)

    def pin_memory(self, tensor: Any) -> Any:
        return tensor.pin_memory()

    def to_device(self, tensor: Any, non_blocking: bool = False) -> Any:
        return tensor.cuda(blocking=not non_blocking)

    def to_host(self, tensor: Any, non_blocking: bool = False) -> Any:
        return tensor.to("cpu", blocking=not non_blocking)

    def copy_async(self, dst: Any, src: Any, non_blocking: bool = True) -> None:
        dst.copy_(src, blocking=not non_blocking)

    def new_stream(self) -> Any:
        return paddle.device.Stream()

    def current_stream(self) -> Any:
        return paddle.device.current_stream()

    def stream_guard(self, stream: Any) -> Any:
        return paddle.device.stream_guard(stream)

    def profile_to_chrome_trace(self, fn: Any, path: str, with_stack: bool = True) -> None:
        """paddle.profiler (CPU and GPU targets); Paddle's traces carry no Python frames (``with_stack`` unused)."""
        from paddle import profiler

        targets = [profiler.ProfilerTarget.CPU]
        if self.device == "gpu":
            targets.append(profiler.ProfilerTarget.GPU)
        prof = profiler.Profiler(targets=targets, on_trace_ready=lambda _: None)  # no ./profiler_log/ default
        prof.start()
        try:
            try:
                fn()
            finally:
                self.synchronize()
        finally:
            prof.stop()
            prof.export(str(path), format="json")

    def close_figures(self, actual: Any, expected: Any, atol: float, rtol: float
                      ) -> tuple[int, float, float, tuple[int, ...] | None]:
        a, e = actual.detach(), expected.detach()
        if list(a.shape) != list(e.shape):
            raise ValueError(f"close_figures: shapes differ {list(a.shape)} vs {list(e.shape)}")
        if a.size == 0:
            return 0, 0.0, 0.0, None
        names = (self.dtype_name(a), self.dtype_name(e))
        work = "complex128" if any(n.startswith("complex") for n in names) else "float64"
        a, e = a.astype(work).flatten(), e.astype(work).flatten()
        same = paddle.equal(a, e)
        cplx = work == "complex128"
        parts = (paddle.real(a), paddle.imag(a), paddle.real(e), paddle.imag(e)) if cplx else (a, a, e, e)
        a_nan = paddle.logical_or(paddle.isnan(parts[0]), paddle.isnan(parts[1]))
        e_nan = paddle.logical_or(paddle.isnan(parts[2]), paddle.isnan(parts[3]))
        same = paddle.logical_or(same, paddle.logical_and(a_nan, e_nan))
        diff = paddle.abs(a - e)
        diff = paddle.where(same, paddle.zeros_like(diff), diff)
        ref = paddle.abs(e)
        bad = paddle.logical_and(paddle.logical_not(diff <= atol + rtol * ref), paddle.logical_not(same))
        rel = paddle.where(same, paddle.zeros_like(diff), diff / ref)
        stats = paddle.stack([bad.astype("float64").sum(), diff.max(), rel.max()]).numpy().tolist()
        count, max_abs, max_rel = stats
        first = None
        if count:
            flat = int(paddle.nonzero(bad)[0, 0])
            first = tuple(int(i) for i in np.unravel_index(flat, tuple(actual.shape)))
        return int(count), float(max_abs), float(max_rel), first
