"""What the runner does outside sampling, on the CPU: inputs drawn once per run and shared by every provider,
direction and round; one conversion per framework; the garbage collection before a case walks only new objects."""

from __future__ import annotations

import gc
import weakref

import pytest

pytest.importorskip("torch")

from op_benchmark import directions as directions_mod  # noqa: E402
from op_benchmark import runner as runner_mod  # noqa: E402
from op_benchmark.runner import BenchConfig, Runner  # noqa: E402
from op_benchmark.stopping import default_rule  # noqa: E402
from opbench import inputs, providers  # noqa: E402
from opbench.cases import parse_line  # noqa: E402

CASES = ['paddle.lerp(Tensor([8, 16],"float32"), Tensor([8, 16],"float32"), Tensor([16],"float32"))',
         'paddle.lerp(Tensor([4, 4],"bfloat16"), Tensor([4, 4],"bfloat16"), 0.3)']


class TorchTwin(providers.TorchProvider):
    """A second provider on PyTorch (as torch-ops and torch-compile are), without an extension to build."""

    name = "torch-twin"


@pytest.fixture
def twin(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setitem(providers._CLASSES, TorchTwin.name, TorchTwin)
    return TorchTwin.name


@pytest.fixture
def thawed():
    """Leave the interpreter's garbage collector as it was (gc.freeze is process-wide)."""
    yield
    gc.unfreeze()


def config(providers_: list[str], **kw) -> BenchConfig:
    base = dict(providers=providers_, directions=["fwd", "bwd"], device="cpu",
                rule=default_rule(0.002, min_samples=3, noise=None), warmup_s=0.0)
    return BenchConfig(**(base | kw))


def test_inputs_are_drawn_once_per_run_and_identical_for_every_provider_direction_and_round(monkeypatch, twin):
    drawn: list[str] = []
    real_generate = inputs.generate
    monkeypatch.setattr(inputs, "generate", lambda case, seed=0: drawn.append(case.to_line()) or
                        real_generate(case, seed))
    handed: dict[str, list[int]] = {}  # case -> id() of the host arrays each provider got, per direction and round
    real_on_device = runner_mod._on_device

    def spy(backend, case, values, placed):
        handed.setdefault(case.to_line(), []).append(id(values))
        for v, want in zip(values, real_generate(case, 0), strict=True):
            assert v.dtype == want.dtype and v.tobytes() == want.tobytes()
        return real_on_device(backend, case, values, placed)

    monkeypatch.setattr(runner_mod, "_on_device", spy)
    cases = [parse_line(c) for c in CASES]
    cache = inputs.InputCache(1 << 20)
    rounds = [Runner(config(["torch", twin]), progress=False, inputs=cache).run(cases) for _ in range(3)]
    for recs in rounds:
        assert [r.status for r in recs] == ["ok"] * 2 * 2 * 2, [(r.status, r.error) for r in recs]
    assert drawn == [c.to_line() for c in cases]  # once per case for the whole run
    for line, ids in handed.items():
        assert len(ids) == 3 * 2 * 2 and len(set(ids)) == 1, line  # rounds x directions x providers: one list
    assert cache.misses == 2 and cache.hits == 2 * 2  # rounds 2 and 3


def test_without_a_shared_cache_each_round_draws_again_as_before(monkeypatch):
    drawn: list[str] = []
    real_generate = inputs.generate
    monkeypatch.setattr(inputs, "generate", lambda case, seed=0: drawn.append(case.to_line()) or
                        real_generate(case, seed))
    cases = [parse_line(c) for c in CASES]
    for _ in range(2):
        Runner(config(["torch"]), progress=False).run(cases)
    assert drawn == [c.to_line() for c in cases] * 2  # once per case and round, shared by its directions


def test_a_framework_converts_the_inputs_once_per_direction_and_its_providers_share_them(monkeypatch, twin):
    backend = providers.get_provider("torch", "cpu").backend
    conversions: list[tuple[str, str]] = []
    real_from_numpy = type(backend).from_numpy

    def counting(self, array, dtype, requires_grad=False):
        conversions.append((dtype, str(array.shape)))
        return real_from_numpy(self, array, dtype, requires_grad)

    monkeypatch.setattr(type(backend), "from_numpy", counting)
    calls = []
    real_build = directions_mod.build

    def keep(call, direction, seed=0):
        calls.append((call.provider.name, direction, call))
        return real_build(call, direction, seed)

    monkeypatch.setattr(directions_mod, "build", keep)
    case = parse_line(CASES[0])
    recs = Runner(config(["torch", twin]), progress=False).run([case])
    assert [r.status for r in recs] == ["ok"] * 4
    assert len(conversions) == 2 * 3  # directions x tensors, not x providers
    by = {(p, d): c for p, d, c in calls}
    for direction in ("fwd", "bwd"):
        a, b = by[("torch", direction)], by[(twin, direction)]
        for ta, tb in zip(a.tensors, b.tensors, strict=True):
            assert ta is not tb and ta.data_ptr() == tb.data_ptr()  # own leaves of one copy of the values
        assert [t.requires_grad for t in a.tensors] == [direction == "bwd"] * 3
        assert all(ga is not gb for ga, gb in zip(a.grad_inputs, b.grad_inputs, strict=True))


def test_shared_inputs_give_the_results_of_inputs_converted_per_provider():
    """Forward outputs and input gradients of a call on the shared tensors equal those of a call given the host
    arrays (what each provider converted for itself before), bit for bit."""
    case = parse_line(CASES[1])
    values = inputs.generate(case, 0)
    provider = providers.get_provider("torch", "cpu")
    shared = runner_mod._on_device(provider.backend, case, values, {})
    own = provider.prepare(case, 0, values=values, requires_grad=True)
    mine = provider.prepare(case, 0, values=shared, requires_grad=True)
    for x, y in zip(own.tensors, mine.tensors, strict=True):
        assert x.dtype == y.dtype and x.requires_grad == y.requires_grad and bool((x == y).all())
    out_own, out_mine = own.forward(), mine.forward()
    assert out_own.dtype == out_mine.dtype and _bits(out_own) == _bits(out_mine)
    g = provider.backend.random(tuple(out_own.shape), "bfloat16", 7)
    for x, y in zip(own.backward([out_own], [g]), mine.backward([out_mine], [g]), strict=True):
        assert _bits(x) == _bits(y)


def _bits(t) -> bytes:
    return t.detach().float().numpy().tobytes()


class _Node:
    """An object in a reference cycle (freed only by the garbage collector)."""

    def __init__(self) -> None:
        self.me = self


def test_the_collection_before_a_case_frees_new_cycles_and_freezes_what_survives(thawed):
    survivor = _Node()
    runner_mod._collect_garbage()
    frozen = gc.get_freeze_count()
    assert frozen > 0  # the survivors left the generations a collection walks
    made_by_a_case = _Node()
    gone = weakref.ref(made_by_a_case)
    del made_by_a_case
    runner_mod._collect_garbage()
    assert gone() is None  # a cycle made after the freeze is collected by the next call
    assert survivor.me is survivor and gc.get_freeze_count() >= frozen


def test_the_release_after_an_oom_does_not_freeze(monkeypatch, thawed):
    monkeypatch.setattr(runner_mod, "_backends", lambda providers_, device: [])
    gc.unfreeze()
    runner_mod._release(["torch"], "gpu", freeze=False)
    assert gc.get_freeze_count() == 0
    runner_mod._release(["torch"], "gpu")
    assert gc.get_freeze_count() > 0


def test_opbench_bench_draws_each_case_once_for_all_its_rounds(monkeypatch, tmp_path):
    from opbench.cli import main

    drawn: list[str] = []
    real_generate = inputs.generate
    monkeypatch.setattr(inputs, "generate", lambda case, seed=0: drawn.append(case.to_line()) or
                        real_generate(case, seed))
    rc = main(["bench", *CASES, "--device", "cpu", "--providers", "torch", "--budget", "6", "--warmup", "0",
               "--rounds", "3", "--min-samples", "3", "--no-progress", "--json", str(tmp_path / "r.json")])
    assert rc == 0
    assert sorted(drawn) == sorted(parse_line(c).to_line() for c in CASES)  # 2 cases x 2 directions x 3 rounds


def test_cpu_runs_keep_freed_blocks_on_the_heap(monkeypatch: pytest.MonkeyPatch) -> None:
    """A CPU benchmark sets glibc's mmap and trim thresholds once for every provider alike, unless the
    environment already sets them."""
    import ctypes

    from op_benchmark import runner

    calls: list[tuple[int, int]] = []

    class FakeLibc:
        def mallopt(self, param: int, value: int) -> int:
            calls.append((param, value))
            return 1

    monkeypatch.setattr(ctypes, "CDLL", lambda name: FakeLibc())
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    runner.Runner(BenchConfig(providers=["torch"], device="cpu"))
    assert calls == [(-3, 32 << 20), (-1, 128 << 20)]
    calls.clear()
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "0")
    runner.keep_freed_blocks()
    assert calls == []
