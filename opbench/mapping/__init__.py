"""Paddle -> PyTorch API mapping: how to run a Paddle API's PyTorch counterpart on the same inputs.

The OP benchmark and the accuracy checker run a Paddle API and its PyTorch
counterpart on identical inputs; this package says, per Paddle API, what its
signature is (to bind a config line's arguments by name), how to call torch
(a rename or a converter), which values its inputs may hold (domains), and how
many FLOPs it does. The entries live in :mod:`opbench.mapping.table`.

Importing this package imports neither torch nor paddle: torch is imported by
:func:`torch_call`, :func:`to_torch_dtype` and the converters when they run.

Public surface::

    REQUIRED, UNWRITTEN, Param, ApiMapping, MappingMissing, MappingUnsupported, MappingError
    lookup(api) -> ApiMapping          is_mapped(api) -> bool      mapped_apis() -> list[str]
    bind(mapping, args, kwargs) -> {paddle param name: value}   (defaults filled)
    prepare_torch_call(api, args, kwargs) -> a no-argument torch call shaped like Paddle's
    torch_call(api, args, kwargs) -> its result
    api_for_benchmark_op(op) -> "paddle.xxx"
    to_torch_dtype(value) -> torch.dtype
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opbench.mapping.dtypes import dtype_name, to_torch_dtype
from opbench.mapping.spec import (
    IGNORED_PARAMS,
    REQUIRED,
    UNWRITTEN,
    ApiMapping,
    MappingError,
    MappingMissing,
    MappingUnsupported,
    Param,
)
from opbench.mapping.table import BENCHMARK_FAMILIES, TABLE

__all__ = [
    "REQUIRED",
    "UNWRITTEN",
    "ApiMapping",
    "MappingError",
    "MappingMissing",
    "MappingUnsupported",
    "Param",
    "api_for_benchmark_op",
    "bind",
    "dtype_name",
    "is_mapped",
    "lookup",
    "mapped_apis",
    "prepare_torch_call",
    "signature_problem",
    "to_torch_dtype",
    "torch_call",
]

_BY_API: dict[str, ApiMapping] = {e.api: e for e in TABLE}
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


def bind(mapping: ApiMapping | _Signature, args: tuple, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Bind a call's arguments to Paddle's parameter names, in signature order, defaults filled.

    Follows Python's rules for Paddle's signature: positional arguments fill the
    non-keyword-only parameters in order (a ``*args`` parameter takes the rest as a tuple),
    keywords go by name or by one of Paddle's aliases (``input`` for ``x``); ``name=`` and
    ``out=`` are accepted and dropped (the torch side returns its result rather than fill a
    buffer). Raises TypeError naming the API for an unknown keyword, too many positional
    arguments, a parameter given twice, or a missing one.
    """
    api = mapping.api
    positional = [p for p in mapping.params if not p.keyword_only]
    bound: dict[str, Any] = {}
    rest = list(args)
    for p in positional:
        if not rest:
            break
        if p.var:
            bound[p.name] = tuple(rest)
            rest = []
            break
        bound[p.name] = rest.pop(0)
    if rest:
        fixed = len([p for p in positional if not p.var])
        raise TypeError(f"{api}() takes at most {fixed} positional arguments but {len(args)} were given")
    known = set(mapping.param_names)
    for key, value in kwargs.items():
        key = key if key in known else mapping.aliases.get(key, key)
        if key not in known:
            if key in IGNORED_PARAMS:
                continue
            raise TypeError(f"{api}() got an unexpected keyword argument {key!r}")
        if key in bound:
            raise TypeError(f"{api}() got multiple values for argument {key!r}")
        bound[key] = value
    result: dict[str, Any] = {}
    for p in mapping.params:
        if p.name in IGNORED_PARAMS:  # a graph label; an output buffer (the result is the same)
            continue
        if p.name in bound:
            result[p.name] = bound[p.name]
        elif p.required:
            raise TypeError(f"{api}() missing required argument {p.name!r}")
        else:
            result[p.name] = () if p.var else p.default
    return result


@dataclass(frozen=True)
class _Signature:
    """Paddle's signature of an API the table does not map, enough for :func:`bind`."""

    api: str
    params: tuple[Param, ...]
    aliases: Mapping[str, str]

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)


def signature_problem(api: str, args: tuple, kwargs: Mapping[str, Any]) -> str | None:
    """Why a call's arguments do not bind to Paddle's signature of ``api`` (None when they bind).

    Uses the mapping's parameters, else Paddle's recorded signature; an API with neither, or
    one that takes ``**kwargs``, is not checked. Lets a malformed config line be refused
    before anything runs, with Python's own wording.
    """
    from opbench.mapping.signatures import load
    from opbench.mapping.spec import signature_params

    entry = _BY_API.get(api)
    if entry is None:
        recorded = load().get(api)
        if recorded is None or recorded.get("builtin") or any(k == "**" for *_, k in recorded["params"]):
            return None
        entry = _Signature(api, *signature_params(api))
    try:
        bind(entry, args, kwargs)
    except TypeError as e:
        return str(e)
    return None


def torch_call(api: str, args: tuple, kwargs: Mapping[str, Any]) -> Any:
    """Run the PyTorch counterpart of ``api`` on ``args``/``kwargs`` (tensors as torch tensors)."""
    return prepare_torch_call(api, args, kwargs)()


def prepare_torch_call(api: str, args: tuple, kwargs: Mapping[str, Any]) -> Callable[[], Any]:
    """The PyTorch counterpart of ``api`` bound to ``args``/``kwargs``, as a call with no arguments.

    Binding and translating happen here, once, so a benchmark's timed call is only the torch
    call. MappingUnsupported when the call sets a parameter the mapping cannot express;
    MappingError (naming the template or converter) when our binding or converter fails,
    here or when the call runs, as opposed to an error raised by PyTorch's own kernels.
    """
    mapping = lookup(api)
    try:
        bound = bind(mapping, args, kwargs)
    except TypeError as e:
        raise MappingError(api, "bind", e) from e
    if mapping.convert is not None:
        convert = mapping.convert
        return _guarded(mapping, lambda: convert(bound))
    template = _template(mapping)
    used = template.names | set(mapping.ignore)
    for p in mapping.params:
        if p.name in bound and p.name not in used and not _same(bound[p.name], p.default):
            raise MappingUnsupported(
                f"{api}: {p.name}={bound[p.name]!r} has no PyTorch counterpart in this mapping ({mapping.torch})")
    try:
        call = template.bind(bound)
    except (TypeError, AttributeError, KeyError, ValueError) as e:
        raise MappingError(api, mapping.converter_name, e) from e
    return _guarded(mapping, call)


def _same(value: Any, default: Any) -> bool:
    try:
        return bool(value == default) or (value is None and default is REQUIRED)
    except Exception:  # noqa: BLE001 - a tensor compared with a default: not the default
        return False


_TEMPLATES: dict[str, Any] = {}


def _template(mapping: ApiMapping) -> Any:
    from opbench.mapping.template import parse

    t = _TEMPLATES.get(mapping.torch)
    if t is None:
        t = _TEMPLATES[mapping.torch] = parse(mapping.torch)
    return t


_MAPPING_DIR = str(Path(__file__).resolve().parent)
# Exception types that, raised from our own frames, mean our mapping is wrong (a bad argument
# list for the torch call, a converter bug), not that PyTorch's kernel refused the inputs.
_OUR_ERRORS = (TypeError, AttributeError, KeyError, NameError, AssertionError, UnboundLocalError)


def _guarded(mapping: ApiMapping, call: Callable[[], Any]) -> Callable[[], Any]:
    """``call`` with errors of our own making re-raised as MappingError."""

    code = getattr(mapping.convert, "__code__", None)
    ours = (_MAPPING_DIR, code.co_filename) if code is not None else (_MAPPING_DIR,)

    def run() -> Any:
        try:
            return call()
        except _OUR_ERRORS as e:
            if _raised_in(e, ours):
                raise MappingError(mapping.api, mapping.converter_name, e) from e
            raise

    return run


def _raised_in(exc: BaseException, places: tuple[str, ...]) -> bool:
    """True when the innermost Python frame of ``exc`` is in one of ``places`` (C frames have none)."""
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    return last is not None and last.tb_frame.f_code.co_filename.startswith(places)
