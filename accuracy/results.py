"""The results file: one JSON record per line, appended as cases finish.

Records are written durably (:mod:`opbench.jsonl`): a run killed at any moment (SIGKILL
included) leaves every finished record on disk and at worst a cut last line, which
:class:`ResultsFile` drops when the run is resumed. Records are keyed by
the normalized config line (``key``): ``--resume`` skips keys already present, and
:func:`merge` combines shard files.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from opbench.jsonl import AppendLog, cut_partial_tail


class ResultsError(ValueError):
    """A results file that cannot be used; the message names it and the line."""


def read_records(path: str | Path, strict: bool = False) -> list[dict[str, Any]]:
    """Every complete record of a results file (a cut last line is skipped unless ``strict``)."""
    path = Path(path)
    try:
        lines = path.read_bytes().split(b"\n")
    except OSError as e:
        raise ResultsError(f"{path}: cannot read results ({e.strerror})") from None
    records = []
    for n, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
        except json.JSONDecodeError:
            if n == len(lines) and not strict:  # the last line, cut by a kill mid-write
                break
            raise ResultsError(f"{path}:{n}: not a JSON record") from None
        if not isinstance(rec, dict) or "key" not in rec or "outcome" not in rec:
            raise ResultsError(f"{path}:{n}: not an accuracy result record (needs 'key' and 'outcome')")
        records.append(rec)
    return records


class ResultsFile:
    """Append-only JSONL results; knows which keys are done (for ``--resume``)."""

    def __init__(self, path: str | Path, resume: bool = False) -> None:
        self.path = Path(path)
        self.records: list[dict[str, Any]] = []
        if self.path.exists() and self.path.stat().st_size > 0:
            if not resume:
                raise ResultsError(f"{self.path} already has results: pass --resume to continue it, "
                                   "or choose another --out")
            self.records = read_records(self.path)
            cut_partial_tail(self.path)
        self.done = {r["key"] for r in self.records}
        self._log = AppendLog(self.path, error=ResultsError)

    def append(self, record: dict[str, Any]) -> None:
        """Write one record durably (write, flush, fsync) and remember its key."""
        self._log.write(record)
        self.records.append(record)
        self.done.add(record["key"])

    def close(self) -> None:
        self._log.close()

    def __enter__(self) -> ResultsFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def shard_of(key: str, count: int) -> int:
    """The 1-based shard (of ``count``) a case key belongs to; stable across runs and machines."""
    digest = hashlib.blake2b(key.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") % count + 1


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/4"`` -> ``(2, 4)``; shards are numbered from 1."""
    try:
        i, n = (int(p) for p in text.split("/"))
    except ValueError:
        raise ValueError(f"--shard must be I/N with integers, e.g. 1/4; got {text!r}") from None
    if not (n >= 1 and 1 <= i <= n):
        raise ValueError(f"--shard {text}: need 1 <= I <= N")
    return i, n


def merge(files: Iterable[str | Path]) -> tuple[list[dict[str, Any]], list[str]]:
    """Records of several result files, each key once (the first seen), and notes on conflicts."""
    seen: dict[str, dict[str, Any]] = {}
    notes = []
    for f in files:
        for rec in read_records(f):
            key = rec["key"]
            if key in seen:
                if seen[key]["outcome"] != rec["outcome"]:
                    notes.append(f"{f}: {key}: recorded twice with different outcomes "
                                 f"({seen[key]['outcome']}, {rec['outcome']}); kept the first")
                continue
            seen[key] = rec
    return list(seen.values()), notes
