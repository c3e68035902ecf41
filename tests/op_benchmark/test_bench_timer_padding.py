"""The events timer pads the launch queue with flushes so host launch time never enters device time."""

from __future__ import annotations

import time

from op_benchmark.timers import MAX_PAD_FLUSHES, PAD_US, EventTimer


class _Event:
    def __init__(self, clock: list[float]) -> None:
        self.clock, self.t = clock, 0.0

    def record(self) -> None:
        self.t = self.clock[0]

    def elapsed_ms(self, end: _Event) -> float:
        return (end.t - self.t) / 1e3

    def wait(self) -> None:
        pass


class FakeGpu:
    """A device whose flush takes ``flush_us`` of device time; counts flushes."""

    device = "gpu"

    def __init__(self, flush_us: float) -> None:
        self.clock = [0.0]
        self.flush_us = flush_us
        self.flushes = 0

    def event(self) -> _Event:
        return _Event(self.clock)

    def flush_l2(self) -> None:
        self.flushes += 1
        self.clock[0] += self.flush_us

    def synchronize(self) -> None:
        pass


def test_pad_covers_at_least_pad_us_of_device_time():
    gpu = FakeGpu(flush_us=100.0)
    extra = EventTimer(gpu).pad_flushes(lambda: None)
    assert (1 + extra) * 100.0 >= PAD_US
    assert extra * 100.0 < PAD_US + 100.0


def test_pad_grows_with_the_calls_host_time():
    gpu = FakeGpu(flush_us=100.0)
    extra = EventTimer(gpu).pad_flushes(lambda: time.sleep(0.0005))  # 0.5 ms of host-side launch work
    assert (1 + extra) * 100.0 >= 4 * 500.0


def test_pad_is_capped():
    gpu = FakeGpu(flush_us=1.0)
    assert EventTimer(gpu).pad_flushes(lambda: None) == MAX_PAD_FLUSHES


def test_sample_flushes_before_the_start_event_only():
    gpu = FakeGpu(flush_us=PAD_US / 4)
    sampler = EventTimer(gpu).bind(lambda: gpu.clock.__setitem__(0, gpu.clock[0] + 7.0))
    before = gpu.flushes
    assert sampler() == 7.0  # the flushes are outside the event pair
    assert gpu.flushes - before == 8  # PAD_US in four flushes, for this sample and the next one queued
    assert sampler() == 7.0
    assert gpu.flushes - before == 12


def test_samples_are_pipelined():
    """Each sample is read after the next one is queued, from its own events (two pairs take turns)."""
    log: list[str] = []
    gpu = FakeGpu(flush_us=PAD_US)
    calls = iter(range(1, 100))

    def fn() -> None:
        k = next(calls)
        log.append(f"call {k}")
        gpu.clock[0] += float(k)  # call k takes k us

    timer = EventTimer(gpu)
    timer.pad_flushes = lambda fn: 0  # type: ignore[method-assign]
    sampler = timer.bind(fn)
    assert [sampler(), sampler(), sampler()] == [1.0, 2.0, 3.0]
    assert log == ["call 1", "call 2", "call 3", "call 4"]  # call 4 is queued when sample 3 is read
