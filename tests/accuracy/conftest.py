"""Make the test plugin importable here and in spawned workers / subprocesses."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PLUGIN = "opbench_accuracy_testplugin"

if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


@pytest.fixture
def plugin_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Environment that loads the test providers (for this process and its children)."""
    from accuracy import plugins

    monkeypatch.setenv(plugins.ENV, PLUGIN)
    path = os.pathsep.join([str(HERE), str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    monkeypatch.setenv("PYTHONPATH", path)
    plugins.load()
    return dict(os.environ)
