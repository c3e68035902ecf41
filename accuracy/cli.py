"""``opbench accuracy`` and ``opbench accuracy-merge``: the accuracy gate's commands.

Exit status: 0 every case passes, 1 a case fails (``accuracy_fail``, ``paddle_error``,
``oom``, ``timeout``, ``crash``, or any error of the subject), 2 bad usage or a malformed
case line (recorded as ``config_error``; every other line still runs).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from accuracy import outcomes as oc


def register(subparsers: Any) -> None:
    from opbench.cli import add_case_arguments, parse_bytes

    p = subparsers.add_parser("accuracy", help="check a subject (Paddle) against a reference (PyTorch), "
                                                "forward and backward",
                              description=__doc__.splitlines()[0])
    add_case_arguments(p)
    p.add_argument("--device", choices=("cpu", "gpu"), default=None, help="default: gpu when available")
    p.add_argument("--subject", default="paddle", help="provider under test (default: paddle)")
    p.add_argument("--reference", default="torch", help="provider taken as correct (default: torch)")
    p.add_argument("--out", metavar="RESULTS.jsonl", help="append one JSON record per case as it finishes")
    p.add_argument("--resume", action="store_true", help="skip cases already recorded in --out")
    p.add_argument("--shard", metavar="I/N", help="run the I-th of N deterministic shares of the cases (1-based)")
    p.add_argument("--atol", type=float, default=None, help="absolute tolerance for every float comparison")
    p.add_argument("--rtol", type=float, default=None, help="relative tolerance for every float comparison")
    p.add_argument("--tolerances", action="append", default=[], metavar="FILE",
                   help="per-API tolerance overrides (TOML, or YAML with PyYAML); repeatable")
    p.add_argument("--test-tol", metavar="CSV", help="never fail: write every comparison's figures to CSV")
    p.add_argument("--gpu-cache", action="store_true",
                   help="make inputs on the device once and reuse them, compare on the device")
    p.add_argument("--gpu-cache-size", type=parse_bytes, default=None, metavar="SIZE",
                   help="bound of the input cache (default: 8GiB)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="worker processes (default: one per --gpus entry, else 1; 0 runs in this process)")
    p.add_argument("--gpus", default=None, metavar="0,1,...", help="GPUs to spread workers over")
    p.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="local worker processes (default) or Ray actors, one per GPU of the cluster (docs/ray.md)")
    p.add_argument("--ray-address", default=None, metavar="auto|HOST:PORT",
                   help="Ray cluster to join (default: start a local Ray instance; auto: the running cluster)")
    p.add_argument("--ray-workers", type=int, default=None, metavar="N",
                   help="Ray actors (default: the cluster's GPUs, or its CPUs on a CPU-only cluster)")
    p.add_argument("--timeout", type=float, default=300.0, metavar="S", help="per-case timeout (default: 300)")
    p.add_argument("--seed", type=int, default=0, help="input seed (default: 0)")
    p.add_argument("--strict", action="store_true",
                   help="count 'unsupported' cases (no kernel for the op or dtype on this device) as failures")
    p.add_argument("--no-float64", action="store_true", help="skip the float64 rerun of failing comparisons")
    p.add_argument("--summary", metavar="FILE.md", help="also write the markdown summary here")
    p.add_argument("--profile-stages", action="store_true",
                   help="time each stage (device synchronized at boundaries); print a table and draw a heatmap")
    p.add_argument("--profile-png", metavar="PNG", help="heatmap path (default: next to --out, or stages.png)")
    p.set_defaults(func=cmd_accuracy)

    m = subparsers.add_parser("accuracy-merge", help="combine accuracy shard results into one result and summary")
    m.add_argument("files", nargs="+", metavar="RESULTS.jsonl")
    m.add_argument("--out", metavar="MERGED.jsonl", help="write the merged records here")
    m.add_argument("--summary", metavar="FILE.md", help="also write the markdown summary here")
    m.set_defaults(func=cmd_merge)


def _exit_code(records: list[dict], test_tol: bool = False, strict: bool = False) -> int:
    if any(r["outcome"] == oc.CONFIG_ERROR for r in records):
        return 2
    if not test_tol and any(oc.is_failing(r, strict) for r in records):
        return 1
    return 0


def _check_writable(flag: str, path: str | None) -> None:
    """Refuse an output path that cannot be written, before any case runs (one line, exit 2)."""
    from opbench.cli import UsageError

    if not path:
        return
    p = Path(path)
    existed = p.exists()
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "a"):
            pass
    except OSError as e:
        raise UsageError(f"{flag} {path}: cannot write there ({e.strerror or e})") from None
    if not existed:
        p.unlink()


def _config_error_record(e: Any) -> dict[str, Any]:
    line = (e.line or "").strip()
    return {"key": f"{e.source}:{e.lineno}: {line}", "config": line or f"{e.source}:{e.lineno}",
            "source": f"{e.source}:{e.lineno}", "outcome": oc.CONFIG_ERROR, "error": str(e)}


def _lost(lost_record: Any, settings: Any, case: Any, outcome: str, error: str) -> dict:
    return lost_record(case, settings, getattr(oc, outcome.upper()), error)


def cmd_accuracy(args: argparse.Namespace) -> int:
    from accuracy import plugins, results, stages, summary
    from accuracy.check import Settings, case_key
    from accuracy.gpu_cache import DEFAULT_MAX_BYTES
    from accuracy.tolerances import ToleranceFileError, build
    from accuracy.workers import CheckerFactory, Pool, WorkerStartError, lost_record, run_inline
    from opbench.backends import default_device, installed
    from opbench.cases import check_memory, resolve
    from opbench.cases.model import ConfigError
    from opbench.cli import UsageError
    from opbench.executors import StartError

    plugins.load()
    for side in (args.subject, args.reference):
        if side not in plugins.known():
            raise UsageError(f"unknown provider {side!r} (known: {', '.join(plugins.known())})")
        fw = plugins.framework_of(side)
        if not installed(fw):
            raise UsageError(f"provider {side!r} needs {fw}, which is not installed")
    device = args.device or default_device()
    gpus = None
    if args.gpus:
        try:
            gpus = [int(g) for g in args.gpus.split(",") if g.strip()]
        except ValueError:
            raise UsageError(f"--gpus must be comma-separated GPU numbers, got {args.gpus!r}") from None
        if device != "gpu":
            raise UsageError("--gpus needs --device gpu")
    workers = args.workers if args.workers is not None else (len(gpus) if gpus else 1)
    if workers < 0:
        raise UsageError("--workers must be >= 0")
    if args.resume and not args.out:
        raise UsageError("--resume needs --out (the results file to continue)")
    shard = None
    if args.shard:
        try:
            shard = results.parse_shard(args.shard)
        except ValueError as e:
            raise UsageError(str(e)) from None
    try:
        tolerances = build(args.tolerances, args.atol, args.rtol)
    except ToleranceFileError as e:
        raise UsageError(str(e)) from None

    for flag, path in (("--summary", args.summary), ("--test-tol", args.test_tol), ("--profile-png", args.profile_png)):
        _check_writable(flag, path)

    t_parse = time.perf_counter()
    try:
        found = resolve(args.cases, unknown_dim=args.unknown_dim, device=device)
    except FileNotFoundError as e:
        raise UsageError(str(e)) from None
    parse_ms = (time.perf_counter() - t_parse) * 1e3

    settings = Settings(subject=args.subject, reference=args.reference, device=device, seed=args.seed,
                        tolerances=tolerances,
                        gpu_cache_bytes=(args.gpu_cache_size or DEFAULT_MAX_BYTES) if args.gpu_cache else None,
                        profile=args.profile_stages, float64=not args.no_float64)
    # Each case once, then this shard's share; malformed lines are records too.
    cases, keys, refused = [], set(), []
    for case in found.cases:
        key = case_key(case)
        if key in keys:
            continue
        keys.add(key)
        if shard and results.shard_of(key, shard[1]) != shard[0]:
            continue
        try:
            check_memory(case, args.memory_limit)
        except ConfigError as e:
            refused.append(lost_record(case, settings, oc.TOO_LARGE, f"refused before allocation: {e.reason}"))
            continue
        cases.append(case)
    config_errors = [_config_error_record(e) for e in found.errors]
    if shard:
        config_errors = [r for r in config_errors if results.shard_of(r["key"], shard[1]) == shard[0]]
    selected = {case_key(c) for c in cases} | {r["key"] for r in config_errors + refused}

    try:
        out = results.ResultsFile(args.out, resume=args.resume) if args.out else None
    except results.ResultsError as e:
        raise UsageError(str(e)) from None
    mem: list[dict] = []
    done = out.done if out else set()
    todo = [c for c in cases if case_key(c) not in done]
    skipped = len(cases) - len(todo)
    per_case_parse = parse_ms / max(1, len(found.cases) + len(found.errors))
    write_ms = 0.0

    from opbench.executors.progress import Progress

    early = [r for r in config_errors + refused if r["key"] not in done]
    ray_run = args.executor == "ray"
    # One bar over the whole run (a Ray run's: the whole cluster's, with per-host counts); behind a pipe a
    # Ray run prints one line per finished case (done/total, ETA, host) instead.
    bar = Progress(len(todo) + len(early), label="accuracy", lines=ray_run)

    def on_result(rec: dict[str, Any]) -> None:
        nonlocal write_ms
        t0 = time.perf_counter()
        if "timings" in rec:
            rec["timings"]["parse"] = round(per_case_parse, 4)
        if out is not None:
            out.append(rec)
        else:
            mem.append(rec)
        bar.update(f"{rec['outcome']} {rec['config']}", host=rec.get("host") if ray_run else None,
                   gpu=rec.get("gpu"), failed=oc.is_failing(rec, args.strict))
        write_ms += (time.perf_counter() - t0) * 1e3

    for rec in early:
        on_result(rec)
    if skipped:
        print(f"resume: {skipped} cases already in {args.out}, {len(todo)} to run", file=sys.stderr)
    executor = None
    if ray_run:
        from functools import partial

        from opbench.executors import make_ray_executor

        try:
            executor = make_ray_executor(CheckerFactory(settings), partial(_lost, lost_record, settings),
                                    address=args.ray_address, workers=args.ray_workers, timeout=args.timeout,
                                    use_gpus=device == "gpu")
        except RuntimeError as e:
            raise UsageError(str(e)) from None
    try:
        if executor is not None:
            executor.run(todo, on_result)
        elif workers == 0:
            run_inline(todo, settings, on_result)
        elif todo:
            Pool(settings, workers, gpus, args.timeout).run(todo, on_result)
    except (WorkerStartError, StartError) as e:
        raise UsageError(f"workers cannot start: {e}") from None
    finally:
        bar.close()
        if out is not None:
            out.close()

    records = [r for r in (out.records if out else mem) if r["key"] in selected]
    header = {"subject": args.subject, "reference": args.reference, "device": device,
              "mode": "gpu-cache" if args.gpu_cache else "default"}
    if shard:
        header["shard"] = f"{shard[0]}/{shard[1]}"
    text = summary.markdown(records, header=header, strict=args.strict)
    if ray_run:  # which host and GPU ran how many cases, and how many of them failed
        from opbench.executors.progress import host_table

        text += "\n" + host_table((r.get("host"), r.get("gpu"), oc.is_failing(r, args.strict))
                                  for r in records if "host" in r)
    print(text)
    if args.summary:
        Path(args.summary).write_text(text)
    if args.test_tol:
        n = summary.write_test_tol(records, args.test_tol)
        print(f"test-tol: {n} rows -> {args.test_tol}", file=sys.stderr)
    if args.profile_stages:
        print(stages.format_table(records, extra={"bookkeeping": write_ms}))
        png = args.profile_png or (str(Path(args.out).with_suffix(".stages.png")) if args.out else "stages.png")
        print(stages.heatmap(records, png))
    return _exit_code(records, test_tol=bool(args.test_tol), strict=args.strict)


def cmd_merge(args: argparse.Namespace) -> int:
    from accuracy import results, summary
    from opbench.cli import UsageError

    try:
        records, notes = results.merge(args.files)
    except results.ResultsError as e:
        raise UsageError(str(e)) from None
    for n in notes:
        print(n, file=sys.stderr)
    if args.out:
        out = Path(args.out)
        if out.exists() and out.stat().st_size:
            raise UsageError(f"{out} already exists; choose another --out")
        with results.ResultsFile(out) as fh:
            for r in records:
                fh.append(r)
    text = summary.markdown(records, title=f"Accuracy ({len(args.files)} shards merged)")
    print(text)
    if args.summary:
        Path(args.summary).write_text(text)
    return _exit_code(records)
