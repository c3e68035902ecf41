"""The case model: one API call with symbolic tensor arguments.

A :class:`Case` is what the benchmark and the accuracy checker both consume. Its
arguments are plain Python values (numbers, strings, ``None``, lists, tuples)
plus three placeholders: :class:`TensorSpec` (a tensor to be generated),
:class:`DtypeSpec` (a framework dtype object) and :class:`SliceSpec`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

# Element sizes of the dtypes a case may name; the names are Paddle's.
DTYPE_SIZES: dict[str, int] = {
    "bool": 1,
    "uint8": 1,
    "int8": 1,
    "int16": 2,
    "int32": 4,
    "int64": 8,
    "float16": 2,
    "bfloat16": 2,
    "float32": 4,
    "float64": 8,
    "complex64": 8,
    "complex128": 16,
}
FLOAT_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64"})
COMPLEX_DTYPES = frozenset({"complex64", "complex128"})
INT_DTYPES = frozenset({"uint8", "int8", "int16", "int32", "int64"})


class ConfigError(ValueError):
    """A config line that cannot become a case; names where and why."""

    def __init__(self, reason: str, line: str = "", lineno: int = 1, col: int = 1, source: str = "<line>"):
        self.reason = reason
        self.line = line
        self.lineno = lineno
        self.col = col
        self.source = source
        super().__init__(f"{source}:{lineno}:{col}: {reason}")


@dataclass(frozen=True)
class TensorSpec:
    """A tensor argument: its shape and Paddle dtype name; values come from :mod:`opbench.inputs`."""

    shape: tuple[int, ...]
    dtype: str

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.numel * DTYPE_SIZES[self.dtype]


@dataclass(frozen=True)
class DtypeSpec:
    """A dtype object argument, written ``Dtype(float32)``."""

    name: str


@dataclass(frozen=True)
class SliceSpec:
    """A ``slice(start, stop, step)`` argument."""

    start: int | None = None
    stop: int | None = None
    step: int | None = None


@dataclass(frozen=True)
class Case:
    """One API call: ``api(*args, **kwargs)``, with where it came from for error messages."""

    api: str
    args: tuple[Any, ...] = ()
    kwargs: tuple[tuple[str, Any], ...] = ()
    source: str = field(default="<line>", compare=False)
    lineno: int = field(default=1, compare=False)

    @property
    def kwargs_dict(self) -> dict[str, Any]:
        return dict(self.kwargs)

    def to_line(self) -> str:
        """The normalized config line; parsing it gives back an equal case."""
        from opbench.cases.grammar import format_case

        return format_case(self)

    def tensors(self) -> Iterator[TensorSpec]:
        """Every tensor spec in the arguments, in order, nested ones included."""
        yield from _iter_tensors(self.args)
        yield from _iter_tensors([v for _, v in self.kwargs])

    @property
    def nbytes(self) -> int:
        """Bytes the case's input tensors take."""
        return sum(t.nbytes for t in self.tensors())

    @property
    def where(self) -> str:
        return f"{self.source}:{self.lineno}"

    def __str__(self) -> str:
        return self.to_line()


def _iter_tensors(values: Any) -> Iterator[TensorSpec]:
    for v in values:
        if isinstance(v, TensorSpec):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from _iter_tensors(v)


def check_memory(case: Case, limit_bytes: int | None) -> None:
    """Refuse a case whose input tensors need more than ``limit_bytes``, before anything is allocated."""
    if limit_bytes is None:
        return
    need = case.nbytes
    if need > limit_bytes:
        raise ConfigError(
            f"inputs need {need / 2**30:.2f} GiB, more than the {limit_bytes / 2**30:.2f} GiB limit "
            "(set --memory-limit to change it)",
            line=case.to_line(),
            lineno=case.lineno,
            col=1,
            source=case.source,
        )
