"""Test-only providers for the accuracy checker, loaded through ``OPBENCH_ACCURACY_PLUGINS``.

Each is the ``torch`` provider with one thing broken on purpose, so the tests can produce
every outcome: a wrong result (``test-wrong``), a segfault (``test-crash``), a hang
(``test-sleep``), an out-of-memory error (``test-oom``), a backward error (``test-bwd-error``),
a forward error (``test-raise``), a missing input grad (``test-nograd``) and a slow op
(``test-slow``, for the kill-and-resume test). Only ``paddle.subtract`` and
``paddle.multiply`` misbehave where noted, so a run mixes good and bad cases.
"""

from __future__ import annotations

import ctypes
import os
import signal
import time

from accuracy.plugins import register
from opbench.providers import TorchProvider

BAD_API = "paddle.multiply"


class _Broken(TorchProvider):
    def function(self, case):
        good = super().function(case)
        if case.api != BAD_API:
            return good
        return self.broken(good)

    def broken(self, good):
        raise NotImplementedError


class Wrong(_Broken):
    name = "test-wrong"

    def broken(self, good):
        return lambda *a, **k: good(*a, **k) * 1.5


class Crash(_Broken):
    name = "test-crash"

    def broken(self, good):
        def segfault(*a, **k):
            os.kill(os.getpid(), signal.SIGSEGV)
            ctypes.string_at(0)  # in case the signal is caught

        return segfault


class Sleep(_Broken):
    name = "test-sleep"

    def broken(self, good):
        def hang(*a, **k):
            time.sleep(120)

        return hang


class Oom(_Broken):
    name = "test-oom"

    def broken(self, good):
        def oom(*a, **k):
            raise MemoryError("test: out of memory")

        return oom


class Raise(_Broken):
    name = "test-raise"

    def broken(self, good):
        def fail(*a, **k):
            raise RuntimeError("test: forward failed")

        return fail


class Slow(TorchProvider):
    name = "test-slow"

    def function(self, case):
        good = super().function(case)

        def slow(*a, **k):
            time.sleep(0.15)
            return good(*a, **k)

        return slow


class BackwardError(TorchProvider):
    name = "test-bwd-error"

    def prepare(self, case, seed=0, values=None, requires_grad=True):
        call = super().prepare(case, seed, values, requires_grad)
        if case.api == BAD_API:
            def fail(outputs, grads, retain_graph=False):
                raise RuntimeError("test: backward failed")

            call.backward = fail
        return call


class NoGrad(TorchProvider):
    name = "test-nograd"

    def prepare(self, case, seed=0, values=None, requires_grad=True):
        call = super().prepare(case, seed, values, requires_grad)
        real = call.backward

        def first_missing(outputs, grads, retain_graph=False):
            got = real(outputs, grads, retain_graph)
            return [None, *got[1:]]

        call.backward = first_missing
        return call


for cls in (Wrong, Crash, Sleep, Oom, Raise, Slow, BackwardError, NoGrad):
    register(cls.name, cls)
