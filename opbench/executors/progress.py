"""Progress of a run and the per-host table of its summary, shared by ``accuracy`` and ``bench``, local or on Ray.

On a terminal a tqdm bar; otherwise (CI logs, a pipe) one stderr line per finished item with
done/total, elapsed time and ETA, so a long run shows it is alive. The rate is measured over
everything finished so far, so on a cluster the ETA is the whole cluster's.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Iterable

from tabulate import tabulate


class Progress:
    """A bar or one line per finished item; ``progress`` None: bar on a terminal, lines elsewhere (if ``lines``),
    True: always a bar, False: nothing. ``rounds_after`` passes still to come count in the ETA."""

    def __init__(self, total: int, *, label: str = "", progress: bool | None = None, lines: bool = True,
                 rounds_after: int = 0) -> None:
        from tqdm import tqdm

        self.total, self.label, self.rounds_after = total, label, rounds_after
        self.lines = lines and progress is None and not sys.stderr.isatty() and total > 0
        disable = True if progress is False or self.lines or not total else (None if progress is None else False)
        self.bar = tqdm(total=total, unit="case", disable=disable, dynamic_ncols=True, desc=label or None,
                        file=sys.stderr)
        self.t0, self.done, self.failing = time.perf_counter(), 0, 0
        self.hosts: Counter[str] = Counter()
        self._running = ""

    def running(self, what: str) -> None:
        """Name the item being worked on in the bar (one worker at a time: the local bench)."""
        self._running = what
        self._postfix()

    def update(self, what: str, *, host: str | None = None, gpu: str | None = None, failed: bool = False) -> None:
        """One item finished: ``what`` names it; ``host``/``gpu`` (Ray runs) where it ran; ``failed`` counts it."""
        self.done += 1
        self.failing += failed
        if host is not None:
            self.hosts[host] += 1
        if failed or host is not None:
            self._postfix()
        self.bar.update(1)
        if self.lines:
            elapsed = time.perf_counter() - self.t0
            eta = elapsed / self.done * (self.total - self.done)
            eta += elapsed / self.done * self.total * self.rounds_after  # passes still to come
            where = f" on {host}" + (f" ({gpu})" if gpu else "") if host is not None else ""
            print(f"{self.label + ': ' if self.label else ''}{self.done}/{self.total} {what}  "
                  f"({elapsed:.0f} s, ETA {eta:.0f} s){where}", file=sys.stderr, flush=True)

    def _postfix(self) -> None:
        parts = [self._running] if self._running else []
        if self.failing:
            parts.append(f"failing={self.failing}")
        if self.hosts:
            parts.append(", ".join(f"{h} {n}" for h, n in sorted(self.hosts.items())))
        self.bar.set_postfix_str("; ".join(parts))

    def close(self) -> None:
        self.bar.close()


def host_table(rows: Iterable[tuple[str | None, str | None, bool]]) -> str:
    """The per-host section of a Ray run's summary: one row per (host, gpu) of (host, gpu, failed) items."""
    cases: Counter[tuple[str, str]] = Counter()
    failures: Counter[tuple[str, str]] = Counter()
    for host, gpu, failed in rows:
        key = (host or "?", gpu or "?")
        cases[key] += 1
        failures[key] += failed
    body = [(h, g, cases[h, g], failures[h, g]) for h, g in sorted(cases)]
    table = tabulate(body, headers=("host", "gpu", "cases", "failures"), tablefmt="github", disable_numparse=True)
    return f"### Per host\n\n{table}\n"
