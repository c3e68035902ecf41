"""`opbench --version`, `opbench env`, `opbench cases`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from opbench import __version__
from opbench.cli import main, parse_bytes

LERP = 'paddle.lerp(Tensor([16, 102400],"float32"), Tensor([16, 102400],"float32"), 0.2, )'


def test_version(capsys):
    try:
        main(["--version"])
    except SystemExit as e:
        assert e.code == 0
    assert __version__ in capsys.readouterr().out


def test_console_script_entry_point_runs():
    out = subprocess.run([sys.executable, "-m", "opbench.cli", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and "opbench" in out.stdout


def test_env_lists_frameworks(capsys):
    assert main(["env", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "paddle:" in out and "torch:" in out and "gpu: none" in out


def test_env_json(capsys):
    assert main(["env", "--device", "cpu", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert set(info["frameworks"]) == {"paddle", "torch"} and info["device"] == "cpu"


def test_cases_normalizes_and_reports_mapping(tmp_path, capsys):
    f = tmp_path / "c.txt"
    f.write_text(f"# header\n{LERP}\npaddle.not_an_api(Tensor([2],\"float32\"))\n")
    assert main(["cases", str(f)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{f}:2: [mapped] {LERP}"
    assert out[1].startswith(f"{f}:3: [unmapped] paddle.not_an_api(")


def test_cases_malformed_exit_2_with_file_line_col(tmp_path, capsys):
    f = tmp_path / "c.txt"
    f.write_text(f"{LERP}\n\npaddle.add(Tensor([2],\"float3\"), )\n")
    assert main(["cases", str(f)]) == 2
    captured = capsys.readouterr()
    assert f"{f}:3:23: unknown dtype 'float3'" in captured.err
    assert LERP in captured.out  # the good line is still printed


def test_cases_memory_limit_is_a_separate_outcome_not_an_error(capsys):
    assert main(["cases", "--memory-limit", "1MiB", LERP]) == 0  # too large alone is not malformed
    err = capsys.readouterr().err
    assert "<command line>:1:1: too large: inputs need 0.01 GiB, more than the 0.00 GiB limit" in err
    assert err.splitlines()[-1] == "0 cases, 0 errors, 1 too large"
    assert main(["cases", "--memory-limit", "1GiB", LERP]) == 0
    assert capsys.readouterr().err.splitlines()[-1] == "1 cases, 0 errors, 0 too large"


def test_cases_malformed_and_too_large_counted_apart(tmp_path, capsys):
    f = tmp_path / "c.txt"
    f.write_text(f"{LERP}\npaddle.add(,)\npaddle.exp(Tensor([2],\"float32\"), )\n")
    assert main(["cases", "--memory-limit", "1MiB", str(f)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{f}:1:1: too large: ") and err[1].startswith(f"{f}:2:12: syntax error")
    assert err[-1] == "1 cases, 1 errors, 1 too large"


def test_cases_binary_file_is_one_line_exit_2(tmp_path, capsys):
    f = tmp_path / "ls"
    f.write_bytes(b"\x7fELF\x02\x01\x01\x00\xd0\xcf\x11\xe0")
    assert main(["cases", str(f)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"{f}:1:9: not a UTF-8 text file (byte 0xd0 at offset 8)", "0 cases, 1 errors, 0 too large"]


def test_cases_unknown_source_is_usage_error(capsys):
    assert main(["cases", "no_such_file.txt"]) == 2
    assert "no_such_file.txt" in capsys.readouterr().err


def test_parse_bytes():
    assert parse_bytes("8GiB") == 8 * 2**30
    assert parse_bytes("512MB") == 512 * 10**6
    assert parse_bytes("1e9") == 10**9


def test_cases_default_memory_limit_is_what_the_device_has_free(capsys):
    huge = 'paddle.add(Tensor([100000, 100000, 100],"float32"), Tensor([1],"float32"), )'
    assert main(["cases", huge]) == 0
    assert "too large: inputs need" in capsys.readouterr().err


@pytest.mark.parametrize("preset", [None, "ACTIVE"])
def test_openmp_workers_sleep_unless_the_environment_says(preset, monkeypatch, capsys):
    """The CLI asks every OpenMP runtime for a passive wait (set before a framework loads); a user's value wins."""
    if preset is None:
        monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    else:
        monkeypatch.setenv("OMP_WAIT_POLICY", preset)
    assert main(["suites"]) == 0
    assert os.environ["OMP_WAIT_POLICY"] == (preset or "PASSIVE")
