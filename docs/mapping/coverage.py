"""Measure the mapping on PaddleAPITest's public config files; write docs/mapping/coverage.md.

    python docs/mapping/coverage.py PATH/TO/PaddleAPITest [--sample 1000] [--seed 0] [--workers 2]

Counts, over every unique line of ``tester/api_config/**/*.txt``: how many parse, how many
of those name a mapped API, and which unmapped APIs most lines need. Then a seeded random
sample of mapped lines runs through ``opbench accuracy --device cpu`` (Paddle against
PyTorch) and the outcomes are counted, with every case that did not pass listed by outcome
and reason. The sample is drawn from lines whose input tensors hold at most
``--max-elements`` elements (the CPU run has to finish in minutes), and that limit is stated
in the output. The config files are read in place and never copied into this repository.
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from tabulate import tabulate

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from opbench.cases import parse_lines  # noqa: E402
from opbench.coverage import Coverage, summary  # noqa: E402
from opbench.env import git_commit  # noqa: E402
from opbench.mapping import is_mapped, mapped_apis  # noqa: E402

OUT = Path(__file__).with_name("coverage.md")


def unique_lines(root: Path) -> tuple[list[tuple[str, str]], int]:
    """(file, line) for every unique non-empty, non-comment line, and the number of files read."""
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    files = sorted((root / "tester" / "api_config").rglob("*.txt"))
    for path in files:
        for raw in path.read_text(errors="replace").splitlines():
            line = raw.strip()
            if line and not line.startswith("#") and line not in seen:
                seen.add(line)
                out.append((str(path.relative_to(root)), line))
    return out, len(files)


def _git(args: list[str], cwd: Path) -> str:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def run_sample(lines: list[str], workers: int, timeout: float) -> list[dict]:
    """Run the lines through ``opbench accuracy --device cpu`` and return the result records."""
    with tempfile.TemporaryDirectory() as tmp:
        cases, out = Path(tmp) / "sample.txt", Path(tmp) / "sample.jsonl"
        cases.write_text("\n".join(lines) + "\n")
        cmd = [sys.executable, "-m", "opbench", "accuracy", str(cases), "--device", "cpu", "--workers", str(workers),
               "--timeout", str(timeout), "--out", str(out)]
        subprocess.run(cmd, cwd=REPO, stdout=subprocess.DEVNULL, check=False)
        return [json.loads(r) for r in out.read_text().splitlines() if r.strip()]


def sample_section(records: list[dict], max_elements: int, n: int) -> list[str]:
    """Outcome counts of the sample, and every case that did not pass, by outcome and reason."""
    counts = Counter(r["outcome"] for r in records)
    ran = [r for r in records if r["outcome"] not in ("unsupported", "paddle_error")]
    passed = counts.get("pass", 0)
    lines = [
        f"## Sample run: {len(records)} of {n} sampled mapped lines (seeded), `opbench accuracy --device cpu`", "",
        f"Lines whose inputs hold at most {max_elements:,} elements; Paddle (subject) against PyTorch (reference), "
        "forward and backward, default tolerances.", "",
        tabulate(sorted(counts.items(), key=lambda kv: -kv[1]), headers=("outcome", "cases"), tablefmt="github"), "",
        f"Of the {len(ran)} lines Paddle's CPU build runs (all but `unsupported` and `paddle_error`): "
        f"{passed} pass ({100.0 * passed / max(len(ran), 1):.1f}%), {counts.get('crash', 0)} crash.", "",
    ]
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        if r["outcome"] != "pass":
            groups[r["outcome"]].append(r)
    for outcome, recs in sorted(groups.items()):
        lines += [f"### {outcome} ({len(recs)})", ""]
        for r in recs[:60]:
            why = (r.get("error") or ", ".join(r.get("failed", [])) or "").splitlines()
            side = f"{r['error_side']}: " if r.get("error_side") else ""
            lines.append(f"- `{r['config'][:160]}` — {side}{(why[0] if why else '')[:200]}")
        if len(recs) > 60:
            lines.append(f"- ... and {len(recs) - 60} more")
        lines.append("")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paddleapitest", type=Path, help="a checkout of PaddleAPITest (its tester/api_config/)")
    ap.add_argument("--sample", type=int, default=1000, help="mapped lines to run (default: 1000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-elements", type=int, default=1 << 20, help="input elements per sampled line at most")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--source", default=None, help="name the checkout (e.g. owner/repo@commit) when it is not git")
    args = ap.parse_args()

    lines, nfiles = unique_lines(args.paddleapitest)
    items = parse_lines([line for _, line in lines], "corpus")
    cov = Coverage().add(items)
    runnable = [c.to_line() for c in items
                if not isinstance(c, Exception) and is_mapped(c.api)
                and sum(t.numel for t in c.tensors()) <= args.max_elements]
    rng = random.Random(args.seed)
    sample = rng.sample(runnable, min(args.sample, len(runnable)))
    records = run_sample(sample, args.workers, args.timeout) if sample else []

    import paddle
    import torch

    source = args.source or _git(["rev-parse", "--short", "HEAD"], args.paddleapitest)
    head = [
        "# Mapping coverage of PaddleAPITest's config files", "",
        f"Produced by `docs/mapping/coverage.py` on {datetime.date.today().isoformat()}, opbench commit "
        f"`{git_commit() or 'unknown'}`, PaddleAPITest "
        f"`{source}`, paddle {paddle.__version__} (CPU), "
        f"torch {torch.__version__}. {len(mapped_apis())} Paddle APIs are mapped.", "",
        f"## All unique lines of `tester/api_config/**/*.txt` ({nfiles} files)", "",
    ]
    text = "\n".join(head + [summary(cov, top=60), *sample_section(records, args.max_elements, len(sample))])
    args.out.write_text(text + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
