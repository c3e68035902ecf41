"""Mutated and hostile config lines: refused with a reason or run, never a traceback, a crash or execution."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

pytest.importorskip("paddle")
pytest.importorskip("torch")

from accuracy.check import Checker, Settings  # noqa: E402
from opbench.cases import CaseSet, parse_lines  # noqa: E402

CASES = Path(__file__).resolve().parents[1] / "mapping" / "cases"
HOSTILE = [
    "__import__('os').system('touch /tmp/opbench_pwned')",
    "paddle.abs(__import__('os').system('touch /tmp/opbench_pwned'), )",
    "paddle.abs(Tensor([2],\"float32\").__class__, )",
    "paddle.abs(lambda: 1, )",
    "paddle.abs(" + "[" * 5000 + "]" * 5000 + ", )",
    "paddle.add(" + "1, " * 200000 + ")",
    "paddle.reshape(Tensor([2, 3],\"float32\"), Tensor([99999999999],\"int64\"), )",
    "paddle.abs(Tensor([-1],\"float32\"), )",
    "paddle.abs(Tensor([2],\"float99\"), )",
    "paddle.abs(x=Tensor([2],\"float32\"), x=Tensor([2],\"float32\"), )",
]


def _mutate(line: str, rng: random.Random) -> str:
    i, j = sorted(rng.randrange(len(line) + 1) for _ in range(2))
    op = rng.randrange(4)
    if op == 0:
        return line[:i] + line[j:]  # cut a span
    if op == 1:
        return line[:i] + line[i:j] * 2 + line[j:]  # repeat a span
    if op == 2:
        tokens = ["(", ")", "[", "]", ",", "-1", "0", "None", "'float16'", "Tensor([0],\"int64\")"]
        return line[:i] + rng.choice(tokens) + line[i:]
    other = line.split(",")
    rng.shuffle(other)
    return ",".join(other)  # reorder the arguments


def test_mutated_and_hostile_lines_never_escape() -> None:
    rng = random.Random(0)
    seeds = [ln for p in sorted(CASES.glob("*.txt")) for ln in p.read_text().splitlines()
             if ln.strip() and not ln.startswith("#")]
    lines = [_mutate(rng.choice(seeds), rng) for _ in range(1000)] + HOSTILE
    found = CaseSet()
    found.add(parse_lines(lines, "fuzz"))  # must not raise
    assert not Path("/tmp/opbench_pwned").exists()
    checker = Checker(Settings(subject="paddle", reference="torch"))
    ran = 0
    for case in found.cases:
        if case.nbytes > 2**20 or any(t.numel > 2**18 for t in case.tensors()):
            continue
        rec = checker.check(case)  # never raises
        ran += 1
        assert rec["outcome"] != "crash", (case.to_line(), rec.get("error"))
    assert ran > 50 and found.errors
