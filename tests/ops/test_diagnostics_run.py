"""docs/ops/diagnostics/run.sh: the sections it runs by default, its header's list and its section functions agree,
so that a section the design notes cite cannot be left out of a run or be missing; a failed build is one line and,
with PACK=1, one tarball."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

RUN_SH = Path(__file__).resolve().parents[2] / "docs" / "ops" / "diagnostics" / "run.sh"


def _sections() -> tuple[list[str], list[str], set[str]]:
    text = RUN_SH.read_text()
    default = re.search(r"sections=\$\{\*:-([^}]*)\}", text)
    assert default, "run.sh sets no default sections"
    header = re.search(r"# Sections \(default: all\): (.*?) \(rows:", text, re.S)
    assert header, "run.sh's header lists no sections"
    listed = header.group(1).replace("#", " ").split()
    defined = set(re.findall(r"^section_(\w+)\(\)", text, re.M))
    return default.group(1).split(), listed, defined


def test_default_sections_are_the_header_list_and_the_functions() -> None:
    default, listed, defined = _sections()
    assert default == listed
    assert set(default) == defined
    assert len(default) == len(set(default))


def test_pack_keeps_a_failed_build_in_one_tarball(tmp_path: Path) -> None:
    """Where the extension does not build (here: no CUDA GPU), run.sh says so in one line, exits 1 and, with
    PACK=1, leaves the build's log in OUTDIR.tgz alone."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("the build succeeds on a CUDA host")
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # the script's `python` is ours
    r = subprocess.run(["bash", str(RUN_SH), str(tmp_path / "out"), "norm_half"], cwd=RUN_SH.parents[3],
                       capture_output=True, text=True, env={**os.environ, "PATH": path, "PACK": "1"}, timeout=300)
    assert r.returncode == 1
    assert r.stdout.splitlines() == [f"run.sh: the build failed: {tmp_path / 'out' / 'build.log'}",
                                     f"diagnostics in {tmp_path / 'out.tgz'}"]
    assert not (tmp_path / "out").exists()
    with tarfile.open(tmp_path / "out.tgz") as t:
        assert set(t.getnames()) == {"out", "out/build.log"}
        log = t.extractfile("out/build.log")
        assert log is not None and "no usable CUDA GPU" in log.read().decode()
