"""Read PaddlePaddle/benchmark JSON configs (``api/tests_v2/configs/*.json``) into cases.

A file holds a list of ``{"op": ..., "param_info": {...}}`` objects; shapes are
strings like ``"[-1L, 128L]"`` where ``-1`` is an unknown dimension (replaced by
``unknown_dim``, 16 as in the benchmark's ``--unknown_dim`` default). Parameter
names are Paddle's, so the mapping's signature orders them into a call.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from opbench.cases.model import DTYPE_SIZES, Case, ConfigError, TensorSpec
from opbench.cases.textfile import read_text

UNKNOWN_DIM = 16
_LONG_SUFFIX = re.compile(r"(?<=\d)L\b")
_SCALAR_TYPES = {"int", "int32", "int64", "float", "float16", "float32", "float64", "bool", "string", "str"}


def _literal(text: str, where: str) -> Any:
    """A value written as Python literal text (``"[-1L, 2L]"``, ``"0.2"``), via ``ast.literal_eval``."""
    try:
        return ast.literal_eval(_LONG_SUFFIX.sub("", text))
    except (ValueError, SyntaxError):
        raise ValueError(f"{where}: cannot read value {text!r}") from None


def _param(info: dict, where: str, unknown_dim: int) -> Any:
    kind = info.get("type", "")
    if kind == "Variable":
        shape = _literal(str(info["shape"]), where)
        dtype = info.get("dtype", "float32")
        if dtype not in DTYPE_SIZES:
            raise ValueError(f"{where}: unknown dtype {dtype!r}")
        return TensorSpec(tuple(unknown_dim if d == -1 else int(d) for d in shape), dtype)
    if kind.startswith("list<") or kind.startswith("tuple<"):
        items = sorted(
            ((k, v) for k, v in info.items() if isinstance(v, dict)),
            key=lambda kv: int(re.sub(r"\D", "", kv[0]) or 0),
        )
        values = [_param(v, f"{where}.{k}", unknown_dim) for k, v in items]
        return values if kind.startswith("list") else tuple(values)
    value = info.get("value")
    if kind in ("string", "str"):
        return value
    if value is None or value == "None":
        return None
    if kind == "bool":
        return str(value) in ("True", "true", "1")
    v = _literal(str(value), where)
    if kind in ("float", "float16", "float32", "float64") and isinstance(v, int):
        return float(v)
    return v


def case_from_config(config: dict, *, source: str, index: int, unknown_dim: int = UNKNOWN_DIM) -> Case:
    """One benchmark JSON object -> a :class:`Case` with Paddle's parameter order."""
    from opbench.mapping import MappingMissing, api_for_benchmark_op, lookup

    where = f"{source}[{index}]"
    op = config.get("op")
    if not op:
        raise ConfigError("config has no 'op'", source=source, lineno=index + 1)
    try:
        api = api_for_benchmark_op(op)
    except MappingMissing:
        raise ConfigError(f"benchmark op '{op}' has no Paddle API mapping", source=source, lineno=index + 1) from None
    try:
        named = {k: _param(v, f"{where}.{k}", unknown_dim) for k, v in config.get("param_info", {}).items()}
    except (ValueError, KeyError, TypeError) as e:
        raise ConfigError(str(e), source=source, lineno=index + 1) from None
    order = [p.name for p in lookup(api).params]
    # The benchmark sometimes names a parameter differently (lerp's "w" is Paddle's "weight"):
    # unknown names fill the remaining positional slots in the order given.
    known = {k: v for k, v in named.items() if k in order}
    extra = [v for k, v in named.items() if k not in order]
    args: list[Any] = []
    kwargs: list[tuple[str, Any]] = []
    by_name = False  # after the first parameter the config leaves out, the rest go by name
    for name in order:
        if name in known:
            value = known[name]
        elif extra and not by_name:
            value = extra.pop(0)
        else:
            by_name = True
            continue
        if by_name:
            kwargs.append((name, value))
        else:
            args.append(value)
    if extra:
        raise ConfigError(f"parameters {sorted(k for k in named if k not in order)} are not {api}'s",
                          source=source, lineno=index + 1)
    return Case(api, tuple(args), tuple(kwargs), source=source, lineno=index + 1)


def load_benchmark_json(path: str | Path, *, unknown_dim: int = UNKNOWN_DIM) -> list[Case | ConfigError]:
    """All configs of one JSON file; a bad config becomes a ConfigError in the list, the rest still load."""
    path = Path(path)
    try:
        data = json.loads(read_text(path))
    except ConfigError as e:
        return [e]
    except json.JSONDecodeError as e:
        return [ConfigError(f"invalid JSON: {e.msg}", source=str(path), lineno=e.lineno, col=e.colno)]
    if isinstance(data, dict):
        data = [data]
    out: list[Case | ConfigError] = []
    for i, config in enumerate(data):
        try:
            out.append(case_from_config(config, source=str(path), index=i, unknown_dim=unknown_dim))
        except ConfigError as e:
            out.append(e)
    return out
