"""Append-only JSON-lines files written durably: accuracy's results and the benchmark's resume journal.

Each line is written with one ``write``, then flushed and fsynced, so a run killed at any moment
(SIGKILL too) leaves every finished line on disk and at worst a cut last line, which
:func:`cut_partial_tail` removes before a resumed run appends again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def cut_partial_tail(path: Path) -> None:
    """Drop a last line without its newline (a line cut by a kill) so appends start clean."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(path, "r+b") as fh:
            fh.truncate(data.rfind(b"\n") + 1)


class AppendLog:
    """One JSON object per line, each on disk once :meth:`write` returns. ``fresh``: start the file empty
    (else append); ``error``: the exception (one line, naming the file) when it cannot be opened."""

    def __init__(self, path: Path, *, fresh: bool = False, error: type[Exception] = ValueError,
                 what: str = "results") -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(path, "wb" if fresh else "ab")  # noqa: SIM115 - held for the run, closed by close()
        except OSError as e:
            raise error(f"cannot write {what} to {path}: {e.strerror or e}") from None

    def write(self, obj: dict[str, Any], *, allow_nan: bool = True) -> None:
        self._fh.write((json.dumps(obj, separators=(",", ":"), allow_nan=allow_nan) + "\n").encode())
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()
