"""The Paddle -> PyTorch mapping table: the written entries plus the variants Paddle derives from them.

Entries are written once per API family in :mod:`opbench.mapping.tables`. Paddle exposes
most functions again as a Tensor method (``paddle.abs`` is ``paddle.Tensor.abs``) and many
as an in-place variant (``paddle.Tensor.abs_``, ``paddle.nn.functional.relu_``); where
Paddle's recorded signature of the variant has the same parameters, the variant reuses the
function's entry, so it never needs writing. An entry written for a variant wins.
"""

from __future__ import annotations

import dataclasses

from opbench.mapping.signatures import load
from opbench.mapping.spec import ApiMapping, signature_params
from opbench.mapping.tables import FAMILIES

#: PaddlePaddle/benchmark config families (the ``op`` field shared by several APIs) and the
#: API each runs when no ``--api_name`` is given.
BENCHMARK_FAMILIES: dict[str, str] = {
    "elementwise": "paddle.add",
    "reduce": "paddle.mean",
    "activation": "paddle.cos",
    "arg": "paddle.argmax",
}

# Namespaces whose functions Paddle also exposes as Tensor methods of the same name.
_METHOD_NAMESPACES = ("paddle.", "paddle.linalg.")
# Variants whose name matches but whose meaning does not: ``where_`` writes into ``x``, its
# second argument, not into its first.
_NOT_VARIANTS = frozenset({"paddle.where_", "paddle.Tensor.where_"})


def _param_names(api: str) -> tuple[str, ...] | None:
    entry = load().get(api)
    if entry is None or entry.get("builtin"):
        return None
    return tuple(p.name for p in signature_params(api)[0])


def variants(entry: ApiMapping) -> list[ApiMapping]:
    """The Tensor-method and in-place variants of a written entry that Paddle has, same parameters."""
    namespace, _, base = entry.api.rpartition(".")
    names = entry.param_names
    out: list[ApiMapping] = []
    candidates: list[tuple[str, bool]] = [(f"{namespace}.{base}_", True)]
    if namespace + "." in _METHOD_NAMESPACES:
        candidates += [(f"paddle.Tensor.{base}", False), (f"paddle.Tensor.{base}_", True)]
    elif namespace == "paddle.Tensor" and not base.startswith("__"):
        candidates = [(f"paddle.Tensor.{base}_", True)]
    for api, inplace in candidates:
        if api != entry.api and api not in _NOT_VARIANTS and _param_names(api) == names:
            out.append(dataclasses.replace(entry, api=api, inplace=inplace or entry.inplace, benchmark_op=None))
    return out


def build() -> list[ApiMapping]:
    """Every entry: the written ones, then their variants not written themselves."""
    written: dict[str, ApiMapping] = {}
    for family in FAMILIES:
        for e in family.ENTRIES:
            if e.api in written:
                raise ValueError(f"duplicate mapping for {e.api}")
            written[e.api] = e
    table = dict(written)
    for e in written.values():
        for v in variants(e):
            table.setdefault(v.api, v)
    return list(table.values())


TABLE: list[ApiMapping] = build()

__all__ = ["BENCHMARK_FAMILIES", "TABLE", "build", "variants"]
