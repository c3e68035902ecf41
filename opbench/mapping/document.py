"""Render ``docs/mapping.md`` from the table: the design, then every mapped API and its PyTorch side.

``python -m opbench.mapping.document`` rewrites the file; ``tests/mapping/test_document.py``
checks it is current, so the document never drifts from the table.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

from opbench.mapping.table import TABLE, variants
from opbench.mapping.tables import FAMILIES

OUT = Path(__file__).resolve().parents[2] / "docs" / "mapping.md"

INTRO = """\
# The Paddle -> PyTorch mapping

`opbench.mapping` tells the OP benchmark and the accuracy checker, for each Paddle API, how
to call its PyTorch counterpart on the same inputs and which values those inputs may hold.
This file is generated from the table by `python -m opbench.mapping.document`; coverage of
PaddleAPITest's public config files is measured in [mapping/coverage.md](mapping/coverage.md).

## How an entry is written

```python
M("paddle.nn.functional.softmax", "torch.nn.functional.softmax(x, dim=axis, dtype=dtype(dtype))")
M("paddle.divide", "torch.div(x, y, rounding_mode=rounding_mode)", domains={"y": NONZERO})
M("paddle.sum", convert=cv.reduce_sum)
```

- **Signatures are data.** Paddle's parameter names, defaults and aliases (`input` for `x`,
  `dim` for `axis`) are recorded from paddle 3.3.1 in `opbench/mapping/paddle_signatures.json`
  (`python -m opbench.mapping.signatures` regenerates it; a test checks it is current). A
  config line binds by them exactly as Python would; `name` and `out=None` are dropped.
- **The torch side is a call template** (`opbench/mapping/template.py`): the call it makes,
  with Paddle's parameter names as values, parsed once with `ast`, never executed as code.
  Values may go through a few named transforms (`dtype()`, `axes()`, `ints()`, `int()`,
  `scalar()`, `tuple()`, `float()`, `not_()`). A keyword bound to None is left out. A
  parameter the template does not read must keep its default (or be listed in `ignore`),
  else the call is refused as `mapping_missing` instead of being silently ignored.
- **A converter** (`opbench/mapping/converters/<family>.py`) takes over where the semantics
  differ: it gets the bound Paddle-named arguments as torch values and returns Paddle's
  output structure, shapes and dtypes. An output Paddle leaves unwritten on a call (its memory's
  old contents, such as `fused_layer_norm`'s mean with no norm weight) is returned as `UNWRITTEN`,
  and the accuracy checker records it as not compared.
- **Variants are derived.** `paddle.Tensor.X`, `paddle.Tensor.X_` and `paddle.X_` reuse the
  entry of `paddle.X` when Paddle's recorded signature has the same parameters (in-place
  calls run on a copy of their first argument). An entry written for a variant wins.
- **Inputs that make sense** (`opbench/domains.py`): `domains` gives a parameter a kind of
  values (positive, non-zero, indices into another argument, a valid shape, distinct axes, a
  permutation, sections summing to a dim, sorted values, symmetric positive-definite
  matrices); integer tensors named `shape`, `axis`, `perm`, `index`, ... get one by name.
- **Every entry is verified**: `tests/mapping/test_api_cases.py` runs each mapped API on the
  CPU, Paddle against PyTorch, forward and backward, on the cases in `tests/mapping/cases/`
  (a derived variant on its function's first case). An entry's `known` field documents a
  difference the test accepts; `random` marks APIs whose values are random (only shapes and
  dtypes compared).
- Errors our binding or converters raise are `mapping_error` (the template or converter is
  named), never `torch_error`.

"""


def render() -> str:
    """The whole document."""
    derived: dict[str, list[str]] = defaultdict(list)
    written = {e.api for family in FAMILIES for e in family.ENTRIES}
    for family in FAMILIES:
        for e in family.ENTRIES:
            derived[e.api] = sorted(v.api for v in variants(e) if v.api not in written)
    total = len(TABLE)
    lines = [INTRO, f"## The table: {total} APIs ({len(written)} written, {total - len(written)} derived)", ""]
    for family in FAMILIES:
        if not family.ENTRIES:
            continue
        title = (family.__doc__ or family.__name__).strip().splitlines()[0]
        lines += [f"### {title}", "", "| Paddle API | PyTorch side | also | notes |", "|---|---|---|---|"]
        for e in sorted(family.ENTRIES, key=lambda e: e.api):
            side = f"`{e.torch}`" if e.torch else f"converter `{e.convert.__module__.rsplit('.', 1)[-1]}." \
                                                   f"{e.convert.__name__}`"
            also = ", ".join(f"`{a.removeprefix('paddle.')}`" for a in derived[e.api])
            lines.append(f"| `{e.api}` | {side} | {also} | {_notes(e)} |")
        lines.append("")
    return "\n".join(lines)


def _notes(e) -> str:  # noqa: ANN001 - an ApiMapping
    notes = [f"{k}: {_domain(d)}" for k, d in e.domains.items()]
    if e.nondiff:
        notes.append("no grad: " + ", ".join(e.nondiff))
    if e.random:
        notes.append("random values")
    if e.known:
        notes.append("known difference: " + e.known)
    return "; ".join(notes).replace("|", "\\|")


def _domain(d) -> str:  # noqa: ANN001 - a Domain
    if d.of is not None:
        return f"{d.kind} of {d.of}"
    if d.kind != "uniform":
        return d.kind
    return f"[{d.low:g}, {d.high:g})" + (f" |v| >= {d.min_abs:g}" if d.min_abs else "")


def main() -> int:
    OUT.write_text(render())
    print(f"{len(TABLE)} APIs -> {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
