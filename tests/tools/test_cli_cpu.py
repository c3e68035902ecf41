"""`opbench tools` on a machine without a CUDA GPU, and argument handling (checked before any GPU work)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from opbench.backends import gpu_available
from opbench.cli import main

ROOT = Path(__file__).resolve().parents[2]
no_gpu = pytest.mark.skipif(gpu_available(), reason="checks the behaviour without a CUDA GPU")


@no_gpu
@pytest.mark.parametrize("argv", [
    ["transfer"], ["transfer", "--preset", "offload"], ["overlap"], ["timing-pitfalls"],
    ["syncs", str(ROOT / "tools" / "examples" / "hidden_sync.py")], ["overlap", "--framework", "paddle"],
])
def test_needs_a_gpu_one_line_exit_2(argv, capsys):
    assert main(["tools", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "needs a CUDA GPU" in err and "Traceback" not in err
    assert err.startswith(f"opbench tools {argv[0]}:")


@no_gpu
def test_clocks_without_nvml_one_line_exit_2(capsys, monkeypatch):
    from opbench import nvml

    monkeypatch.setattr(nvml, "pynvml", None)
    nvml.available.cache_clear()
    try:
        assert main(["tools", "clocks"]) == 2
    finally:
        nvml.available.cache_clear()
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "needs an NVIDIA GPU" in err


@no_gpu
def test_console_run_has_no_traceback():
    code = "import sys; from opbench.cli import main; sys.exit(main(sys.argv[1:]))"
    out = subprocess.run([sys.executable, "-c", code, "tools", "overlap"], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr and "needs a CUDA GPU" in out.stderr


@pytest.mark.parametrize(("argv", "message"), [
    (["overlap", "--streams", "0"], "--streams must be at least 1"),
    (["overlap", "--layers", "0"], "--layers"),
    (["transfer", "--methods", "h2d_pageable,bogus"], "unknown method 'bogus'"),
    (["transfer", "--repeats", "0"], "--repeats"),
    (["transfer", "--sizes", "1MiB", "--max-size", "4KiB"], "no sizes left"),
    (["timing-pitfalls", "--mnk", "1,2"], "--mnk wants three positive integers"),
    (["timing-pitfalls", "--samples", "1"], "--samples"),
    (["syncs", "no/such/script.py"], "no such script"),
    (["clocks", "--lock", "0"], "--lock wants a clock in MHz"),
])
def test_bad_arguments_exit_2_with_one_line(argv, message, capsys):
    assert main(["tools", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("argv", [
    ["transfer", "--sizes", "12Q"], ["overlap", "--shape", "1,x"], ["overlap", "--framework", "jax"],
    ["clocks", "--lock", "1000", "--reset"], ["bogus-tool"],
])
def test_malformed_arguments_are_argparse_errors(argv, capsys):
    with pytest.raises(SystemExit) as e:
        main(["tools", *argv])
    assert e.value.code == 2


def test_tools_without_a_name_prints_help(capsys):
    assert main(["tools"]) == 2
    out = capsys.readouterr().out
    for name in ("transfer", "overlap", "syncs", "timing-pitfalls", "clocks"):
        assert name in out


def test_clocks_help_warns_about_locking(capsys):
    with pytest.raises(SystemExit):
        main(["tools", "clocks", "--help"])
    out = capsys.readouterr().out
    assert "needs root" in out and "shared GPUs forbid" in out


def test_syncs_passes_script_arguments_through():
    from opbench.cli import build_parser

    args = build_parser().parse_args(["tools", "syncs", "--json", "x.json", "s.py", "--steps", "3", "-v"])
    assert args.script == "s.py" and args.script_args == ["--steps", "3", "-v"] and args.json == "x.json"
