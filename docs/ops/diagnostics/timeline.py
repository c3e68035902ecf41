"""GPU timeline of one flushed, padded sample per provider: when each kernel starts after the last flush."""

import sys

from common import timed
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

from op_benchmark.timers import EventTimer

for line in sys.argv[1:]:
    for direction in ("fwd", "bwd"):
        for provider in ("torch", "torch-compile", "torch-ops"):
            call, t = timed(line, provider, direction)
            b = call.backend
            for _ in range(5):
                t.fn()
            pads = 1 + EventTimer(b).pad_flushes(t.fn)
            b.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(pads):
                    b.flush_l2()
                t.fn()
                b.synchronize()
            ev = sorted((e for e in prof.profiler.kineto_results.events() if e.device_type() == DeviceType.CUDA),
                        key=lambda e: e.start_ns())
            flushes = [i for i, e in enumerate(ev) if "FillFunctor" in e.name() or "zero" in e.name().lower()]
            last = flushes[-1] if flushes else 0
            print(f"== {provider} {direction} {line} (pad flushes: {pads})")
            for e in ev[last + 1:]:
                print(f"   start +{(e.start_ns() - ev[last].end_ns()) / 1e3:7.2f} us"
                      f"  dur {e.duration_ns() / 1e3:7.2f} us  {e.name()[:80]}")
            del call, t
