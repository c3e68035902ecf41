"""Read-only NVML queries: clocks, their maxima, throttle reasons, driver version.

Used by ``opbench env``, the benchmark (SM clock per sample) and ``opbench tools
clocks``. Needs ``nvidia-ml-py`` (the ``nvml`` extra); every function returns
``None`` or an empty result when NVML is not there, so callers degrade quietly.
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any

try:
    import pynvml
except ImportError:  # pragma: no cover - depends on the machine
    pynvml = None


@cache
def available() -> bool:
    """True when NVML loads and sees at least one GPU."""
    if pynvml is None:
        return False
    try:
        pynvml.nvmlInit()
        return pynvml.nvmlDeviceGetCount() > 0
    except Exception:  # NVMLError or a missing driver library
        return False


def handle(index: int | None = None) -> Any | None:
    """The NVML handle of the GPU the frameworks call device 0 (first of CUDA_VISIBLE_DEVICES)."""
    if not available():
        return None
    if index is None:
        first = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip()
        index = int(first) if first.isdigit() else 0
    try:
        return pynvml.nvmlDeviceGetHandleByIndex(index)
    except Exception:
        return None


def driver_version() -> str | None:
    if not available():
        return None
    v = pynvml.nvmlSystemGetDriverVersion()
    return v.decode() if isinstance(v, bytes) else v


def sm_clock_mhz(h: Any) -> int | None:
    """Current SM clock; cheap enough to read once per benchmark sample."""
    try:
        return pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)
    except Exception:
        return None


def clocks(h: Any) -> dict[str, int | None]:
    """Current and maximum SM and memory clocks in MHz."""

    def read(fn: Any, kind: int) -> int | None:
        try:
            return fn(h, kind)
        except Exception:
            return None

    return {
        "sm_mhz": read(pynvml.nvmlDeviceGetClockInfo, pynvml.NVML_CLOCK_SM),
        "mem_mhz": read(pynvml.nvmlDeviceGetClockInfo, pynvml.NVML_CLOCK_MEM),
        "sm_max_mhz": read(pynvml.nvmlDeviceGetMaxClockInfo, pynvml.NVML_CLOCK_SM),
        "mem_max_mhz": read(pynvml.nvmlDeviceGetMaxClockInfo, pynvml.NVML_CLOCK_MEM),
    }


# Throttle-reason bits (nvmlClocksEventReasons / nvmlClocksThrottleReasons), named for people.
_REASONS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}


def throttle_reasons(h: Any) -> list[str]:
    """Names of the reasons the clocks are held down now (empty when none or unknown)."""
    try:
        mask = pynvml.nvmlDeviceGetCurrentClocksEventReasons(h)
    except Exception:
        try:
            mask = pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(h)
        except Exception:
            return []
    return decode_reasons(mask)


def decode_reasons(mask: int) -> list[str]:
    """Names for a throttle-reason bit mask."""
    return [name for bit, name in _REASONS.items() if mask & bit]
