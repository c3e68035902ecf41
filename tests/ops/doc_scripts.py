"""Loads a script of docs/ops/ as a module, so tests can check the functions that make its tables."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

DOCS_OPS = Path(__file__).resolve().parents[2] / "docs" / "ops"


def load(name: str) -> ModuleType:
    """docs/ops/<name>.py, imported under ``name``."""
    spec = importlib.util.spec_from_file_location(name, DOCS_OPS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
