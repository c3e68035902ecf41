"""An actor that Ray kills for memory has its case recorded ``oom`` (not ``crash``), and the run goes on.

The real test lowers the Ray memory monitor's threshold to a few GiB above what the box uses now and
has one case allocate until Ray kills its actor; the unit test feeds the exceptions Ray raises.
"""

from __future__ import annotations

import sys
import time

import pytest

ray = pytest.importorskip("ray")

from opbench.executors.ray_executor import RayExecutor, death_outcome  # noqa: E402


class Hog:
    """Worker factory: item "hog" allocates 256 MiB blocks until Ray kills the actor; others return at once."""

    def __call__(self):
        def work(item: str) -> dict:
            blocks = []
            while item == "hog" and len(blocks) < 80:
                blocks.append(bytearray(2**28))
                time.sleep(0.05)
            return {"item": item, "outcome": "ok"}

        return work


def _lost(item: str, outcome: str, error: str) -> dict:
    return {"item": item, "outcome": outcome, "error": error}


def test_death_outcome_reads_ray_memory_kills() -> None:
    oom = ray.exceptions.OutOfMemoryError("1 worker(s) were killed due to the node running low on memory.\nmore")
    assert death_outcome(oom) == ("oom", "Ray killed the worker for memory: 1 worker(s) were killed due to the "
                                         "node running low on memory. more")
    died = ray.exceptions.RayActorError(error_msg="The actor died unexpectedly before finishing this task.\n"
                                                  "\tpid: 7\nWorker exit type: NODE_OUT_OF_MEMORY")
    assert death_outcome(died)[0] == "oom"
    segv = ray.exceptions.RayActorError(error_msg="The actor died. Some common causes include: (1) the process "
                                                  "was killed by the OOM killer due to high memory usage")
    assert death_outcome(segv) == ("crash", "worker died: The actor died. Some common causes include: (1) the "
                                            "process was killed by the OOM killer due to high memory usage")


def test_actor_killed_by_ray_for_memory_is_recorded_oom() -> None:
    mem = {line.split(":")[0]: int(line.split()[1]) * 1024 for line in open("/proc/meminfo")}
    if mem["MemAvailable"] < 6 * 2**30:
        pytest.skip("needs 6 GiB of free memory")
    threshold = (mem["MemTotal"] - mem["MemAvailable"] + 3 * 2**30) / mem["MemTotal"]
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             _system_config={"memory_usage_threshold": threshold, "memory_monitor_refresh_ms": 100})
    try:
        got: list[dict] = []
        ex = RayExecutor(Hog(), _lost, address=None, workers=2, timeout=120, use_gpus=False)
        ex.run(["small", "hog", "small", "small"], got.append)
    finally:
        ray.shutdown()
    outcomes = sorted((r["item"], r["outcome"]) for r in got)
    assert outcomes == [("hog", "oom"), ("small", "ok"), ("small", "ok"), ("small", "ok")]
    hog = next(r for r in got if r["item"] == "hog")
    assert "running low on memory" in hog["error"] and hog["host"] and hog["gpu"] == "cpu"
