"""Exit codes a merge gate relies on: cannot-run is not failure, bad input is refused before running."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from opbench.cli import main  # noqa: E402

FP16_MEAN = 'paddle.mean(Tensor([3, 4],"float16"), )'  # Paddle's CPU build has no float16 mean kernel
RMS_NORM = 'paddle.nn.functional.rms_norm(Tensor([4, 8],"float32"), [8], Tensor([8],"float32"), 1e-06, )'
OK = 'paddle.exp(Tensor([4],"float32"), )'


def accuracy(*args: str) -> int:
    return main(["accuracy", "--device", "cpu", "--workers", "0", *args])


def test_unsupported_is_not_a_failure_unless_strict(capsys) -> None:
    pytest.importorskip("paddle")
    assert accuracy(OK, FP16_MEAN) == 0
    out = capsys.readouterr().out
    assert "No failing cases." in out and out.rstrip().endswith("1 of 2 cases not compared: 1 unsupported.")
    assert accuracy(OK, FP16_MEAN, "--strict") == 1


def paddle_cpu_has_rms_norm() -> bool:
    import paddle

    try:
        paddle.nn.functional.rms_norm(paddle.ones([1, 8]), [8], paddle.ones([8]), 1e-6)
    except RuntimeError:
        return False
    return True


def test_an_op_paddle_has_no_kernel_for_is_unsupported_not_an_error(capsys) -> None:
    """Paddle 3.3.1's CPU build has no rms_norm kernel at all (not only none for a dtype): the gate and the
    bench table say it cannot run here, and only --strict fails them."""
    pytest.importorskip("paddle")
    if paddle_cpu_has_rms_norm():
        pytest.skip("this Paddle build has a CPU rms_norm kernel")
    assert accuracy(RMS_NORM) == 0
    assert capsys.readouterr().out.rstrip().endswith("1 of 1 cases not compared: 1 unsupported.")
    assert accuracy(RMS_NORM, "--strict") == 1
    bench = ["bench", RMS_NORM, "--providers", "paddle,torch", "--device", "cpu", "--budget", "5", "--no-progress"]
    assert main(bench) == 0
    captured = capsys.readouterr()
    assert "Failed" not in captured.out and "n/a" in captured.err
    assert main([*bench, "--strict"]) == 1


def test_a_call_that_does_not_bind_is_refused_before_running(tmp_path: Path, capsys) -> None:
    f = tmp_path / "bad.txt"
    f.write_text('paddle.abs(Tensor([2],"float32"), Tensor([3],"float32"), 5, )\n')
    assert main(["cases", str(f)]) == 2
    assert "bad.txt:1:1: paddle.abs() takes at most 2 positional arguments but 3 were given" in capsys.readouterr().err
    assert accuracy(str(f), "--subject", "torch") == 2


@pytest.mark.parametrize("flag", ["--out", "--summary", "--test-tol"])
def test_an_unwritable_output_is_one_line_before_any_case(flag: str, capsys) -> None:
    assert accuracy(OK, "--subject", "torch", flag, "/proc/no/such/file") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "/proc/no/such/file" in err[0] and "Traceback" not in err[0]


def test_a_binary_case_file_is_one_line(capsys) -> None:
    assert main(["cases", "/bin/ls"]) == 2
    assert "not a UTF-8 text file" in capsys.readouterr().err


def test_bench_exits_0_when_a_provider_has_no_kernel(capsys) -> None:
    pytest.importorskip("paddle")
    line = 'paddle.lerp(Tensor([64, 64],"float16"), Tensor([64, 64],"float16"), 0.3, )'
    args = ["bench", line, "--providers", "paddle,torch", "--directions", "fwd", "--device", "cpu", "--budget", "5",
            "--no-progress"]
    assert main(args) == 0
    assert "n/a" in capsys.readouterr().err
    assert main([*args, "--strict"]) == 1


def test_inputs_too_large_are_their_own_outcome(tmp_path: Path) -> None:
    import json

    out = tmp_path / "r.jsonl"
    line = 'paddle.exp(Tensor([4096, 4096],"float32"), )'
    assert accuracy(line, OK, "--subject", "torch", "--memory-limit", "1MiB", "--out", str(out)) == 0
    outcomes = {json.loads(r)["config"]: json.loads(r)["outcome"] for r in out.read_text().splitlines()}
    assert outcomes[line] == "too_large" and outcomes[OK] == "pass"
    assert accuracy(line, "--subject", "torch", "--memory-limit", "1MiB", "--strict") == 1
