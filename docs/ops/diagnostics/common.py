"""Shared helper of the lerp diagnostics: one prepared case x provider x direction on the GPU."""

from __future__ import annotations

from typing import Any

from op_benchmark import directions
from opbench import inputs
from opbench.cases import parse_line
from opbench.providers import get_provider


def timed(line: str, provider: str, direction: str, seed: int = 0) -> tuple[Any, directions.TimedCall]:
    """The prepared call and the timed callable the benchmark would time for this case."""
    case = parse_line(line)
    call = get_provider(provider, "gpu").prepare(case, seed, values=inputs.generate(case, seed),
                                                 requires_grad=direction != "fwd")
    return call, directions.build(call, direction, seed)
