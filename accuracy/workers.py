"""Worker processes: each checks one case at a time; a crash, hang, CUDA error or OOM costs one case.

The parent hands cases out one by one (so it always knows which case each worker has
in flight), reads results from one queue, and watches the workers: a worker that dies
gets its in-flight case recorded as ``crash`` (``oom`` when the kernel's OOM killer
took it), one past the per-case timeout is killed and its case recorded ``timeout``;
either way a fresh worker takes its place. Processes are started with 'spawn', so each
worker makes its own CUDA context (on its own GPU with ``gpus``).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import signal
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from accuracy import outcomes as oc
from accuracy.check import Checker, Settings, case_key
from opbench.cases import Case
from opbench.executors import placement

Result = Callable[[dict[str, Any]], None]
_START_FAILURES = 3  # workers that die before their first case, in a row, before the run gives up


class WorkerStartError(RuntimeError):
    """Workers cannot start (a framework missing, no GPU): the message is the worker's."""


def lost_record(case: Case, settings: Settings, outcome: str, error: str) -> dict[str, Any]:
    """The record of a case whose worker died or hung (no figures: the process is gone)."""
    return {"key": case_key(case), "config": case.to_line(), "source": case.where, "outcome": outcome,
            "subject": settings.subject, "reference": settings.reference, "device": settings.device,
            "mode": "gpu-cache" if settings.gpu_cache_bytes is not None else "default", "seed": settings.seed,
            "error": error, "error_side": "worker"}


def run_inline(cases: Sequence[Case], settings: Settings, on_result: Result) -> None:
    """Check cases in this process (``--workers 0``): no isolation, no timeout; for debugging and profiling."""
    checker = Checker(settings)
    where = placement()
    for case in cases:
        rec = checker.check(case)
        rec.pop("fatal", None)
        rec.update(where)
        on_result(rec)


class CheckerFactory:
    """Picklable worker factory for the executors: builds one Checker per worker, returns its per-case function."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def __call__(self) -> Callable[[Case], dict[str, Any]]:
        from accuracy import plugins

        plugins.load()
        checker = Checker(self.settings)

        def check(case: Case) -> dict[str, Any]:
            rec = checker.check(case)
            if rec.pop("fatal", False):  # CUDA error or OOM: the executor replaces this worker
                rec["worker_restarted"] = True
            return rec

        return check


def _worker_main(wid: int, settings: Settings, gpu: int | None, tasks: Any, results: Any, parent: int) -> None:
    if gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)
    try:
        from accuracy import plugins

        plugins.load()
        checker = Checker(settings)
    except BaseException as e:  # noqa: BLE001 - reported to the parent, which stops the run
        results.put(("fatal", wid, f"{type(e).__name__}: {e}"))
        return
    results.put(("ready", wid))
    where = placement()
    while True:
        try:
            item = tasks.get(timeout=1.0)
        except queue.Empty:
            if os.getppid() != parent:  # the parent is gone (killed): do not linger
                return
            continue
        if item is None:
            return
        index, case = item
        rec = checker.check(case)
        fatal = rec.pop("fatal", False)
        rec.update(where)
        if fatal:
            rec["worker_restarted"] = True
        results.put(("result", wid, index, rec))
        if fatal:  # CUDA error or OOM: this context is not to be trusted; a fresh worker takes over
            return


@dataclass
class _Worker:
    wid: int
    gpu: int | None
    proc: Any
    tasks: Any
    ready: bool = False
    current: int | None = None
    started: float = 0.0
    extra: dict = field(default_factory=dict)


class Pool:
    """``n`` spawned workers (round-robin over ``gpus``) checking ``cases``; results go to ``on_result``."""

    def __init__(self, settings: Settings, n: int, gpus: Sequence[int] | None = None,
                 timeout: float = 300.0) -> None:
        self.settings, self.n, self.gpus, self.timeout = settings, max(1, n), list(gpus or []), timeout
        self.ctx = mp.get_context("spawn")
        self.results = self.ctx.Queue()
        self.workers: list[_Worker] = []
        self._next_wid = 0
        self.respawns = 0

    def _spawn(self, slot: int) -> _Worker:
        gpu = self.gpus[slot % len(self.gpus)] if self.gpus else None
        tasks = self.ctx.Queue()
        wid = self._next_wid
        self._next_wid += 1
        proc = self.ctx.Process(target=_worker_main, name=f"opbench-accuracy-{wid}",
                                args=(wid, self.settings, gpu, tasks, self.results, os.getpid()))
        proc.start()
        return _Worker(wid, gpu, proc, tasks)

    def run(self, cases: Sequence[Case], on_result: Result) -> None:
        pending = deque(range(len(cases)))
        done: set[int] = set()
        start_failures = 0
        self.workers = [self._spawn(i) for i in range(min(self.n, len(cases)))]
        try:
            while len(done) < len(cases):
                for w in self.workers:
                    if w.ready and w.current is None and pending:
                        w.current = pending.popleft()
                        w.started = time.monotonic()
                        w.tasks.put((w.current, cases[w.current]))
                self._drain(cases, done, on_result, block=0.1)
                for slot, w in enumerate(self.workers):
                    if isinstance(w.proc, _Dead):
                        continue
                    lost = None
                    if not w.proc.is_alive():
                        self._drain(cases, done, on_result, block=0.05)  # its last words, if any
                        if w.current is not None and w.current not in done:
                            lost = (oc.CRASH, _death(w.proc.exitcode))
                        elif w.current is None and not w.ready:
                            start_failures += 1
                            if start_failures >= _START_FAILURES:
                                raise WorkerStartError(f"workers die before their first case "
                                                       f"({_death(w.proc.exitcode)})")
                    elif w.current is not None and time.monotonic() - w.started > self.timeout:
                        w.proc.kill()
                        w.proc.join(5)
                        lost = (oc.TIMEOUT, f"no result after {self.timeout:g} s; worker killed")
                    elif w.ready:
                        start_failures = 0
                        continue
                    else:
                        continue
                    if lost is not None:
                        index = w.current
                        done.add(index)
                        on_result(lost_record(cases[index], self.settings, *lost))
                    if pending or any(x.current is not None for x in self.workers if x is not w):
                        self.respawns += 1
                        self.workers[slot] = self._spawn(slot)
                    else:
                        self.workers[slot] = _Worker(-1, None, _Dead(), None)
        finally:
            self.close()

    def _drain(self, cases: Sequence[Case], done: set[int], on_result: Result, block: float) -> None:
        try:
            msg = self.results.get(timeout=block)
        except queue.Empty:
            return
        while True:
            self._handle(msg, cases, done, on_result)
            try:
                msg = self.results.get_nowait()
            except queue.Empty:
                return

    def _handle(self, msg: tuple, cases: Sequence[Case], done: set[int], on_result: Result) -> None:
        kind, wid = msg[0], msg[1]
        w = next((x for x in self.workers if x.wid == wid), None)
        if kind == "fatal":
            raise WorkerStartError(msg[2])
        if kind == "ready" and w is not None:
            w.ready = True
        elif kind == "result":
            index, rec = msg[2], msg[3]
            if w is not None and w.current == index:
                w.current = None
            if index not in done:
                done.add(index)
                on_result(rec)

    def close(self) -> None:
        for w in self.workers:
            if w.tasks is not None and w.proc.is_alive():
                try:
                    w.tasks.put(None)
                except (OSError, ValueError):
                    pass
        deadline = time.monotonic() + 10
        for w in self.workers:
            w.proc.join(max(0.1, deadline - time.monotonic()))
            if w.proc.is_alive():
                w.proc.kill()
                w.proc.join(5)


class _Dead:
    """Stands in for a worker process not replaced because no work is left."""

    exitcode = 0

    def is_alive(self) -> bool:
        return False

    def join(self, timeout: float | None = None) -> None:
        return None

    def kill(self) -> None:
        return None


def _death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        hint = " (the kernel's OOM killer?)" if name == "SIGKILL" else ""
        return f"worker died with {name}{hint}"
    return f"worker exited with status {exitcode}"
