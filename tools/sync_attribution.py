"""Find device<->host copies and synchronizations in a profiler trace and name the call that caused each.

Pure trace analysis (no framework): reads a Chrome-trace JSON from ``torch.profiler``
(``cpu_op``, ``python_function``, ``cuda_runtime``/``cuda_driver``, ``gpu_memcpy``) or
``paddle.profiler`` (``Operator``/``UserDefined``, ``CudaRuntime``, ``Memcpy``). Each
copy/sync runtime call on the host is placed inside the events that enclose it on its
thread (by time): the Python frame of the user's code gives *where*, the call it made
(or the outermost operator) gives *which API*; the device copy with the same correlation
id gives the direction, host memory kind and bytes. Findings are grouped by (API, where,
what), counted, timed and sorted by the host time they block, largest first.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# -- event categories of the two profilers -------------------------------------------------------
OP_CATS = {"cpu_op", "user_annotation", "Operator", "UserDefined", "PythonOp", "PythonUserDefined", "OperatorInner",
           "DygraphKernelLaunch"}
PY_CATS = {"python_function"}
RUNTIME_CATS = {"cuda_runtime", "cuda_driver", "CudaRuntime"}
MEMCPY_CATS = {"gpu_memcpy", "Memcpy"}

COPY_API = re.compile(r"^(cuda|cu|hip)Memcpy\w*$")
SYNC_API = {
    "cudaStreamSynchronize": "stream sync", "cuStreamSynchronize": "stream sync",
    "cudaDeviceSynchronize": "device sync", "cuCtxSynchronize": "device sync",
    "cudaEventSynchronize": "event sync", "cuEventSynchronize": "event sync",
    "hipStreamSynchronize": "stream sync", "hipDeviceSynchronize": "device sync",
}
# Frames of these libraries are never "the user's code".
LIBRARY_ROOTS = ("torch/", "paddle/", "numpy/", "triton/", "tools/", "opbench/", "runpy", "<frozen", "importlib/")
# Copies/syncs made by the tool itself (the final synchronize around the script) are dropped.
DEFAULT_IGNORE = ("opbench/backends/", "tools/syncs.py")
_ROOT = Path(__file__).resolve().parent.parent
_OWN = (str(_ROOT / "opbench") + "/", str(_ROOT / "tools") + "/")  # this suite's own frames
SMALL_COPY = 64 * 2**10  # bytes: a copy this small is a shape, an index or a scalar

_DURATION_SUFFIX = re.compile(r"\[[0-9.]+ [mun]?s\]$")
_PADDLE_SUFFIX = re.compile(r" (pybind_imperative_func|pybind_patch_func|dygraph|infer_meta|kernel launch|compute)$")
_FRAME = re.compile(r"^(?P<path>.+)\((?P<line>\d+)\): (?P<func>.+)$")
_BUILTIN_METHOD = re.compile(r"^<built-in method (?P<name>\w+) of (?P<owner>[\w.]+) object")
_BUILTIN_FUNCTION = re.compile(r"^<built-in function (?P<name>\w+)>")


@dataclass(frozen=True)
class Event:
    """One complete ("X") trace event, names cleaned of Paddle's duration and phase suffixes."""

    name: str
    cat: str
    ts: float
    dur: float
    pid: Any
    tid: str
    args: dict[str, Any] = field(hash=False, compare=False, default_factory=dict)

    @property
    def end(self) -> float:
        return self.ts + self.dur

    @property
    def correlation(self) -> int | None:
        c = self.args.get("correlation", self.args.get("correlation id"))
        return int(c) if c is not None else None


def clean_name(name: str) -> str:
    name = _DURATION_SUFFIX.sub("", name.strip())
    return _PADDLE_SUFFIX.sub("", name)


def load_events(trace: dict[str, Any]) -> list[Event]:
    """The complete events of a Chrome trace (``traceEvents``); Paddle's ``"123(C++)"`` tids become ``"123"``."""
    events = trace.get("traceEvents") if isinstance(trace, dict) else None
    if not isinstance(events, list):
        raise ValueError("not a Chrome trace: no traceEvents list")
    out = []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X" or "ts" not in e:
            continue
        tid = re.sub(r"\((Python|C\+\+)\)$", "", str(e.get("tid", "")))
        out.append(Event(clean_name(str(e.get("name", ""))), str(e.get("cat", "")), float(e["ts"]),
                         float(e.get("dur", 0.0)), e.get("pid"), tid, e.get("args") or {}))
    return out


# -- frames -------------------------------------------------------------------------------------------
def parse_frame(name: str) -> tuple[str, int, str] | None:
    """``"path/x.py(12): step"`` -> ``("path/x.py", 12, "step")``; ``None`` for built-ins."""
    m = _FRAME.match(name)
    return (m["path"], int(m["line"]), m["func"]) if m else None


def is_user_frame(name: str, user_paths: Sequence[str] = ()) -> bool:
    """True for a frame of the user's code: under ``user_paths`` (the script's folder), or else not a
    built-in, not an installed library, not the standard library and not this suite."""
    f = parse_frame(name)
    if f is None:
        return False
    path = f[0].replace("\\", "/")
    for p in user_paths:
        p = p.replace("\\", "/").rstrip("/")
        if p and (path == p or path.startswith(p + "/") or p.endswith("/" + path)):
            return True
    if any(m in path for m in ("site-packages/", "dist-packages/", "/lib/python3")):
        return False
    if path.startswith(_OWN) or path.startswith(LIBRARY_ROOTS):
        return False
    top = path.split("/")[0].removesuffix(".py")
    return path.startswith("/") or top not in sys.stdlib_module_names


def api_name(frame_name: str) -> str:
    """A readable API for a Python frame: ``Tensor.item``, ``torch.nonzero``, ``torch.cuda.synchronize``."""
    m = _BUILTIN_METHOD.match(frame_name)
    if m:
        owner = m["owner"].rsplit(".", 1)[-1]
        if owner == "Tensor":
            return f"Tensor.{m['name']}"
        if owner in ("type", "_VariableFunctionsClass", "module"):
            return f"torch.{m['name']}"
        return f"{owner}.{m['name']}"
    m = _BUILTIN_FUNCTION.match(frame_name)
    if m:
        return m["name"]
    f = parse_frame(frame_name)
    if f is None:
        return frame_name
    path = f[0].replace("\\", "/")
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            path = path.split(marker, 1)[1]
    module = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".").lstrip(".")
    return f"{module}.{f[2]}"


def where(frame_name: str) -> str:
    f = parse_frame(frame_name)
    if f is None:
        return "-"
    return f"{f[0].replace(chr(92), '/').rsplit('/', 1)[-1]}:{f[1]} ({f[2]})"


# -- incidents ------------------------------------------------------------------------------------------
@dataclass
class Incident:
    """One copy or sync runtime call and what encloses it."""

    runtime: Event
    kind: str  # "H2D copy", "D2H copy", "D2D copy", "copy", "stream sync", "device sync", "event sync"
    memory: str | None  # "pageable", "pinned" (host side of a copy) when known
    nbytes: int | None
    device_us: float | None
    stack: list[Event]  # enclosing events, outermost first


def _enclosing(host: list[Event], targets: list[Event]) -> dict[int, list[Event]]:
    """For each target (by index in ``targets``), the events of ``host`` enclosing it, outermost first.

    A sweep over events sorted by start (longest first on ties) with a stack of open events:
    O(n log n) for a whole trace. Events from the same thread only.
    """
    eps = 0.002  # us: exported timestamps are rounded
    idx = {id(t): i for i, t in enumerate(targets)}
    items = sorted(host + targets, key=lambda e: (e.ts, -e.dur, id(e) in idx))
    out: dict[int, list[Event]] = {}
    stack: list[Event] = []
    for e in items:
        while stack and stack[-1].end < e.ts + min(e.dur, eps) - eps:
            stack.pop()
        if id(e) in idx:
            out[idx[id(e)]] = [s for s in stack if s.end + eps >= e.end]
        else:
            stack.append(e)
    return out


def _copy_info(memcpy: Event | None) -> tuple[str, str | None, int | None, float | None]:
    if memcpy is None:
        return "copy", None, None, None
    n = memcpy.name
    d = re.search(r"(HtoD|DtoH|DtoD|HtoH|PtoP)", n, re.IGNORECASE)
    direction = {"htod": "H2D", "dtoh": "D2H", "dtod": "D2D", "htoh": "H2H", "ptop": "P2P"}.get(
        d.group(1).lower() if d else "", "")
    mem = re.search(r"(Pageable|Pinned)", n, re.IGNORECASE)
    nbytes = memcpy.args.get("bytes")
    return (f"{direction} copy" if direction else "copy", mem.group(1).lower() if mem else None,
            int(nbytes) if nbytes is not None else None, memcpy.dur)


def incidents(events: Iterable[Event]) -> list[Incident]:
    """Every copy and synchronize runtime call with its device copy and its enclosing host events."""
    events = list(events)
    memcpy = {e.correlation: e for e in events if e.cat in MEMCPY_CATS and e.correlation is not None}
    by_thread: dict[tuple[Any, str], list[Event]] = defaultdict(list)
    targets: dict[tuple[Any, str], list[Event]] = defaultdict(list)
    for e in events:
        key = (e.pid, e.tid)
        if e.cat in RUNTIME_CATS and (COPY_API.match(e.name) or e.name in SYNC_API):
            targets[key].append(e)
        elif e.cat in OP_CATS or e.cat in PY_CATS:
            by_thread[key].append(e)
    out = []
    for key, tgts in targets.items():
        stacks = _enclosing(by_thread.get(key, []), tgts)
        for i, rt in enumerate(tgts):
            if rt.name in SYNC_API:
                kind, mem, nbytes, dev = SYNC_API[rt.name], None, None, None
            else:
                kind, mem, nbytes, dev = _copy_info(memcpy.get(rt.correlation))
            out.append(Incident(rt, kind, mem, nbytes, dev, stacks.get(i, [])))
    return sorted(out, key=lambda x: x.runtime.ts)


# -- findings -------------------------------------------------------------------------------------------
@dataclass
class Finding:
    """One row of the report: an API call at one place in the user's code and what it costs."""

    api: str
    where: str
    what: str
    ops: str
    calls: int = 0
    copies: int = 0
    syncs: int = 0
    host_us: float = 0.0  # time the host thread spent inside the copy/sync runtime calls
    device_us: float = 0.0  # time the device spent copying
    nbytes: int = 0
    advice: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _describe(kinds: list[tuple[str, str | None]]) -> str:
    parts = []
    for kind, mem in kinds:
        s = kind
        if kind.endswith("copy") and mem:
            s += f" ({mem})"
        if s not in parts:
            parts.append(s)
    return " + ".join(parts)


def advise(api: str, ops: str, kinds: Sequence[str], memories: Sequence[str | None], bytes_per_call: int | None) -> str:
    """The advice that fits a finding, from the API/operator names and what happened."""
    names = f"{api} {ops}".lower()
    has_sync = any(k.endswith("sync") for k in kinds)
    if re.search(r"nonzero|masked_select|unique|repeat_interleave|bincount|histc|masked_scatter|boolean", names):
        return ("output size depends on the data, so the op copies a count to the host and waits: use fixed-size "
                "ops (torch.where with a mask, nonzero_static(size=...)) or move it out of the hot loop")
    if re.search(r"\bitem\b|_local_scalar_dense|tolist|numpy|__bool__|is_nonzero|__int__|__float__|__index__|"
                 r"__format__", names):
        return ("a Python value read from a GPU tensor waits for all queued work: keep the value on the device "
                "(torch.where / paddle.where instead of an if), or read it once every N steps")
    if "synchronize" in names:
        return ("an explicit synchronize: keep it out of loops; record an event and wait on it only where the "
                "host needs the result")
    tiny = bytes_per_call is not None and bytes_per_call <= SMALL_COPY
    if "H2D copy" in kinds and tiny:
        return ("a tiny host tensor (a shape, an index, a scalar) copied to the GPU every call: keep it on the "
                "CPU (Paddle: paddle.device_guard('cpu') / place=paddle.CPUPlace(); PyTorch: pass Python numbers) "
                "or build it on the GPU once, outside the loop")
    if "D2H copy" in kinds and tiny:
        return ("a tiny value (a shape, an index, a scalar) read back from the GPU and waited for: keep shape "
                "arithmetic on the CPU (Paddle: paddle.device_guard('cpu'); PyTorch: Python ints from .shape) "
                "or keep the value on the device")
    if "H2D copy" in kinds and "pageable" in memories:
        return ("copy from pageable memory (staged, blocking): allocate the host tensor pinned once "
                "(pin_memory=True) and copy with non_blocking=True")
    if "D2H copy" in kinds and "pageable" in memories:
        return ("copy into pageable memory (staged, blocking): copy into a pre-allocated pinned buffer with "
                "non_blocking=True and synchronize once before reading it")
    if has_sync and any(k.endswith("copy") for k in kinds):
        return "a blocking copy: pass non_blocking=True (pinned memory) and synchronize once before the data is used"
    if has_sync:
        return "the host waits for the GPU here: check that it needs the result at this point"
    return "a host<->device copy: check that the data must cross here, and pre-pin and batch it if so"


def attribute(trace: dict[str, Any], user_paths: Sequence[str] = (),
              ignore: Sequence[str] = DEFAULT_IGNORE, include_d2d: bool = False) -> list[Finding]:
    """Findings for a Chrome trace, largest host time first (see the module docstring)."""
    groups: dict[tuple[str, str, str], Finding] = {}
    calls_seen: dict[tuple[str, str, str], set[Any]] = defaultdict(set)
    per_call: dict[Any, list[Incident]] = defaultdict(list)
    call_info: dict[Any, tuple[str, str, str]] = {}
    found = incidents(load_events(trace))
    if found and not has_python_frames(trace) and found[-1].kind == "device sync" and not found[-1].stack:
        found = found[:-1]  # the tool's own synchronize after the script (no Python frames to tell it by)
    for inc in found:
        if inc.kind in ("D2D copy", "H2H copy", "P2P copy") and not include_d2d:
            continue
        py = [e for e in inc.stack if e.cat in PY_CATS]
        ops = [e for e in inc.stack if e.cat in OP_CATS]
        # Frames outside the innermost frame of the tool itself (whoever called the tool) are not the script's.
        tool_idx = max((i for i, e in enumerate(py) if any(s in e.name for s in ignore)), default=-1)
        user_idx = max((i for i, e in enumerate(py) if i > tool_idx and is_user_frame(e.name, user_paths)),
                       default=None)
        if user_idx is None and tool_idx >= 0:
            continue  # made by the tool itself (its synchronize, the profiler's stop), not by the script
        if user_idx is not None:
            loc = where(py[user_idx].name)
            call = py[user_idx + 1] if user_idx + 1 < len(py) else (ops[0] if ops else inc.runtime)
        else:
            loc = "-"
            call = ops[0] if ops else (py[-1] if py else inc.runtime)
        api = api_name(call.name) if call.cat in PY_CATS else call.name
        if call.cat in PY_CATS and py[-1] is not call and parse_frame(py[-1].name) is None:
            api = f"{api} > {api_name(py[-1].name)}"  # a library call of the user's that reads a value inside
        op_chain = " > ".join(dict.fromkeys(e.name for e in ops)) if ops else ""
        if ops and call.cat in PY_CATS and not api.startswith(("torch.", "paddle.")) and ops[0].name != api:
            api = f"{api} ({ops[0].name})"
        call_id = (call.pid, call.tid, call.ts, call.name)
        per_call[call_id].append(inc)
        call_info[call_id] = (api, loc, op_chain or inc.runtime.name)
    for call_id, incs in per_call.items():
        api, loc, ops = call_info[call_id]
        what = _describe([(i.kind, i.memory) for i in incs])
        key = (api, loc, what)
        f = groups.get(key)
        if f is None:
            f = groups[key] = Finding(api, loc, what, ops)
        calls_seen[key].add(call_id)
        f.calls = len(calls_seen[key])
        for i in incs:
            f.host_us += i.runtime.dur
            if i.kind.endswith("copy"):
                f.copies += 1
                f.device_us += i.device_us or 0.0
                f.nbytes += i.nbytes or 0
            else:
                f.syncs += 1
    for f in groups.values():
        kinds = [k.split(" (")[0] for k in f.what.split(" + ")]
        memories = ["pageable" if "pageable" in f.what else ("pinned" if "pinned" in f.what else None)]
        per = f.nbytes // f.copies if f.copies else None
        f.advice = advise(f.api, f.ops, kinds, memories, per)
    return sorted(groups.values(), key=lambda f: (-f.host_us, -f.calls, f.api))


def has_python_frames(trace: dict[str, Any]) -> bool:
    return any(isinstance(e, dict) and e.get("cat") in PY_CATS for e in trace.get("traceEvents", []))
