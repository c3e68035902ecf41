"""Build and cache the custom-op extensions (PyTorch and Paddle bindings).

:data:`EXTENSIONS` is the table of extensions: each names its folders under ``ops/csrc`` and the
sources compiled per (framework, device). ``lerp`` is one extension; ``rms_norm`` and ``layer_norm``
share one ``norm`` extension, since both are thin entry points on one kernel engine
(``csrc/norm_common``): one build instead of two (a build takes a minute on a 2-core CPU) and no
compiled copy of the engine twice. Every extension is built and cached on its own, so a change to one
op never rebuilds another.
A build is keyed by a hash of the source files' contents, the framework's name
and version, the target (CPU, or the GPU's compute capability) and the
compiler flags, and lives in ``${OPBENCH_CACHE_DIR:-~/.cache/opbench}/ops/
<framework>-<hash>/``. A file lock keeps two processes from building the same
extension at once. A build says on stderr when it starts and how long it took; the compiler's output
is kept in the build folder's build.log unless ``OPBENCH_VERBOSE_BUILD=1``; a
failed build raises :class:`BuildError` carrying the compiler's own messages
(Paddle 3.3.1 prints per-file compile errors and carries on to a confusing
link error, so the failing file is compiled again here to get its message).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CSRC = Path(__file__).resolve().parent / "csrc" / "lerp"  # lerp's folder; the other folders sit beside it
COMMON = Path(__file__).resolve().parent / "csrc" / "common"  # framework-free helpers every op may include
FRAMEWORKS = ("paddle", "torch")


def _host_cpu_flags() -> list[str]:
    """Vector-ISA flags for the CPU kernels: AVX2, FMA and F16C where this x86-64 CPU has all three.

    The flags enter the build key, so a cache shared with a machine without them never loads such a
    build. ``-ffp-contract=off`` keeps a multiply-add two roundings, so results have the same bits
    with or without FMA; ``-fno-trapping-math`` lets the compiler turn lerp's select into a blend.
    """
    flags = ["-fno-trapping-math", "-ffp-contract=off"]
    try:
        cpu = Path("/proc/cpuinfo").read_text()
    except OSError:
        return flags
    have = set(next((ln.split(":", 1)[1].split() for ln in cpu.splitlines() if ln.startswith("flags")), []))
    if {"avx2", "fma", "f16c"} <= have:
        flags += ["-mavx2", "-mfma", "-mf16c"]
    return flags


CXX_FLAGS = ["-O3", "-std=c++17", *_host_cpu_flags()]

# Each framework's OpenMP runtime: the shared library its CPU ops run their threads on (torch: the GNU
# libgomp in its wheel; Paddle: Intel's libiomp5, which also answers GCC's GOMP_* calls).
OPENMP_RUNTIMES = {"torch": ("torch", "lib", "libgomp*.so*"), "paddle": ("paddle", "libs", "libiomp5.so")}


def openmp_flags(framework: str) -> tuple[list[str], list[str]]:
    """Compile and link flags that put the CPU kernels' threads on the framework's own OpenMP team.

    The binding is compiled with ``-fopenmp`` and linked to the runtime library the framework ships
    (by path, with an rpath), so at run time it resolves to the copy the framework has loaded already:
    one team, whose workers still spin from the framework's last op, instead of two teams on the same
    cores (a 2-core run of our op right after PyTorch's took twice its time). Without a shipped runtime,
    the compiler's own (``-fopenmp`` at link time).
    """
    pkg, sub, pattern = OPENMP_RUNTIMES[framework]
    spec = importlib.util.find_spec(pkg)
    libs = sorted(Path(spec.origin).parent.joinpath(sub).glob(pattern)) if spec and spec.origin else []
    if not libs:
        return ["-fopenmp"], ["-fopenmp"]
    return ["-fopenmp"], [str(libs[0]), f"-Wl,-rpath,{libs[0].parent}"]
CUDA_FLAGS = ["-O3", "-std=c++17", "--expt-relaxed-constexpr"]

# The framework-free CUDA cores, one compile unit an element type (the norms: an element type and direction,
# forward and backward each about half of a 2-byte layer_norm unit's compile time): the bindings only declare
# the cores' entry points, so a GPU build compiles these in parallel (ninja, a job a core) instead of one long
# unit.
GPU_DTYPES = ("f32", "f16", "bf16")
LERP_GPU_CORE = [f"lerp/lerp_{t}.cu" for t in (*GPU_DTYPES, "f64")]
NORM_GPU_CORE = [f"{op}/{op}_{t}_{d}.cu" for op in ("rms_norm", "layer_norm") for t in GPU_DTYPES
                 for d in ("fwd", "bwd")]

# Each extension: its folders under ops/csrc (their headers, .h and .cuh, enter the build key; each is on
# the include path) and its sources per (framework, device), as "folder/file".
EXTENSIONS: dict[str, dict[str, Any]] = {
    "lerp": {
        "dirs": ("lerp",),
        "sources": {
            ("torch", "cpu"): ["lerp/torch_lerp.cpp"],
            ("torch", "gpu"): ["lerp/torch_lerp.cpp", "lerp/torch_lerp.cu", *LERP_GPU_CORE],
            ("paddle", "cpu"): ["lerp/paddle_lerp.cc"],
            ("paddle", "gpu"): ["lerp/paddle_lerp.cc", "lerp/paddle_lerp.cu", *LERP_GPU_CORE],
        },
    },
    "norm": {
        "dirs": ("norm_common", "rms_norm", "layer_norm"),
        "sources": {
            ("torch", "cpu"): ["rms_norm/torch_rms_norm.cpp", "layer_norm/torch_layer_norm.cpp"],
            ("torch", "gpu"): ["rms_norm/torch_rms_norm.cpp", "layer_norm/torch_layer_norm.cpp",
                               "rms_norm/torch_rms_norm.cu", "layer_norm/torch_layer_norm.cu", *NORM_GPU_CORE],
            ("paddle", "cpu"): ["rms_norm/paddle_rms_norm.cc", "layer_norm/paddle_layer_norm.cc"],
            ("paddle", "gpu"): ["rms_norm/paddle_rms_norm.cc", "layer_norm/paddle_layer_norm.cc",
                                "rms_norm/paddle_rms_norm.cu", "layer_norm/paddle_layer_norm.cu", *NORM_GPU_CORE],
        },
    },
}


def _folder(name: str) -> Path:
    """A folder under ops/csrc (found beside CSRC, so a test may point CSRC at a copy of lerp's)."""
    return CSRC.parent / name


def _check_ext(ext: str) -> None:
    if ext not in EXTENSIONS:
        raise ValueError(f"unknown extension {ext!r} (expected one of {', '.join(EXTENSIONS)})")


def include_dirs(ext: str = "lerp") -> list[str]:
    """The extension's folders and ops/csrc itself (for "common/..." and "norm_common/..." includes)."""
    _check_ext(ext)
    return [str(_folder(d)) for d in EXTENSIONS[ext]["dirs"]] + [str(COMMON.parent)]

_LOADED: dict[str, Any] = {}
_LOCK = threading.Lock()


class BuildError(RuntimeError):
    """An extension failed to build; the message holds the compiler's output."""


def cache_root() -> Path:
    """Directory holding all op builds (``$OPBENCH_CACHE_DIR/ops`` or ``~/.cache/opbench/ops``)."""
    base = os.environ.get("OPBENCH_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "opbench")
    return Path(base) / "ops"


def _verbose() -> bool:
    return os.environ.get("OPBENCH_VERBOSE_BUILD", "") == "1"


def framework_installed(framework: str) -> bool:
    """True when the framework's Python package can be imported (without importing it)."""
    return importlib.util.find_spec(framework) is not None


def gpu_arch(framework: str) -> str | None:
    """Compute capability of the current GPU as '90', or None when the framework sees no GPU."""
    if framework == "torch":
        import torch

        if not (torch.cuda.is_available() and torch.version.cuda):
            return None
        major, minor = torch.cuda.get_device_capability()
        return f"{major}{minor}"
    import paddle

    if not paddle.is_compiled_with_cuda() or paddle.device.cuda.device_count() == 0:
        return None
    major, minor = paddle.device.cuda.get_device_capability()
    return f"{major}{minor}"


def default_device(framework: str) -> str:
    """'gpu' when the framework has CUDA and sees a GPU, else 'cpu'."""
    return "gpu" if gpu_arch(framework) else "cpu"


def _framework_version(framework: str) -> str:
    mod = __import__(framework)
    return str(mod.__version__)


def source_files(framework: str, device: str, ext: str = "lerp") -> list[Path]:
    """Sources compiled for one framework/device (Paddle: .cc only on CPU, .cu added on GPU)."""
    _check_ext(ext)
    return [_folder(f.split("/")[0]) / f.split("/", 1)[1] for f in EXTENSIONS[ext]["sources"][(framework, device)]]


def _cuda_flags(arch: str | None) -> list[str]:
    flags = list(CUDA_FLAGS)
    if arch:
        flags.append(f"-gencode=arch=compute_{arch},code=sm_{arch}")
    return flags


def build_key(framework: str, device: str, ext: str = "lerp") -> str:
    """Hash of the extension's name, sources, headers, framework version, GPU arch and flags."""
    arch = gpu_arch(framework) if device == "gpu" else None
    h = hashlib.sha256(ext.encode())
    headers = [p for d in EXTENSIONS[ext]["dirs"] for p in sorted(_folder(d).glob("*")) if p.suffix in (".h", ".cuh")]
    for path in [*headers, *source_files(framework, device, ext)]:
        h.update(f"{path.parent.name}/{path.name}".encode())
        h.update(path.read_bytes())
    for path in sorted(p for p in COMMON.glob("*") if p.suffix in (".h", ".cuh")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    parts = [framework, _framework_version(framework), device, str(arch), " ".join(CXX_FLAGS),
             " ".join(x for f in openmp_flags(framework) for x in f),
             " ".join(_cuda_flags(arch)), sys.version.split()[0]]
    h.update("|".join(parts).encode())
    return h.hexdigest()[:16]


def build_dir(framework: str, device: str, ext: str = "lerp") -> Path:
    """Where the build of this extension for this framework/device lives."""
    return cache_root() / f"{framework}-{build_key(framework, device, ext)}"


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextlib.contextmanager
def _captured_output(log: Path) -> Iterator[None]:
    """Send fds 1 and 2 (ours and the compilers') to `log` unless builds are verbose."""
    if _verbose():
        yield
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(log, "wb") as fh:
        os.dup2(fh.fileno(), 1)
        os.dup2(fh.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


def _error_lines(text: str, limit: int = 60) -> str:
    """The compiler-error part of a build log (falls back to its tail)."""
    lines = text.splitlines()
    hits = [i for i, ln in enumerate(lines) if "error" in ln.lower()]
    if hits:
        start = max(0, hits[0] - 3)
        return "\n".join(lines[start : start + limit])
    return "\n".join(lines[-limit:])


def _paddle_compile_errors(sources: list[Path], arch: str | None, ext: str = "lerp") -> str:
    """Compile each Paddle source alone to recover the compiler's own message."""
    from paddle.utils.cpp_extension import extension_utils as eu

    use_cuda = any(s.suffix == ".cu" for s in sources)
    incs = list(eu.find_paddle_includes(use_cuda)) + include_dirs(ext)
    incs.append(__import__("sysconfig").get_paths()["include"])
    out = []
    for src in sources:
        if src.suffix == ".cu":
            nvcc = shutil.which("nvcc") or "nvcc"
            cmd = [nvcc, *_cuda_flags(arch), "-DPADDLE_WITH_CUDA", "-Xcompiler", "-fPIC"]
        else:
            cxx = os.environ.get("CXX") or shutil.which("c++") or "c++"
            cmd = [cxx, *CXX_FLAGS, "-fPIC"] + (["-DPADDLE_WITH_CUDA"] if use_cuda else [])
        cmd += [f"-I{d}" for d in incs] + ["-c", str(src), "-o", os.devnull]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as exc:
            out.append(f"{src.name}: could not run the compiler: {exc}")
            continue
        if proc.returncode != 0:
            out.append(f"{src.name}:\n{_error_lines(proc.stderr + proc.stdout)}")
    return "\n".join(out)


def _build_torch(name: str, sources: list[Path], bdir: Path, arch: str | None, incs: list[str]) -> None:
    from torch.utils import cpp_extension

    env_arch = os.environ.get("TORCH_CUDA_ARCH_LIST")
    omp_c, omp_ld = openmp_flags("torch")
    if arch:
        os.environ["TORCH_CUDA_ARCH_LIST"] = f"{arch[:-1]}.{arch[-1]}"
    try:
        cpp_extension.load(
            name=name,
            sources=[str(s) for s in sources],
            extra_cflags=[*CXX_FLAGS, *omp_c],
            extra_ldflags=omp_ld,
            extra_cuda_cflags=list(CUDA_FLAGS),
            extra_include_paths=incs,
            build_directory=str(bdir),
            verbose=_verbose(),
            is_python_module=False,
        )
    finally:
        if arch:
            if env_arch is None:
                os.environ.pop("TORCH_CUDA_ARCH_LIST", None)
            else:
                os.environ["TORCH_CUDA_ARCH_LIST"] = env_arch


def _build_paddle(name: str, sources: list[Path], bdir: Path, arch: str | None, incs: list[str]) -> Any:
    from paddle.utils import cpp_extension

    omp_c, omp_ld = openmp_flags("paddle")
    return cpp_extension.load(
        name=name,
        sources=[str(s) for s in sources],
        extra_cxx_cflags=[*CXX_FLAGS, *omp_c],
        extra_ldflags=omp_ld,
        extra_cuda_cflags=_cuda_flags(arch),
        extra_include_paths=incs,
        build_directory=str(bdir),
        verbose=_verbose(),
    )


def load(framework: str, device: str | None = None, ext: str = "lerp") -> Any:
    """Build (once, cached on disk) and load one extension of :data:`EXTENSIONS`; returns the module (Paddle)
    or True (torch).

    Raises ``RuntimeError`` when the framework is missing and :class:`BuildError` when compiling fails.
    """
    default = f"{ext}-{framework}-default"  # the ops' Python APIs load on every call: one lookup once loaded
    if device is None and default in _LOADED:
        return _LOADED[default]
    if framework not in FRAMEWORKS:
        raise ValueError(f"unknown framework {framework!r} (expected one of {', '.join(FRAMEWORKS)})")
    if not framework_installed(framework):
        raise RuntimeError(f"{framework} is not installed")
    _check_ext(ext)
    asked, device = device, device or default_device(framework)
    key = f"{ext}-{framework}-{device}"
    with _LOCK:
        if key not in _LOADED:
            other = f"{ext}-{framework}-{'cpu' if device == 'gpu' else 'gpu'}"
            if other in _LOADED:
                raise RuntimeError(f"the {framework} {ext} extension was already loaded for {other.split('-')[2]}")
            _LOADED[key] = _build_and_load(framework, device, ext)
        if asked is None:
            _LOADED[default] = _LOADED[key]
        return _LOADED[key]


def _build_and_load(framework: str, device: str, ext: str) -> Any:
    """Compile (or find in the cache) and import one extension; the module (Paddle) or True (torch)."""
    arch = gpu_arch(framework) if device == "gpu" else None
    if device == "gpu" and not arch:
        raise RuntimeError(f"{framework} has no usable CUDA GPU: cannot build the gpu extension")
    bdir = build_dir(framework, device, ext)
    name = f"opbench_{ext}_{framework}_{bdir.name.split('-')[1][:12]}"
    sources = source_files(framework, device, ext)
    bdir.mkdir(parents=True, exist_ok=True)
    log = bdir / "build.log"
    with _file_lock(bdir.with_suffix(".lock")):
        fresh = not any(bdir.glob(f"{name}*.so"))
        if fresh:  # the first run builds; later runs load the cached library at once
            print(f"opbench: building the {framework} {ext} extension ({device}) once, cached in {bdir} "
                  "(about a minute) ...", file=sys.stderr, flush=True)
        start = time.monotonic()
        try:
            with _captured_output(log):
                mod = (_build_torch if framework == "torch" else _build_paddle)(name, sources, bdir, arch,
                                                                              include_dirs(ext))
        except Exception as exc:  # noqa: BLE001 - rewrapped with the compiler's message
            text = log.read_text(errors="replace") if log.exists() else ""
            detail = _error_lines(text + "\n" + str(exc))
            if framework == "paddle" and ("compile failed" in text or "error:" not in detail):
                detail = (_paddle_compile_errors(sources, arch, ext) + "\n" + detail).strip()
            raise BuildError(f"building the {framework} {ext} extension ({device}) in {bdir} failed:\n"
                             f"{detail}") from exc
    if fresh:
        print(f"opbench: built the {framework} {ext} extension in {time.monotonic() - start:.0f} s",
              file=sys.stderr, flush=True)
    return mod if framework == "paddle" else True


def build(framework: str, device: str | None = None, ext: str | None = None) -> Path:
    """Build ahead of time (every extension when ``ext`` is None); returns the build directory (of the
    last one built)."""
    device = device or default_device(framework)
    names = list(EXTENSIONS) if ext is None else [ext]
    for name in names:
        load(framework, device, name)
    return build_dir(framework, device, names[-1])
