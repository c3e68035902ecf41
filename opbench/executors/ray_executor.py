"""The Ray executor: one long-lived actor per GPU (or per CPU slot), cases handed out from a queue.

Each actor builds its worker once (CUDA context, built extensions, GPU input cache stay warm
across cases) and takes the next case when it returns one, so a slow case holds up no other.
An actor that dies mid-case (segfault, CUDA error, OOM kill, node loss) has its case recorded
through ``lost`` as ``crash``, as the local isolated workers do, and a fresh actor takes its slot
(one that dies between cases is restarted by Ray: ``max_restarts``). A case past ``timeout``
has its actor killed and replaced and is recorded ``timeout``.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import ray

from opbench.executors import Lost, OnResult, Record, placement

_CRASH, _TIMEOUT = "crash", "timeout"


class _Worker:
    """Actor body: builds the worker once, then runs one item per call and stamps host/GPU on the record."""

    def __init__(self, factory: Callable[[], Callable[[Any], Record]]) -> None:
        self.work = factory()
        self.where = placement()

    def run(self, item: Any) -> Record:
        rec = self.work(item)
        rec.update(self.where)
        return rec


class RayExecutor:
    """Dispatches items to Ray actors dynamically; see the module docstring for the failure rules."""

    def __init__(self, worker_factory: Callable[[], Callable[[Any], Record]], lost: Lost, *, address: str | None,
                 workers: int | None, timeout: float, use_gpus: bool) -> None:
        self.factory, self.lost, self.timeout = worker_factory, lost, timeout
        if not ray.is_initialized():
            # Actors see the driver's PYTHONPATH and OPBENCH_* settings (plugins, caches), as local workers do.
            env = {k: v for k, v in os.environ.items() if k == "PYTHONPATH" or k.startswith("OPBENCH_")}
            ray.init(address=address, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True,
                     runtime_env={"env_vars": env} if env else None)
        res = ray.cluster_resources()
        self.use_gpus = use_gpus and res.get("GPU", 0) >= 1
        self.slots = workers or int(res.get("GPU", 0) if self.use_gpus else res.get("CPU", 1)) or 1
        self.per_host: dict[str, int] = {}
        self.where: dict[int, dict[str, str]] = {}  # actor slot -> host/gpu of its last record (names lost cases)

    def _actor(self) -> Any:
        opts = {"num_gpus": 1} if self.use_gpus else {"num_cpus": 1}
        cls = ray.remote(max_restarts=-1, max_task_retries=0, **opts)(_Worker)
        return cls.remote(self.factory)

    def run(self, items: Sequence[Any], on_result: OnResult) -> None:
        if not items:
            return
        pending = deque(range(len(items)))
        actors = [self._actor() for _ in range(min(self.slots, len(items)))]
        inflight: dict[Any, tuple[int, int, float]] = {}  # ref -> (item index, actor slot, start time)

        def give(slot: int) -> None:
            if pending:
                i = pending.popleft()
                inflight[actors[slot].run.remote(items[i])] = (i, slot, time.monotonic())

        for slot in range(len(actors)):
            give(slot)
        try:
            while inflight:
                ready, _ = ray.wait(list(inflight), num_returns=1, timeout=0.5)
                for ref in ready:
                    i, slot, _t = inflight.pop(ref)
                    try:
                        rec = ray.get(ref)
                        self.where[slot] = {"host": rec.get("host", "?"), "gpu": rec.get("gpu", "?")}
                    except ray.exceptions.RayActorError as e:
                        rec = {**self.lost(items[i], _CRASH, f"worker died: {_reason(e)}"), **self.where.get(slot, {})}
                    except ray.exceptions.RayTaskError as e:
                        rec = {**self.lost(items[i], _CRASH, f"worker raised: {_reason(e)}"),
                               **self.where.get(slot, {})}
                    self.per_host[rec.get("host", "?")] = self.per_host.get(rec.get("host", "?"), 0) + 1
                    on_result(rec)
                    if rec.get("worker_restarted") or rec.get("error_side") == "worker":
                        # died, or CUDA error/OOM (its context is not to be trusted): a fresh actor takes the
                        # slot, so the next case never lands on one still restarting or on a lost node
                        ray.kill(actors[slot], no_restart=True)
                        actors[slot] = self._actor()
                    give(slot)
                now = time.monotonic()
                for ref, (i, slot, t) in list(inflight.items()):
                    if now - t > self.timeout:
                        del inflight[ref]
                        ray.kill(actors[slot], no_restart=True)
                        actors[slot] = self._actor()
                        on_result({**self.lost(items[i], _TIMEOUT, f"no result after {self.timeout:g} s; actor killed"),
                                   **self.where.get(slot, {})})
                        give(slot)
        finally:
            for a in actors:
                ray.kill(a, no_restart=True)


def _reason(e: BaseException) -> str:
    return str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
