"""``opbench accuracy`` end to end: exit codes, results file, resume, shards, workers, profile."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from accuracy import results  # noqa: E402
from opbench.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LINES = [
    'paddle.add(Tensor([4, 8],"float32"), Tensor([8],"float32"), )',
    'paddle.multiply(Tensor([4, 8],"float32"), Tensor([4, 8],"float32"), )',
    'paddle.subtract(Tensor([3, 5],"float64"), Tensor([3, 5],"float64"), )',
    'paddle.exp(Tensor([6],"float32"), )',
    'paddle.cast(Tensor([6],"int32"), "float32", )',
    'paddle.sum(Tensor([4, 5],"float32"), axis=1, )',
]


def case_file(tmp_path: Path, lines: list[str] = LINES, name: str = "cases.txt") -> str:
    f = tmp_path / name
    f.write_text("\n".join(lines) + "\n")
    return str(f)


def run(args: list[str], capsys: pytest.CaptureFixture | None = None) -> int:
    return main(["accuracy", "--device", "cpu", "--workers", "0", "--subject", "torch", *args])


def records(path: Path) -> list[dict]:
    return results.read_records(path, strict=True)


def test_all_pass_exits_0_and_writes_one_record_per_case(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    assert run([case_file(tmp_path), "--out", str(out)]) == 0
    recs = records(out)
    assert [r["config"] for r in recs] == LINES
    assert {r["outcome"] for r in recs} == {"pass"}
    assert all({"timings", "comparisons", "key"} <= set(r) for r in recs)
    assert "| pass      |       6 |" in capsys.readouterr().out


def test_accuracy_fail_exits_1_and_the_summary_shows_figures(tmp_path, capsys, plugin_env):
    summary = tmp_path / "s.md"
    code = run([case_file(tmp_path), "--subject", "test-wrong", "--summary", str(summary)])
    assert code == 1
    text = summary.read_text()
    assert "| accuracy_fail |       1 |" in text and "paddle.multiply" in text
    assert "reference closer" in text and "max abs" in text


def test_malformed_line_is_config_error_exit_2_and_other_lines_still_run(tmp_path):
    out = tmp_path / "r.jsonl"
    f = case_file(tmp_path, [LINES[0], 'paddle.add(Tensor([4, 8],"float32", )', LINES[3]])
    assert run([f, "--out", str(out)]) == 2
    by_outcome = {r["outcome"] for r in records(out)}
    assert by_outcome == {"pass", "config_error"}
    bad = next(r for r in records(out) if r["outcome"] == "config_error")
    assert bad["source"].endswith("cases.txt:2") and bad["error"]


@pytest.mark.parametrize("args, words", [
    (["--subject", "nope"], "unknown provider"),
    (["--shard", "3/2"], "--shard"),
    (["--resume"], "--resume needs --out"),
    (["--tolerances", "/nonexistent.toml"], "cannot read tolerance file"),
])
def test_usage_errors_exit_2_with_one_line(tmp_path, capsys, args, words):
    assert run([case_file(tmp_path), *args]) == 2
    err = capsys.readouterr().err
    assert words in err


def test_existing_results_need_resume(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    out.write_text('{"key": "x", "outcome": "pass"}\n')
    assert run([case_file(tmp_path), "--out", str(out)]) == 2
    assert "--resume" in capsys.readouterr().err
    assert out.read_text() == '{"key": "x", "outcome": "pass"}\n'  # nothing lost


def test_test_tol_never_fails_and_writes_every_direction(tmp_path, plugin_env):
    csv_path = tmp_path / "tol.csv"
    assert run([case_file(tmp_path), "--subject", "test-wrong", "--test-tol", str(csv_path)]) == 0
    import csv

    rows = list(csv.DictReader(csv_path.open()))
    mul = [r for r in rows if r["config"].startswith("paddle.multiply")]
    assert {(r["direction"], r["output"]) for r in mul} == {("forward", "out"), ("backward", "grad x"),
                                                           ("backward", "grad y")}
    assert float(mul[0]["max_abs"]) > 0 and int(mul[0]["mismatches"]) > 0
    assert len({r["config"] for r in rows}) == len(LINES)


def test_resume_skips_recorded_cases_and_drops_a_cut_last_line(tmp_path):
    out = tmp_path / "r.jsonl"
    f = case_file(tmp_path)
    assert run([f, "--out", str(out)]) == 0
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:2]) + lines[2][:25])  # a kill mid-write
    assert run([f, "--out", str(out), "--resume"]) == 0
    recs = records(out)
    assert [r["config"] for r in recs][:2] == LINES[:2]
    assert sorted(r["config"] for r in recs) == sorted(LINES)


def test_shards_merged_equal_an_unsharded_run(tmp_path, capsys):
    f = case_file(tmp_path)
    whole = tmp_path / "whole.jsonl"
    assert run([f, "--out", str(whole)]) == 0
    parts = []
    for i in (1, 2, 3):
        part = tmp_path / f"shard{i}.jsonl"
        assert run([f, "--out", str(part), "--shard", f"{i}/3"]) == 0
        parts.append(str(part))
    sizes = [len(records(Path(p))) for p in parts]
    assert sum(sizes) == len(LINES)
    merged = tmp_path / "merged.jsonl"
    assert main(["accuracy-merge", *parts, "--out", str(merged)]) == 0

    def essence(recs: list[dict]) -> dict:
        return {r["key"]: (r["outcome"], [(c["name"], c.get("max_abs")) for c in r["comparisons"]]) for r in recs}

    assert essence(records(merged)) == essence(records(whole))
    assert "3 shards merged" in capsys.readouterr().out


def test_merge_exit_code_follows_the_gate(tmp_path, plugin_env):
    f = case_file(tmp_path)
    bad = tmp_path / "bad.jsonl"
    assert run([f, "--out", str(bad), "--subject", "test-wrong"]) == 1
    assert main(["accuracy-merge", str(bad)]) == 1
    assert main(["accuracy-merge", str(tmp_path / "missing.jsonl")]) == 2


def test_profile_stages_prints_every_stage(tmp_path, capsys):
    assert run([case_file(tmp_path), "--profile-stages", "--profile-png", str(tmp_path / "h.png")]) == 0
    out = capsys.readouterr().out
    for stage in ("parse", "input_generation", "to_device", "subject_run", "reference_run", "backward",
                  "compare", "bookkeeping"):
        assert f"| {stage}" in out
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "matplotlib is not installed" in out
    else:
        assert (tmp_path / "h.png").stat().st_size > 0


# -- worker processes ------------------------------------------------------------------------


def cli(args: list[str], env: dict[str, str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "opbench.cli", "accuracy", "--device", "cpu", *args],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=180, **kw)


@pytest.mark.slow
def test_segfaulting_worker_gives_crash_and_the_run_goes_on(tmp_path, plugin_env):
    out = tmp_path / "r.jsonl"
    p = cli([case_file(tmp_path), "--subject", "test-crash", "--workers", "1", "--out", str(out)], plugin_env)
    assert p.returncode == 1, p.stderr
    got = {r["config"]: r for r in records(out)}
    assert len(got) == len(LINES)
    crash = got[LINES[1]]
    assert crash["outcome"] == "crash" and "SIGSEGV" in crash["error"]
    assert all(r["outcome"] == "pass" for c, r in got.items() if c != LINES[1])


@pytest.mark.slow
def test_hanging_case_gives_timeout_and_the_run_goes_on(tmp_path, plugin_env):
    out = tmp_path / "r.jsonl"
    p = cli([case_file(tmp_path), "--subject", "test-sleep", "--workers", "2", "--timeout", "3",
             "--out", str(out)], plugin_env)
    assert p.returncode == 1, p.stderr
    got = {r["config"]: r["outcome"] for r in records(out)}
    assert got.pop(LINES[1]) == "timeout"
    assert set(got.values()) == {"pass"} and len(got) == len(LINES) - 1


@pytest.mark.slow
def test_sigkill_mid_run_then_resume_loses_nothing_and_records_nothing_twice(tmp_path, plugin_env, kill_when):
    lines = [f'paddle.add(Tensor([{i}, 3],"float32"), Tensor([3],"float32"), )' for i in range(1, 31)]
    f = case_file(tmp_path, lines)
    out = tmp_path / "r.jsonl"
    args = [f, "--subject", "test-slow", "--workers", "1", "--out", str(out)]
    kill_when([sys.executable, "-m", "opbench.cli", "accuracy", "--device", "cpu", *args], plugin_env, out)
    before = records(out)  # strict: the file holds whole lines only
    assert 5 <= len(before) < len(lines)
    p = cli([*args, "--resume"], plugin_env)
    assert p.returncode == 0, p.stderr
    after = records(out)
    keys = [r["key"] for r in after]
    assert len(keys) == len(set(keys)) == len(lines)
    assert after[: len(before)] == before  # finished results kept as they were
