"""Validate ``opbench tools`` on a GPU host: the three claims the tools exist to show, measured.

    PYTHONPATH=. python docs/tools/validate.py --out docs/tools

1. transfer: pinned H2D at 64 MiB and more is at least 1.5x as fast as pageable;
2. overlap: the two-stream preset (30 layers of (1, 16800, 1536) fp16) is at least 1.3x
   faster than one stream, with results equal to the one-stream run;
3. syncs: finds the hidden sync in ``tools/examples/hidden_sync.py`` and none in
   ``tools/examples/hidden_sync_fixed.py``.

Writes ``validation.md`` (pass/fail per check, figures, GPU name, date) and
``validation.json`` into ``--out``, prints a short summary last; exit 0 when all pass.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from opbench import env  # noqa: E402
from opbench.backends import Backend  # noqa: E402
from tools import overlap, transfer  # noqa: E402
from tools.gpu import NeedsGPU, gpu_backend  # noqa: E402

PINNED_MIN = 1.5
OVERLAP_MIN = 1.3
EXAMPLES = ROOT / "tools" / "examples"


def check_transfer(b: Backend, quick: bool) -> dict[str, Any]:
    sizes = [64 * 2**20] if quick else [64 * 2**20, 256 * 2**20, 2**30]
    methods = [m for m in transfer.METHODS if m.key in ("h2d_pageable", "h2d_pinned", "h2d_pinned_nb")]
    sweep = transfer.measure_sweep(b, sizes, methods, repeats=5 if quick else 10)
    rows = []
    ok = True
    for i, s in enumerate(sizes):
        page = sweep["methods"]["h2d_pageable"]["ms"][i]
        pin = sweep["methods"]["h2d_pinned_nb"]["ms"][i]
        ratio = page / pin if page and pin else None
        ok = ok and ratio is not None and ratio >= PINNED_MIN
        rows.append({"size": s, "pageable_gbps": s / page / 1e6 if page else None,
                     "pinned_gbps": s / pin / 1e6 if pin else None, "ratio": ratio})
    return {"name": f"transfer: pinned H2D >= {PINNED_MIN}x pageable at >= 64 MiB", "passed": ok, "rows": rows}


def check_overlap(b: Backend, quick: bool) -> dict[str, Any]:
    p = overlap.PRESET
    layers = 10 if quick else p["layers"]
    m = overlap.measure(b, layers, p["shape"], p["dtype"], p["intensity"], p["streams"], repeats=3 if quick else 5)
    d = overlap.derive(m)
    ok = d["speedup"] >= OVERLAP_MIN and m["results_match"]
    return {"name": f"overlap: 2 streams >= {OVERLAP_MIN}x one stream, results equal", "passed": ok,
            "layers": layers, **{k: m[k] for k in ("h2d_ms", "compute_ms", "d2h_ms", "single_ms", "multi_ms",
                                                   "results_match")}, **d}


def _syncs(script: Path, out: Path, framework: str) -> tuple[int, dict[str, Any] | None, str]:
    json_path = out / f"syncs_{script.stem}.json"
    cmd = [sys.executable, "-c", "import sys; from opbench.cli import main; sys.exit(main(sys.argv[1:]))",
           "tools", "syncs", "--framework", framework, "--json", str(json_path), str(script)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    data = json.loads(json_path.read_text()) if json_path.is_file() else None
    return proc.returncode, data, (proc.stdout + proc.stderr)[-3000:]


def check_syncs(out: Path, framework: str) -> dict[str, Any]:
    rc_hidden, hidden, log_hidden = _syncs(EXAMPLES / "hidden_sync.py", out, framework)
    rc_fixed, fixed, log_fixed = _syncs(EXAMPLES / "hidden_sync_fixed.py", out, framework)
    h_find = hidden["data"]["findings"] if hidden else []
    f_find = fixed["data"]["findings"] if fixed else []
    in_script = [f for f in h_find if "hidden_sync.py" in f["where"] and f["syncs"] > 0]
    ok = rc_hidden == 1 and bool(in_script) and rc_fixed == 0 and not f_find
    return {"name": "syncs: the hidden sync found in hidden_sync.py, none in hidden_sync_fixed.py", "passed": ok,
            "hidden_exit": rc_hidden, "fixed_exit": rc_fixed,
            "hidden_findings": [{k: f[k] for k in ("api", "where", "what", "calls", "host_us")} for f in h_find],
            "fixed_findings": [{k: f[k] for k in ("api", "where", "what", "calls", "host_us")} for f in f_find],
            "hidden_sync_debug": hidden["data"].get("sync_debug") if hidden else None,
            "log": None if ok else {"hidden": log_hidden, "fixed": log_fixed}}


def to_markdown(results: list[dict[str, Any]], gpu: str, when: str, framework: str, version: str) -> str:
    lines = ["# opbench tools: validation", "",
             f"GPU: {gpu}; {framework} {version}; {when}; command: `PYTHONPATH=. python docs/tools/validate.py "
             "--out DIR`", "", "| check | result |", "|---|---|"]
    lines += [f"| {r['name']} | {'PASS' if r['passed'] else 'FAIL'} |" for r in results]
    for r in results:
        lines += ["", f"## {r['name']}", ""]
        if "rows" in r:
            lines += ["| size | pageable GB/s | pinned GB/s | pinned / pageable |", "|---|---|---|---|"]
            lines += [f"| {x['size'] // 2**20} MiB | {x['pageable_gbps']:.1f} | {x['pinned_gbps']:.1f} | "
                      f"{x['ratio']:.2f}x |" for x in r["rows"] if x["ratio"]]
        elif "speedup" in r:
            lines += [f"- {r['layers']} layers: H2D {r['h2d_ms']:.1f} ms, compute {r['compute_ms']:.1f} ms, D2H "
                      f"{r['d2h_ms']:.1f} ms (sum {r['sum_ms']:.1f} ms)",
                      f"- one stream {r['single_ms']:.1f} ms, two streams {r['multi_ms']:.1f} ms: speedup "
                      f"{r['speedup']:.2f}x, {r['overlap'] * 100:.0f}% of the hideable time hidden",
                      f"- results equal to the one-stream run: {'yes' if r['results_match'] else 'NO'}"]
        else:
            lines.append(f"- hidden_sync.py: exit {r['hidden_exit']}, {len(r['hidden_findings'])} findings")
            lines += [f"  - {f['api']} at {f['where']}: {f['what']}, {f['calls']} calls, {f['host_us'] / 1e3:.3f} ms"
                      for f in r["hidden_findings"]]
            if r.get("hidden_sync_debug"):
                lines.append(f"  - set_sync_debug_mode flagged: {r['hidden_sync_debug']}")
            lines.append(f"- hidden_sync_fixed.py: exit {r['fixed_exit']}, {len(r['fixed_findings'])} findings")
            lines += [f"  - {f['api']} at {f['where']}: {f['what']}" for f in r["fixed_findings"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, type=Path, help="folder for validation.md and validation.json")
    p.add_argument("--framework", choices=("torch", "paddle"), default=None)
    p.add_argument("--quick", action="store_true", help="smaller sizes and fewer layers (a smoke test)")
    args = p.parse_args(argv)
    try:
        b = gpu_backend(args.framework)
    except NeedsGPU as e:
        print(f"validate: {e}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    gpu = b.device_info().name
    results = []
    checks = [("transfer", lambda: check_transfer(b, args.quick)), ("overlap", lambda: check_overlap(b, args.quick)),
              ("syncs", lambda: check_syncs(args.out, b.name))]
    for name, fn in checks:
        t0 = time.perf_counter()
        try:
            r = fn()
        except Exception as e:  # keep the other checks' results
            r = {"name": name, "passed": False, "error": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}
        r["seconds"] = round(time.perf_counter() - t0, 1)
        results.append(r)
        print(f"{'PASS' if r['passed'] else 'FAIL'}  {r['name']}  ({r['seconds']} s)", flush=True)
    md = to_markdown([r for r in results if "error" not in r], gpu, when, b.name, b.version())
    md += "".join(f"\n- {r['name']} FAILED to run: {r['error']}\n" for r in results if "error" in r)
    (args.out / "validation.md").write_text(md)
    (args.out / "validation.json").write_text(json.dumps(
        {"gpu": gpu, "date": when, "framework": b.name, "env": env.collect("gpu", measure_bandwidth=False),
         "results": results}, indent=2, default=str))
    passed = sum(r["passed"] for r in results)
    print(f"validation on {gpu}: {passed}/{len(results)} checks passed; wrote {args.out / 'validation.md'}")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
