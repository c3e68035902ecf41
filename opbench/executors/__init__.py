"""Executors: where the cases of a run are worked on, one shared interface for ``accuracy`` and ``bench``.

A run hands an executor a list of items (cases), a picklable ``worker_factory`` (called once per
worker process or Ray actor; it returns a callable turning one item into one record) and a
``lost`` function (the record of an item whose worker died or hung). Records stream back to
``on_result`` in completion order; the caller writes them with its own writer code, so a local
run and a Ray run produce the same files.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable, Sequence
from typing import Any, Protocol

Record = dict[str, Any]
OnResult = Callable[[Record], None]
Lost = Callable[[Any, str, str], Record]

RAY_MISSING = 'the ray executor needs Ray: pip install -e ".[ray]"'
EXECUTORS = ("local", "ray")


class StartError(RuntimeError):
    """The workers of an executor cannot start (a framework missing, no GPU): the message says why, in one line."""


class Executor(Protocol):
    """Works on ``items`` and calls ``on_result`` once per item, in completion order."""

    def run(self, items: Sequence[Any], on_result: OnResult) -> None: ...


def placement() -> dict[str, str]:
    """The ``host`` and ``gpu`` fields of a record: this host's name and the GPU this process uses ("cpu" if none)."""
    return {"host": socket.gethostname(), "gpu": _gpu_name()}


def _gpu_name() -> str:
    # Only frameworks this process already loaded are asked: placement never imports a framework.
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in ("", "-1"):
        return "cpu"
    ordinal = visible.split(",")[0].strip() if visible else "0"
    try:
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            return f"{torch.cuda.get_device_name(torch.cuda.current_device())} #{ordinal}"
        paddle = sys.modules.get("paddle")
        if paddle is not None and paddle.device.is_compiled_with_cuda() and paddle.device.cuda.device_count():
            return f"{paddle.device.cuda.get_device_name()} #{ordinal}"
    except Exception:  # noqa: BLE001 - no driver: the record says cpu
        pass
    return "cpu"


def make_ray_executor(worker_factory: Callable[[], Callable[[Any], Record]], lost: Lost, *, address: str | None,
                 workers: int | None, timeout: float, use_gpus: bool) -> Executor:
    """A Ray executor (``--executor ray``); a one-line RuntimeError naming the extra when Ray is missing."""
    try:
        import ray  # noqa: F401
    except ImportError:
        raise RuntimeError(RAY_MISSING) from None
    from opbench.executors.ray_executor import RayExecutor

    return RayExecutor(worker_factory, lost, address=address, workers=workers, timeout=timeout, use_gpus=use_gpus)
