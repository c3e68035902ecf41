"""The built-in ``core`` suite passes on the CPU: Paddle CPU against PyTorch CPU."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("paddle")

from opbench.cli import main  # noqa: E402


def test_core_suite_passes_on_cpu(tmp_path, capsys):
    out = tmp_path / "core.jsonl"
    code = main(["accuracy", "core", "--device", "cpu", "--workers", "0", "--out", str(out)])
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    bad = [(r["config"], r["outcome"], r.get("error", r.get("failed"))) for r in recs if r["outcome"] != "pass"]
    assert code == 0 and not bad, bad
    assert len(recs) > 100
