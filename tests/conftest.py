"""Skip `gpu`-marked tests where no framework sees a CUDA GPU; the `kill_when` fixture for resume tests."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def kill_when() -> Callable[..., None]:
    """``kill_when(args, env, path, marker=b"\n", count=5, timeout=120)``: runs ``args`` in the repository and
    SIGKILLs it once ``path`` holds ``count`` occurrences of ``marker`` (or it ended, or ``timeout`` s passed):
    a run killed mid-way, for the ``--resume`` tests."""

    def run(args: list[str], env: dict[str, str], path: Path, marker: bytes = b"\n", count: int = 5,
            timeout: float = 120.0) -> None:
        proc = subprocess.Popen(args, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and proc.poll() is None:
            if path.exists() and path.read_bytes().count(marker) >= count:
                break
            time.sleep(0.05)
        proc.kill()  # SIGKILL
        proc.wait(10)

    return run


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not any(item.get_closest_marker("gpu") for item in items):
        return
    from opbench.backends import gpu_available

    if gpu_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if item.get_closest_marker("gpu"):
            item.add_marker(skip)
