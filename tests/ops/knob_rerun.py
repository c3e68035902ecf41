"""Reruns of GPU tests in a fresh process with kernel-choice knobs set (the ops read their knobs once per
process), shared by the lerp and norm GPU tests."""

from __future__ import annotations

import os
import subprocess
import sys


def rerun_with_env(env: dict[str, str], *pytest_args: str) -> subprocess.CompletedProcess[str]:
    """``pytest -q PYTEST_ARGS`` in a new process with ``env`` added to the environment; its exit status and
    output."""
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args],
                          env={**os.environ, **env}, capture_output=True, text=True, check=False)


def rerun_with_knob_off(knob: str, *pytest_args: str) -> subprocess.CompletedProcess[str]:
    """``pytest -q PYTEST_ARGS`` in a new process with ``KNOB=0``; its exit status and output."""
    return rerun_with_env({knob: "0"}, *pytest_args)
