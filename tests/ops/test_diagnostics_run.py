"""docs/ops/diagnostics/run.sh: the sections it runs by default, its header's list and its section functions agree,
so that a section the design notes cite cannot be left out of a run or be missing."""

from __future__ import annotations

import re
from pathlib import Path

RUN_SH = Path(__file__).resolve().parents[2] / "docs" / "ops" / "diagnostics" / "run.sh"


def _sections() -> tuple[list[str], list[str], set[str]]:
    text = RUN_SH.read_text()
    default = re.search(r"sections=\$\{\*:-([^}]*)\}", text)
    assert default, "run.sh sets no default sections"
    header = re.search(r"# Sections \(default: all\): (.*?) \(rows:", text, re.S)
    assert header, "run.sh's header lists no sections"
    listed = header.group(1).replace("#", " ").split()
    defined = set(re.findall(r"^section_(\w+)\(\)", text, re.M))
    return default.group(1).split(), listed, defined


def test_default_sections_are_the_header_list_and_the_functions() -> None:
    default, listed, defined = _sections()
    assert default == listed
    assert set(default) == defined
    assert len(default) == len(set(default))
