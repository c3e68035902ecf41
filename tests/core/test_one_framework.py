"""The suite imports and works with one framework; what needs the other says so in one line."""

from __future__ import annotations

import subprocess
import sys

import pytest

LERP = 'paddle.lerp(Tensor([4, 4],"float32"), Tensor([4, 4],"float32"), 0.5, )'


def run_without(framework: str, code: str) -> subprocess.CompletedProcess:
    prelude = f"import sys; sys.modules[{framework!r}] = None\n"
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("missing", "other"), [("paddle", "torch"), ("torch", "paddle")])
def test_only_one_framework_installed(missing, other):
    pytest.importorskip(other)
    code = f"""
import opbench.cli, opbench.providers, opbench.mapping, opbench.inputs
from opbench.cases import parse_line
from opbench.backends import FrameworkMissing, installed
from opbench.providers import get_provider, installed_providers
assert not installed({missing!r}) and installed({other!r})
assert all(not p.startswith({missing!r}) for p in installed_providers())
call = get_provider({other!r}, "cpu").prepare(parse_line({LERP!r}))
call.forward()
try:
    get_provider({missing!r}, "cpu")
except FrameworkMissing as e:
    print("MISSING:", e)
assert opbench.cli.main(["cases", {LERP!r}]) == 0
"""
    out = run_without(missing, code)
    assert out.returncode == 0, out.stderr[-2000:]
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("MISSING:"))
    assert "not installed" in line and "pip install" in line
