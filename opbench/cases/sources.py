"""Where cases come from: case files, benchmark JSON configs, built-in suites and inline lines.

``opbench bench`` and ``opbench accuracy`` take the same CASES arguments; this
module turns them into one list in which a malformed line is a
:class:`ConfigError` entry, so one bad line never hides the others.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from opbench.cases.benchmark_json import UNKNOWN_DIM, load_benchmark_json
from opbench.cases.grammar import parse_line
from opbench.cases.model import Case, ConfigError
from opbench.cases.textfile import read_text


def parse_lines(lines: list[str], source: str) -> list[Case | ConfigError]:
    """Parse case-file text: one case a line; ``#`` comments and blank lines are skipped.

    A trailing comment is left to Python's tokenizer, which knows a ``#`` inside a string is not one.
    """
    out: list[Case | ConfigError] = []
    for lineno, raw in enumerate(lines, start=1):
        head = raw.lstrip()
        if not head or head[0] == "#":
            continue
        try:
            out.append(parse_line(raw, lineno=lineno, source=source))
        except ConfigError as e:
            out.append(e)
    return out


def load_case_file(path: str | Path) -> list[Case | ConfigError]:
    """All cases of a case file (config lines); a file that is not UTF-8 text is one ConfigError entry."""
    path = Path(path)
    try:
        text = read_text(path)
    except ConfigError as e:
        return [e]
    return parse_lines(text.splitlines(), str(path))


@dataclass
class CaseSet:
    """The result of resolving CASES arguments: parsed cases and the lines that failed."""

    cases: list[Case] = field(default_factory=list)
    errors: list[ConfigError] = field(default_factory=list)

    def add(self, items: list[Case | ConfigError]) -> None:
        """Add parsed items; a case whose arguments do not bind to Paddle's signature of its API
        (too many positional arguments, an unknown keyword) is refused here, before anything runs."""
        from opbench.mapping import signature_problem

        for item in items:
            if isinstance(item, Case):
                problem = signature_problem(item.api, item.args, item.kwargs_dict)
                if problem:
                    item = ConfigError(problem, item.to_line(), item.lineno, 1, item.source)
            (self.errors if isinstance(item, ConfigError) else self.cases).append(item)


def suite_names(suite_dir: Path | None = None) -> list[str]:
    """Built-in suite names (:mod:`opbench.suites` by default; ``lerp.txt`` -> ``lerp``)."""
    from opbench import suites

    return sorted(p.stem for p in suite_dir.glob("*.txt")) if suite_dir else suites.names()


def resolve(specs: list[str], suite_dir: Path | None = None, *, unknown_dim: int = UNKNOWN_DIM,
            device: str = "gpu") -> CaseSet:
    """Turn CASES arguments into cases.

    Each spec is tried as: an inline config line (contains ``(``), a built-in suite name
    (:mod:`opbench.suites` at its ``device`` sizes, or a file in ``suite_dir``), a ``.json``
    benchmark config, or a case file. An unknown spec raises ``FileNotFoundError`` naming it and
    the suites there are.
    """
    from opbench import suites

    result = CaseSet()
    for spec in specs:
        if "(" in spec:
            result.add(parse_lines([spec], "<command line>"))
            continue
        path = Path(spec)
        if suite_dir is not None:
            found = (str(suite_dir / f"{spec}.txt"), (suite_dir / f"{spec}.txt").read_text().splitlines()) \
                if (suite_dir / f"{spec}.txt").is_file() else None
        else:
            found = suites.lines(spec, device)
        if found is not None and not path.exists():
            result.add(parse_lines(found[1], found[0]))
        elif path.suffix == ".json" and path.is_file():
            result.add(load_benchmark_json(path, unknown_dim=unknown_dim))
        elif path.is_file():
            result.add(load_case_file(path))
        else:
            known = ", ".join(suite_names(suite_dir)) or "none"
            raise FileNotFoundError(f"'{spec}' is not a case file, a JSON config or a built-in suite ({known})")
    return result
