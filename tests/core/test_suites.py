"""One registry of built-in suites: every name works in cases, bench and accuracy alike."""

from __future__ import annotations

from opbench import suites
from opbench.cases import resolve
from opbench.cli import main


def test_every_suite_has_a_purpose_and_cases() -> None:
    described = suites.describe()
    assert {s.name for s in described} == set(suites.names()) >= {"core", "lerp", "perf-core"}
    for s in described:
        assert s.purpose and s.cases > 0, s
        found = resolve([s.name])
        assert len(found.cases) == s.cases and not found.errors, s.name


def test_opbench_suites_lists_them(capsys) -> None:
    assert main(["suites"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in suites.names())


def test_a_suite_name_works_in_every_command(capsys) -> None:
    assert main(["cases", "lerp", "--memory-limit", "1TiB"]) == 0
    assert "12 cases" in capsys.readouterr().err
    # the same name resolves for accuracy (an unknown one is a one-line usage error naming the suites)
    assert main(["accuracy", "no-such-suite", "--device", "cpu", "--workers", "0"]) == 2
    assert "core, lerp, perf-core" in capsys.readouterr().err
