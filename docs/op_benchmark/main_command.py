"""Time the README's main command, ``opbench bench lerp``, as a new user runs it; update main_command.md.

    python docs/op_benchmark/main_command.py                 # on a CPU machine, and on the GPU host
    python docs/op_benchmark/main_command.py --runs warm     # extensions already built

A ``cold`` run starts from empty caches (``OPBENCH_CACHE_DIR`` and ``TORCHINDUCTOR_CACHE_DIR`` in a fresh
temporary folder), so its time includes building the custom ops for each installed framework and, on a
GPU, compiling every case under ``torch.compile``; a ``warm`` run reuses those caches, as a developer's
second run does. Where the environment sets ``PYTHONDONTWRITEBYTECODE`` (containers do), Python's
bytecode is cached beside them instead (``PYTHONPYCACHEPREFIX``), as a pip install leaves it: otherwise
every run compiles torch's and Triton's sources again, 5-10 s on the GPU host. The command is run exactly
as the README gives it, with only ``--json`` added to read the records back. The device's section of
main_command.md (one per CPU model or GPU name) is replaced; the other sections are kept, so the CPU and
GPU figures live in one table of record.

Each run also says where its time goes: the command runs in a child process that times the benchmark
loop's steps (sampling, drawing inputs, releasing device memory, copying inputs to the device, warm-up,
the rest of preparing each provider) with two clock reads per step, so the time outside sampling is
seen per case and direction.
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

# The steps the probe times: (module, owner within it or "", attribute, step). A step missing from the
# runner being timed (an older version) is left out.
PROBES = [
    ("op_benchmark.runner", "Runner", "run", "loop"),  # one call per round
    ("op_benchmark.runner", "Runner", "_run_one", "case"),  # one call per case and direction
    ("op_benchmark.runner", "Runner", "_sample", "sampling"),
    ("op_benchmark.runner", "Runner", "_prepare", "prepare"),
    ("op_benchmark.runner", "Runner", "_warm_up", "warm-up"),
    ("op_benchmark.runner", "", "_on_device", "to device"),
    ("op_benchmark.runner", "", "_release", "release"),
    ("opbench.inputs", "", "generate", "inputs"),
]


def install_probe(out: Path) -> None:
    """Time the :data:`PROBES` steps in this process; their seconds and call counts go to ``out`` (JSON) at exit."""
    import atexit
    import functools
    import importlib

    seconds: dict[str, float] = {}
    calls: dict[str, int] = {}
    rounds: list[float] = []

    def timed(fn: object, step: str) -> object:
        @functools.wraps(fn)
        def call(*args: object, **kwargs: object) -> object:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                dt = time.perf_counter() - t0
                seconds[step] = seconds.get(step, 0.0) + dt
                calls[step] = calls.get(step, 0) + 1
                if step == "loop":
                    rounds.append(dt)

        return call

    for module, owner, name, step in PROBES:
        where = importlib.import_module(module)
        where = getattr(where, owner) if owner else where
        if hasattr(where, name):
            setattr(where, name, timed(getattr(where, name), step))
    atexit.register(lambda: out.write_text(json.dumps({"seconds": seconds, "calls": calls, "rounds_s": rounds})))


def run_once(cache: Path, json_path: Path) -> dict:
    """Run the main command once with the given caches (the custom ops' builds, and torch.compile's compiled
    graphs under ``cache/inductor``); wall time, exit code, output, records and the probe's step times.

    The command runs as ``opbench bench lerp --json FILE`` does, through this script's ``--probe`` entry
    (the same ``opbench`` main, with the probe installed first)."""
    env = dict(os.environ, OPBENCH_CACHE_DIR=str(cache), TORCHINDUCTOR_CACHE_DIR=str(cache / "inductor"),
               PYTHONPATH=str(REPO))
    if env.pop("PYTHONDONTWRITEBYTECODE", None):  # an environment that keeps no bytecode (a container's
        env["PYTHONPYCACHEPREFIX"] = str(cache / "pycache")  # setting): kept beside the caches, as pip would
    probe = json_path.with_suffix(".probe.json")
    argv = [sys.executable, str(Path(__file__).resolve()), "--probe", str(probe), *COMMAND[3:], "--json",
            str(json_path)]
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    data = json.loads(json_path.read_text()) if json_path.exists() else {}
    return {"wall_s": wall, "rc": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr,
            "pycache": "PYTHONPYCACHEPREFIX" in env,
            "env": data.get("env", {}), "records": len(data.get("records", [])),
            "probe": json.loads(probe.read_text()) if probe.exists() else None}


def split(probe: dict) -> dict[str, float]:
    """Seconds per step of one run's probe: the loop (all rounds), sampling, the time outside sampling (total
    and per case and direction), and its parts; ``other`` is the loop's time in none of the timed steps."""
    t = {step: probe["seconds"].get(step, 0.0) for _, _, _, step in PROBES}
    n = max(probe["calls"].get("case", 0), 1)
    outside = t["loop"] - t["sampling"]
    return t | {"outside": outside, "per_case": outside / n, "cases": n,
                "prepare rest": t["prepare"] - t["warm-up"] - t["to device"],
                "other": outside - t["inputs"] - t["release"] - t["prepare"]}


def split_rows(runs: dict[str, dict]) -> list[str]:
    """The markdown table of where each run's time in the benchmark loop went (seconds, all rounds)."""
    rows = ["| run | benchmark loop (rounds) | sampling | outside sampling | per case and direction | inputs | "
            "release | to device | warm-up | rest of prepare | other |", "|---" * 11 + "|"]
    for kind, r in runs.items():
        if not r.get("probe"):
            continue
        x = split(r["probe"])
        rounds = " + ".join(f"{t:.0f}" for t in r["probe"]["rounds_s"])
        rows.append(f"| {kind} | {x['loop']:.1f} s ({rounds}) | {x['sampling']:.1f} s | {x['outside']:.1f} s | "
                    f"{x['per_case']:.2f} s ({x['cases']}) | {x['inputs']:.1f} s | {x['release']:.1f} s | "
                    f"{x['to device']:.1f} s | {x['warm-up']:.1f} s | {x['prepare rest']:.1f} s | "
                    f"{x['other']:.1f} s |")
    return rows if len(rows) > 2 else []


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
        *(["This environment sets PYTHONDONTWRITEBYTECODE: Python's bytecode was cached beside the other caches "
           "(PYTHONPYCACHEPREFIX), as a pip install leaves it.", ""] if last.get("pycache") else []),
        *(["Where the time in the benchmark loop went (all rounds; inputs: drawing the seeded host arrays; "
           "release: garbage collection and emptying the frameworks' caches before each case and direction; "
           "to device: the inputs' host-to-device copies; rest of prepare: building each provider's call, its "
           "first forward, compiling, the timer's setup):", "", *split_rows(runs), ""] if split_rows(runs) else []),
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
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--probe"]:  # the child of run_once: opbench's main with the probe installed
        install_probe(Path(argv[1]))
        from opbench.cli import main as opbench_main

        return opbench_main(argv[2:])
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
            if r["probe"]:
                x = split(r["probe"])
                print(f"{kind}: loop {x['loop']:.1f} s, sampling {x['sampling']:.1f} s, outside sampling "
                      f"{x['outside']:.1f} s ({x['per_case']:.2f} s per case and direction)", file=sys.stderr)
    heading, text = section(runs)
    update(args.doc, heading, text)
    print(f"updated {args.doc} ({heading})", file=sys.stderr)
    return max(r["rc"] for r in runs.values())


if __name__ == "__main__":
    sys.exit(main())
