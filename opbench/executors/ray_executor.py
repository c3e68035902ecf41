"""The Ray executor: one long-lived actor per GPU (or per CPU slot), cases handed out from a queue.

Each actor builds its worker once (CUDA context, built extensions, GPU input cache stay warm
across cases) and takes the next case when it returns one, so a slow case holds up no other.
A case is handed to an actor only once the actor is up, so ``timeout`` bounds the case alone,
as the local workers' timeout does (not the framework imports of a starting actor).
An actor that dies mid-case (segfault, CUDA error, node loss) has its case recorded through
``lost`` as ``crash``, as the local isolated workers do; one that Ray killed for memory
(``OutOfMemoryError``, or a death cause of ``NODE_OUT_OF_MEMORY``) as ``oom``. Either way a
fresh actor (started by the driver, not restarted by Ray, so that Ray keeps the death cause) takes its
slot. A case past ``timeout`` has its actor killed and replaced and is
recorded ``timeout``. Actors that die before their first case three times in a row stop the
run with :class:`~opbench.executors.StartError`.
"""

from __future__ import annotations

import os
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import ray

from opbench.executors import Lost, OnResult, Record, StartError, placement

_CRASH, _OOM, _TIMEOUT = "crash", "oom", "timeout"
_START_FAILURES = 3  # actors that die before their first case, in a row, before the run gives up
# How Ray says it killed a worker for memory, in an actor's death cause (Worker exit type / detail).
_OOM_SIGNS = ("NODE_OUT_OF_MEMORY", "running low on memory")


class _Worker:
    """Actor body: builds the worker once, then runs one item per call and stamps host/GPU on the record."""

    def __init__(self, factory: Callable[[], Callable[[Any], Record]]) -> None:
        self.work = factory()
        self.where = placement()
        self.ran = False

    def ready(self) -> dict[str, str]:
        return self.where

    def run(self, item: Any) -> Record:
        rec = self.work(item)
        if not self.ran:  # the first item loaded the frameworks: now the GPU can be named
            self.where, self.ran = placement(), True
        rec.update(self.where)
        return rec


def death_outcome(exc: BaseException) -> tuple[str, str]:
    """(outcome, one-line reason) of a case whose actor call raised ``exc``: ``oom`` when Ray killed it for memory."""
    lines = [x.strip() for x in str(exc).splitlines() if x.strip() and not x.startswith("\t")]
    text = " ".join(lines)[:300] or type(exc).__name__
    if isinstance(exc, ray.exceptions.OutOfMemoryError) or (
            isinstance(exc, ray.exceptions.RayActorError) and any(s in str(exc) for s in _OOM_SIGNS)):
        return _OOM, f"Ray killed the worker for memory: {text}"
    if isinstance(exc, ray.exceptions.RayActorError):
        return _CRASH, f"worker died: {text}"
    if isinstance(exc, ray.exceptions.RayTaskError):
        return _CRASH, f"worker raised: {text}"
    return _CRASH, f"{type(exc).__name__}: {text}"


def driver_threads() -> str:
    """The CPU thread count the frameworks use in this process, for the actors' ``OMP_NUM_THREADS``.

    Ray starts an actor of one CPU with OMP_NUM_THREADS=1, where a local worker runs the frameworks' CPU
    kernels on every core; a reduction's order follows its thread count, so an actor takes the driver's
    count and its records carry a local run's bits (the float64 reruns' too). PyTorch's own count when
    it is loaded (ray.init sets OMP_NUM_THREADS=1 in the driver too, after PyTorch read it), else
    OMP_NUM_THREADS, else the host's cores.
    """
    torch = sys.modules.get("torch")
    if torch is not None:
        return str(torch.get_num_threads())
    return os.environ.get("OMP_NUM_THREADS") or str(os.cpu_count() or 1)


class RayExecutor:
    """Dispatches items to Ray actors dynamically; see the module docstring for the failure rules."""

    def __init__(self, worker_factory: Callable[[], Callable[[Any], Record]], lost: Lost, *, address: str | None,
                 workers: int | None, timeout: float, use_gpus: bool) -> None:
        self.factory, self.lost, self.timeout = worker_factory, lost, timeout
        self.threads = driver_threads()  # read before ray.init, which sets OMP_NUM_THREADS=1 in this process
        if not ray.is_initialized():
            # Actors see the driver's PYTHONPATH, OPBENCH_* settings (plugins, caches) and OpenMP wait policy, as
            # local workers do.
            env = {k: v for k, v in os.environ.items()
                   if k in ("PYTHONPATH", "OMP_WAIT_POLICY") or k.startswith("OPBENCH_")}
            ray.init(address=address, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True,
                     runtime_env={"env_vars": env} if env else None)
        res = ray.cluster_resources()
        self.use_gpus = use_gpus and res.get("GPU", 0) >= 1
        self.slots = workers or int(res.get("GPU", 0) if self.use_gpus else res.get("CPU", 1)) or 1
        self.where: dict[int, dict[str, str]] = {}  # actor slot -> host/gpu of its actor (names lost cases)

    def _actor(self) -> Any:
        opts: dict[str, Any] = {"num_gpus": 1} if self.use_gpus else {"num_cpus": 1}
        opts["runtime_env"] = {"env_vars": {"OMP_NUM_THREADS": self.threads}}
        # No restarts by Ray: the driver replaces a dead actor itself, and only an actor that stays dead lets Ray
        # say why (a restarted one reports "actor restarted", losing an out-of-memory kill's cause).
        cls = ray.remote(max_restarts=0, max_task_retries=0, **opts)(_Worker)
        return cls.remote(self.factory)

    def run(self, items: Sequence[Any], on_result: OnResult) -> None:
        if not items:
            return
        pending = deque(range(len(items)))
        actors: list[Any] = [None] * min(self.slots, len(items))
        starting: dict[Any, int] = {}  # ready() ref -> actor slot
        inflight: dict[Any, tuple[int, int, float]] = {}  # ref -> (item index, actor slot, start time)
        start_failures = 0

        def start(slot: int) -> None:
            actors[slot] = self._actor()
            starting[actors[slot].ready.remote()] = slot

        def replace(slot: int) -> None:
            # died, hung, or CUDA error/OOM (its context is not to be trusted): a fresh actor takes the slot
            # (if work is left), so the next case never lands on one still restarting or on a lost node
            ray.kill(actors[slot], no_restart=True)
            actors[slot] = None
            if pending:
                start(slot)

        def give(slot: int) -> None:
            if pending:
                i = pending.popleft()
                inflight[actors[slot].run.remote(items[i])] = (i, slot, time.monotonic())

        for slot in range(len(actors)):
            start(slot)
        try:
            while inflight or (starting and pending):
                ready, _ = ray.wait([*inflight, *starting], num_returns=1, timeout=0.5)
                for ref in ready:
                    if ref in starting:
                        slot = starting.pop(ref)
                        try:
                            self.where[slot] = ray.get(ref)
                        except ray.exceptions.RayError as e:
                            start_failures += 1
                            if start_failures >= _START_FAILURES:
                                raise StartError(f"Ray actors die before their first case "
                                                 f"({death_outcome(e)[1]})") from None
                            replace(slot)
                            continue
                        start_failures = 0
                        give(slot)
                        continue
                    i, slot, _t = inflight.pop(ref)
                    try:
                        rec = ray.get(ref)
                    except ray.exceptions.RayError as e:
                        outcome, reason = death_outcome(e)
                        on_result({**self.lost(items[i], outcome, reason), **self.where.get(slot, {})})
                        replace(slot)
                        continue
                    self.where[slot] = {"host": rec.get("host", "?"), "gpu": rec.get("gpu", "?")}
                    on_result(rec)
                    if rec.get("worker_restarted") or rec.get("error_side") == "worker":
                        replace(slot)  # a CUDA error or OOM the worker caught: its context is not to be trusted
                    else:
                        give(slot)
                now = time.monotonic()
                for ref, (i, slot, t) in list(inflight.items()):
                    if now - t > self.timeout:
                        del inflight[ref]
                        on_result({**self.lost(items[i], _TIMEOUT, f"no result after {self.timeout:g} s; actor killed"),
                                   **self.where.get(slot, {})})
                        replace(slot)
        finally:
            for a in actors:
                if a is not None:
                    ray.kill(a, no_restart=True)
