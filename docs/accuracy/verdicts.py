"""Prove the accuracy verdicts: no false failures, planted defects caught. Writes verdicts_<device>.md.

    python docs/accuracy/verdicts.py --device cpu      # and --device gpu on the GPU host

(a) False failures: our custom ops (``torch-ops``) against ``torch`` on the lerp suite, on
200 generated lerp cases (broadcast patterns, scalar and tensor weights, four float dtypes),
on the rms_norm and layer_norm suites and on 100 generated norm cases (rows of 1-65,536
elements, odd lengths, with and without weight and bias, four float dtypes), and ``torch``
against ``torch`` on the core suite and the generated cases; every case must pass (or not
apply here: ``mapping_missing``, ``unsupported``).
(b) Planted defects (:mod:`accuracy.planted`), each on at least 30 generated cases where it
applies: a relative bias of 4 units of the dtype in every output (element-wise ops), one
term dropped from a reduction or a normalization's row, a broadcast gradient summed over the
wrong axis, float32 results rounded through bfloat16. Each must be caught (``accuracy_fail``)
in 99% of cases.
With Paddle installed, Paddle's and our ops' Paddle binding (``paddle-ops``) against ``torch``
on the core and norm suites, and ``paddle.divide(Tensor([128, 256]), Tensor([256]))`` (a
128-term reduced gradient the old 1e-5 tolerance failed), whose figures are printed.
"""

from __future__ import annotations

import argparse
import datetime
import random
import sys
import time
from collections import Counter
from pathlib import Path

from tabulate import tabulate

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import accuracy.planted  # noqa: E402,F401 - registers the planted-defect providers
from accuracy.check import Checker, Settings  # noqa: E402
from opbench.cases import Case, parse_line, resolve  # noqa: E402

FLOATS = ("float32", "float16", "bfloat16", "float64")


def _t(shape: list[int], dtype: str) -> str:
    return f'Tensor({list(shape)},"{dtype}")'


def lerp_cases(n: int, seed: int, max_numel: int) -> list[str]:
    """Seeded lerp cases: x, y and weight each broadcast along random dims, ranks 1-4, all float dtypes."""
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n:
        rank = rng.randint(1, 4)
        full = [rng.choice([1, 2, 3, 5, 8, 16, 31, 64, 128, 257]) for _ in range(rank)]
        while _numel(full) > max_numel:
            full[rng.randrange(rank)] = max(1, full[rng.randrange(rank)] // 2)
        dtype = rng.choice(FLOATS)

        def part(shape: list[int]) -> list[int]:
            s = [d if rng.random() < 0.7 else 1 for d in shape]
            return s[rng.randint(0, len(s) - 1):] if rng.random() < 0.3 else s

        x, y = part(full), full if rng.random() < 0.5 else part(full)
        weight = (f"{rng.choice([0.0, 0.2, 0.5, 0.7, 1.0, -0.3, 1.5])}" if rng.random() < 0.4
                  else _t(part(full), dtype))
        out.append(f"paddle.lerp({_t(x, dtype)}, {_t(y, dtype)}, {weight}, )")
    return out


def norm_cases(n: int, seed: int, max_numel: int) -> list[str]:
    """Seeded rms_norm and layer_norm cases: 1-64 rows of 1-65,536 elements (odd lengths among them), weight
    and bias in the input dtype, in float32 beside a 16-bit input, or absent; all float dtypes."""
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n:
        cols = rng.choice([1, 7, 64, 127, 768, 1000, 4096, 5121, 16384, 65536])
        rows = max(1, min(rng.choice([1, 3, 16, 64]), max_numel // cols))
        dtype = rng.choice(FLOATS)
        # parameters in the input dtype, absent, or float32 beside a 16-bit input (as PyTorch takes them)
        x, pdtype = _t([rows, cols], dtype), rng.choice([dtype, None, "float32" if dtype in ("float16", "bfloat16")
                                                          else dtype])
        p = _t([cols], pdtype) if pdtype else "None"
        if rng.random() < 0.5:
            out.append(f"paddle.nn.functional.rms_norm({x}, [{cols}], {p}, 1e-06, )")
        else:
            b = _t([cols], pdtype) if pdtype and rng.random() < 0.7 else "None"
            out.append(f"paddle.nn.functional.layer_norm({x}, [{cols}], {p}, {b}, 1e-05, )")
    return out


def _numel(shape: list[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


ELEMENTWISE = ("paddle.exp({x}, )", "paddle.sin({x}, )", "paddle.tanh({x}, )", "paddle.multiply({x}, {y}, )",
               "paddle.add({x}, {y}, )", "paddle.nn.functional.sigmoid({x}, )", "paddle.nn.functional.gelu({x}, )",
               "paddle.lerp({x}, {y}, 0.3, )", "paddle.square({x}, )", "paddle.nn.functional.silu({x}, )")
REDUCTIONS = ("paddle.sum({x}, axis=-1, )", "paddle.mean({x}, axis=0, )", "paddle.sum({x}, )",
              "paddle.matmul({x}, {x}, )", "paddle.logsumexp({x}, axis=-1, )", "paddle.cumsum({x}, axis=1, )")
NORMS = ("paddle.nn.functional.layer_norm({x}, [{n}], )", "paddle.nn.functional.rms_norm({x}, [{n}], )",
         "paddle.nn.functional.softmax({x}, axis=-1, )")
BROADCAST = ("paddle.add({x}, {v}, )", "paddle.subtract({x}, {v}, )", "paddle.multiply({x}, {v}, )",
             "paddle.divide({x}, {v}, )", "paddle.maximum({x}, {v}, )", "paddle.lerp({x}, {v}, 0.4, )")


def planted_cases(defect: str, rng: random.Random) -> list[str]:
    """At least 30 cases a defect applies to."""
    out: list[str] = []
    if defect == "planted-bias":
        for op in ELEMENTWISE:
            for dtype in ("float32", "float16", "bfloat16"):
                shape = [rng.choice([7, 16, 33]), rng.choice([16, 64, 100])]
                out.append(op.format(x=_t(shape, dtype), y=_t(shape, dtype)))
    elif defect == "planted-drop":
        for op in REDUCTIONS:
            for n in (8, 16, 32, 64, 128, 256):
                shape = [n, n] if "matmul" in op else [rng.choice([4, 9, 16]), n]
                out.append(op.format(x=_t(shape, "float32")))
        for op in NORMS:  # their rows' terms (accuracy.row_terms) do not hide a term left out
            for n in (64, 768, 4096, 65536):
                out.append(op.format(x=_t([rng.choice([2, 4, 9]), n], "float32"), n=n))
    elif defect == "planted-axis":
        for op in BROADCAST:
            for n, dtype in ((8, "float32"), (16, "float32"), (32, "float16"), (64, "float32"), (128, "bfloat16"),
                             (256, "float32")):
                out.append(op.format(x=_t([n, n], dtype), v=_t([n], dtype)))
    elif defect == "planted-bf16":
        for op in ELEMENTWISE + REDUCTIONS:
            shape = [rng.choice([8, 16, 32]), rng.choice([16, 64])]
            shape = [shape[0], shape[0]] if "matmul" in op else shape
            out.append(op.format(x=_t(shape, "float32"), y=_t(shape, "float32")))
        for op in ELEMENTWISE + ELEMENTWISE:
            shape = [rng.choice([5, 64, 130]), rng.choice([3, 48, 77])]
            out.append(op.format(x=_t(shape, "float32"), y=_t(shape, "float32")))
        for op in NORMS:
            for n in (64, 1000, 16384):
                out.append(op.format(x=_t([rng.choice([2, 4, 9]), n], "float32"), n=n))
    return out


def run(lines: list[Case | str], subject: str, reference: str, device: str) -> list[dict]:
    checker = Checker(Settings(subject=subject, reference=reference, device=device))
    cases = [c if isinstance(c, Case) else parse_line(c) for c in lines]
    return [checker.check(c) for c in cases]


def _rows(records: list[dict], label: str) -> tuple[str, int, int, str]:
    counts = Counter(r["outcome"] for r in records)
    return label, len(records), counts.get("pass", 0), ", ".join(f"{o} {n}" for o, n in counts.most_common())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    device = args.device
    max_numel = 1 << 20 if device == "cpu" else 1 << 24
    t0 = time.time()

    def fits(c: Case) -> bool:
        return sum(t.numel for t in c.tensors()) <= 4 * max_numel * (4 if device == "gpu" else 1)

    suite = [c for c in resolve(["lerp"]).cases if fits(c)]
    norms = [c for c in resolve(["rms_norm", "layer_norm"], device=device).cases if fits(c)]  # the device's sizes
    core = resolve(["core"]).cases
    generated = lerp_cases(200, args.seed, max_numel)
    generated_norms = norm_cases(100, args.seed, max_numel)
    false_parts = [
        ("torch-ops vs torch, lerp suite", run(suite, "torch-ops", "torch", device)),
        ("torch-ops vs torch, 200 generated lerp cases", run(generated, "torch-ops", "torch", device)),
        ("torch-ops vs torch, rms_norm and layer_norm suites", run(norms, "torch-ops", "torch", device)),
        ("torch-ops vs torch, 100 generated norm cases", run(generated_norms, "torch-ops", "torch", device)),
        ("torch vs torch, core suite", run(core, "torch", "torch", device)),
        ("torch vs torch, 200 generated lerp cases", run(generated, "torch", "torch", device)),
        ("torch vs torch, 100 generated norm cases", run(generated_norms, "torch", "torch", device)),
    ]
    rng = random.Random(args.seed)
    planted = [(d, run(planted_cases(d, rng), d, "torch", device))
               for d in ("planted-bias", "planted-drop", "planted-axis", "planted-bf16")]
    extra: list[tuple[str, list[dict]]] = []
    try:
        import paddle  # noqa: F401

        if device == "cpu":
            extra.append(("paddle vs torch, core suite", run(core, "paddle", "torch", device)))
            extra.append(("paddle vs torch, rms_norm and layer_norm suites", run(norms, "paddle", "torch", device)))
            extra.append(("paddle-ops vs torch, rms_norm and layer_norm suites",
                          run(norms, "paddle-ops", "torch", device)))
            extra.append(("paddle vs torch, the divide case",
                          run(['paddle.divide(Tensor([128, 256],"float32"), Tensor([256],"float32"), )'],
                              "paddle", "torch", device)))
    except ImportError:
        pass

    import torch

    gpu = torch.cuda.get_device_name() if device == "gpu" else "none (CPU)"
    from opbench.env import git_commit

    commit = git_commit() or "unknown"
    lines = [f"# Accuracy verdicts: false failures and planted defects ({device})", "",
             f"Produced by `docs/accuracy/verdicts.py --device {device}` on {datetime.date.today().isoformat()}, "
             f"commit `{commit}`, GPU: {gpu}, torch {torch.__version__}; {time.time() - t0:.0f} s.", "",
             "## (a) False failures: every case must pass (or not apply here: `mapping_missing`, `unsupported`)", "",
             f"Suite cases whose inputs hold at most {4 * max_numel * (4 if device == 'gpu' else 1):,} elements; "
             f"generated cases at most {max_numel:,} per tensor.", "",
             tabulate([_rows(r, label) for label, r in false_parts + extra],
                      headers=("run", "cases", "pass", "outcomes"), tablefmt="github"), ""]
    for label, recs in false_parts + extra:
        bad = [r for r in recs if r["outcome"] not in ("pass", "mapping_missing", "unsupported")]
        for r in bad:
            lines.append(f"- {label}: `{r['config']}` **{r['outcome']}** {r.get('failed', r.get('error', ''))}")
    if extra:
        for r in extra[-1][1]:
            lines += ["", "The divide case (grad y sums 128 terms of up to 100 in magnitude):", ""]
            for c in r.get("comparisons", []):
                b = c.get("bound")
                lines.append(f"- {c['direction']} {c['name']}: passed {c['passed']}, max abs {c.get('max_abs')}"
                             + (f"; units: subject {b['subject_units']}, reference {b['reference_units']}, "
                                f"allowed {b['allowed_units']}, {b['terms']} terms; max abs vs float64: "
                                f"subject {b['subject_max_abs']}, reference {b['reference_max_abs']}" if b else ""))
    lines += ["", "## (b) Planted defects: each must be caught (`accuracy_fail`) in >= 99% of its cases", "",
              tabulate([(d, len(r), sum(x["outcome"] == "accuracy_fail" for x in r),
                         f"{100.0 * sum(x['outcome'] == 'accuracy_fail' for x in r) / max(len(r), 1):.1f}%")
                        for d, r in planted], headers=("defect", "cases", "caught", "rate"), tablefmt="github"), ""]
    for d, recs in planted:
        for r in recs:
            if r["outcome"] != "accuracy_fail":
                lines.append(f"- missed by {d}: `{r['config']}` ({r['outcome']} {r.get('error', '')[:160]})")
    out = args.out or Path(__file__).with_name(f"verdicts_{device}.md")
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[-30:]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
