"""The tree a newcomer walks: each op's device code split by path into files a reader can hold in mind,
and no import cycle between the case grammar and its model."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_CSRC_LINES = 800


def test_no_file_under_ops_csrc_is_above_800_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "ops" / "csrc").rglob("*") if p.is_file()
            for n in [len(p.read_text(errors="replace").splitlines())] if n > MAX_CSRC_LINES}
    assert not long, long


def test_each_op_lists_its_paths_in_an_entry_header() -> None:
    # the entry header of a CUDA core names the files it includes, one per path; an include resolves in the
    # op's folder or under ops/csrc (a shared engine such as "norm_common/..."), the build's include path
    csrc = ROOT / "ops" / "csrc"
    entries = [cuh for cuh in csrc.glob("*/*.cuh") if cuh.stem == cuh.parent.name]
    assert {c.stem for c in entries} >= {"lerp", "rms_norm", "layer_norm"}
    for cuh in entries:
        text = cuh.read_text()
        included = [ln.split('"')[1] for ln in text.splitlines() if ln.startswith("#include \"")]
        assert included and "paths" in text.lower(), cuh
        assert all((cuh.parent / f).is_file() or (csrc / f).is_file() for f in included), cuh


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}


def test_the_grammar_and_the_model_do_not_import_each_other() -> None:
    cases = ROOT / "opbench" / "cases"
    assert "opbench.cases.grammar" not in _imports(cases / "model.py")
