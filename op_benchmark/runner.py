"""The benchmark loop: cases x directions, providers interleaved, every outcome recorded.

For each case and direction the applicable providers are prepared and warmed up, then
sampled round-robin (A B A B ...) so clock or thermal drift hits all of them alike, each
until its own :class:`~op_benchmark.stopping.StopRule` says stop. A provider that does not
apply, an OOM or an error becomes a record with its status and reason, and the run goes on;
Ctrl-C ends the run and keeps every record finished so far.
"""

from __future__ import annotations

import contextlib
import gc
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from op_benchmark import directions as directions_mod
from op_benchmark import floor, traffic
from op_benchmark.render import case_label
from op_benchmark.results import Record
from op_benchmark.stats import Measurement
from op_benchmark.stopping import SamplingState, StopRule, default_rule
from op_benchmark.timers import Sampler, SmClock, effective_method, make_timer
from opbench import inputs as inputs_mod
from opbench.cases import Case, ConfigError, check_memory

if TYPE_CHECKING:
    from opbench.executors.progress import Progress

DEFAULT_WARMUP_S = 0.05
MIN_WARMUP_CALLS = 3


@dataclass
class BenchConfig:
    """What to run and how long; the defaults are what ``opbench bench`` uses."""

    providers: Sequence[str]
    directions: Sequence[str] = ("fwd", "bwd", "fwd+bwd")
    device: str = "cpu"
    method: str = "events"
    rule: StopRule = field(default_factory=default_rule)
    warmup_s: float = DEFAULT_WARMUP_S
    seed: int = 0
    memory_limit: int | None = None
    peak_gbps: float | None = None
    # Give the frameworks' cached device memory back before each case and direction, so that
    # where its tensors land does not depend on the cases run before it (see _release).
    release_memory: bool = True
    # Before each case, hold a block of device memory of a size drawn from (placement_seed, case,
    # direction), so the case's tensors land at an offset that differs from pass to pass (see
    # _shift_placement). None: no shift.
    placement_seed: int | None = None
    # CPU: the threads every framework's CPU ops (and ops/'s kernels through each binding) run on, the
    # same for all, so no provider is compared on more cores than another. None: available_cores() where
    # the config is made (a Ray actor gets the driver's count); always None on the GPU.
    cpu_threads: int | None = None
    # Sample a device copy of each case's bytes beside its providers and keep its median on their
    # records (``copy_us``): the floor the ops' tables of record bound their targets with (floor.py).
    copy_floor: bool = False

    def __post_init__(self) -> None:
        self.cpu_threads = (self.cpu_threads or available_cores()) if self.device == "cpu" else None

    def as_dict(self) -> dict[str, Any]:
        return {"providers": list(self.providers), "directions": list(self.directions), "device": self.device,
                "method": effective_method(self.method, self.device), "min_samples": self.rule.min_samples,
                "criteria": [repr(c) for c in self.rule.criteria], "warmup_s": self.warmup_s,
                "seed": self.seed, "release_memory": self.release_memory, "placement_seed": self.placement_seed,
                "cpu_threads": self.cpu_threads, "copy_floor": self.copy_floor}


def _framework(provider: str) -> str:
    from opbench.providers import framework_of

    try:
        return framework_of(provider)
    except ValueError:
        return "torch"


def classify(exc: BaseException, framework: str = "torch") -> tuple[str, str]:
    """(status, one-line reason) for an exception raised while preparing or timing a case.

    ``not_applicable`` and ``unsupported`` (no kernel for the op or dtype on this device) are cases
    that cannot run here, shown as n/a; ``oom`` and ``error`` are failures.
    """
    from opbench.backends import DeviceUnavailable, FrameworkMissing, no_kernel
    from opbench.mapping import MappingUnsupported
    from opbench.providers import NotApplicable

    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    reason = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    if isinstance(exc, NotApplicable | directions_mod.NoBackward | FrameworkMissing | DeviceUnavailable
                  | MappingUnsupported):
        return "not_applicable", text or reason
    if no_kernel(framework, exc):
        return "unsupported", text or reason
    if isinstance(exc, MemoryError) or "out of memory" in str(exc).lower() or "ResourceExhausted" in reason:
        return "oom", reason[:500]
    return "error", reason[:500]


@dataclass
class _Active:
    """One provider being sampled for the current case and direction."""

    record: Record
    sampler: Sampler
    state: SamplingState = field(default_factory=SamplingState)
    clocks: list[int] = field(default_factory=list)
    throttled: int = 0
    keep: list[Any] = field(default_factory=list)  # tensors and graphs the sampler needs alive
    backend: Any = None  # the framework backend it runs on
    reference: bool = False  # the copy floor: sampled like a provider, kept on their records, never emitted
    read_share: float = 0.5  # of the case's bytes, the share read (traffic.read_share): the copy floor's mix


class Runner:
    """Runs cases; ``on_record`` sees each finished record (progress, incremental saves), ``on_case`` each
    finished case's records."""

    def __init__(self, config: BenchConfig, *, progress: bool | None = None,
                 on_record: Callable[[Record], None] | None = None, label: str = "", rounds_after: int = 0,
                 on_case: Callable[[Case, list[Record]], None] | None = None,
                 inputs: inputs_mod.InputCache | None = None) -> None:
        self.config = config
        # Where the case's host arrays come from: a cache shared by the rounds of a run draws each case
        # once (opbench bench passes one); by default nothing is kept past the case.
        self.inputs = inputs if inputs is not None else inputs_mod.InputCache(0)
        self.label = label
        self.rounds_after = rounds_after  # passes over the suite after this one (for the ETA)
        self.progress = progress
        self.on_record = on_record
        self.on_case = on_case  # sees each case's records once all its directions are done (--resume journal)
        if config.device == "cpu":
            keep_freed_blocks()
        self.method = effective_method(config.method, config.device)
        self.clock = SmClock(config.device)
        self.records: list[Record] = []
        self.interrupted = False
        self._where: dict[str, str] | None = None

    def _emit(self, rec: Record) -> None:
        self.records.append(rec)
        if self.on_record is not None:
            self.on_record(rec)

    def _record(self, case: Case, provider: str, direction: str, **kw: Any) -> Record:
        if self._where is None:  # after the first case: the frameworks (and the GPU name) are loaded by then
            from opbench.executors import placement

            self._where = placement()
        return Record(case=case.to_line(), api=case.api, provider=provider, direction=direction,
                      device=self.config.device, method=self.method, source=case.where, **kw, **self._where)

    def run(self, cases: Sequence[Case]) -> list[Record]:
        """Measure every case; returns the records (also kept in ``self.records``)."""
        from opbench.executors.progress import Progress

        # progress None: a bar on a terminal, else one line per case on stderr (with an ETA), so a
        # long run in CI or behind a pipe shows it is alive; False: nothing; True: always a bar.
        bar = Progress(len(cases) * len(self.config.directions), label=self.label, progress=self.progress,
                       rounds_after=self.rounds_after)
        if self.config.cpu_threads is not None:
            for backend in _backends(self.config.providers, "cpu"):
                backend.set_cpu_threads(self.config.cpu_threads)
        try:
            for case in cases:
                values: list[Any] | None = None
                first = len(self.records)
                for direction in self.config.directions:
                    bar.running(f"{direction} {case_label(case.to_line())}")
                    values = self._run_one(case, direction, values)
                    bar.update(f"{direction} {case_label(case.to_line())}")
                if self.on_case is not None:  # every direction done: the case is finished
                    self.on_case(case, self.records[first:])
        except KeyboardInterrupt:
            self.interrupted = True
        finally:
            bar.close()
        return self.records

    # -- one case, one direction ---------------------------------------------------------------
    def _run_one(self, case: Case, direction: str, values: list[Any] | None) -> list[Any] | None:
        cfg = self.config
        try:
            check_memory(case, cfg.memory_limit)
            if values is None:
                values = self.inputs.get(case, cfg.seed)
        except ConfigError as e:
            for p in cfg.providers:
                self._emit(self._record(case, p, direction, status="skipped", error=e.reason))
            return values
        except Exception as e:  # bad arguments for the API's input generator
            status, reason = classify(e)
            for p in cfg.providers:
                self._emit(self._record(case, p, direction, status=status, error=reason))
            return values
        if cfg.release_memory and cfg.device == "gpu":
            _release(cfg.providers, cfg.device)
        pads = _shift_placement(cfg, case, direction)  # noqa: F841 - held while the case runs
        with contextlib.ExitStack() as stack:
            if self.method == "graph":  # forward, capture and replay on one side stream per framework
                for backend in _backends(cfg.providers, cfg.device):
                    stack.enter_context(backend.graph_stream())
            active: list[_Active] = []
            placed: dict[str, list[Any]] = {}  # the inputs on the device, per framework (see _on_device)
            for p in cfg.providers:
                a = self._prepare(case, p, direction, values, placed)
                if a is not None:
                    active.append(a)
            if cfg.copy_floor and active:
                ref = self._copy_reference(case, direction, active)
                if ref is not None:
                    active.append(ref)
            self._sample(active)
        return values

    def _prepare(self, case: Case, provider_name: str, direction: str, values: list[Any],
                 placed: dict[str, list[Any]]) -> _Active | None:
        from opbench.providers import get_provider

        cfg = self.config
        rec = self._record(case, provider_name, direction)
        try:
            provider = get_provider(provider_name, cfg.device)
            reason = provider.why_not(case)
            if reason:
                rec.status, rec.error = "not_applicable", reason
                self._emit(rec)
                return None
            call = provider.prepare(case, cfg.seed, values=_on_device(provider.backend, case, values, placed),
                                    requires_grad=direction != "fwd")
            timed = directions_mod.build(call, direction, cfg.seed)
            grad_flags = [any(t is g for g in call.grad_inputs) for t in call.tensors]
            io = traffic.case_io(case, grad_flags, timed.outputs, timed.grad_outputs)
            rec.bytes = traffic.bytes_moved(case, direction, io)
            rec.flops = traffic.flops(case, direction)
            sampler = self._ready_sampler(call.backend, timed.fn)
        except Exception as e:
            rec.status, rec.error = classify(e, _framework(provider_name))
            self._emit(rec)
            if rec.status == "oom":
                _release([provider_name], cfg.device, freeze=False)
            return None
        return _Active(rec, sampler, keep=[call, timed], backend=call.backend,
                       read_share=traffic.read_share(direction, io))

    def _copy_reference(self, case: Case, direction: str, active: list[_Active]) -> _Active | None:
        """The copy floor's sampler for this case and direction (floor.py), on the backend of the provider whose
        bytes it moves; None where no record knows its bytes or the copy cannot be set up (it is a reference,
        not a result)."""
        widest = max(active, key=lambda a: a.record.bytes or 0)
        nbytes = widest.record.bytes or 0
        if not nbytes:
            return None
        try:
            fn = floor.copy_call(widest.backend, nbytes, widest.read_share)
            sampler = self._ready_sampler(widest.backend, fn)
        except Exception:  # noqa: BLE001 - out of memory for the copy's buffers: the case runs without it
            return None
        rec = self._record(case, "copy", direction, bytes=nbytes)
        return _Active(rec, sampler, keep=[fn], backend=widest.backend, reference=True)

    def _ready_sampler(self, backend: Any, fn: Callable[[], Any]) -> Sampler:
        """``fn`` warmed up, then bound to the config's timer and called twice: the sampler's own first calls
        (flush buffer, events, graph upload) stay out of the samples."""
        self._warm_up(backend, fn)
        sampler = make_timer(backend, self.config.method).bind(fn)
        for _ in range(2):
            sampler()
        return sampler

    def _warm_up(self, backend: Any, fn: Callable[[], Any]) -> None:
        """First call (JIT builds, autotuning) untimed, then calls until ``warmup_s`` and 3 calls."""
        fn()
        backend.synchronize()
        t0, n = time.perf_counter(), 1
        while n < MIN_WARMUP_CALLS or time.perf_counter() - t0 < self.config.warmup_s:
            fn()
            backend.synchronize()
            n += 1

    def _sample(self, active: list[_Active]) -> None:
        cfg = self.config
        pending = list(active)
        try:
            while pending:
                for a in list(pending):
                    t0 = time.perf_counter()
                    try:
                        us = a.sampler()
                    except Exception as e:
                        a.record.status, a.record.error = classify(e, _framework(a.record.provider))
                        pending.remove(a)
                        continue
                    a.state.elapsed_s += time.perf_counter() - t0
                    a.state.samples_us.append(us)
                    if self.clock.available:
                        mhz = self.clock.read()
                        if mhz is not None:
                            a.clocks.append(mhz)
                            a.throttled += self.clock.throttled(mhz)
                    reason = cfg.rule.reason(a.state)
                    if reason:
                        a.record.stop_reason = reason
                        pending.remove(a)
        finally:
            # Runs on Ctrl-C too: a provider with samples keeps them (stop_reason says it was cut).
            ref = next((a for a in active if a.reference), None)
            copy_us = Measurement.of(ref.state.samples_us).median if ref and ref.state.samples_us else None
            for a in active:
                rec = a.record
                if a.reference:
                    a.keep.clear()
                    continue
                rec.copy_us = copy_us
                if rec.status == "ok" and a.state.samples_us:
                    rec.set_measurement(Measurement.of(a.state.samples_us), cfg.peak_gbps)
                    rec.stop_reason = rec.stop_reason or "interrupted"
                    rec.sm_clock_mhz = a.clocks or None
                    rec.throttled_samples = a.throttled
                elif rec.status == "ok":
                    rec.status, rec.error = "error", "interrupted before the first sample"
                a.keep.clear()
                self._emit(rec)


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity): a CPU benchmark's default thread count."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _backends(providers: Sequence[str], device: str) -> list[Any]:
    """The distinct backends of ``providers`` that can be created here (others fail later, recorded)."""
    from opbench.backends import get_backend
    from opbench.providers import framework_of

    out = []
    for fw in dict.fromkeys(framework_of(p) for p in providers):
        try:
            out.append(get_backend(fw, device))
        except Exception:
            continue
    return out


#: The largest placement shift, in 2 MiB allocator blocks (64 MiB: more than the L2 of an H200).
PLACEMENT_BLOCKS = 32


def _shift_placement(cfg: BenchConfig, case: Case, direction: str) -> list[Any]:
    """Hold a device block of a pseudo-random size in each framework before the case's tensors exist.

    Where a case's tensors land in device memory moves its time by a few percent on some
    kernels (L2 set and memory-channel mapping). One process lands them the same way on every
    pass, so passes agree while two runs differ; shifting the placement per pass makes that
    effect part of the drift a run measures of itself (and the pooled median averages it).
    """
    if cfg.placement_seed is None or cfg.device != "gpu":
        return []
    import hashlib

    key = f"{cfg.placement_seed}|{case.to_line()}|{direction}".encode()
    blocks = int.from_bytes(hashlib.blake2b(key, digest_size=4).digest(), "little") % (PLACEMENT_BLOCKS + 1)
    if not blocks:
        return []
    return [b.zeros((blocks * 2**19,), "float32") for b in _backends(cfg.providers, cfg.device)]


def _release(providers: Sequence[str], device: str, *, freeze: bool = True) -> None:
    """Give the frameworks' cached device blocks back (before a case, and after an OOM).

    A case then allocates from a fresh pool whatever ran before it: on an H200, PyTorch's
    multi-kernel backward of x [16,1,1,1] / y [16,3,224,224] / w [3,1,224] (intermediates
    that stay in L2) measured 71.2-74.3 us across three runs of the lerp suite in one process
    with a reused pool; docs/op_benchmark/validation.md has the run with this release.
    ``freeze``: see :func:`_collect_garbage` (off after an OOM, when the case's other providers
    are still alive and must not be frozen).
    """
    if freeze:
        _collect_garbage()
    else:
        gc.collect()
    for backend in _backends(providers, device):
        try:
            backend.empty_cache()
        except Exception:
            pass


def keep_freed_blocks() -> None:
    """Keep freed host blocks under 32 MiB on the heap and trim it only above 128 MiB free (glibc ``mallopt``).

    The frameworks' CPU allocators give each tensor back to malloc when it is freed. With glibc's
    defaults, once the freed blocks at the top of the heap pass the trim threshold (twice the largest
    block freed so far), free() returns them to the system and the next call faults every page in
    again: a float64 lerp backward through Paddle on [16, 102400] spent 6x its kernel's time there.
    Set once per benchmark process on the CPU, for every provider alike; ``MALLOC_MMAP_THRESHOLD_`` or
    ``MALLOC_TRIM_THRESHOLD_`` in the environment leave glibc's settings as they are. No-op off glibc.
    """
    import ctypes

    if os.environ.get("MALLOC_MMAP_THRESHOLD_") or os.environ.get("MALLOC_TRIM_THRESHOLD_"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    m_trim_threshold, m_mmap_threshold = -1, -3  # <malloc.h>
    mallopt(m_mmap_threshold, 32 << 20)
    mallopt(m_trim_threshold, 128 << 20)


def _collect_garbage() -> None:
    """Free what the last case left in reference cycles, walking only the objects made since the last call.

    Tensors held in cycles (autograd graphs, closures) must be freed before their blocks can go back.
    A plain ``gc.collect()`` also walks every long-lived object of the frameworks: with PyTorch and
    Paddle imported it takes 0.2-0.5 s on a 2-core CPU (docs/op_benchmark/main_command.py reports it
    as ``release``), more once torch.compile has loaded its compiler, and it ran before every case and
    direction. Whatever survives the collection here is frozen (``gc.freeze``: moved to the permanent
    generation, never walked again), so the next call walks only what was made since: the last case's
    tensors, graphs and records. The objects frozen are long-lived by then (frameworks, providers and
    their compiled code, cached inputs, records); one that later becomes cyclic garbage is not
    collected, which costs host memory only (no case's tensors are alive when this runs).
    """
    gc.collect()
    gc.freeze()


def _on_device(backend: Any, case: Case, values: Sequence[Any], placed: dict[str, list[Any]]) -> list[Any]:
    """The case's host arrays as ``backend``'s tensors (no gradient), converted once per framework and direction.

    The framework's providers share them (``placed`` holds one list per framework for the case and
    direction), each taking its own detached leaves in :meth:`Provider.prepare`, so their gradients stay
    apart while the values are the same bits. On the GPU that is one host-to-device copy of the inputs
    per framework instead of one per provider (torch, torch-ops and torch-compile copied the 768 MiB of
    the [8192, 8192] float32 lerp three times per direction) and one copy held on the device. Converted
    after :func:`_release` and :func:`_shift_placement`, so the placement shift still moves them.
    """
    import numpy as np

    if backend.name not in placed:
        placed[backend.name] = [backend.from_numpy(v, spec.dtype) if isinstance(v, np.ndarray) else v
                                for v, spec in zip(values, case.tensors(), strict=True)]
    return placed[backend.name]


def run_cases(cases: Sequence[Case], config: BenchConfig, **kw: Any) -> Runner:
    """Convenience: run ``cases`` under ``config``; the runner holds ``records`` and ``interrupted``."""
    runner = Runner(config, **kw)
    runner.run(cases)
    return runner


class CaseBencher:
    """Picklable worker factory for the executors: one Runner per worker; each item is one case, timed whole
    (every provider and direction on that worker), returned as ``{"records": [record dicts]}``, the first also
    with the worker's environment block under ``"env"`` unless its ``host/gpu`` is in ``known`` (recorded)."""

    def __init__(self, config: BenchConfig, known: frozenset[str] = frozenset()) -> None:
        self.config, self.known = config, known

    def __call__(self) -> Callable[[Case], dict[str, Any]]:
        from opbench.executors import placement

        runner = Runner(self.config, progress=False)
        first = [True]

        def bench(case: Case) -> dict[str, Any]:
            runner.records = []
            item: dict[str, Any] = {"records": [r.to_dict() for r in runner.run([case])]}
            if first[0]:  # this worker's environment block, once per host/GPU and run
                first[0] = False
                where = placement()
                if f"{where['host']}/{where['gpu']}" not in self.known:
                    from opbench import env as env_mod

                    item["env"] = env_mod.collect(self.config.device, measure_bandwidth=False)
            return item

        return bench


def lost_case(config: BenchConfig, case: Case, outcome: str, error: str) -> dict[str, Any]:
    """The records of a case whose worker died or hung: one failed record per provider and direction.

    Status ``oom`` when Ray killed the worker for memory, else ``error`` with the reason led by
    ``crash:`` or ``timeout:``, so reports, exit codes and ``compare`` count it as they count any failure."""
    method = effective_method(config.method, config.device)
    status = "oom" if outcome == "oom" else "error"
    error = error if outcome == "oom" else f"{outcome}: {error}"
    return {"records": [Record(case=case.to_line(), api=case.api, provider=p, direction=d, device=config.device,
                               method=method, source=case.where, status=status, error=error).to_dict()
                        for d in config.directions for p in config.providers]}


def run_on_executor(executor: Any, cases: Sequence[Case], on_record: Callable[[Record], None] | None = None,
                    workers_env: dict[str, Any] | None = None, *, progress: Progress | None = None,
                    on_case: Callable[[Case, list[Record]], None] | None = None,
                    on_env: Callable[[str, dict[str, Any]], None] | None = None) -> list[Record]:
    """Run ``cases`` on an executor built with ``CaseBencher``; the records in case order, as a local pass gives.

    ``workers_env`` collects each worker's environment block under ``"host/gpu"`` (``on_env`` sees each new one);
    ``progress`` counts each finished case with the host it ran on; ``on_case`` sees each case's records."""
    from op_benchmark.render import failures

    got: dict[str, list[Record]] = {}
    by_line = {c.to_line(): c for c in cases}

    def on_result(item: dict[str, Any]) -> None:
        where = {k: item[k] for k in ("host", "gpu") if k in item}
        key = f"{where.get('host', '?')}/{where.get('gpu', '?')}"
        if workers_env is not None and "env" in item and key not in workers_env:
            workers_env[key] = item["env"]
            if on_env is not None:
                on_env(key, item["env"])
        recs = [Record.from_dict({**d, **where}) for d in item["records"]]
        if recs:
            got[recs[0].case] = recs
            if on_case is not None:
                on_case(by_line[recs[0].case], recs)
        for r in recs:
            if on_record is not None:
                on_record(r)
        if progress is not None and recs:
            progress.update(case_label(recs[0].case), host=where.get("host"), gpu=where.get("gpu"),
                            failed=bool(failures(recs)))

    executor.run(list(cases), on_result)
    return [r for c in cases for r in got.get(c.to_line(), [])]
