"""Paddle's API signatures as data: parameter names, defaults and aliases, read from paddle 3.3.1.

The mapping binds a config line's arguments by Paddle's own parameter names, so it needs
every mapped API's signature without importing Paddle (the torch-only providers and
``opbench cases`` must work where Paddle is absent, and fast). ``paddle_signatures.json``
beside this file holds them; ``python -m opbench.mapping.signatures`` regenerates it from the
installed Paddle (``tests/mapping/test_signatures.py`` checks it is current).

Each entry: ``{"params": [[name, default, kind], ...], "aliases": {alias: name}}``; ``kind`` is
``"p"`` (positional or keyword), ``"k"`` (keyword-only), ``"*"`` (``*args``), ``"**"`` (``**kwargs``).
Defaults are JSON values; a tuple default is ``{"tuple": [...]}``, one with no literal form
``{"repr": "..."}``, and a required parameter ``{"required": true}``.
"""

from __future__ import annotations

import functools
import inspect
import json
import sys
from pathlib import Path
from typing import Any

DATA = Path(__file__).with_name("paddle_signatures.json")

# The namespaces whose public callables are recorded (Tensor methods included, dunders too).
NAMESPACES = (
    "paddle", "paddle.Tensor", "paddle.nn.functional", "paddle.linalg", "paddle.fft", "paddle.signal",
    "paddle.special", "paddle.incubate", "paddle.incubate.nn.functional", "paddle.vision.ops",
    "paddle.geometric", "paddle.sparse", "paddle.sparse.nn.functional", "paddle.nn.initializer",
    "paddle.nn.utils", "paddle.distribution", "paddle.autograd", "paddle.audio.functional",
    "paddle.text", "paddle.tensor", "paddle.compat",
)


@functools.cache
def load() -> dict[str, dict[str, Any]]:
    """Every recorded signature, by dotted API name (read once)."""
    return json.loads(DATA.read_text())


def decode_default(value: Any) -> Any:
    """A recorded default back as a Python value (``REQUIRED`` for a required parameter)."""
    from opbench.mapping.spec import REQUIRED

    if isinstance(value, dict):
        if value.get("required"):
            return REQUIRED
        if "tuple" in value:
            return tuple(value["tuple"])
        return UnknownDefault(value["repr"])
    return value


class UnknownDefault(str):
    """A default Paddle writes as an object with no literal form (shown by its repr)."""


def _encode_default(value: Any) -> Any:
    if value is inspect.Parameter.empty:
        return {"required": True}
    if value is None or isinstance(value, (bool, int, float, str)):
        if isinstance(value, float) and value != value:
            return {"repr": "nan"}
        return value
    if isinstance(value, tuple) and all(isinstance(v, (bool, int, float, str, type(None))) for v in value):
        return {"tuple": list(value)}
    if isinstance(value, list) and all(isinstance(v, (bool, int, float, str, type(None))) for v in value):
        return list(value)
    return {"repr": repr(value)}


_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "p",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "p",
    inspect.Parameter.KEYWORD_ONLY: "k",
    inspect.Parameter.VAR_POSITIONAL: "*",
    inspect.Parameter.VAR_KEYWORD: "**",
}


def _aliases(fn: Any) -> dict[str, str]:
    """Parameter aliases Paddle's alias decorators add (``input`` for ``x``, ``dim`` for ``axis``)."""
    out: dict[str, str] = {}
    seen: set[int] = set()
    while fn is not None and id(fn) not in seen:
        seen.add(id(fn))
        for cell in getattr(fn, "__closure__", None) or ():
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            mapping = getattr(v, "alias_mapping", None)
            if isinstance(mapping, dict):
                out.update({str(a): str(o) for a, o in mapping.items()})
            elif isinstance(v, (list, tuple)) and len(v) == 2 and all(isinstance(s, str) for s in v):
                out.setdefault(v[1], v[0])
        if getattr(fn, "__name__", "") == "wrapper" and "softmax" in getattr(fn, "__qualname__", ""):
            out.update({"input": "x", "dim": "axis"})
        fn = getattr(fn, "__wrapped__", None)
    return out


def _record(fn: Any) -> dict[str, Any] | None:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = [[p.name, _encode_default(p.default), _KINDS[p.kind]] for p in sig.parameters.values()]
    entry: dict[str, Any] = {"params": params}
    aliases = {a: o for a, o in _aliases(fn).items() if a not in sig.parameters}
    if aliases:
        entry["aliases"] = dict(sorted(aliases.items()))
    return entry


def generate() -> dict[str, dict[str, Any]]:
    """Signatures of every public callable in :data:`NAMESPACES` of the installed Paddle."""
    import importlib

    import paddle

    out: dict[str, dict[str, Any]] = {}
    for ns in NAMESPACES:
        try:
            obj = paddle.Tensor if ns == "paddle.Tensor" else importlib.import_module(ns)
        except ImportError:
            continue
        for name in sorted(dir(obj)):
            if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
                continue
            try:
                fn = getattr(obj, name)
            except Exception:  # noqa: BLE001 - a lazy attribute that fails to load is simply absent
                continue
            if not callable(fn) or inspect.isclass(fn) or inspect.ismodule(fn):
                continue
            rec = _record(fn)
            if rec is None and ns == "paddle.Tensor" and name.startswith("__"):
                rec = {"params": [], "builtin": True}  # dunder of the C++ Tensor: no signature
            if rec is not None:
                out[f"{ns}.{name}"] = rec
    return dict(sorted(out.items()))


def main() -> int:
    """Regenerate ``paddle_signatures.json`` from the installed Paddle."""
    import paddle

    data = generate()
    DATA.write_text(json.dumps(data, separators=(",", ":"), sort_keys=True) + "\n")
    print(f"{len(data)} signatures from paddle {paddle.__version__} -> {DATA}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
