"""The data types of the Paddle -> PyTorch mapping table.

Kept apart from :mod:`opbench.mapping.table` so the table, the converters and
the public functions can all import them without a cycle. Nothing here imports
torch or paddle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from opbench.domains import Domain


class _Marker:
    """A named singleton (:data:`REQUIRED`, :data:`UNWRITTEN`): printed and pickled as its module-level name."""

    _instances: dict[str, _Marker] = {}

    def __new__(cls, name: str) -> _Marker:
        if name not in cls._instances:
            marker = super().__new__(cls)
            marker.name = name
            cls._instances[name] = marker
        return cls._instances[name]

    name: str

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self) -> str:
        return self.name


#: Default of a parameter the caller must pass (``inspect.Parameter.empty`` in Paddle's signature).
REQUIRED: Final = _Marker("REQUIRED")
#: A converter's value for an output the Paddle API leaves unwritten on this call (its memory's old contents):
#: the accuracy checker records it as not compared, whatever the subject holds there.
UNWRITTEN: Final = _Marker("UNWRITTEN")

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class Param:
    """One parameter of a Paddle API: its name and default (``REQUIRED`` when it has none).

    ``keyword_only`` marks parameters after ``*`` in Paddle's signature (``alpha`` of
    ``paddle.add``): :func:`opbench.mapping.bind` refuses them positionally, as Paddle does.
    ``var`` marks ``*args`` (``paddle.Tensor.reshape(*shape)``): it takes every remaining
    positional argument, as a tuple.
    """

    name: str
    default: Any = REQUIRED
    keyword_only: bool = False
    var: bool = False

    @property
    def required(self) -> bool:
        """True when the caller must pass this parameter."""
        return self.default is REQUIRED and not self.var


#: Paddle parameters that never change an API's result: a graph label and an output buffer.
IGNORED_PARAMS = frozenset({"name", "out"})


@dataclass(frozen=True)
class ApiMapping:
    """How to run a Paddle API's PyTorch counterpart, and what its inputs may hold.

    Two ways to write the torch side: ``torch``, a call template such as
    ``"torch.sum(x, dim=axes(axis), keepdim=keepdim)"`` (see :mod:`opbench.mapping.template`),
    or ``convert``, a function from :mod:`opbench.mapping.converters` that gets the bound
    Paddle-named arguments (tensors already torch tensors) and returns the result shaped and
    typed like Paddle's.

    ``params`` is Paddle's signature in order; left empty it is read from the recorded
    signatures of paddle 3.3.1 (:mod:`opbench.mapping.signatures`). A template entry refuses
    a call that gives a parameter the template does not read a value other than its default
    (it would be silently ignored), unless the parameter is in ``ignore``. ``domains`` says
    which values a parameter may hold; ``nondiff`` lists tensor parameters that never take a
    gradient; ``known`` documents a difference from PyTorch that the verification test
    accepts; ``inplace`` marks an API that writes into its first argument; ``random`` one
    whose values are drawn at random (dropout, bernoulli), so only shapes and dtypes can be
    compared (a function of the bound arguments when only some calls are random: dropout with
    ``p > 0`` in training); ``backward=False`` one whose gradient is not checked (a framework
    crashes in it); ``benchmark_op`` is PaddlePaddle/benchmark's op name; ``flops`` counts
    floating-point operations from input shapes (None: memory-bound).
    """

    api: str
    torch: str | None = None
    convert: Callable[[dict[str, Any]], Any] | None = None
    params: tuple[Param, ...] = ()
    aliases: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    ignore: tuple[str, ...] = ()
    domains: Mapping[str, Domain] = field(default_factory=lambda: _EMPTY)
    nondiff: tuple[str, ...] = ()
    known: str = ""
    inplace: bool = False
    random: bool | Callable[[dict[str, Any]], bool] = False
    backward: bool = True
    benchmark_op: str | None = None
    flops: Callable[[dict[str, tuple[int, ...]]], float] | None = None

    def __post_init__(self) -> None:
        if not self.params:
            params, aliases = signature_params(self.api)
            object.__setattr__(self, "params", params)
            object.__setattr__(self, "aliases", {**aliases, **self.aliases})
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.api}: duplicate parameter names {names}")
        if (self.torch is None) == (self.convert is None):
            raise ValueError(f"{self.api}: give exactly one of `torch` (a call template) or `convert`")
        for key in (*self.domains, *self.nondiff, *self.ignore):
            if key not in names:
                raise ValueError(f"{self.api}: {key!r} is not one of its parameters {names}")
        if self.torch is not None:
            from opbench.mapping.template import parse

            unknown = parse(self.torch).names - set(names)
            if unknown:
                raise ValueError(f"{self.api}: template reads {sorted(unknown)}, not parameters of {names}")
        # Freeze the mappings so a shared table cannot be edited by a caller.
        object.__setattr__(self, "aliases", MappingProxyType(dict(self.aliases)))
        object.__setattr__(self, "domains", MappingProxyType(dict(self.domains)))

    @property
    def param_names(self) -> tuple[str, ...]:
        """Parameter names in signature order."""
        return tuple(p.name for p in self.params)

    def is_random(self, bound: Mapping[str, Any]) -> bool:
        """Whether this call's values are random (``bound``: the call's arguments by Paddle name)."""
        return self.random(bound) if callable(self.random) else bool(self.random)

    @property
    def converter_name(self) -> str:
        """What runs the torch side, for error messages: the template or the converter's name."""
        if self.torch is not None:
            return self.torch
        return f"{self.convert.__module__.removeprefix('opbench.mapping.')}.{self.convert.__name__}"


def signature_params(api: str) -> tuple[tuple[Param, ...], dict[str, str]]:
    """Paddle's recorded signature of ``api`` as Params and its aliases.

    A positional ``name`` stays (config lines pass it positionally, as ``None``) and
    :func:`opbench.mapping.bind` drops its value; a keyword-only ``out`` is left out.
    """
    from opbench.mapping.signatures import decode_default, load

    entry = load().get(api)
    if entry is None or entry.get("builtin"):
        raise ValueError(f"{api}: no recorded Paddle signature; give `params` explicitly")
    params = tuple(
        Param(name, decode_default(default), keyword_only=kind == "k", var=kind == "*")
        for name, default, kind in entry["params"]
        if kind != "**" and not (name in IGNORED_PARAMS and kind == "k")
    )
    return params, dict(entry.get("aliases", {}))


class MappingMissing(LookupError):
    """Raised for a Paddle API (or benchmark op) that has no PyTorch mapping."""


class MappingUnsupported(LookupError):
    """The API is mapped, but not for this call's arguments (a value the torch side cannot express)."""


class MappingError(Exception):
    """The mapping itself failed on a call: our binding or converter, not PyTorch's kernel, raised."""

    def __init__(self, api: str, converter: str, exc: BaseException) -> None:
        super().__init__(f"{api} -> {converter}: {type(exc).__name__}: {exc}")
        self.api, self.converter, self.exc = api, converter, exc
