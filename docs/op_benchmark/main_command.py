"""Time the README's main command, ``opbench bench lerp``, as a new user runs it; update main_command.md.

    python docs/op_benchmark/main_command.py                 # on a CPU machine, and on the GPU host
    python docs/op_benchmark/main_command.py --runs warm     # extensions already built

A ``cold`` run starts from empty caches (``OPBENCH_CACHE_DIR`` and ``TORCHINDUCTOR_CACHE_DIR`` in a fresh
temporary folder), so its time includes building the custom ops for each installed framework and, on a
GPU, compiling every case under ``torch.compile``; a ``warm`` run reuses those caches, as a developer's
second run does. The command is run exactly as the README gives it, with only ``--json`` added to
read the records back. The device's section of main_command.md (one per CPU model or GPU name) is
replaced; the other sections are kept, so the CPU and GPU figures live in one table of record.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from opbench.env import git_commit  # noqa: E402

COMMAND = [sys.executable, "-m", "opbench", "bench", "lerp"]
SAMPLE_LINES = 14  # the head of the first table, for the sample


def run_once(cache: Path, json_path: Path) -> dict:
    """Run the main command once with the given caches (the custom ops' builds, and torch.compile's compiled
    graphs under ``cache/inductor``); wall time, exit code, output and records."""
    env = dict(os.environ, OPBENCH_CACHE_DIR=str(cache), TORCHINDUCTOR_CACHE_DIR=str(cache / "inductor"),
               PYTHONPATH=str(REPO))
    start = time.perf_counter()
    proc = subprocess.run([*COMMAND, "--json", str(json_path)], cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    data = json.loads(json_path.read_text()) if json_path.exists() else {}
    return {"wall_s": wall, "rc": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr,
            "env": data.get("env", {}), "records": len(data.get("records", []))}


def device_name(env: dict) -> str:
    """The heading a run's section is filed under: the GPU's name, or the CPU's model and thread count."""
    if env.get("device") == "gpu" or env.get("gpu"):
        gpu = env.get("gpu") or {}
        return f"GPU: {gpu.get('name', 'unknown GPU')}"
    cpu = env.get("cpu") or {}
    return f"CPU: {cpu.get('model', 'unknown CPU')}, {cpu.get('threads', '?')} threads"


def section(runs: dict[str, dict]) -> tuple[str, str]:
    """The markdown section for one device: a row per run, then a sample of the warm run's output."""
    last = runs.get("warm") or next(iter(runs.values()))
    heading = device_name(last["env"])
    rows = ["| run | caches (custom ops, torch.compile) | wall time | exit code | records | stderr lines |",
            "|---|---|---|---|---|---|"]
    for kind, r in runs.items():
        cache = "empty: builds and compiles everything" if kind == "cold" else "filled by the run before"
        rows.append(f"| {kind} | {cache} | {r['wall_s']:.0f} s | {r['rc']} | {r['records']} | "
                    f"{len(r['stderr'].splitlines())} |")
    out = last["stdout"].splitlines()
    first_table = out[:SAMPLE_LINES]
    at = next((i for i, ln in enumerate(out) if ln.startswith("### Speedup summary")), len(out) - 6)
    summary = out[at:]
    body = [
        f"## {heading}",
        "",
        f"`{' '.join(['opbench', *COMMAND[3:]])}` on commit {git_commit() or 'unknown'}, "
        f"{datetime.date.today().isoformat()}; frameworks: "
        + ", ".join(f"{k} {v['version']}" for k, v in sorted((last["env"].get("frameworks") or {}).items()) if v)
        + ".",
        "",
        *rows,
        "",
        "The head of the warm run's output, and its speedup summary:",
        "",
        "```",
        *first_table,
        "...",
        *summary,
        "```",
        "",
    ]
    return heading, "\n".join(body)


def update(doc: Path, heading: str, text: str) -> None:
    """Replace (or add) the section titled ``heading`` in ``doc``; other sections stay as they are."""
    head = ("# The main command's time and output\n\nProduced by [main_command.py](main_command.py): the README's "
            "first command, timed from empty caches (cold: the custom ops are built, torch.compile compiles) "
            "and again with the caches filled (warm). One section per machine.\n\n")
    old = doc.read_text() if doc.exists() else head
    parts = re.split(r"(?m)^(?=## )", old)
    kept = [p for p in parts[1:] if not p.startswith(f"## {heading}\n")]
    doc.write_text(parts[0] + "".join(sorted([*kept, text.rstrip() + "\n\n"])).rstrip() + "\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", default="cold,warm", help="which runs, in order: cold, warm (default: both)")
    p.add_argument("--doc", type=Path, default=Path(__file__).with_name("main_command.md"),
                   help="the table of record to update (default: main_command.md beside this script)")
    args = p.parse_args(argv)
    kinds = [k.strip() for k in args.runs.split(",") if k.strip()]
    bad = [k for k in kinds if k not in ("cold", "warm")]
    if bad:
        p.error(f"--runs: unknown run {bad[0]!r} (expected cold and/or warm)")
    runs: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache" if "cold" in kinds else Path(os.environ.get(
            "OPBENCH_CACHE_DIR", Path.home() / ".cache" / "opbench"))
        for kind in kinds:
            runs[kind] = r = run_once(cache, Path(tmp) / f"{kind}.json")
            print(f"{kind}: {r['wall_s']:.0f} s, exit {r['rc']}, {r['records']} records", file=sys.stderr)
    heading, text = section(runs)
    update(args.doc, heading, text)
    print(f"updated {args.doc} ({heading})", file=sys.stderr)
    return max(r["rc"] for r in runs.values())


if __name__ == "__main__":
    sys.exit(main())
