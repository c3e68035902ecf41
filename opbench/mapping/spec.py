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


class _Required:
    """Type of :data:`REQUIRED`; one instance, printed as ``REQUIRED``."""

    _instance: _Required | None = None

    def __new__(cls) -> _Required:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "REQUIRED"

    def __reduce__(self) -> str:
        return "REQUIRED"


#: Default of a parameter the caller must pass (``inspect.Parameter.empty`` in Paddle's signature).
REQUIRED: Final = _Required()

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class Param:
    """One parameter of a Paddle API: its name and default (``REQUIRED`` when it has none).

    ``keyword_only`` marks parameters after ``*`` in Paddle's signature (``alpha`` of
    ``paddle.add``): :func:`opbench.mapping.bind` refuses them positionally, as Paddle does.
    """

    name: str
    default: Any = REQUIRED
    keyword_only: bool = False

    @property
    def required(self) -> bool:
        """True when the caller must pass this parameter."""
        return self.default is REQUIRED


@dataclass(frozen=True)
class ApiMapping:
    """How to run a Paddle API's PyTorch counterpart, and what its inputs may hold.

    Two ways to write the torch side: a plain rename (``torch`` names a dotted torch
    callable, ``rename`` maps Paddle parameter names to its keyword names, ``None``
    dropping one), or ``convert``, a function from :mod:`opbench.mapping.converters`
    that gets the bound Paddle-named arguments (tensors already torch tensors) and
    returns the result shaped and typed like Paddle's.

    ``params`` is Paddle's signature in order, as ``inspect.signature`` reports it on
    paddle 3.3.1, without ``name`` (a graph-naming label) and ``out`` (an output buffer):
    neither changes the result. ``domains`` says which values a tensor parameter may
    hold (positive for ``log``, indices for ``gather``); ``nondiff`` lists tensor
    parameters that never take a gradient; ``benchmark_op`` is the ``op`` name used by
    PaddlePaddle/benchmark's JSON configs; ``flops`` counts floating-point operations
    from input shapes for compute-bound ops (None: the op is memory-bound).
    """

    api: str
    params: tuple[Param, ...]
    torch: str | None = None
    rename: Mapping[str, str | None] = field(default_factory=lambda: _EMPTY)
    convert: Callable[[dict[str, Any]], Any] | None = None
    domains: Mapping[str, Domain] = field(default_factory=lambda: _EMPTY)
    nondiff: tuple[str, ...] = ()
    benchmark_op: str | None = None
    flops: Callable[[dict[str, tuple[int, ...]]], float] | None = None

    def __post_init__(self) -> None:
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.api}: duplicate parameter names {names}")
        if (self.torch is None) == (self.convert is None):
            raise ValueError(f"{self.api}: give exactly one of `torch` (a rename) or `convert`")
        for key in (*self.rename, *self.domains, *self.nondiff):
            if key not in names:
                raise ValueError(f"{self.api}: {key!r} is not one of its parameters {names}")
        # Freeze the mappings so a shared table cannot be edited by a caller.
        object.__setattr__(self, "rename", MappingProxyType(dict(self.rename)))
        object.__setattr__(self, "domains", MappingProxyType(dict(self.domains)))

    @property
    def param_names(self) -> tuple[str, ...]:
        """Parameter names in signature order."""
        return tuple(p.name for p in self.params)


class MappingMissing(LookupError):
    """Raised for a Paddle API (or benchmark op) that has no PyTorch mapping."""
