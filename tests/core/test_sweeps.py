"""The seeded sweeps: the same lines every time, enough of them, every pattern present, sizes in range,
and every line parses and binds to Paddle's signature."""

from __future__ import annotations

import math
import re

from opbench.cases import resolve
from opbench.suites import GENERATED, names
from opbench.suites.sweeps import (
    DTYPE_BYTES,
    LLM_HIDDEN,
    MEMORY_CAP,
    NORM_MAX_ELEMENTS,
    layer_norm_sweep,
    lerp_sweep,
    rms_norm_sweep,
)

SHAPE = re.compile(r"Tensor\((\[[^\]]*\]),\"(\w+)\"\)")


def _tensors(line: str) -> list[tuple[list[int], str]]:
    return [(eval(s), d) for s, d in SHAPE.findall(line)]  # noqa: S307 - a list literal of ints from our own line


def test_lerp_sweep_is_deterministic_and_registered() -> None:
    assert lerp_sweep() == lerp_sweep()
    assert lerp_sweep(seed=1) != lerp_sweep()
    assert "lerp-sweep" in names() and GENERATED["lerp-sweep"][1]() == lerp_sweep()


def test_lerp_sweep_covers_patterns_dtypes_ranks_and_sizes() -> None:
    lines = lerp_sweep()
    assert len(lines) >= 60
    dtypes, ranks, numels, kinds = set(), set(), [], set()
    for line in lines:
        ts = _tensors(line)
        x, y = ts[0][0], ts[1][0]
        dtypes.add(ts[0][1])
        weight = ts[2][0] if len(ts) == 3 else None
        shapes = [x, y] + ([weight] if weight else [])
        nd = max(len(s) for s in shapes)
        full = [max(s[len(s) - nd + i] if len(s) - nd + i >= 0 else 1 for s in shapes) for i in range(nd)]
        ranks.add(nd)
        numels.append(math.prod(full))
        assert math.prod(full) * DTYPE_BYTES[ts[0][1]] * 8 <= MEMORY_CAP, line
        kinds.add("scalar" if weight is None else "one-element" if weight == [1] else
                  "same" if x == y == weight == full else "broadcast")
        kinds |= {f"{name}-broadcast" for name, s in (("x", x), ("y", y), ("w", weight)) if s and s != full}
    assert dtypes == {"float32", "float16", "bfloat16", "float64"}
    assert ranks == {1, 2, 3, 4, 5}
    assert {"scalar", "one-element", "same", "x-broadcast", "y-broadcast", "w-broadcast"} <= kinds
    assert min(numels) >= 500 and max(numels) >= 1e7


def test_every_sweep_line_parses_and_binds() -> None:
    for name in GENERATED:
        found = resolve([name], device="gpu")
        assert not found.errors, found.errors[:3]
        assert len(found.cases) == len(GENERATED[name][1]())


def test_norm_sweeps_cover_rows_hidden_sizes_and_dtypes() -> None:
    for name, sweep, operands in (("rms_norm-sweep", rms_norm_sweep, 2), ("layer_norm-sweep", layer_norm_sweep, 3)):
        lines = sweep()
        assert lines == sweep() != sweep(seed=1) and GENERATED[name][1]() == lines
        assert len(lines) >= 60
        rows, hidden, dtypes = [], [], set()
        for line in lines:
            ts = _tensors(line)
            assert len(ts) == operands  # x, then weight (and bias) of shape [hidden] in x's dtype
            (r, h), dtype = ts[0]
            assert all(t == ([h], dtype) for t in ts[1:]), line
            assert r * h <= NORM_MAX_ELEMENTS and f"[{h}]," in line, line
            rows.append(r)
            hidden.append(h)
            dtypes.add(dtype)
        assert dtypes == {"bfloat16", "float16", "float32"}
        assert min(rows) == 1 and max(rows) >= 16384
        assert sum(h in LLM_HIDDEN for h in hidden) >= len(lines) // 2 - 1
        odd = [h for h in hidden if h % 2]
        assert len(odd) >= len(lines) // 3 and max(hidden) > 16384 and min(hidden) >= 768
