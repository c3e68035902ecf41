"""Output for every tool in one place: the table on stdout, the figures as JSON, a PNG when matplotlib is there.

A tool measures and returns a :class:`ToolResult` (tables of formatted cells plus the raw
figures); this module only renders it, like ``torch.utils.benchmark`` keeps measuring
and rendering apart.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tabulate import tabulate


@dataclass
class Table:
    """One titled table of already formatted cells."""

    title: str
    headers: list[str]
    rows: list[list[Any]]


@dataclass
class ToolResult:
    """What a tool found: tables for people, ``data`` (raw figures) for JSON, an optional plot."""

    tool: str
    tables: list[Table]
    notes: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    env: dict[str, Any] | None = None
    plot: Callable[[Any, dict[str, Any]], None] | None = None  # plot(matplotlib Figure, data)
    exit_code: int = 0


# -- cell formatting -------------------------------------------------------------------------------
def fmt_bytes(n: float | None) -> str:
    """``4096`` -> ``"4 KiB"``; binary units, at most one decimal."""
    if n is None:
        return "-"
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            v = n / size
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{int(n)} B"


def fmt_num(x: float | None, digits: int = 1) -> str:
    """A number with ``digits`` decimals, ``-`` for missing/NaN."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:,.{digits}f}"


def fmt_ratio(x: float | None) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.2f}x"


# -- rendering ---------------------------------------------------------------------------------------
def render(result: ToolResult) -> str:
    """The tables (GitHub markdown, readable in a terminal too) followed by the notes."""
    parts = []
    for t in result.tables:
        body = tabulate(t.rows, headers=t.headers, tablefmt="github", disable_numparse=True)
        parts.append(f"{t.title}\n\n{body}" if t.title else body)
    if result.notes:
        parts.append("\n".join(f"- {n}" for n in result.notes))
    return "\n\n".join(parts)


def to_json(result: ToolResult) -> dict[str, Any]:
    return {
        "tool": result.tool,
        "time": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "env": result.env,
        "data": result.data,
        "tables": [{"title": t.title, "headers": t.headers, "rows": t.rows} for t in result.tables],
        "notes": result.notes,
    }


def write_json(result: ToolResult, path: str | Path) -> None:
    Path(path).write_text(json.dumps(to_json(result), indent=2, default=str) + "\n")


def write_png(result: ToolResult, path: str | Path) -> str | None:
    """Draw the tool's plot into ``path``; returns a one-line note when it could not (else ``None``)."""
    if result.plot is None:
        return f"{result.tool} has no plot; no PNG written"
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (pip install matplotlib); no PNG written"
    fig = plt.figure(figsize=(9, 5))
    try:
        result.plot(fig, result.data)
        fig.tight_layout()
        fig.savefig(path, dpi=120)
    finally:
        plt.close(fig)
    return None


def emit(result: ToolResult, json_path: str | None = None, png_path: str | None = None,
         print_fn: Callable[[str], None] = print) -> int:
    """Print the result, then write the files asked for; a file that cannot be written costs one line,
    never the printed figures. Returns the tool's exit code (2 when a file could not be written)."""
    print_fn(render(result))
    code = result.exit_code
    for path, writer in ((json_path, write_json), (png_path, write_png)):
        if not path:
            continue
        try:
            note = writer(result, path)
        except OSError as e:
            print_fn(f"could not write {path}: {e.strerror or e}")
            code = code or 2
            continue
        if note:
            print_fn(note)
    return code


def bar_plot(fig: Any, labels: Sequence[str], series: dict[str, Sequence[float]], ylabel: str, title: str) -> None:
    """Grouped bars: one group per label, one bar per series (shared by several tools' plots)."""
    ax = fig.add_subplot(1, 1, 1)
    n = max(len(series), 1)
    width = 0.8 / n
    for i, (name, values) in enumerate(series.items()):
        xs = [j + (i - (n - 1) / 2) * width for j in range(len(labels))]
        ax.bar(xs, [v if v is not None else 0 for v in values], width, label=name)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=20, ha="right")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if len(series) > 1:
        ax.legend()
