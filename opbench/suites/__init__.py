"""The built-in suites: one folder, one name per suite, the same in ``cases``, ``bench`` and ``accuracy``.

A suite is ``<name>.txt`` here: config lines, one case a line, whose first comment line says
what the suite is for (``opbench suites`` lists them with their case counts).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Suite:
    """A built-in suite: its name, file, purpose (its first comment line) and number of cases."""

    name: str
    path: Path
    purpose: str
    cases: int


def names() -> list[str]:
    """Every built-in suite name, sorted."""
    return sorted(p.stem for p in DIR.glob("*.txt"))


def path_of(name: str) -> Path | None:
    """The file of suite ``name``, or None when there is no such suite."""
    p = DIR / f"{name}.txt"
    return p if p.is_file() else None


def describe() -> list[Suite]:
    """Every suite with its purpose and case count."""
    out = []
    for name in names():
        path = DIR / f"{name}.txt"
        lines = path.read_text().splitlines()
        purpose = next((ln.lstrip("# ").strip() for ln in lines if ln.startswith("#")), "")
        cases = sum(1 for ln in lines if ln.strip() and not ln.lstrip().startswith("#"))
        out.append(Suite(name, path, purpose, cases))
    return out
