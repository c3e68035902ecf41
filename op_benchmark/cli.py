"""``opbench bench``, ``opbench compare`` and ``opbench report``."""

from __future__ import annotations

import argparse
import dataclasses
import os
import signal
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

from opbench.cli import UsageError, add_case_arguments

CHECKPOINT_S = 10.0
LATER_WARMUP_MS = 10.0  # warm-up of a --rounds pass after the first (the JIT and autotuning are done)


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _csv_list(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def register(subparsers: argparse._SubParsersAction) -> None:
    from op_benchmark.compare import DEFAULT_FAIL_PCT, DEFAULT_THRESHOLD_PCT
    from op_benchmark.directions import DIRECTIONS
    from op_benchmark.stopping import (
        DEFAULT_BUDGET_S,
        DEFAULT_MAX_SAMPLES,
        DEFAULT_MIN_SAMPLES,
        DEFAULT_NOISE,
        DEFAULT_PRECISION,
    )
    from op_benchmark.timers import METHODS
    from opbench.providers import PROVIDERS

    p = subparsers.add_parser("bench", help="time cases on each provider (fwd, bwd, fwd+bwd)",
                              description="Time cases on each provider; markdown on stdout, JSON/CSV on request.")
    add_case_arguments(p)
    p.add_argument("--providers", type=_csv_list, default=None, metavar="LIST",
                   help=f"comma-separated from {', '.join(PROVIDERS)} (default: all installed, but on the CPU "
                        "not torch-compile, which compiles each case for seconds; each case runs on those "
                        "that apply)")
    p.add_argument("--directions", type=_csv_list, default=["fwd", "bwd"], metavar="LIST",
                   help=f"comma-separated from {', '.join(DIRECTIONS)} (default: fwd,bwd, the two a PR reports)")
    p.add_argument("--device", choices=("cpu", "gpu"), default=None, help="default: gpu when available")
    p.add_argument("--method", choices=METHODS, default="events",
                   help="GPU timing: events (default; L2 flushed before each sample), kernel (profiler kernel "
                        "sum), graph (CUDA-graph replay), host (started on an idle GPU: launch latency and gaps "
                        "included); the CPU always uses the wall clock")
    p.add_argument("--budget", type=float, default=DEFAULT_BUDGET_S * 1e3, metavar="MS",
                   help=f"sampling time per case, provider and direction (default {DEFAULT_BUDGET_S * 1e3:.0f})")
    p.add_argument("--min-samples", type=int, default=DEFAULT_MIN_SAMPLES, metavar="N",
                   help=f"never fewer samples (default {DEFAULT_MIN_SAMPLES})")
    p.add_argument("--max-samples", type=int, default=DEFAULT_MAX_SAMPLES, metavar="N",
                   help=f"never more samples (default {DEFAULT_MAX_SAMPLES})")
    p.add_argument("--noise", type=float, default=DEFAULT_NOISE * 100, metavar="PCT",
                   help=f"stop early once the relative noise is below PCT (default {DEFAULT_NOISE * 100}; 0: never)")
    p.add_argument("--precision", type=float, default=DEFAULT_PRECISION * 100, metavar="PCT",
                   help="stop a pass early once its median is known within +-PCT (95%% confidence interval, "
                        f"distribution-free; default {DEFAULT_PRECISION * 100:g}: never, since runs stopped at "
                        "0.5 gave opbench compare false alarms; 0.5 for a quicker look)")
    p.add_argument("--warmup", type=float, default=50.0, metavar="MS",
                   help="warm-up time after the first (JIT/autotune) call (default 50; later --rounds passes, "
                        f"whose code and caches are warm already, take at most {LATER_WARMUP_MS:.0f})")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="CPU: threads for every framework's ops and ours, the same for all (default: the cores "
                        "this process may use)")
    p.add_argument("--seed", type=int, default=0, help="input seed (default 0)")
    p.add_argument("--copy-floor", action="store_true",
                   help="also time a device copy of each case's bytes beside it and keep its median on the "
                        "records (copy_us): the least time a kernel moving those bytes as fast as a copy takes")
    p.add_argument("--json", metavar="FILE", help="write the records and the environment block as JSON")
    p.add_argument("--markdown", metavar="FILE", help="also write the markdown tables to FILE")
    p.add_argument("--wide", action="store_true",
                   help="a median column per provider and pairwise speedups, instead of the PR table "
                        "(candidate, vs Paddle, vs the industry's best, verdict)")
    p.add_argument("--csv", metavar="FILE", help="write one CSV row per record")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 also for records that cannot run here (n/a: no kernel for the op or dtype, "
                        "provider does not apply)")
    p.add_argument("--rounds", type=int, default=3, metavar="N",
                   help="passes over the suite, each with budget/N per case (default 3); opbench compare "
                        "sizes its verdicts by how the passes' medians differ")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--resume", action="store_true",
                   help="continue a killed or interrupted run: keep the cases finished in --json's journal "
                        "(FILE.cases.jsonl, written as each case finishes) and run only the rest")
    p.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="this process (default) or Ray actors, one per GPU of the cluster (docs/ray.md)")
    p.add_argument("--ray-address", default=None, metavar="auto|HOST:PORT",
                   help="Ray cluster to join (default: start a local Ray instance; auto: the running cluster)")
    p.add_argument("--ray-workers", type=int, default=None, metavar="N",
                   help="Ray actors (default: the cluster's GPUs, or its CPUs on a CPU-only cluster)")
    p.add_argument("--timeout", type=float, default=600.0, metavar="S",
                   help="per-case timeout with --executor ray (default: 600)")
    p.set_defaults(func=cmd_bench)

    p = subparsers.add_parser("compare", help="compare two bench JSON files (regression gate)",
                              description="Per case, provider and direction: new/base median ratio, 95%% "
                                          "bootstrap CI and a verdict; exit 1 on a significant slowdown.")
    p.add_argument("base", metavar="BASE.json")
    p.add_argument("new", metavar="NEW.json")
    p.add_argument("--fail-on-slower", type=float, default=DEFAULT_FAIL_PCT, metavar="PCT",
                   help=f"exit 1 when a case is significantly slower by more than PCT (default {DEFAULT_FAIL_PCT})")
    p.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD_PCT, metavar="PCT",
                   help=f"smallest change called FASTER/SLOWER (default {DEFAULT_THRESHOLD_PCT})")
    p.add_argument("--again", nargs=2, metavar=("BASE2.json", "NEW2.json"),
                   help="the same two builds timed again in the other order (new, then base): a row's verdict "
                        "stands only where both pairs give it, and the run-to-run spread that sets the smallest "
                        "shift called is each build's two runs'")
    p.add_argument("--markdown", metavar="FILE", help="also write the table to FILE")
    p.add_argument("--allow-mixed-gpus", action="store_true", help="compare results of different GPU models")
    p.set_defaults(func=cmd_compare)

    p = subparsers.add_parser("report", help="a bench JSON as the performance section of an operator PR",
                              description="The performance section of a Paddle operator PR: the candidate's "
                                          "speedup over Paddle's kernel (before) and over the industry's best "
                                          "per op and direction, a chart, and the before/after table of every "
                                          "case. With --baselines: the pairwise speedup summary instead.")
    p.add_argument("results", metavar="RESULTS.json")
    p.add_argument("--baselines", type=_csv_list, default=None, metavar="LIST",
                   help="instead of the PR section, every provider's geometric-mean speedup against these "
                        "(e.g. paddle,torch)")
    p.add_argument("--markdown", metavar="FILE", help="also write the markdown to FILE")
    p.add_argument("--png", metavar="FILE", help="bar chart of the geometric means (needs matplotlib); the PR "
                                                 "section links it by its path relative to --markdown's folder")
    p.add_argument("--allow-mixed-gpus", action="store_true", help="report results of several GPU models")
    p.set_defaults(func=cmd_report)


def _write(path: str | None, text: str) -> None:
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text)


def cmd_bench(args: argparse.Namespace) -> int:
    from op_benchmark import render, report
    from op_benchmark.directions import DIRECTIONS
    from op_benchmark.results import BenchResult, Journal, journal_path, merge_rounds, write_json
    from op_benchmark.runner import BenchConfig, Runner
    from op_benchmark.stopping import default_rule
    from opbench import env as env_mod
    from opbench.backends import default_device
    from opbench.cases import resolve
    from opbench.executors import StartError
    from opbench.executors.progress import host_table
    from opbench.inputs import InputCache
    from opbench.providers import NOT_BY_DEFAULT, PROVIDERS, default_providers, installed_providers

    device = args.device or default_device()
    providers = args.providers or default_providers(device)
    unknown = [p for p in providers if p not in PROVIDERS]
    if unknown:
        raise UsageError(f"unknown provider {unknown[0]!r} (known: {', '.join(PROVIDERS)})")
    bad_dirs = [d for d in args.directions if d not in DIRECTIONS]
    if bad_dirs or not args.directions:
        raise UsageError(f"unknown direction {(bad_dirs or [''])[0]!r} (known: {', '.join(DIRECTIONS)})")
    if device == "cpu" and args.method != "events":
        raise UsageError(f"--method {args.method} needs a GPU; the CPU is timed with the wall clock")
    try:
        if args.rounds < 1:
            raise ValueError("--rounds must be at least 1")
        rule = default_rule(args.budget / 1e3 / args.rounds, min_samples=args.min_samples, noise=args.noise / 100,
                            max_samples=args.max_samples, precision=args.precision / 100)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if args.resume and not args.json:
        raise UsageError("--resume needs --json (the results file to continue)")
    if args.threads is not None and args.threads < 1:
        raise UsageError(f"--threads must be at least 1, not {args.threads}")
    try:
        found = resolve(args.cases, unknown_dim=args.unknown_dim, device=device)
    except FileNotFoundError as e:
        raise UsageError(str(e)) from None
    for err in found.errors:
        print(str(err), file=sys.stderr)
    if not found.cases:
        print("opbench bench: no valid cases", file=sys.stderr)
        return 2

    left_out = [p for p in NOT_BY_DEFAULT.get(device, ()) if not args.providers and p in installed_providers()]
    if left_out:
        print(f"{', '.join(left_out)} left out on the {device} (it compiles each case for seconds); add it with "
              f"--providers {','.join([*providers, *left_out])}", file=sys.stderr)
    env = env_mod.collect(device)
    config = BenchConfig(providers=providers, directions=args.directions, device=device, method=args.method,
                         rule=rule, warmup_s=args.warmup / 1e3, seed=args.seed,
                         memory_limit=args.memory_limit or _free_memory(providers, device),
                         peak_gbps=env.get("peak_bandwidth_gbps"),
                         cpu_threads=args.threads, copy_floor=args.copy_floor)
    if config.cpu_threads is not None:
        env["cpu"]["threads"] = config.cpu_threads
    meta = config.as_dict() | {"cases": args.cases, "rounds": args.rounds}
    last_save = [time.monotonic()]
    ray_run = args.executor == "ray"
    workers_env: dict[str, Any] | None = env.setdefault("workers", {}) if ray_run else None
    journal = None
    if args.json:  # every finished case journaled (fsynced), so --resume loses and repeats none after a kill
        try:
            journal = Journal(journal_path(args.json), meta, resume=args.resume)
        except ValueError as e:
            raise UsageError(str(e)) from None
        if workers_env is not None:
            workers_env.update(journal.workers)
        if journal.resumed:
            left = len(found.cases) * args.rounds - journal.count()
            print(f"resume: {journal.count()} case runs already in {journal.path}, {max(0, left)} to run",
                  file=sys.stderr)

    passes: list[list[Any]] = []
    try:  # each case's inputs drawn once for every round (a byte budget: OPBENCH_INPUT_CACHE_MB)
        inputs = InputCache()
    except ValueError as e:
        raise UsageError(str(e)) from None
    prior: dict[str, list[Any]] = {}  # this pass's cases finished before a --resume

    def this_pass(new: list[Any]) -> list[Any]:
        """The pass's records in case order: those journaled before a --resume and those measured now."""
        if not prior:
            return new
        by_case = dict(prior)
        for r in new:
            if r.case not in prior:
                by_case.setdefault(r.case, []).append(r)
        return [r for line in dict.fromkeys(c.to_line() for c in found.cases) for r in by_case.get(line, [])]

    def checkpoint(_rec: object) -> None:
        """Rewrite the JSON every 10 s (marked interrupted) so a killed run still leaves its records."""
        if args.json and time.monotonic() - last_save[0] > CHECKPOINT_S:
            now = this_pass(list(runner.records))
            done = merge_rounds([*passes, now], config.peak_gbps) if passes else now
            write_json(BenchResult(env, meta, list(done), interrupted=True), args.json)
            last_save[0] = time.monotonic()

    old_term = signal.signal(signal.SIGTERM, _raise_interrupt)  # a CI timeout saves like Ctrl-C
    try:
        for k in range(args.rounds):  # each pass takes budget/rounds per case; passes run minutes apart
            if args.rounds > 1:  # each pass places the case's tensors at another offset in device memory
                config = dataclasses.replace(config, placement_seed=args.seed * 1000 + k,
                                             warmup_s=min(args.warmup, LATER_WARMUP_MS if k else args.warmup) / 1e3)
            prior = {line: list(recs) for line, recs in (journal.done.get(k, {}) if journal else {}).items()}
            todo = [c for c in found.cases if c.to_line() not in prior]
            label = f"round {k + 1}/{args.rounds}" if args.rounds > 1 else ""
            runner = Runner(config, progress=False if args.no_progress else None, on_record=checkpoint,
                            label=label, rounds_after=args.rounds - k - 1,
                            on_case=(lambda c, recs, k=k: journal.add_case(k, c.to_line(), recs)) if journal else None,
                            inputs=inputs)
            if ray_run and todo:  # each case timed whole on one actor; records in case order
                from op_benchmark.runner import CaseBencher, lost_case, run_on_executor
                from opbench.executors import make_ray_executor
                from opbench.executors.progress import Progress

                try:
                    executor = make_ray_executor(CaseBencher(config, frozenset(workers_env or ())),
                                                 partial(lost_case, config), address=args.ray_address,
                                                 workers=args.ray_workers, timeout=args.timeout,
                                                 use_gpus=device == "gpu")
                except RuntimeError as e:
                    raise UsageError(str(e)) from None
                bar = Progress(len(todo), label=label, progress=False if args.no_progress else None,
                               rounds_after=args.rounds - k - 1)
                try:
                    run_on_executor(executor, todo, runner._emit, workers_env, progress=bar,
                                    on_case=runner.on_case, on_env=journal.add_worker if journal else None)
                except KeyboardInterrupt:
                    runner.interrupted = True
                except StartError as e:
                    raise UsageError(f"workers cannot start: {e}") from None
                finally:
                    bar.close()
                passes.append(this_pass(runner.records))
            else:
                passes.append(this_pass(runner.run(todo)))
            if runner.interrupted:
                break
    finally:
        signal.signal(signal.SIGTERM, old_term)
        if journal is not None:
            journal.close()
    records = merge_rounds(passes, config.peak_gbps) if not runner.interrupted else (
        merge_rounds(passes[:-1], config.peak_gbps) if len(passes) > 1 else passes[0])
    result = BenchResult(env, meta, records, runner.interrupted)
    if args.json:
        write_json(result, args.json)
    text = render.markdown(records, env, provider_order=providers, wide=args.wide)
    summary = report.candidate_speedups(records)
    if summary:
        text += "\n### Speedup summary (candidate vs Paddle before and vs the industry's best)\n\n" + \
            report.markdown(summary)
    if ray_run:  # which host and GPU timed how many cases (over all passes), and how many of them failed
        runs: dict[tuple[int, str], list[Any]] = {}
        for k, recs in enumerate(passes):
            for r in recs:
                runs.setdefault((k, r.case), []).append(r)
        text += "\n" + host_table((rs[0].host, rs[0].gpu, bool(render.failures(rs, strict=args.strict)))
                                  for rs in runs.values())
    _write(args.markdown, text)
    _write(args.csv, render.to_csv(records) if args.csv else "")
    print(text)
    if runner.interrupted:
        print("interrupted: the records measured so far were written", file=sys.stderr)
        return 130
    failed = render.failures(records, strict=args.strict)
    cannot = [r for r in records if r.status in ("unsupported", "not_applicable")]
    if cannot and not args.strict:
        print(f"{len(cannot)} record(s) n/a: a provider does not apply or has no kernel for the op or dtype here "
              "(--strict counts them as failures)", file=sys.stderr)
    if failed:
        print(f"{len(failed)} record(s) failed (see 'Failed' above)", file=sys.stderr)
    return 2 if found.errors else (1 if failed else 0)


def _free_memory(providers: list[str], device: str) -> int | None:
    """What the first usable provider's device has free now (the default --memory-limit)."""
    from opbench.backends import get_backend
    from opbench.providers import framework_of

    for p in providers:
        try:
            return get_backend(framework_of(p), device).free_memory()
        except Exception:
            continue
    return None


def cmd_compare(args: argparse.Namespace) -> int:
    from op_benchmark import compare
    from op_benchmark.results import check_one_gpu_model, read_json

    paths = [args.base, args.new, *(args.again or [])]
    try:
        results = {p: read_json(p) for p in paths}
        check_one_gpu_model(results, args.allow_mixed_gpus)
    except ValueError as e:
        raise UsageError(str(e)) from None
    base, new = results[args.base].records, results[args.new].records
    if args.again:
        base2, new2 = (results[p].records for p in args.again)
        comparisons = compare.compare_both_orders(base, new, base2, new2, threshold_pct=args.threshold)
    else:
        comparisons = compare.compare_records(base, new, threshold_pct=args.threshold)
    text = compare.markdown(comparisons, fail_pct=args.fail_on_slower)
    _write(args.markdown, text)
    print(text)
    regressed = [c for c in comparisons if c.regressed(args.fail_on_slower)]
    if regressed:
        print(f"{len(regressed)} case(s) significantly slower by more than {args.fail_on_slower}% "
              "or newly failing", file=sys.stderr)
        return 1
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from op_benchmark import report
    from op_benchmark.results import check_one_gpu_model, read_json

    try:
        result = read_json(args.results)
        check_one_gpu_model({args.results: result}, args.allow_mixed_gpus)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if args.baselines:
        rows = report.speedups(result.records, args.baselines)
        text = report.markdown(rows)
    else:
        rows = report.candidate_speedups(result.records) or report.speedups(result.records)
        chart = None
        if args.png:
            base = Path(args.markdown).parent if args.markdown else Path.cwd()
            chart = os.path.relpath(Path(args.png).resolve(), base.resolve())
        text = report.pr_section(result, chart)
    note = report.bar_chart(rows, args.png) if args.png else None
    _write(args.markdown, text)
    print(text)
    if args.png:
        print(note or f"chart written to {args.png}", file=sys.stderr)
    return 0
