"""Build caching, cache keys, compiler errors surfaced, and the ``ops build`` CLI."""

from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ops import build


def test_cache_dir_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPBENCH_CACHE_DIR", str(tmp_path))
    assert build.cache_root() == tmp_path / "ops"


def test_sources_per_device() -> None:
    assert [p.name for p in build.source_files("paddle", "cpu")] == ["paddle_lerp.cc"]
    assert [p.name for p in build.source_files("paddle", "gpu")] == [
        "paddle_lerp.cc", "paddle_lerp.cu", "lerp_f32.cu", "lerp_f16.cu", "lerp_bf16.cu", "lerp_f64.cu"]
    assert all(p.exists() for p in build.source_files("torch", "gpu"))


@pytest.mark.parametrize("ext", list(build.EXTENSIONS))
def test_gpu_cores_compile_apart_from_bindings(ext: str) -> None:
    """Every .cu of an extension's folders is built for the GPU (the cores for both frameworks, each binding
    for its own), and no binding includes the kernels' definitions: one that did would compile every kernel
    again, in one long unit."""
    cu = {p for d in build.EXTENSIONS[ext]["dirs"] for p in build._folder(d).glob("*.cu")}
    bindings = {p for p in cu if p.name.startswith(("torch_", "paddle_"))}
    assert cu - bindings, "no core compile units"
    for framework in build.FRAMEWORKS:
        own = {p for p in bindings if p.name.startswith(f"{framework}_")}
        assert set(build.source_files(framework, "gpu", ext)) >= (cu - bindings) | own
    for binding in bindings:
        text = binding.read_text()
        assert "lerp.cuh" not in text and "norm_launch.cuh" not in text, binding.name


def test_key_depends_on_sources(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    k1 = build.build_key("torch", "cpu")
    assert k1 == build.build_key("torch", "cpu")
    src = tmp_path / "lerp"
    shutil.copytree(build.CSRC, src)
    monkeypatch.setattr(build, "CSRC", src)
    assert build.build_key("torch", "cpu") == k1
    (src / "lerp_cpu.h").write_text((src / "lerp_cpu.h").read_text() + "\n// changed\n")
    assert build.build_key("torch", "cpu") != k1
    assert build.build_dir("torch", "cpu").name.startswith("torch-")


def test_available() -> None:
    import ops

    assert ops.available("mxnet") is not None
    for fw in ("paddle", "torch"):
        r = ops.available(fw)
        assert r is None or isinstance(r, str)


def _broken_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, filename: str) -> None:
    src = tmp_path / "lerp"
    shutil.copytree(build.CSRC, src)
    text = (src / filename).read_text()
    (src / filename).write_text("#include <vector>\nint opbench_broken = undeclared_marker_symbol;\n" + text)
    monkeypatch.setattr(build, "CSRC", src)
    monkeypatch.setattr(build, "_LOADED", {})
    monkeypatch.setenv("OPBENCH_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.slow
@pytest.mark.parametrize(("framework", "source"), [("torch", "torch_lerp.cpp"), ("paddle", "paddle_lerp.cc")])
def test_build_error_shows_compiler_message(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, framework: str, source: str, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip(framework)
    _broken_tree(tmp_path, monkeypatch, source)
    with pytest.raises(build.BuildError, match="undeclared_marker_symbol"):
        build.load(framework, "cpu")
    assert f"building the {framework} lerp extension (cpu) once, cached in" in capsys.readouterr().err


def _parser() -> argparse.ArgumentParser:
    from ops import cli

    p = argparse.ArgumentParser(prog="opbench")
    sub = p.add_subparsers(dest="command", required=True)
    cli.register(sub)
    return p


@pytest.mark.slow
def test_cli_build(torch_ext: Any, capsys: pytest.CaptureFixture[str]) -> None:
    args = _parser().parse_args(["ops", "build", "--framework", "torch"])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert out.startswith("torch: ") and str(build.cache_root()) in out


def test_cli_build_one_extension(torch_ext: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """``--ext lerp`` builds (here: finds cached) lerp's extension alone and prints its folder."""
    args = _parser().parse_args(["ops", "build", "--framework", "torch", "--device", "cpu", "--ext", "lerp"])
    assert args.func(args) == 0
    assert capsys.readouterr().out == f"torch: {build.build_dir('torch', 'cpu', 'lerp')}\n"


def test_cli_unknown_extension(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        _parser().parse_args(["ops", "build", "--ext", "softmax"])
    assert exc.value.code == 2 and "invalid choice: 'softmax'" in capsys.readouterr().err


def test_cli_missing_framework(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from ops import cli

    monkeypatch.setattr(cli, "available", lambda fw: f"{fw} is not installed")
    args = _parser().parse_args(["ops", "build", "--framework", "paddle"])
    assert args.func(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "paddle is not installed" in err


def _mapped_openmp_runtimes() -> set[str]:
    """The OpenMP runtime libraries mapped into this process (GNU libgomp, Intel libiomp5)."""
    maps = Path("/proc/self/maps").read_text().splitlines()
    return {ln.split()[-1] for ln in maps if ("libgomp" in ln or "libiomp5" in ln) and "/" in ln}


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux's /proc")
def test_cpu_kernels_share_the_frameworks_openmp_runtime(torch_ext: Any, paddle_ext: Any) -> None:
    """Both bindings are linked to their framework's own OpenMP runtime, so the kernels' threads are the
    framework's team: the process maps the runtimes the frameworks ship and no second copy."""
    paddle_ext.nn.functional.relu(paddle_ext.ones([4]))
    torch_ext.ones(4).relu()
    shipped = {}  # framework -> the runtime it ships (where it ships one)
    for fw in ("torch", "paddle"):
        _, link = build.openmp_flags(fw)
        if not link[0].startswith("-"):
            shipped[fw] = str(Path(link[0]).resolve())
    if not shipped:
        pytest.skip("neither framework ships an OpenMP runtime here")
    mapped = {str(Path(p).resolve()) for p in _mapped_openmp_runtimes()}
    own = set(shipped.values())
    assert own <= mapped
    assert mapped <= own, f"a second OpenMP runtime is loaded: {sorted(mapped - own)}"
    if shutil.which("readelf") is None:
        return
    for fw, path in shipped.items():  # each binding names its framework's runtime among its link entries
        soname = subprocess.run(["readelf", "-d", path], capture_output=True, text=True).stdout
        name = soname.split("Library soname: [", 1)[1].split("]", 1)[0] if "soname: [" in soname else Path(path).name
        for lib in build.build_dir(fw, "cpu", "lerp").rglob("*.so"):
            needed = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True).stdout
            assert f"[{name}]" in needed, (lib, needed)
