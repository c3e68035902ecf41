"""Paddle -> PyTorch API mapping: how to run a Paddle API's PyTorch counterpart on the same inputs.

The OP benchmark and the accuracy checker run a Paddle API and its PyTorch
counterpart on identical inputs; this package says, per Paddle API, what its
signature is (to bind a config line's arguments by name), how to call torch
(a rename or a converter), which values its inputs may hold (domains), and how
many FLOPs it does. The entries live in :mod:`opbench.mapping.table`.

Importing this package imports neither torch nor paddle: torch is imported by
:func:`torch_call`, :func:`to_torch_dtype` and the converters when they run.

Public surface::

    REQUIRED, Param, ApiMapping, MappingMissing
    lookup(api) -> ApiMapping          is_mapped(api) -> bool      mapped_apis() -> list[str]
    bind(mapping, args, kwargs) -> {paddle param name: value}   (defaults filled)
    torch_call(api, args, kwargs) -> torch result shaped like Paddle's
    api_for_benchmark_op(op) -> "paddle.xxx"
    to_torch_dtype(value) -> torch.dtype
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from opbench.mapping.dtypes import dtype_name, to_torch_dtype
from opbench.mapping.spec import REQUIRED, ApiMapping, MappingMissing, Param
from opbench.mapping.table import BENCHMARK_FAMILIES, TABLE

__all__ = [
    "REQUIRED",
    "ApiMapping",
    "MappingMissing",
    "Param",
    "api_for_benchmark_op",
    "bind",
    "dtype_name",
    "is_mapped",
    "lookup",
    "mapped_apis",
    "to_torch_dtype",
    "prepare_torch_call",
    "torch_call",
]

# Paddle keywords that every API accepts and that never change the result: accepted, dropped.
_IGNORED_KWARGS = frozenset({"name"})


def _index(entries: list[ApiMapping]) -> dict[str, ApiMapping]:
    by_api: dict[str, ApiMapping] = {}
    for entry in entries:
        if entry.api in by_api:
            raise ValueError(f"duplicate mapping for {entry.api}")
        by_api[entry.api] = entry
    return by_api


_BY_API: dict[str, ApiMapping] = _index(TABLE)
_BY_BENCHMARK_OP: dict[str, str] = {
    **{e.benchmark_op: e.api for e in TABLE if e.benchmark_op is not None},
    **BENCHMARK_FAMILIES,
}


def lookup(api: str) -> ApiMapping:
    """The mapping of Paddle API ``api`` (e.g. ``"paddle.nn.functional.softmax"``); MappingMissing if none."""
    try:
        return _BY_API[api]
    except KeyError:
        raise MappingMissing(f"no PyTorch mapping for {api}") from None


def is_mapped(api: str) -> bool:
    """True when ``api`` has a PyTorch mapping."""
    return api in _BY_API


def mapped_apis() -> list[str]:
    """Every mapped Paddle API name, sorted."""
    return sorted(_BY_API)


def api_for_benchmark_op(op: str) -> str:
    """The Paddle API for a PaddlePaddle/benchmark op name (``"lerp"`` -> ``"paddle.lerp"``).

    Config families shared by several APIs (``elementwise``, ``reduce``, ...) give the API the
    benchmark runs by default. MappingMissing if ``op`` is unknown.
    """
    try:
        return _BY_BENCHMARK_OP[op]
    except KeyError:
        raise MappingMissing(f"no PyTorch mapping for benchmark op {op!r}") from None


def bind(mapping: ApiMapping, args: tuple, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Bind a call's arguments to Paddle's parameter names, in signature order, defaults filled.

    Follows Python's rules for Paddle's signature: positional arguments fill the
    non-keyword-only parameters in order, keywords go by name, ``name=`` is accepted and
    dropped. Raises TypeError naming the API for an unknown keyword, too many positional
    arguments, a parameter given twice, or a missing required parameter.
    """
    api = mapping.api
    positional = [p for p in mapping.params if not p.keyword_only]
    if len(args) > len(positional):
        raise TypeError(
            f"{api}() takes at most {len(positional)} positional arguments but {len(args)} were given"
        )
    bound: dict[str, Any] = {p.name: value for p, value in zip(positional, args, strict=False)}
    known = set(mapping.param_names)
    for key, value in kwargs.items():
        if key in _IGNORED_KWARGS and key not in known:
            continue
        if key not in known:
            raise TypeError(f"{api}() got an unexpected keyword argument {key!r}")
        if key in bound:
            raise TypeError(f"{api}() got multiple values for argument {key!r}")
        bound[key] = value
    result: dict[str, Any] = {}
    for p in mapping.params:
        if p.name in bound:
            result[p.name] = bound[p.name]
        elif p.required:
            raise TypeError(f"{api}() missing required argument {p.name!r}")
        else:
            result[p.name] = p.default
    return result


def _resolve(dotted: str) -> Any:
    """The object at a dotted path such as ``torch.nn.functional.softmax``."""
    module_name, _, attr = dotted.rpartition(".")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError):
        # e.g. "torch.Tensor.add": import the longest importable prefix, getattr the rest.
        parts = dotted.split(".")
        obj = importlib.import_module(parts[0])
        for part in parts[1:]:
            obj = getattr(obj, part)
        return obj


def torch_call(api: str, args: tuple, kwargs: Mapping[str, Any]) -> Any:
    """Run the PyTorch counterpart of ``api`` on ``args``/``kwargs`` (tensors as torch tensors)."""
    return prepare_torch_call(api, args, kwargs)()


def prepare_torch_call(api: str, args: tuple, kwargs: Mapping[str, Any]) -> Callable[[], Any]:
    """The PyTorch counterpart of ``api`` bound to ``args``/``kwargs``, as a call with no arguments.

    Binding and translating happen here, once, so a benchmark's timed call is only the torch call.
    A converter gets the bound arguments; a rename passes each bound argument as the torch keyword
    ``rename`` gives (its own name by default, dropped when None), a ``dtype`` argument turned into a
    ``torch.dtype`` first.
    """
    mapping = lookup(api)
    bound = bind(mapping, args, kwargs)
    if mapping.convert is not None:
        convert = mapping.convert
        return lambda: convert(bound)
    assert mapping.torch is not None  # ApiMapping guarantees one of the two
    fn = _resolve(mapping.torch)
    torch_kwargs: dict[str, Any] = {}
    for name, value in bound.items():
        torch_name = mapping.rename.get(name, name)
        if torch_name is None:
            continue
        if name == "dtype" and value is not None:
            value = to_torch_dtype(value)
        torch_kwargs[torch_name] = value
    return lambda: fn(**torch_kwargs)
