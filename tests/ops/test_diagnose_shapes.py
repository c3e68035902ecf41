"""docs/ops/diagnostics/diagnose.py's fwd-shapes and bwd-shapes force every block shape of norm_tables.cuh's
tables, and only on rows of the element sizes that can take it: a shape added to a table without it there, or
forced on rows that ignore it, would time the default path under the shape's name."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TABLES = ROOT / "ops" / "csrc" / "norm_common" / "norm_tables.cuh"


def _diagnose():
    spec = importlib.util.spec_from_file_location("diagnose", ROOT / "docs" / "ops" / "diagnostics" / "diagnose.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _table(name: str) -> list[list[str]]:
    """The rows of `constexpr RegConfig NAME[] = {...};`, each as its fields."""
    body = re.search(rf"constexpr RegConfig {name}\[\] = \{{(.*?)\}};", TABLES.read_text(), re.S)
    assert body, f"no {name} in {TABLES.name}"
    return [[f.strip() for f in row.split(",")] for row in re.findall(r"\{([^{}]*)\}", body.group(1))]


def _block_shapes(rows: list[list[str]], sizes: set[int]) -> dict[tuple[int, int], set[int]]:
    """(threads a row, packs a thread) of the one-block rows -> the element sizes whose rows can take it."""
    out: dict[tuple[int, int], set[int]] = {}
    for f in rows:
        if f[2] != "1":  # a cluster row
            continue
        v = int(f[5]) if len(f) > 5 else 0  # RegConfig::v: elements a pack of the only rows it takes
        out.setdefault((int(f[0]), int(f[1])), set()).update(sizes if v == 0 else {16 // v})
    return out


def _forced(mod, direction: str, shapes: list[tuple[int, int]]) -> dict[tuple[int, int], set[int]]:
    return {(t, v): {mod.SHAPE_ELEMENT_BYTES[(direction, t, v)]} if (direction, t, v) in mod.SHAPE_ELEMENT_BYTES
            else {2, 4} for t, v in shapes}


def test_fwd_shapes_are_the_forward_table() -> None:
    mod = _diagnose()
    assert _forced(mod, "fwd", mod.FWD_SHAPES) == _block_shapes(_table("kFwdConfigs"), {2, 4})
    assert len(mod.FWD_SHAPES) == len(set(mod.FWD_SHAPES))


def test_bwd_shapes_are_the_backward_tables() -> None:
    mod = _diagnose()
    table = _block_shapes(_table("kBwdConfigs2"), {2})
    for shape, sizes in _block_shapes(_table("kBwdConfigs4"), {4}).items():
        table.setdefault(shape, set()).update(sizes)
    assert _forced(mod, "bwd", mod.BWD_SHAPES) == table
    assert len(mod.BWD_SHAPES) == len(set(mod.BWD_SHAPES))
