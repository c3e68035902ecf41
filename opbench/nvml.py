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


# -- more readings and the opt-in clock lock (``opbench tools clocks``) ------------------------------
class ClockLockError(RuntimeError):
    """NVML refused to lock or reset the clocks (no permission, not supported); the message says why."""


def device_name(h: Any) -> str | None:
    try:
        name = pynvml.nvmlDeviceGetName(h)
    except Exception:
        return None
    return name.decode() if isinstance(name, bytes) else name


def throttle_mask(h: Any) -> int | None:
    """The raw throttle-reason bit mask (``None`` when NVML cannot say)."""
    for fn in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
        try:
            return int(getattr(pynvml, fn)(h))
        except Exception:
            continue
    return None


def readings(h: Any) -> dict[str, Any]:
    """Temperature (C), power draw and limit (W), GPU utilization (%) and application SM clock (MHz)."""

    def read(fn: str, *args: Any) -> Any:
        try:
            return getattr(pynvml, fn)(h, *args)
        except Exception:
            return None

    power = read("nvmlDeviceGetPowerUsage")
    limit = read("nvmlDeviceGetEnforcedPowerLimit")
    util = read("nvmlDeviceGetUtilizationRates")
    return {
        "temperature_c": read("nvmlDeviceGetTemperature", getattr(pynvml, "NVML_TEMPERATURE_GPU", 0)),
        "power_w": power / 1000 if power is not None else None,
        "power_limit_w": limit / 1000 if limit is not None else None,
        "utilization_pct": getattr(util, "gpu", None),
        "app_sm_mhz": read("nvmlDeviceGetApplicationsClock", pynvml.NVML_CLOCK_SM),
    }


def supported_sm_clocks(h: Any) -> list[int]:
    """SM clocks (MHz) the GPU accepts at its highest memory clock, highest first (empty if unknown)."""
    try:
        mem = max(pynvml.nvmlDeviceGetSupportedMemoryClocks(h))
        return sorted(pynvml.nvmlDeviceGetSupportedGraphicsClocks(h, mem), reverse=True)
    except Exception:
        return []


def lock_sm_clock(h: Any, mhz: int) -> None:
    """Lock the SM clock to ``mhz`` (``nvidia-smi -lgc``); needs root and a GPU that allows it."""
    try:
        pynvml.nvmlDeviceSetGpuLockedClocks(h, mhz, mhz)
    except Exception as e:
        raise ClockLockError(f"NVML refused to lock the SM clock at {mhz} MHz: {e}") from None


def reset_sm_clock(h: Any) -> None:
    """Undo :func:`lock_sm_clock` (``nvidia-smi -rgc``)."""
    try:
        pynvml.nvmlDeviceResetGpuLockedClocks(h)
    except Exception as e:
        raise ClockLockError(f"NVML refused to reset the SM clock: {e}") from None
