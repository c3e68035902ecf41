"""docs/mapping.md is what the table renders to: the document never drifts from the code."""

from __future__ import annotations

from opbench.mapping import document


def test_mapping_document_is_current() -> None:
    assert document.OUT.read_text() == document.render(), "run: python -m opbench.mapping.document"
