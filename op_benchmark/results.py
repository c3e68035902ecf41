"""Result records (one per case x provider x direction) and the JSON file that holds them.

The file is ``{"schema", "env", "config", "interrupted", "records": [...]}``; each record
keeps its raw samples so ``opbench compare`` can bootstrap over them later.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from op_benchmark.stats import Measurement
from opbench.jsonl import AppendLog, cut_partial_tail

SCHEMA = "opbench.bench/1"
#: ok: measured; not_applicable: the provider cannot run the case; unsupported: the timing method
#: is not offered for the provider, or the framework has no kernel for the op or dtype on this device
#: (both shown as n/a, not failures unless --strict); skipped: refused before running (memory
#: limit); error / oom: the case failed (the reason is in ``error``).
STATUSES = ("ok", "not_applicable", "unsupported", "skipped", "error", "oom")


@dataclass
class Record:
    """One measured (or failed) case x provider x direction."""

    case: str
    api: str
    provider: str
    direction: str
    device: str
    method: str
    status: str = "ok"
    error: str | None = None
    source: str | None = None
    median_us: float | None = None
    min_us: float | None = None
    max_us: float | None = None
    q1_us: float | None = None
    q3_us: float | None = None
    iqr_us: float | None = None
    noise: float | None = None
    samples: int = 0
    samples_us: list[float] = field(default_factory=list)
    stop_reason: str | None = None
    sm_clock_mhz: list[int] | None = None
    throttled_samples: int = 0
    bytes: int | None = None
    flops: float | None = None
    gbps: float | None = None
    pct_peak_bw: float | None = None
    tflops: float | None = None
    round_medians: list[float] | None = None  # one median per pass over the suite (``--rounds``)
    copy_us: float | None = None  # a device copy of ``bytes`` timed beside it (``--copy-floor``; floor.py)
    host: str | None = None  # where it ran (absent in files written before these fields existed)
    gpu: str | None = None  # "<GPU name> #<ordinal>", or "cpu"

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.median_us is not None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.case, self.provider, self.direction)

    def set_measurement(self, m: Measurement, peak_gbps: float | None = None) -> None:
        """Fill the statistics and the derived rates from ``m`` (bytes/flops set beforehand)."""
        self.median_us, self.min_us, self.max_us = m.median, m.min, m.max
        self.q1_us, self.q3_us, self.iqr_us = m.q1, m.q3, m.iqr
        self.noise = m.noise if m.count > 1 else None
        self.samples = m.count
        self.samples_us = list(m.samples_us)
        if m.median > 0 and self.bytes:
            self.gbps = self.bytes / (m.median * 1e-6) / 1e9
            if peak_gbps:
                self.pct_peak_bw = 100.0 * self.gbps / peak_gbps
        if m.median > 0 and self.flops:
            self.tflops = self.flops / (m.median * 1e-6) / 1e12

    def measurement(self) -> Measurement:
        return Measurement.of(self.samples_us)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if d["noise"] is not None and d["noise"] == float("inf"):
            d["noise"] = None
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Record:
        known = {f.name for f in fields(cls)}
        missing = [k for k in ("case", "provider", "direction", "status") if k not in d]
        if missing:
            raise ValueError(f"record lacks {', '.join(missing)}")
        rec = cls(**{k: v for k, v in d.items() if k in known}
                  | {k: d.get(k, "") for k in ("api", "device", "method") if k not in d})
        if rec.status == "ok" and not rec.samples_us:
            raise ValueError(f"record {rec.key} has status ok but no samples_us")
        return rec


def gpu_model(gpu: str | None) -> str | None:
    """The model part of a record's ``gpu`` field ("NVIDIA H100 #1" -> "NVIDIA H100")."""
    return gpu.rsplit(" #", 1)[0] if gpu else gpu


def merge_rounds(passes: list[list[Record]], peak_gbps: float | None = None) -> list[Record]:
    """One record per case x provider x direction from several passes over the same suite.

    Samples are pooled, and each pass's median is kept in ``round_medians``: the passes run
    minutes apart, so how their medians differ measures what a second run of the same build
    would differ by (``opbench compare`` sizes its verdicts with it). A record that failed
    in any pass keeps that failure.
    """
    if len(passes) == 1:
        return passes[0]
    by_key: dict[tuple[Any, ...], list[Record]] = {}
    for records in passes:
        for r in records:  # samples of different GPU models are never pooled
            by_key.setdefault((*r.key, gpu_model(r.gpu)), []).append(r)
    merged = []
    for group in by_key.values():
        failed = [r for r in group if not r.ok]
        if failed:
            merged.append(failed[0])
            continue
        rec = Record(**{f.name: getattr(group[0], f.name) for f in fields(Record)})
        rec.set_measurement(Measurement.of([s for r in group for s in r.samples_us]), peak_gbps)
        rec.round_medians = [r.median_us for r in group]
        copies = [r.copy_us for r in group if r.copy_us]
        rec.copy_us = Measurement.of(copies).median if copies else None
        rec.sm_clock_mhz = [c for r in group for c in (r.sm_clock_mhz or [])] or None
        rec.throttled_samples = sum(r.throttled_samples for r in group)
        rec.stop_reason = group[-1].stop_reason
        merged.append(rec)
    return merged


@dataclass
class BenchResult:
    """A whole run: the environment block, the options, the records, and whether it was cut short."""

    env: dict[str, Any]
    config: dict[str, Any]
    records: list[Record]
    interrupted: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "env": self.env, "config": self.config, "interrupted": self.interrupted,
                "records": [r.to_dict() for r in self.records]}


def write_json(result: BenchResult, path: str | Path) -> None:
    """Write atomically (a temporary file renamed), so an interrupted write never leaves half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(result.to_dict(), indent=1, allow_nan=False) + "\n")
    os.replace(tmp, path)


def read_json(path: str | Path) -> BenchResult:
    """Load a results file; ValueError with a one-line reason naming the file when it is not one."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: not JSON ({e})") from None
    if not isinstance(data, dict) or not isinstance(data.get("records"), list):
        raise ValueError(f"{path}: not an opbench bench result (no 'records' list)")
    if data.get("schema", SCHEMA) != SCHEMA:
        raise ValueError(f"{path}: schema {data.get('schema')!r}, expected {SCHEMA!r}")
    records = []
    for i, d in enumerate(data["records"]):
        if not isinstance(d, dict):
            raise ValueError(f"{path}: record {i} is not an object")
        try:
            records.append(Record.from_dict(d))
        except (TypeError, ValueError) as e:
            raise ValueError(f"{path}: record {i}: {e}") from None
    return BenchResult(data.get("env") or {}, data.get("config") or {}, records, bool(data.get("interrupted")))


def gpu_models(result: BenchResult) -> set[str]:
    """The GPU models a result's figures come from: its environment block's GPU and those of its workers."""
    envs = [result.env, *(result.env.get("workers") or {}).values()]
    names = {(e.get("gpu") or {}).get("name") for e in envs if isinstance(e, dict)}
    return {n for n in names if n}


def check_one_gpu_model(results: dict[str, BenchResult], allow_mixed: bool = False) -> None:
    """ValueError (one line) when the named results hold figures of more than one GPU model, unless allowed."""
    if allow_mixed:
        return
    models = {name: gpu_models(r) for name, r in results.items()}
    every = set().union(*models.values()) if models else set()
    if len(every) > 1:
        where = "; ".join(f"{name}: {', '.join(sorted(m)) or 'no GPU'}" for name, m in models.items())
        raise ValueError(f"results mix GPU models ({where}); pass --allow-mixed-gpus to compare them anyway")


def journal_path(json_path: str | Path) -> Path:
    """Where a bench run with ``--json FILE`` journals its finished cases: ``FILE.cases.jsonl``."""
    return Path(str(json_path) + ".cases.jsonl")


class Journal:
    """The finished cases of a bench run, for ``--resume``: one JSON line per (round, case), written and fsynced
    as the case finishes, so a run killed at any moment (SIGKILL too) loses no finished case and, resumed,
    repeats none. The first line holds the run's options; a resume with other options is refused."""

    def __init__(self, path: str | Path, config: dict[str, Any], resume: bool = False) -> None:
        self.path = Path(path)
        self.config = json.loads(json.dumps(config))
        self.done: dict[int, dict[str, list[Record]]] = {}  # round -> case line -> its records
        self.workers: dict[str, dict[str, Any]] = {}  # "host/gpu" -> that worker's environment block
        self.resumed = resume and self.path.exists() and self.path.stat().st_size > 0
        if self.resumed:
            cut_partial_tail(self.path)  # a line cut by a kill mid-write
            self._read()
        self._log = AppendLog(self.path, fresh=not self.resumed, what="the journal")
        if not self.resumed:
            self._write({"schema": SCHEMA, "config": self.config})

    def _read(self) -> None:
        for n, raw in enumerate(self.path.read_bytes().split(b"\n"), start=1):
            if not raw.strip():
                continue
            try:
                d = json.loads(raw)
                if n == 1:
                    same = d.get("config") == self.config
                elif "workers" in d:
                    self.workers.update(d["workers"])
                else:
                    self.done.setdefault(int(d["round"]), {}).setdefault(
                        d["case"], [Record.from_dict(r) for r in d["records"]])
            except (ValueError, KeyError, TypeError, AttributeError) as e:
                raise ValueError(f"{self.path}:{n}: not a bench journal line ({e})") from None
            if n == 1 and not same:
                raise ValueError(f"{self.path} was written by a run with other options or cases; run "
                                 "without --resume to start over, or choose another --json")

    def _write(self, obj: dict[str, Any]) -> None:
        self._log.write(obj, allow_nan=False)

    def add_case(self, round_: int, case: str, records: list[Record]) -> None:
        """Record one finished case of pass ``round_`` (0-based) durably."""
        self._write({"round": round_, "case": case, "records": [r.to_dict() for r in records]})
        self.done.setdefault(round_, {})[case] = records

    def add_worker(self, key: str, env: dict[str, Any]) -> None:
        """Record a worker's environment block (once per ``host/gpu``)."""
        self._write({"workers": {key: env}})
        self.workers[key] = env

    def count(self) -> int:
        """Finished (round, case) pairs."""
        return sum(len(c) for c in self.done.values())

    def close(self) -> None:
        self._log.close()
