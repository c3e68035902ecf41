"""How much of a set of config lines the suite can run: parsed, mapped to PyTorch, and what is missing.

``opbench cases --summary FILES`` prints this; ``docs/mapping/coverage.py`` measures it on
PaddleAPITest's public config files. A line is *mapped* when its API has a PyTorch mapping;
the unmapped APIs are ranked by how many lines need them, which is the order to map them in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from tabulate import tabulate

from opbench.cases import Case, ConfigError


@dataclass
class Coverage:
    """Counts over a set of lines: parsed or refused, mapped or not, per API."""

    parsed: int = 0
    refused: int = 0
    mapped: int = 0
    per_api: Counter = field(default_factory=Counter)
    unmapped: Counter = field(default_factory=Counter)
    reasons: Counter = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return self.parsed + self.refused

    def add(self, items: Iterable[Case | ConfigError]) -> Coverage:
        from opbench.mapping import is_mapped

        for item in items:
            if isinstance(item, ConfigError):
                self.refused += 1
                self.reasons[item.reason.split(" (")[0][:80]] += 1
                continue
            self.parsed += 1
            self.per_api[item.api] += 1
            if is_mapped(item.api):
                self.mapped += 1
            else:
                self.unmapped[item.api] += 1
        return self


def _pct(n: int, d: int) -> str:
    return f"{100.0 * n / d:.1f}%" if d else "n/a"


def summary(cov: Coverage, top: int = 30) -> str:
    """The coverage as markdown: overall rates, the unmapped APIs ranked by lines, the refusals."""
    apis = len(cov.per_api)
    mapped_apis = apis - len(cov.unmapped)
    rows = [
        ("lines", cov.total, ""),
        ("parsed", cov.parsed, _pct(cov.parsed, cov.total)),
        ("refused (malformed)", cov.refused, _pct(cov.refused, cov.total)),
        ("mapped (of parsed)", cov.mapped, _pct(cov.mapped, cov.parsed)),
        ("APIs", apis, ""),
        ("APIs mapped", mapped_apis, _pct(mapped_apis, apis)),
    ]
    out = [tabulate(rows, headers=("", "count", "rate"), tablefmt="github"), ""]
    if cov.unmapped:
        ranked = cov.unmapped.most_common(top)
        out += [f"Unmapped APIs by lines that need them ({len(cov.unmapped)} APIs, "
                f"{sum(cov.unmapped.values())} lines; top {len(ranked)}):", "",
                tabulate(ranked, headers=("API", "lines"), tablefmt="github"), ""]
    if cov.reasons:
        out += ["Refused lines by reason:", "",
                tabulate(cov.reasons.most_common(top), headers=("reason", "lines"), tablefmt="github"), ""]
    return "\n".join(out)
