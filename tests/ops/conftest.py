"""Fixtures for the custom-op tests: each extension is built once per session."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest

# The shared helpers (lerp_testlib.py) sit beside the tests; with
# --import-mode=importlib this directory is not on sys.path by itself.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@pytest.fixture(scope="session")
def torch_ext() -> Any:
    """The torch module with our extension loaded (CPU, or GPU where torch sees one)."""
    torch = pytest.importorskip("torch")
    lerp_mod = importlib.import_module("ops.lerp")  # the module (ops.lerp is also the function)

    lerp_mod._torch_setup()  # builds the extension, registers fake + autograd rules
    return torch


@pytest.fixture(scope="session")
def paddle_ext() -> Any:
    """The paddle module with our extension loaded."""
    paddle = pytest.importorskip("paddle")
    import ops.build as build

    build.load("paddle")
    return paddle


@pytest.fixture(scope="session")
def norm_torch() -> Any:
    """The torch module with the norm extension (rms_norm, layer_norm) loaded and its rules registered."""
    torch = pytest.importorskip("torch")
    from ops.norm_args import torch_ops

    for name in ("rms_norm", "layer_norm"):
        torch_ops(name, importlib.import_module(f"ops.{name}")._register)
    return torch


@pytest.fixture(scope="session")
def norm_paddle() -> Any:
    """The paddle module with the norm extension loaded."""
    paddle = pytest.importorskip("paddle")
    import ops.build as build

    build.load("paddle", ext="norm")
    return paddle
