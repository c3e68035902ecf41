"""The built-in suites: one registry, one name per suite, the same in ``cases``, ``bench`` and ``accuracy``.

A suite is either ``<name>.txt`` here (config lines, one case a line, whose first comment line says
what the suite is for) or a generator in :data:`GENERATED` (a seeded sweep: a function returning config
lines). A file suite may have a CPU variant, ``cpu/<name>.txt``: the same cases and kernel paths at sizes
that suit a CPU, used when the run's device is the CPU. ``opbench suites`` lists them with case counts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from opbench.suites.sweeps import SWEEPS

DIR = Path(__file__).resolve().parent
CPU_DIR = DIR / "cpu"

# name -> (purpose, generator of config lines): the seeded sweeps of opbench/suites/sweeps.py.
GENERATED: dict[str, tuple[str, Callable[[], list[str]]]] = dict(SWEEPS)


@dataclass(frozen=True)
class Suite:
    """A built-in suite: its name, purpose (a file's first comment line), case count, and the case
    count of its CPU variant (None when the CPU runs the same cases)."""

    name: str
    purpose: str
    cases: int
    cpu_cases: int | None = None


def names() -> list[str]:
    """Every built-in suite name, sorted."""
    return sorted({p.stem for p in DIR.glob("*.txt")} | set(GENERATED))


def path_of(name: str, device: str = "gpu") -> Path | None:
    """The file of suite ``name`` for ``device`` (its CPU variant when there is one), or None when
    ``name`` is not a file suite."""
    if device == "cpu" and (CPU_DIR / f"{name}.txt").is_file():
        return CPU_DIR / f"{name}.txt"
    p = DIR / f"{name}.txt"
    return p if p.is_file() else None


def lines(name: str, device: str = "gpu") -> tuple[str, list[str]] | None:
    """``(source, lines)`` of suite ``name`` on ``device``: the file's lines, or a generator's
    lines under the source ``<suite NAME>``; None when there is no such suite."""
    if name in GENERATED:
        return f"<suite {name}>", GENERATED[name][1]()
    path = path_of(name, device)
    return (str(path), path.read_text().splitlines()) if path else None


def _count(text_lines: list[str]) -> int:
    return sum(1 for ln in text_lines if ln.strip() and not ln.lstrip().startswith("#"))


def describe() -> list[Suite]:
    """Every suite with its purpose and case count (and its CPU variant's)."""
    out = []
    for name in names():
        if name in GENERATED:
            purpose, gen = GENERATED[name]
            out.append(Suite(name, purpose, len(gen())))
            continue
        text = (DIR / f"{name}.txt").read_text().splitlines()
        purpose = next((ln.lstrip("# ").strip() for ln in text if ln.startswith("#")), "")
        cpu = CPU_DIR / f"{name}.txt"
        out.append(Suite(name, purpose, _count(text), _count(cpu.read_text().splitlines()) if cpu.is_file() else None))
    return out
