"""Runner behaviour on the CPU: error records, memory refusals, interleaving, Ctrl-C."""

import gc

import pytest

pytest.importorskip("torch")

from op_benchmark import runner as runner_mod  # noqa: E402
from op_benchmark.runner import BenchConfig, Runner  # noqa: E402
from op_benchmark.stopping import default_rule  # noqa: E402
from opbench.cases import parse_line  # noqa: E402

SMALL = 'paddle.lerp(Tensor([8, 16],"float32"), Tensor([8, 16],"float32"), 0.5)'


def config(**kw):
    base = dict(providers=["torch"], directions=["fwd", "bwd"], device="cpu",
                rule=default_rule(0.005, min_samples=10, noise=None), warmup_s=0.0)
    return BenchConfig(**(base | kw))


def test_measures_each_direction_with_at_least_min_samples():
    recs = Runner(config(), progress=False).run([parse_line(SMALL)])
    assert [(r.direction, r.status) for r in recs] == [("fwd", "ok"), ("bwd", "ok")]
    for r in recs:
        assert r.samples >= 10 and len(r.samples_us) == r.samples and r.median_us > 0
        assert r.method == "wall" and r.stop_reason in ("budget", "max-samples")
        assert r.bytes == (3 if r.direction == "fwd" else 3) * 8 * 16 * 4


def test_errors_are_recorded_and_the_run_goes_on():
    cases = [parse_line('paddle.nosuch(Tensor([4],"float32"))'),
             parse_line('paddle.lerp(Tensor([4, 5],"float32"), Tensor([3, 7],"float32"), 0.5)'),
             parse_line('paddle.argmax(Tensor([4, 5],"float32"))'),
             parse_line(SMALL)]
    recs = Runner(config(), progress=False).run(cases)
    by = {(r.case.split("(")[0], r.direction): r for r in recs}
    assert by[("paddle.nosuch", "fwd")].status == "not_applicable"
    assert "no PyTorch mapping" in by[("paddle.nosuch", "fwd")].error
    shape_err = [r for r in recs if r.case.startswith("paddle.lerp(Tensor([4, 5]")]
    assert all(r.status == "error" and r.error for r in shape_err), shape_err
    assert by[("paddle.argmax", "bwd")].status == "not_applicable"  # integer output: nothing to differentiate
    assert [r.status for r in recs if r.case == parse_line(SMALL).to_line()] == ["ok", "ok"]


def test_memory_limit_skips_before_allocating():
    recs = Runner(config(memory_limit=100), progress=False).run([parse_line(SMALL)])
    assert {r.status for r in recs} == {"skipped"} and "limit" in recs[0].error


def test_providers_are_interleaved(monkeypatch):
    order = []
    real = runner_mod.make_timer

    def spy(backend, method):
        timer = real(backend, method)

        class Spy:
            def bind(self, fn):
                sampler = timer.bind(fn)
                tag = object()

                def sample():
                    order.append(tag)
                    return sampler()

                return sample

        return Spy()

    pytest.importorskip("paddle")
    monkeypatch.setattr(runner_mod, "make_timer", spy)
    Runner(config(providers=["paddle", "torch"], directions=["fwd"]), progress=False).run([parse_line(SMALL)])
    # Two samplers; the first 2 calls of each are the sampler's own warm-up, then A B A B ...
    a, b = order[0], order[2]
    timed = order[4:24]
    assert timed == [a, b] * 10


def test_ctrl_c_keeps_what_was_measured(monkeypatch):
    real = runner_mod.make_timer
    calls = {"n": 0}

    def interrupting(backend, method):
        timer = real(backend, method)

        class T:
            def bind(self, fn):
                sampler = timer.bind(fn)

                def sample():
                    calls["n"] += 1
                    if calls["n"] == 40:
                        raise KeyboardInterrupt
                    return sampler()

                return sample

        return T()

    monkeypatch.setattr(runner_mod, "make_timer", interrupting)
    r = Runner(config(rule=default_rule(10.0, min_samples=10, noise=None, max_samples=30)), progress=False)
    recs = r.run([parse_line(SMALL), parse_line(SMALL.replace("8, 16", "4, 4"))])
    assert r.interrupted
    assert recs[0].status == "ok" and recs[0].samples == 30  # finished fwd
    assert recs[1].direction == "bwd" and recs[1].stop_reason == "interrupted" and recs[1].samples > 0
    assert len(recs) == 2  # the second case never started


def test_cached_device_memory_is_released_before_each_gpu_case_and_direction(monkeypatch):
    calls = []
    monkeypatch.setattr(runner_mod, "_release", lambda providers, device: calls.append((tuple(providers), device)))
    cases = [parse_line(SMALL), parse_line(SMALL)]
    # No GPU here: the torch provider cannot be prepared on "gpu", but the release runs before preparing.
    recs = Runner(config(device="gpu"), progress=False).run(cases)
    assert len(recs) == 4 and calls == [(("torch",), "gpu")] * 4
    calls.clear()
    Runner(config(device="gpu", release_memory=False), progress=False).run(cases)
    Runner(config(), progress=False).run(cases)  # CPU: nothing cached to give back
    assert calls == []


def test_release_empties_every_backend_cache(monkeypatch):
    class Fake:
        emptied = 0

        def empty_cache(self):
            Fake.emptied += 1

    monkeypatch.setattr(runner_mod, "_backends", lambda providers, device: [Fake(), Fake()])
    try:
        runner_mod._release(["torch", "paddle"], "gpu")
    finally:
        gc.unfreeze()  # the release froze this process's objects (runner._collect_garbage)
    assert Fake.emptied == 2
    assert config().as_dict()["release_memory"] is True


def test_copy_floor_is_sampled_beside_the_case_and_kept_on_its_records(monkeypatch):
    copied = []
    real = runner_mod.floor.copy_call

    def spy(backend, nbytes, read_share):
        copied.append((nbytes, round(read_share, 3)))
        return real(backend, nbytes, read_share)

    monkeypatch.setattr(runner_mod.floor, "copy_call", spy)
    recs = Runner(config(copy_floor=True), progress=False).run([parse_line(SMALL)])
    assert [(r.provider, r.direction) for r in recs] == [("torch", "fwd"), ("torch", "bwd")]  # no copy record
    # one floor for each direction's bytes, in its mix: lerp's forward reads x and y, writes out (2/3 read);
    # its backward (a scalar weight) reads dout, x and y and writes dx and dy (3/5)
    assert copied == [(recs[0].bytes, 0.667), (recs[1].bytes, 0.6)]
    assert all(r.copy_us and r.copy_us > 0 for r in recs)
    assert all(r.copy_us is None for r in Runner(config(), progress=False).run([parse_line(SMALL)]))


def test_copy_floor_that_cannot_be_set_up_leaves_the_case_measured(monkeypatch):
    def no_memory(backend, nbytes, read_share):
        raise MemoryError("no room for the copy")

    monkeypatch.setattr(runner_mod.floor, "copy_call", no_memory)
    recs = Runner(config(copy_floor=True), progress=False).run([parse_line(SMALL)])
    assert [r.status for r in recs] == ["ok", "ok"] and all(r.copy_us is None for r in recs)


def test_copy_call_moves_the_bytes_asked_in_the_mix_asked(monkeypatch):
    import torch

    from op_benchmark.floor import copy_call
    from opbench.backends import get_backend

    backend = get_backend("torch", "cpu")
    sizes = []
    real = backend.copy_
    monkeypatch.setattr(backend, "copy_", lambda dst, src: (sizes.append((dst.nbytes, src.nbytes)), real(dst, src)))
    copy_call(backend, 1000)()
    copy_call(backend, 3, read_share=0.55)()
    assert sizes == [(500, 500), (4, 4)]  # half read, half written; at least one float32 each way
    added = []
    real_add = torch.add
    monkeypatch.setattr(torch, "add", lambda a, b: added.append((a.nbytes, b.nbytes)) or real_add(a, b))
    copy_call(backend, 1200, read_share=2 / 3)()
    assert added == [(400, 400)] and len(sizes) == 2  # two read into a third: 800 read, 400 written
