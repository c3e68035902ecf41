"""The benchmark loop: cases x directions, providers interleaved, every outcome recorded.

For each case and direction the applicable providers are prepared and warmed up, then
sampled round-robin (A B A B ...) so clock or thermal drift hits all of them alike, each
until its own :class:`~op_benchmark.stopping.StopRule` says stop. A provider that does not
apply, an OOM or an error becomes a record with its status and reason, and the run goes on;
Ctrl-C ends the run and keeps every record finished so far.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from op_benchmark import directions as directions_mod
from op_benchmark import traffic
from op_benchmark.render import case_label
from op_benchmark.results import Record
from op_benchmark.stats import Measurement
from op_benchmark.stopping import SamplingState, StopRule, default_rule
from op_benchmark.timers import Sampler, SmClock, effective_method, make_timer
from opbench import inputs as inputs_mod
from opbench.cases import Case, ConfigError, check_memory

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

    def as_dict(self) -> dict[str, Any]:
        return {"providers": list(self.providers), "directions": list(self.directions), "device": self.device,
                "method": effective_method(self.method, self.device), "min_samples": self.rule.min_samples,
                "criteria": [repr(c) for c in self.rule.criteria], "warmup_s": self.warmup_s,
                "seed": self.seed, "release_memory": self.release_memory, "placement_seed": self.placement_seed}


def _framework(provider: str) -> str:
    from opbench.providers import framework_of

    try:
        return framework_of(provider)
    except ValueError:
        return "torch"


def classify(exc: BaseException, framework: str = "torch") -> tuple[str, str]:
    """(status, one-line reason) for an exception raised while preparing or timing a case.

    ``not_applicable`` and ``unsupported`` (no kernel for the dtype on this device) are cases
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


class Runner:
    """Runs cases; ``on_record`` sees each finished record (progress, incremental saves)."""

    def __init__(self, config: BenchConfig, *, progress: bool | None = None,
                 on_record: Callable[[Record], None] | None = None, label: str = "", rounds_after: int = 0) -> None:
        self.config = config
        self.label = label
        self.rounds_after = rounds_after  # passes over the suite after this one (for the ETA)
        self.progress = progress
        self.on_record = on_record
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
        from tqdm import tqdm

        total = len(cases) * len(self.config.directions)
        # progress None: a bar on a terminal, else one line per case on stderr (with an ETA), so a
        # long run in CI or behind a pipe shows it is alive; False: nothing; True: always a bar.
        lines = self.progress is None and not sys.stderr.isatty() and total > 0
        disable = True if self.progress is False or lines or not total else (None if self.progress is None else False)
        bar = tqdm(total=total, unit="case", disable=disable, dynamic_ncols=True, desc=self.label or None)
        t0, done = time.perf_counter(), 0
        try:
            for case in cases:
                values: list[Any] | None = None
                for direction in self.config.directions:
                    bar.set_postfix_str(f"{direction} {case_label(case.to_line())}")
                    values = self._run_one(case, direction, values)
                    bar.update(1)
                    done += 1
                    if lines:
                        elapsed = time.perf_counter() - t0
                        eta = elapsed / done * (total - done)
                        eta += elapsed / done * total * self.rounds_after  # passes still to come
                        print(f"{self.label + ': ' if self.label else ''}{done}/{total} {direction} "
                              f"{case_label(case.to_line())}  ({elapsed:.0f} s, ETA {eta:.0f} s)", file=sys.stderr,
                              flush=True)
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
                values = inputs_mod.generate(case, cfg.seed)
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
            for p in cfg.providers:
                a = self._prepare(case, p, direction, values)
                if a is not None:
                    active.append(a)
            self._sample(active)
        return values

    def _prepare(self, case: Case, provider_name: str, direction: str, values: list[Any]) -> _Active | None:
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
            call = provider.prepare(case, cfg.seed, values=values, requires_grad=direction != "fwd")
            timed = directions_mod.build(call, direction, cfg.seed)
            grad_flags = [any(t is g for g in call.grad_inputs) for t in call.tensors]
            io = traffic.case_io(case, grad_flags, timed.outputs, timed.grad_outputs)
            rec.bytes = traffic.bytes_moved(case, direction, io)
            rec.flops = traffic.flops(case, direction)
            self._warm_up(call.backend, timed.fn)
            sampler = make_timer(call.backend, cfg.method).bind(timed.fn)
            for _ in range(2):  # the sampler's own first calls: flush buffer, events, graph upload
                sampler()
        except Exception as e:
            rec.status, rec.error = classify(e, _framework(provider_name))
            self._emit(rec)
            if rec.status == "oom":
                _release([provider_name], cfg.device)
            return None
        return _Active(rec, sampler, keep=[call, timed])

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
            for a in active:
                rec = a.record
                if rec.status == "ok" and a.state.samples_us:
                    rec.set_measurement(Measurement.of(a.state.samples_us), cfg.peak_gbps)
                    rec.stop_reason = rec.stop_reason or "interrupted"
                    rec.sm_clock_mhz = a.clocks or None
                    rec.throttled_samples = a.throttled
                elif rec.status == "ok":
                    rec.status, rec.error = "error", "interrupted before the first sample"
                a.keep.clear()
                self._emit(rec)


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


def _release(providers: Sequence[str], device: str) -> None:
    """Give the frameworks' cached device blocks back (before a case, and after an OOM).

    A case then allocates from a fresh pool whatever ran before it: on an H200, PyTorch's
    multi-kernel backward of x [16,1,1,1] / y [16,3,224,224] / w [3,1,224] (intermediates
    that stay in L2) measured 71.2-74.3 us across three runs of the lerp suite in one process
    with a reused pool; docs/op_benchmark/validation.md has the run with this release.
    """
    import gc

    gc.collect()
    for backend in _backends(providers, device):
        try:
            backend.empty_cache()
        except Exception:
            pass


def run_cases(cases: Sequence[Case], config: BenchConfig, **kw: Any) -> Runner:
    """Convenience: run ``cases`` under ``config``; the runner holds ``records`` and ``interrupted``."""
    runner = Runner(config, **kw)
    runner.run(cases)
    return runner


class CaseBencher:
    """Picklable worker factory for the executors: one Runner per worker; each item is one case, timed whole
    (every provider and direction on that worker), returned as ``{"records": [record dicts]}``."""

    def __init__(self, config: BenchConfig) -> None:
        self.config = config

    def __call__(self) -> Callable[[Case], dict[str, Any]]:
        runner = Runner(self.config, progress=False)
        first = [True]

        def bench(case: Case) -> dict[str, Any]:
            runner.records = []
            item: dict[str, Any] = {"records": [r.to_dict() for r in runner.run([case])]}
            if first[0]:  # this worker's environment block, once per worker (recorded once per host/GPU)
                from opbench import env as env_mod

                item["env"] = env_mod.collect(self.config.device, measure_bandwidth=False)
                first[0] = False
            return item

        return bench


def lost_case(config: BenchConfig, case: Case, outcome: str, error: str) -> dict[str, Any]:
    """The records of a case whose worker died or hung: one failed record per provider and direction."""
    method = effective_method(config.method, config.device)
    return {"records": [Record(case=case.to_line(), api=case.api, provider=p, direction=d, device=config.device,
                               method=method, source=case.where, status=outcome, error=error).to_dict()
                        for d in config.directions for p in config.providers]}


def run_on_executor(executor: Any, cases: Sequence[Case], on_record: Callable[[Record], None] | None = None,
                    workers_env: dict[str, Any] | None = None) -> list[Record]:
    """Run ``cases`` on an executor built with ``CaseBencher``; the records in case order, as a local pass gives.

    ``workers_env`` collects each worker's environment block under ``"host/gpu"``."""
    got: dict[str, list[Record]] = {}

    def on_result(item: dict[str, Any]) -> None:
        where = {k: item[k] for k in ("host", "gpu") if k in item}
        if workers_env is not None and "env" in item:
            workers_env.setdefault(f"{where.get('host', '?')}/{where.get('gpu', '?')}", item["env"])
        recs = [Record.from_dict({**d, **where}) for d in item["records"]]
        if recs:
            got[recs[0].case] = recs
        for r in recs:
            if on_record is not None:
                on_record(r)

    executor.run(list(cases), on_result)
    return [r for c in cases for r in got.get(c.to_line(), [])]
