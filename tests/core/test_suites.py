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
        on_cpu = resolve([s.name], device="cpu")
        assert len(on_cpu.cases) == (s.cpu_cases or s.cases) and not on_cpu.errors, s.name


# The README's main command on a 2-core CPU: the suite it runs there stays within this many input
# elements per case, so timing every case, provider and direction fits in minutes.
CPU_ELEMENTS_PER_CASE = 8 * 2**20


def _elements(case) -> int:
    from opbench.cases.model import TensorSpec

    def walk(v):
        if isinstance(v, TensorSpec):
            yield v.numel
        elif isinstance(v, list | tuple):
            for x in v:
                yield from walk(x)

    return sum(walk([*case.args, *case.kwargs_dict.values()]))


def test_the_main_command_suite_is_cpu_sized_on_a_cpu() -> None:
    cases = resolve(["lerp"], device="cpu").cases
    assert cases and max(_elements(c) for c in cases) <= CPU_ELEMENTS_PER_CASE
    assert max(_elements(c) for c in resolve(["lerp"], device="gpu").cases) > CPU_ELEMENTS_PER_CASE
    # the CPU variant keeps the GPU suite's dtypes and kernel paths (scalar / tensor weight, broadcasts)
    dtypes = {a.dtype for c in cases for a in c.args if hasattr(a, "dtype")}
    assert dtypes == {"float32", "float64", "float16", "bfloat16"}


def test_opbench_suites_lists_them(capsys) -> None:
    assert main(["suites"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in suites.names())


def test_a_suite_name_works_in_every_command(capsys) -> None:
    assert main(["cases", "lerp", "--memory-limit", "1TiB", "--device", "gpu"]) == 0
    assert "12 cases" in capsys.readouterr().err
    assert main(["cases", "lerp", "--memory-limit", "1TiB", "--device", "cpu"]) == 0
    assert "11 cases" in capsys.readouterr().err
    # the same name resolves for accuracy (an unknown one is a one-line usage error naming the suites)
    assert main(["accuracy", "no-such-suite", "--device", "cpu", "--workers", "0"]) == 2
    expected = ("core, layer_norm, layer_norm-sweep, lerp, lerp-sweep, norm-odd, norm-odd-fwd, norm-paths, norm-split, "
                "norm-wave-fwd, perf-core, rms_norm, rms_norm-sweep")
    assert expected in capsys.readouterr().err
