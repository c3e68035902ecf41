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
    gpu = FakeGpu(flush_us=250.0)
    sampler = EventTimer(gpu).bind(lambda: gpu.clock.__setitem__(0, gpu.clock[0] + 7.0))
    before = gpu.flushes
    assert sampler() == 7.0  # the flushes are outside the event pair
    assert gpu.flushes - before == 4  # 1000 us / 250 us
