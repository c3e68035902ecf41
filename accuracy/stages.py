"""Stage profile: where a run's time goes (parse, input generation, ..., bookkeeping).

Every case records its stage times (``timings`` in the results file); with
``--profile-stages`` the device is synchronized at each stage boundary so GPU work is
charged to the stage that queued it, the sums over the run are printed as a table and,
with matplotlib, drawn as a heatmap (stages x cases, the seed PR's picture).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

STAGES = ("parse", "input_generation", "to_device", "subject_run", "reference_run", "backward",
          "compare", "bookkeeping")


class StageTimer:
    """Accumulates milliseconds per stage; ``sync`` (when given) runs before each stage ends."""

    def __init__(self, sync: Callable[[], None] | None = None) -> None:
        self.ms: dict[str, float] = {}
        self.sync = sync

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            if self.sync is not None:
                try:
                    self.sync()
                except Exception:  # noqa: BLE001 - the stage's own error is the one to report
                    pass
            self.add(stage, (time.perf_counter() - t0) * 1e3)

    def add(self, stage: str, ms: float) -> None:
        self.ms[stage] = self.ms.get(stage, 0.0) + ms


def totals(records: Sequence[dict]) -> dict[str, float]:
    """Milliseconds per stage summed over result records."""
    out = dict.fromkeys(STAGES, 0.0)
    for r in records:
        for stage, ms in (r.get("timings") or {}).items():
            out[stage] = out.get(stage, 0.0) + float(ms)
    return out


def format_table(records: Sequence[dict], extra: dict[str, float] | None = None) -> str:
    """Total, per-case mean and share of each stage, as a text table (``extra``: parent-side ms)."""
    from tabulate import tabulate

    tot = totals(records)
    for stage, ms in (extra or {}).items():
        tot[stage] = tot.get(stage, 0.0) + ms
    n = max(1, sum(1 for r in records if r.get("timings")))
    whole = sum(tot.values()) or 1.0
    rows = [(s, f"{ms:.2f}", f"{ms / n:.3f}", f"{100 * ms / whole:.1f}%") for s, ms in tot.items()]
    rows.append(("total", f"{whole:.2f}", f"{whole / n:.3f}", "100.0%"))
    return tabulate(rows, headers=("stage", "total ms", "ms/case", "share"), tablefmt="github")


def heatmap(records: Sequence[dict], path: str | Path, max_cases: int = 80, slowest: bool = True) -> str:
    """Draw stages x cases (ms, log colour scale) to ``path``; returns a one-line note of what happened.

    With more than ``max_cases`` cases, the slowest ones (``slowest``) or the first ones are drawn;
    a record's ``label`` names its column (default: the API).
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.colors import LogNorm
    except ImportError:
        return "matplotlib is not installed: no stage heatmap (pip install matplotlib)"
    import numpy as np

    timed = [r for r in records if r.get("timings")]
    if not timed:
        return "no timed cases: no stage heatmap"
    # Show the slowest cases when there are too many columns to read.
    if slowest:
        timed = sorted(timed, key=lambda r: -sum(r["timings"].values()))
    timed = timed[:max_cases]
    data = np.array([[r["timings"].get(s, 0.0) for r in timed] for s in STAGES])
    fig, ax = plt.subplots(figsize=(max(6, 0.25 * len(timed) + 3), 4.5))
    im = ax.imshow(np.maximum(data, 1e-3), aspect="auto", cmap="magma_r", norm=LogNorm())
    ax.set_yticks(range(len(STAGES)), STAGES)
    labels = [r.get("label") or r["config"].split("(")[0].removeprefix("paddle.") for r in timed]
    ax.set_xticks(range(len(timed)), labels, rotation=90, fontsize=6)
    fig.colorbar(im, ax=ax, label="ms")
    ax.set_title(f"accuracy stage times ({len(timed)} {'slowest ' if slowest else ''}cases)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return f"stage heatmap: {path}"
