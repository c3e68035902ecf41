"""The case model: one API call with symbolic tensor arguments, and how it prints as a config line.

A :class:`Case` is what the benchmark and the accuracy checker both consume. Its
arguments are plain Python values (numbers, strings, ``None``, ``Ellipsis``, lists,
tuples) plus four placeholders: :class:`TensorSpec` (a tensor to be generated),
:class:`DtypeSpec` (a framework dtype object), :class:`TypeSpec` (a Python or NumPy
type object) and :class:`SliceSpec`. Printing lives here, next to the classes it
prints, so that :meth:`Case.to_line` needs no other module; parsing is in
:mod:`opbench.cases.grammar`, which imports this one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
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
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
}
FLOAT_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64"})
# Floats too, but kept out of FLOAT_DTYPES: no input generator or framework path handles them yet.
FLOAT8_DTYPES = frozenset({"float8_e4m3fn", "float8_e5m2"})
COMPLEX_DTYPES = frozenset({"complex64", "complex128"})
INT_DTYPES = frozenset({"uint8", "int8", "int16", "int32", "int64"})

# Type objects a config line may pass, written ``type(int)`` or ``type(numpy.float32)``.
_NUMPY_TYPES = ("bool", "bool_", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
                "complex64", "complex128")
TYPE_NAMES = frozenset({"bool", "int", "float", "complex", "str"} | {f"numpy.{t}" for t in _NUMPY_TYPES})


class ConfigError(ValueError):
    """A config line that cannot become a case; names where and why."""

    def __init__(self, reason: str, line: str = "", lineno: int = 1, col: int = 1, source: str = "<line>"):
        self.reason = reason
        self.line = line
        self.lineno = lineno
        self.col = col
        self.source = source
        super().__init__(f"{source}:{lineno}:{col}: {reason}")

    def __reduce__(self) -> tuple:
        # Keep every field when the error crosses a process boundary (worker pools pickle it).
        return type(self), (self.reason, self.line, self.lineno, self.col, self.source)


class SizeRefused(ConfigError):
    """A well-formed case whose inputs need more memory than allowed: refused, but not malformed."""

    def __init__(self, need_bytes: int, limit_bytes: int, line: str = "", lineno: int = 1, col: int = 1,
                 source: str = "<line>"):
        self.need_bytes = need_bytes
        self.limit_bytes = limit_bytes
        reason = (f"too large: inputs need {need_bytes / 2**30:.2f} GiB, more than the "
                  f"{limit_bytes / 2**30:.2f} GiB limit (set --memory-limit to change it)")
        super().__init__(reason, line, lineno, col, source)

    def __reduce__(self) -> tuple:
        return type(self), (self.need_bytes, self.limit_bytes, self.line, self.lineno, self.col, self.source)


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
    """A dtype object argument, written ``Dtype(float32)`` (PaddleAPITest's ``VarType(float32)`` reads the same)."""

    name: str


@dataclass(frozen=True)
class TypeSpec:
    """A type object argument (``type(int)``, ``type(numpy.float32)``): one of :data:`TYPE_NAMES`, as written."""

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
    """Refuse (:class:`SizeRefused`) a case whose input tensors need more than ``limit_bytes``, before allocating."""
    if limit_bytes is None:
        return
    need = case.nbytes
    if need > limit_bytes:
        raise SizeRefused(need, limit_bytes, line=case.to_line(), lineno=case.lineno, col=1, source=case.source)


# -- printing ------------------------------------------------------------------------------------
def _format_float(v: float) -> str:
    """Finite floats by ``repr`` (exact round trip); the others as PaddleAPITest writes them."""
    if math.isfinite(v):
        return repr(v)
    if math.isnan(v):
        return "math.nan"
    return "math.inf" if v > 0 else "-math.inf"


def _format_str(v: str) -> str:
    """Double-quoted as PaddleAPITest writes strings; ``repr`` when quoting plainly would be ambiguous."""
    if '"' in v or "\\" in v or not v.isprintable():
        return repr(v)
    return f'"{v}"'


def _format_seq(values: Any, opening: str, closing: str, trailing: str) -> str:
    return opening + ", ".join(format_value(e) for e in values) + (trailing if values else "") + closing


# Exact type -> printer.
_FORMATTERS: dict[type, Callable[[Any], str]] = {
    TensorSpec: lambda v: f'Tensor([{", ".join(map(str, v.shape))}],"{v.dtype}")',
    DtypeSpec: lambda v: f"Dtype({v.name})",
    TypeSpec: lambda v: f"type({v.name})",
    SliceSpec: lambda v: f"slice({format_value(v.start)}, {format_value(v.stop)}, {format_value(v.step)})",
    type(None): str,
    type(Ellipsis): lambda v: "Ellipsis",
    bool: str,
    int: str,
    float: _format_float,
    complex: lambda v: f"complex({_format_float(v.real)}, {_format_float(v.imag)})",
    str: _format_str,
    list: lambda v: _format_seq(v, "[", "]", ""),
    tuple: lambda v: _format_seq(v, "tuple(", ")", ", "),
}
_BUILTIN_BASES = (bool, int, float, complex, str, list, tuple)  # bool before int: it is a subclass


def format_value(v: Any) -> str:
    """Print one argument in the config grammar."""
    printer = _FORMATTERS.get(type(v))
    if printer is not None:
        return printer(v)
    base = next((t for t in _BUILTIN_BASES if isinstance(v, t)), None)
    if base is None:
        raise TypeError(f"cannot print {type(v).__name__} in a config line")
    return _FORMATTERS[base](base(v))  # a subclass (numpy.float64, a NamedTuple) prints as its base type


def format_case(case: Case) -> str:
    """Print a case as a config line, PaddleAPITest style (trailing ``, ``)."""
    parts = [format_value(a) for a in case.args] + [f"{k}={format_value(v)}" for k, v in case.kwargs]
    return f"{case.api}(" + "".join(p + ", " for p in parts) + ")"
