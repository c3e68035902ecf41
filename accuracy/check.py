"""One case, checked: subject vs reference on identical inputs, forward and backward.

Every floating input takes a gradient; seeded random output grads are shared by both
sides; every output and every input grad is compared with the tolerance for its dtype.
When a comparison fails, the reference is rerun in float64 on the same values upcast
(the third opinion), so the record says which side is further from the truth.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from accuracy import outcomes as oc
from accuracy.bound import FLOOR, JUDGED, UNIT, count_terms, judge, terms_from_sizes
from accuracy.compare import Comparison, Figures, device_figures_batch, host_figures
from accuracy.gpu_cache import DeviceCache
from accuracy.plugins import get_side
from accuracy.row_terms import row_terms
from accuracy.stages import StageTimer
from accuracy.tolerances import Tolerance, Tolerances, build
from opbench import inputs as inputs_mod
from opbench.cases import Case, TensorSpec
from opbench.domains import DEFAULT
from opbench.mapping import UNWRITTEN
from opbench.providers import NotApplicable, PreparedCall, Provider, flatten

_UPCAST = {"float16": "float64", "bfloat16": "float64", "float32": "float64", "complex64": "complex128"}


@dataclass(frozen=True)
class Settings:
    """What every case of a run shares (picklable: it travels to the worker processes)."""

    subject: str = "paddle"
    reference: str = "torch"
    device: str = "cpu"
    seed: int = 0
    tolerances: Tolerances = field(default_factory=build)
    gpu_cache_bytes: int | None = None  # None: the default (host) mode
    profile: bool = False
    float64: bool = True  # judge differing float outputs against a float64 rerun (accuracy.bound)


class SideError(Exception):
    """An exception raised by one side's framework call, with where it happened."""

    def __init__(self, side: str, framework: str, stage: str, exc: BaseException) -> None:
        super().__init__(str(exc))
        self.side, self.framework, self.stage, self.exc = side, framework, stage, exc


def case_key(case: Case) -> str:
    """The identity of a case in result files: its normalized config line."""
    return case.to_line()


class Checker:
    """Checks cases for one :class:`Settings` in this process (owns the providers and the cache)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.subject: Provider = get_side(settings.subject, settings.device)
        self.reference: Provider = get_side(settings.reference, settings.device)
        self.cache = (DeviceCache(self.reference.backend, settings.gpu_cache_bytes)
                      if settings.gpu_cache_bytes is not None else None)

    def _sync(self) -> None:
        self.subject.backend.synchronize()
        if self.reference.backend is not self.subject.backend:
            self.reference.backend.synchronize()

    def check(self, case: Case) -> dict[str, Any]:
        """The result record of one case (never raises for the case's own failures)."""
        s = self.settings
        timer = StageTimer(self._sync if s.profile else None)
        rec: dict[str, Any] = {
            "key": case_key(case), "config": case.to_line(), "source": case.where, "outcome": oc.PASS,
            "subject": s.subject, "reference": s.reference, "device": s.device,
            "mode": "gpu-cache" if self.cache is not None else "default", "seed": s.seed,
        }
        t0 = time.perf_counter()
        try:
            _CaseRun(self, case, rec, timer).run()
        except SideError as e:
            rec.update(outcome=oc.error_outcome(e.exc, e.framework), error=oc.error_text(e.exc),
                       error_kind=oc.error_kind(e.exc, e.framework), error_side=e.side, error_stage=e.stage)
            if hasattr(e.exc, "converter"):  # a MappingError names the template or converter at fault
                rec["converter"] = e.exc.converter
            if oc.is_fatal(e.exc):
                rec["fatal"] = True
        except Exception as e:  # noqa: BLE001 - a bug of ours must not end the run; it is a crash
            rec.update(outcome=oc.CRASH, error=f"opbench internal error: {oc.error_text(e)}",
                       error_side="opbench")
        if rec["outcome"] != oc.PASS and (known := _mapping_flags(case)[2]):
            rec["known"] = known  # the mapping documents this difference: the report says so beside the failure
        if self.cache is None and s.device == "gpu":
            with timer("bookkeeping"):
                self.subject.backend.empty_cache()
                self.reference.backend.empty_cache()
        elapsed = (time.perf_counter() - t0) * 1e3
        timer.add("bookkeeping", max(0.0, elapsed - sum(timer.ms.values())))
        rec["timings"] = {k: round(v, 4) for k, v in timer.ms.items()}
        if self.cache is not None:
            rec["cache"] = {"hits": self.cache.hits, "misses": self.cache.misses, "bytes": self.cache.bytes}
            if getattr(self.reference.backend, "close_path", ""):  # compiled or eager device comparison
                rec["compare_path"] = self.reference.backend.close_path
        return rec


class _CaseRun:
    """The steps of one check; errors leave as :class:`SideError`, results go into ``rec``."""

    def __init__(self, checker: Checker, case: Case, rec: dict[str, Any], timer: StageTimer) -> None:
        self.c, self.case, self.rec, self.timer = checker, case, rec, timer
        self.S, self.R = checker.subject, checker.reference
        self.comparisons: list[Comparison] = []
        self.pairs: list[tuple[Comparison, Any, Any, str, int]] = []  # (comparison, s, r, kind, index)
        self.pending: list[tuple[Comparison, Any, Any, Tolerance, str]] = []  # device pairs, compared at once
        self.host_inputs: list[np.ndarray] | None = None
        self.host_grads: dict[int, np.ndarray] = {}
        self.device_grads: dict[int, Any] = {}
        self.grad_outputs: list[int] = []
        self.tensor_inputs: list[inputs_mod.TensorInput] | None = None
        self.random, self.check_grads, _ = _mapping_flags(case)

    # -- helpers -----------------------------------------------------------------------------------
    def _tensor_inputs(self) -> list[inputs_mod.TensorInput]:
        """The case's tensors with their domains, worked out once per check."""
        if self.tensor_inputs is None:
            self.tensor_inputs = inputs_mod.tensor_inputs(self.case)
        return self.tensor_inputs

    def _side(self, side: str, stage: str, fn: Any, *args: Any) -> Any:
        p = self.S if side == "subject" else self.R
        try:
            return fn(*args)
        except NotApplicable:
            raise
        except Exception as e:  # noqa: BLE001 - any framework exception is that side's error
            raise SideError(side, p.framework, stage, e) from e

    def _to_subject(self, value: Any) -> Any:
        """A reference-framework tensor as a subject tensor: the same memory through DLPack."""
        if self.S.framework == self.R.framework:
            return value
        try:
            return self.S.backend.from_dlpack(value)
        except Exception:  # noqa: BLE001 - a dtype DLPack cannot carry: copy through the host
            return self.S.backend.from_numpy(self.R.backend.to_numpy(value), self.R.backend.dtype_name(value))

    def _to_reference(self, value: Any) -> Any:
        if self.S.framework == self.R.framework:
            return value
        try:
            return self.R.backend.from_dlpack(value)
        except Exception:  # noqa: BLE001
            return self.R.backend.from_numpy(self.S.backend.to_numpy(value), self.S.backend.dtype_name(value))

    # -- the steps ---------------------------------------------------------------------------------
    def run(self) -> None:
        case, rec, timer = self.case, self.rec, self.timer
        for side, p in (("subject", self.S), ("reference", self.R)):
            reason = p.why_not(case)
            if reason:
                rec.update(outcome=oc.MAPPING_MISSING, error=reason, error_side=side)
                return
        s_call, r_call = self._prepare()
        with timer("subject_run"):
            s_out = self._side("subject", "forward", s_call.forward)
        with timer("reference_run"):
            r_out = self._side("reference", "forward", r_call.forward)
        s_flat, r_flat = flatten(s_out), flatten(r_out)
        grads = self._backward(s_call, r_call, s_flat, r_flat)
        with timer("compare"):
            self._compare_outputs(s_flat, r_flat)
            if grads is not None:
                self._compare_grads(s_call, *grads)
            self._compare_pending()
        if any(c.passed is False and c.judge for c in self.comparisons):
            with timer("reference_run"):
                self._judge(r_call)
        failed = [c for c in self.comparisons if c.passed is False]
        rec["comparisons"] = [c.to_json() for c in self.comparisons]
        if failed:
            rec.update(outcome=oc.ACCURACY_FAIL, failed=[c.label for c in failed])

    def _prepare(self) -> tuple[PreparedCall, PreparedCall]:
        case, seed, timer, cache = self.case, self.c.settings.seed, self.timer, self.c.cache
        inplace = case.api.rsplit(".", 1)[-1].endswith("_")
        if cache is None:
            with timer("input_generation"):
                self.host_inputs = self._side("reference", "inputs", inputs_mod.generate, case, seed)
            with timer("to_device"):
                s_call = self._side("subject", "prepare", self.S.prepare, case, seed, self.host_inputs)
                r_call = self._side("reference", "prepare", self.R.prepare, case, seed, self.host_inputs)
            return s_call, r_call
        with timer("input_generation"):
            r_values = self._side("reference", "inputs", cache.inputs, case, seed, self._tensor_inputs())
            if inplace:  # an in-place API must not write into cached tensors
                r_values = [self._clone(self.R, v) for v in r_values]
        with timer("to_device"):
            s_values = [self._to_subject(v) for v in r_values]
            if inplace and self.S.framework == self.R.framework:
                s_values = [self._clone(self.S, v) for v in s_values]
            s_call = self._side("subject", "prepare", self.S.prepare, case, seed, s_values)
            r_call = self._side("reference", "prepare", self.R.prepare, case, seed, r_values)
        return s_call, r_call

    @staticmethod
    def _clone(p: Provider, value: Any) -> Any:
        b = p.backend
        out = b.zeros(tuple(value.shape), b.dtype_name(value))
        b.copy_(out, value)
        return out

    def _backward(self, s_call: PreparedCall, r_call: PreparedCall, s_flat: list[Any], r_flat: list[Any]
                  ) -> tuple[list[Any], list[Any]] | None:
        """Both sides' input grads for shared random output grads (None when nothing is differentiable)."""
        if not s_call.grad_inputs and not r_call.grad_inputs:
            return None
        if not self.check_grads:
            self.comparisons.append(Comparison("backward", "grads", passed=None,
                                               note="not compared (the mapping checks this API forward only)"))
            return None
        sb, rb = self.S.backend, self.R.backend
        s_diff = {id(t) for t in s_call.differentiable_outputs(s_flat)}
        r_diff = {id(t) for t in r_call.differentiable_outputs(r_flat)}
        idx: list[int] = []
        for i, (s, r) in enumerate(zip(s_flat, r_flat, strict=False)):
            ds, dr = id(s) in s_diff, id(r) in r_diff
            if ds and dr and list(s.shape) == list(r.shape):
                idx.append(i)
            elif dr and not ds:  # visible in the record, but (like a missing grad) not a failure
                self.comparisons.append(Comparison("backward", f"out[{i}]", passed=None,
                                                   note="not compared (the subject's output does not track "
                                                        "gradients; the reference's does)"))
            elif ds and not dr:
                self.comparisons.append(Comparison("backward", f"out[{i}]", passed=None,
                                                   note="the reference's output does not track gradients"))
        if not idx:
            return None
        cache, seed = self.c.cache, self.c.settings.seed
        with self.timer("input_generation"):
            if cache is None:
                for i in idx:
                    self.host_grads[i] = _grad_array(tuple(r_flat[i].shape), rb.dtype_name(r_flat[i]), seed, i)
            else:
                r_grads = [cache.output_grad(tuple(r_flat[i].shape), rb.dtype_name(r_flat[i]),
                                             _grad_seed(seed, i, tuple(r_flat[i].shape), rb.dtype_name(r_flat[i])))
                           for i in idx]
        with self.timer("to_device"):
            if cache is None:
                s_grads = [sb.from_numpy(self.host_grads[i], sb.dtype_name(s_flat[i])) for i in idx]
                r_grads = [rb.from_numpy(self.host_grads[i], rb.dtype_name(r_flat[i])) for i in idx]
            else:
                s_grads = [self._to_subject(g) for g in r_grads]
                s_grads = [g if sb.dtype_name(g) == sb.dtype_name(s_flat[i]) else sb.cast(g, sb.dtype_name(s_flat[i]))
                           for g, i in zip(s_grads, idx, strict=True)]
        self.grad_outputs = idx
        if cache is not None:
            self.device_grads = dict(zip(idx, r_grads, strict=True))
        with self.timer("backward"):
            sg = self._side("subject", "backward", s_call.backward, [s_flat[i] for i in idx], s_grads)
            rg = self._side("reference", "backward", r_call.backward, [r_flat[i] for i in idx], r_grads)
        return sg, rg

    def _compare_outputs(self, s_flat: list[Any], r_flat: list[Any]) -> None:
        if len(s_flat) != len(r_flat):
            self.comparisons.append(Comparison("forward", "out", passed=False,
                                               note=f"the subject returns {len(s_flat)} outputs, "
                                                    f"the reference {len(r_flat)}"))
        for i, (s, r) in enumerate(zip(s_flat, r_flat, strict=False)):
            self._compare("forward", f"out[{i}]" if len(r_flat) > 1 else "out", s, r, "out", i)

    def _compare_grads(self, s_call: PreparedCall, s_grads: list[Any], r_grads: list[Any]) -> None:
        names = _grad_names(self._tensor_inputs(), s_call)
        for k, (name, sg, rg) in enumerate(zip(names, s_grads, r_grads, strict=False)):
            if sg is None or rg is None:
                note = ("no grad on either side" if sg is None and rg is None else
                        "not compared (subject has no grad)" if sg is None else
                        "not compared (reference has no grad)")
                self.comparisons.append(Comparison("backward", name, passed=None, note=note))
                continue
            self._compare("backward", name, sg, rg, "grad", k)

    def _compare(self, direction: str, name: str, s: Any, r: Any, kind: str, index: int) -> None:
        if s is UNWRITTEN or r is UNWRITTEN:
            self.comparisons.append(Comparison(direction, name, passed=None,
                                               note="not compared (the API leaves this output unwritten here)"))
            return
        sb, rb = self.S.backend, self.R.backend
        s_t, r_t = sb.is_tensor(s), rb.is_tensor(r)
        if not (s_t and r_t):
            same = (not s_t and not r_t and s == r)
            note = "" if same else f"subject gives {_short(s)}, reference {_short(r)}"
            self.comparisons.append(Comparison(direction, name, passed=same, note=note))
            return
        s_dt, r_dt = sb.dtype_name(s), rb.dtype_name(r)
        shape = list(r.shape)
        comp = Comparison(direction, name, dtype=r_dt, shape=shape, numel=math.prod(shape))
        self.comparisons.append(comp)
        if list(s.shape) != shape:
            comp.passed, comp.note = False, f"shape {list(s.shape)} vs reference {shape}"
            return
        if self.random:  # values drawn at random on each side: only shape and dtype can agree
            comp.passed = s_dt == r_dt
            comp.note = "random values: shape and dtype compared"
            comp.note += f"; dtype {s_dt} vs {r_dt}" if s_dt != r_dt else ""
            return
        tols = self.c.settings.tolerances
        comp.judge = self.c.settings.float64 and r_dt in JUDGED and not tols.explicit(self.case.api, r_dt)
        # Judged outputs pass here only when the two sides agree to a unit of the dtype; any other
        # difference goes to the float64 verdict (_judge). The others use the tolerance table.
        tol = Tolerance(FLOOR[r_dt], UNIT[r_dt]) if comp.judge else tols.for_(self.case.api, r_dt)
        comp.atol, comp.rtol = tol.atol, tol.rtol
        self.pairs.append((comp, s, r, kind, index))
        dtype_note = f"dtype {s_dt} vs reference {r_dt}" if s_dt != r_dt else ""
        if self.c.cache is not None:  # on the device, with the case's other pairs (_compare_pending)
            self.pending.append((comp, self._to_reference(s), r, tol, dtype_note))
            return
        _record(comp, host_figures(sb.to_numpy(s), rb.to_numpy(r), tol), dtype_note)

    def _compare_pending(self) -> None:
        """Every device pair of the case in one batched call (one device-to-host copy)."""
        if not self.pending:
            return
        figs = device_figures_batch(self.R.backend, [(s, r, tol) for _, s, r, tol, _ in self.pending])
        for (comp, *_, dtype_note), f in zip(self.pending, figs, strict=True):
            _record(comp, f, dtype_note)
        self.pending = []

    def _judge(self, r_call: PreparedCall) -> None:
        """Decide the outputs that differ by more than a unit with the float64 bound (:mod:`accuracy.bound`).

        The reference reruns in float64 three times on the same values: as they are (the truth),
        in absolute value (each element's magnitude) and as ones (how many terms it sums; times
        the row a normalization's statistics sum, :mod:`accuracy.row_terms`). If the truth's
        rerun fails, those outputs are judged by the per-dtype tolerance instead; if only the
        others fail (``inv`` of a matrix of ones), without the magnitudes or counts they give.
        """
        todo = [(c, s, r, kind, i) for c, s, r, kind, i in self.pairs if c.passed is False and c.judge]
        rb, sb = self.R.backend, self.S.backend
        grads = any(k == "grad" for *_, k, _ in todo)
        try:
            runs = {"truth": self._float64_run(r_call, "truth", grads)}
        except Exception as e:  # noqa: BLE001 - no float64 verdict is better than a lost record
            tols = self.c.settings.tolerances
            for c, s, r, _, _ in todo:
                tol = tols.for_(self.case.api, c.dtype)
                c.atol, c.rtol = tol.atol, tol.rtol
                _record(c, host_figures(sb.to_numpy(s), rb.to_numpy(r), tol), "")
                c.note = f"float64 rerun failed ({oc.error_text(e, 200)}); judged by the per-dtype tolerance"
            return
        # Magnitudes and term counts. An op may refuse these inputs (ones are a singular matrix for inv): it is
        # then judged without them, on the truth's own scale with terms from the sizes.
        for how in ("abs", "ones"):
            try:
                runs[how] = self._float64_run(r_call, how, grads)
            except Exception:  # noqa: BLE001 - the verdict stands on the truth alone
                runs[how] = ([], [])
        largest = max((t.spec.numel for t in self._tensor_inputs()), default=1)
        row = row_terms(self.case)  # a normalization's row, which the run on ones cannot count
        for c, s, r, kind, i in todo:
            truth, magnitude, ones = (runs[how][0 if kind == "out" else 1] for how in ("truth", "abs", "ones"))
            t = truth[i] if i < len(truth) else None
            if t is None:
                c.note = "the float64 rerun has no value here"
                continue
            m = magnitude[i] if i < len(magnitude) else None
            n = ones[i] if i < len(ones) and ones[i] is not None and np.shape(ones[i]) == np.shape(t) else 1.0
            terms = np.maximum(count_terms(n), terms_from_sizes(c.numel, largest)) * row
            v = judge(sb.to_numpy(s), rb.to_numpy(r), t, m, terms, c.dtype, backward=kind == "grad")
            c.passed, c.mismatches = v.passed, v.mismatches
            c.first_index = list(v.first_index) if v.first_index is not None else None
            c.bound = v.to_json()
            closer = ("tie" if v.subject_max_abs == v.reference_max_abs else
                      "subject" if v.subject_max_abs < v.reference_max_abs else "reference")
            c.float64 = {"subject_max_abs": v.subject_max_abs, "reference_max_abs": v.reference_max_abs,
                         "closer": closer}

    def _float64_run(self, r_call: PreparedCall, how: str, grads: bool) -> tuple[list[Any], list[Any]]:
        """The reference in float64 on the case's values (``truth``), their absolute values (``abs``) or
        ones (``ones``); output grads alike. Returns host arrays: (outputs, input grads)."""
        rb = self.R.backend
        host = self.host_inputs
        if host is None:
            host = [rb.to_numpy(t) for t in r_call.tensors]
        values = [_float64_values(v, how) for v in host]
        call = self.R.prepare(_upcast_case(self.case), self.c.settings.seed, values)
        out = flatten(call.forward())
        truth_grads: list[Any] = []
        if grads:
            gs = []
            for i in self.grad_outputs:
                g = self.host_grads.get(i)
                if g is None:  # GPU cache mode: the grads live on the device
                    g = rb.to_numpy(self.device_grads[i])
                gs.append(rb.from_numpy(_float64_values(g, how), rb.dtype_name(out[i])))
            truth_grads = call.backward([out[i] for i in self.grad_outputs], gs)
        to_host = lambda v: rb.to_numpy(v) if rb.is_tensor(v) else None  # noqa: E731
        return [to_host(v) for v in out], [to_host(g) if g is not None else None for g in truth_grads]


def _float64_values(v: np.ndarray, how: str) -> np.ndarray:
    """Floating values upcast to 64 bits, as they are, in absolute value or as ones; others unchanged."""
    v = np.asarray(v)
    if v.dtype.kind not in "fc":
        return v
    v = v.astype(np.complex128 if v.dtype.kind == "c" else np.float64)
    if how == "abs":
        return np.asarray(np.abs(v)).astype(v.dtype)  # np.abs of a 0-D array is a scalar
    if how == "ones":
        return np.ones_like(v)
    return v


def _mapping_flags(case: Case) -> tuple[bool, bool, str]:
    """(values are random, gradients are checked, the documented difference from PyTorch or '') for this call,
    from its mapping entry."""
    from opbench.mapping import MappingMissing, bind, lookup

    try:
        m = lookup(case.api)
    except MappingMissing:
        return False, True, ""
    try:
        random = m.is_random(bind(m, case.args, case.kwargs_dict))
    except (TypeError, KeyError, ValueError):
        random = bool(m.random)
    return random, m.backward, m.known


def _record(comp: Comparison, figs: Figures, dtype_note: str) -> None:
    """Figures into a comparison; a dtype difference fails it whatever the figures."""
    comp.mismatches, comp.max_abs, comp.max_rel = figs.mismatches, figs.max_abs, figs.max_rel
    comp.first_index = list(figs.first_index) if figs.first_index is not None else None
    comp.passed = figs.mismatches == 0 and not dtype_note
    if dtype_note:
        comp.note = dtype_note


def _grad_seed(seed: int, i: int, shape: tuple[int, ...], dtype: str) -> int:
    key = f"grad|{seed}|{i}|{shape}|{dtype}".encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "little")


def _grad_array(shape: tuple[int, ...], dtype: str, seed: int, i: int) -> np.ndarray:
    """Seeded uniform [-1, 1) output grad values on the host, rounded to ``dtype``."""
    rng = np.random.default_rng(_grad_seed(seed, i, shape, dtype))
    return inputs_mod.draw(TensorSpec(shape, dtype), DEFAULT, rng)


def _grad_names(tensors: list[inputs_mod.TensorInput], call: PreparedCall) -> list[str]:
    params = [t.param for t in tensors]
    ids = {id(g) for g in call.grad_inputs}
    picked = [params[i] for i, t in enumerate(call.tensors) if id(t) in ids]
    names, seen = [], {}
    for p in picked:
        n = picked.count(p)
        seen[p] = seen.get(p, -1) + 1
        label = p if not p.startswith("#") else f"arg{p[1:]}"
        names.append(f"grad {label}" + (f"[{seen[p]}]" if n > 1 else ""))
    return names


def _upcast_case(case: Case) -> Case:
    def up(v: Any) -> Any:
        if isinstance(v, TensorSpec):
            return TensorSpec(v.shape, _UPCAST.get(v.dtype, v.dtype))
        if isinstance(v, list):
            return [up(e) for e in v]
        if isinstance(v, tuple):
            return tuple(up(e) for e in v)
        return v

    return dataclasses.replace(case, args=up(case.args), kwargs=tuple((k, up(v)) for k, v in case.kwargs))


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."
