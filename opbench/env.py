"""The environment block: frameworks, CUDA, GPU, clocks and measured peak bandwidth.

``opbench env`` prints it; benchmark results embed it so a table says where its
numbers came from. The device's peak bandwidth is measured once with a large
device-to-device copy and cached per GPU under ``~/.cache/opbench/devices``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

from opbench import __version__, nvml
from opbench.backends import FRAMEWORKS, Backend, get_backend, installed

COPY_BYTES = 512 * 2**20  # large enough to dwarf the L2 on any current GPU


def cache_dir() -> Path:
    """Where builds and device measurements are cached (``OPBENCH_CACHE_DIR`` overrides)."""
    return Path(os.environ.get("OPBENCH_CACHE_DIR", Path.home() / ".cache" / "opbench"))


def git_commit() -> str | None:
    """The suite's git commit, when it runs from a checkout; ``OPBENCH_GIT_COMMIT`` names it where the
    tree was copied without its history (a remote GPU host)."""
    if os.environ.get("OPBENCH_GIT_COMMIT"):
        return os.environ["OPBENCH_GIT_COMMIT"]
    root = Path(__file__).resolve().parent.parent
    try:
        out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True,
                             text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                           capture_output=True, text=True, timeout=5).stdout.strip()
    return out.stdout.strip() + ("-dirty" if dirty else "")


def measure_copy_bandwidth(backend: Backend, nbytes: int = COPY_BYTES, repeats: int = 20) -> float:
    """Device-to-device copy bandwidth in GB/s, counting bytes read plus written (median of ``repeats``)."""
    import numpy as np

    n = nbytes // 4
    src = backend.zeros((n,), "float32")
    dst = backend.zeros((n,), "float32")
    times = []
    for i in range(repeats + 3):
        start, end = backend.event(), backend.event()
        start.record()
        backend.copy_(dst, src)
        end.record()
        backend.synchronize()
        if i >= 3:
            times.append(start.elapsed_ms(end))
    ms = float(np.median(times))
    return 2 * nbytes / (ms * 1e-3) / 1e9


def peak_bandwidth_gbps(backend: Backend, *, measure: bool = True) -> float | None:
    """The device's practical peak bandwidth (GB/s): cached measurement, else measured now."""
    if backend.device != "gpu":
        return None
    info = backend.device_info()
    path = cache_dir() / "devices" / (info.name.replace(" ", "_").replace("/", "_") + ".json")
    if path.is_file():
        try:
            return float(json.loads(path.read_text())["copy_gbps"])
        except (ValueError, KeyError):
            pass
    if not measure:
        return None
    gbps = measure_copy_bandwidth(backend)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"device": info.name, "copy_gbps": gbps, "copy_bytes": COPY_BYTES,
                                "measured": dt.datetime.now(dt.UTC).isoformat()}))
    return gbps


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``, else ``platform.processor()``)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def collect(device: str = "cpu", *, measure_bandwidth: bool = True) -> dict[str, Any]:
    """The environment block as a dict (JSON-ready)."""
    env: dict[str, Any] = {
        "opbench": __version__,
        "git_commit": git_commit(),
        "time": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "host": platform.node(),
        "python": platform.python_version(),
        "device": device,
        "cpu": {"model": cpu_model(), "threads": os.cpu_count()},
        "frameworks": {},
    }
    gpu_backend = None
    for fw in FRAMEWORKS:
        if not installed(fw):
            env["frameworks"][fw] = None
            continue
        b = get_backend(fw, "cpu")
        entry: dict[str, Any] = {"version": b.version(), "cuda": b.has_cuda()}
        if fw == "torch":
            entry["cuda_version"] = b.module.version.cuda
        elif fw == "paddle":
            entry["cuda_version"] = b.module.version.cuda() if b.has_cuda() else None
        env["frameworks"][fw] = entry
        if device == "gpu" and b.has_cuda() and gpu_backend is None:
            gpu_backend = get_backend(fw, "gpu")
    if gpu_backend is not None:
        info = gpu_backend.device_info()
        env["gpu"] = {"name": info.name, "memory_bytes": info.total_memory, "l2_bytes": info.l2_bytes,
                      "sm_count": info.sm_count, "capability": info.capability}
        h = nvml.handle()
        env["driver"] = nvml.driver_version()
        env["clocks"] = nvml.clocks(h) if h is not None else None
        env["peak_bandwidth_gbps"] = peak_bandwidth_gbps(gpu_backend, measure=measure_bandwidth)
    return env


def format_env(env: dict[str, Any]) -> str:
    """Human-readable ``key: value`` lines."""
    lines = [f"opbench {env['opbench']} (commit {env['git_commit'] or 'unknown'})",
             f"python {env['python']} on {env['host']}"]
    for fw, entry in env["frameworks"].items():
        if entry is None:
            lines.append(f"{fw}: not installed")
        else:
            cuda = f"CUDA {entry['cuda_version']}" if entry["cuda"] else "CPU only"
            lines.append(f"{fw}: {entry['version']} ({cuda})")
    gpu = env.get("gpu")
    if not gpu:
        lines.append("gpu: none")
        return "\n".join(lines)
    l2 = f"{gpu['l2_bytes'] / 2**20:.0f} MiB" if gpu.get("l2_bytes") else "unknown"
    lines.append(f"gpu: {gpu['name']} (sm_{(gpu['capability'] or '').replace('.', '')}, {gpu['sm_count']} SMs, "
                 f"{(gpu['memory_bytes'] or 0) / 2**30:.1f} GiB, L2 {l2})")
    lines.append(f"driver: {env.get('driver') or 'unknown (install nvidia-ml-py)'}")
    c = env.get("clocks")
    if c:
        lines.append(f"clocks: SM {c['sm_mhz']}/{c['sm_max_mhz']} MHz, memory {c['mem_mhz']}/{c['mem_max_mhz']} MHz")
    else:
        lines.append("clocks: unknown (install nvidia-ml-py)")
    bw = env.get("peak_bandwidth_gbps")
    lines.append(f"peak bandwidth: {bw:.0f} GB/s (device-to-device copy)" if bw else "peak bandwidth: unknown")
    return "\n".join(lines)
