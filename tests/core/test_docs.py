"""docs/ stays what a maintainer reads: at most 40 files, each listed in docs/README.md, none narrating
how or when it was produced."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"
NARRATION = re.compile(r"\b(this session|the session's|that day|this time|session by session)\b", re.IGNORECASE)


def _files() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def test_at_most_40_files() -> None:
    assert len(_files()) <= 40, [str(p.relative_to(DOCS)) for p in _files()]


def test_the_index_names_every_file() -> None:
    index = (DOCS / "README.md").read_text()
    missing = [str(p.relative_to(DOCS)) for p in _files()
               if p.name != "README.md" or p.parent != DOCS
               if str(p.relative_to(DOCS)) not in index and f"{p.parent.relative_to(DOCS)}/" not in index]
    assert not missing, f"not in docs/README.md: {missing}"


def test_no_document_narrates_its_production() -> None:
    bad = [f"{p.relative_to(DOCS)}: {m.group(0)}" for p in _files() if p.suffix in (".md", ".py", ".sh")
           for m in [NARRATION.search(p.read_text(errors="replace"))] if m]
    assert not bad, bad
