"""The config-line grammar (PaddleAPITest's form), parsed with :mod:`ast` and an allow-list.

``paddle.lerp(Tensor([16, 102400],"float32"), Tensor([16, 102400],"float32"), 0.2, )``

Python's parser does the tokenizing; :class:`_Reader` walks the tree and accepts
only literals, the names ``inf``, ``nan`` and ``Ellipsis`` (or ``...``), the
constants ``math.inf``, ``math.nan``, ``math.pi``, ``math.e``, ``math.tau``, and
the tags ``Tensor``, ``Dtype``/``VarType``, ``type``, ``list[...]``, ``tuple(...)``,
``slice(...)`` and ``complex(...)``. Nothing from a config line is ever executed.
Printing is :func:`opbench.cases.model.format_case`, re-exported here.
"""

from __future__ import annotations

import ast
import functools
import math
import re
from collections.abc import Callable
from typing import Any

from opbench.cases.model import (
    DTYPE_SIZES,
    TYPE_NAMES,
    Case,
    ConfigError,
    DtypeSpec,
    SliceSpec,
    TensorSpec,
    TypeSpec,
    format_case,
    format_value,
)

__all__ = ["format_case", "format_value", "parse_line"]

_NAMES: dict[str, Any] = {"inf": math.inf, "nan": math.nan, "Ellipsis": Ellipsis}
_CONSTANTS: dict[str, float] = {"math.inf": math.inf, "math.nan": math.nan, "math.pi": math.pi,
                                "math.e": math.e, "math.tau": math.tau}
_SIGNS: dict[type, Callable[[Any], Any]] = {ast.USub: lambda v: -v, ast.UAdd: lambda v: v}
_COMPLEX_OPS: dict[type, Callable[[Any, Any], Any]] = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b}

# The longest dotted API name accepted (PaddleAPITest's longest has 6 parts); a longer one is refused
# explicitly rather than by whatever recursion limit the process happens to run under.
MAX_API_PARTS = 16

# PaddleAPITest writes an empty list as ``list[]``, which is not Python: it becomes ``list()``
# (same length, so columns stay right), outside string literals only.
_EMPTY_SUBSCRIPT = re.compile(r"""("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|\b(list|tuple)\[(\s*)\]""")
_MAYBE_EMPTY_SUBSCRIPT = re.compile(r"\[\s*\]")


def parse_line(line: str, *, lineno: int = 1, source: str = "<line>") -> Case:
    """Parse one config line into a :class:`Case`; raise :class:`ConfigError` naming line, column, reason."""
    text = line.strip()
    lead = len(line) - len(line.lstrip())
    if not text:
        raise ConfigError("empty line", line, lineno, 1, source)
    if "\0" in text:
        raise ConfigError("NUL byte in line (not text)", line, lineno, text.index("\0") + 1 + lead, source)
    try:
        tree = ast.parse(_fill_empty_subscripts(text), mode="eval")
    except SyntaxError as e:
        col = (e.offset or 1) + lead
        raise ConfigError(f"syntax error: {e.msg}", line, lineno, col, source) from None
    except (RecursionError, MemoryError):  # CPython's parser gives up on very deep expressions
        raise ConfigError("nested too deeply", line, lineno, 1 + lead, source) from None
    try:
        return _Reader(line, lineno, source, lead).case(tree.body)
    except RecursionError:
        raise ConfigError("nested too deeply", line, lineno, 1 + lead, source) from None


def _fill_empty_subscripts(text: str) -> str:
    """``list[]`` -> ``list()`` outside strings, so Python's parser accepts PaddleAPITest's empty lists."""
    if _MAYBE_EMPTY_SUBSCRIPT.search(text) is None:
        return text
    return _EMPTY_SUBSCRIPT.sub(lambda m: m.group(1) or f"{m.group(2)}({m.group(3)})", text)


def _dotted_name(node: ast.expr) -> str | None:
    """``a.b.c`` as text, or None when the node is not a chain of names."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _is_real(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


@functools.lru_cache(maxsize=1024)
def _nan_complex(real: str, imag: str) -> complex:
    return complex(float(real), float(imag))


def _canonical(v: Any) -> Any:
    """One shared object per NaN value: NaN != NaN, but tuples compare identity first, so equal lines stay equal."""
    if v != v:  # only NaN differs from itself
        return math.nan if isinstance(v, float) else _nan_complex(repr(v.real), repr(v.imag))
    return v


class _Reader:
    """Turns an allow-listed expression tree into case values; anything else is a ConfigError."""

    __slots__ = ("lead", "line", "lineno", "source")

    def __init__(self, line: str, lineno: int, source: str, lead: int):
        self.line, self.lineno, self.source, self.lead = line, lineno, source, lead

    def fail(self, node: ast.AST, reason: str) -> ConfigError:
        col = getattr(node, "col_offset", 0) + 1 + self.lead
        return ConfigError(reason, self.line, self.lineno, col, self.source)

    def case(self, node: ast.expr) -> Case:
        if not isinstance(node, ast.Call):
            raise self.fail(node, "a case is one API call, like paddle.add(Tensor([2],\"float32\"), ...)")
        api = _dotted_name(node.func)
        if api is not None and api.count(".") >= MAX_API_PARTS:
            raise self.fail(node.func, f"nested too deeply: the API name has {api.count('.') + 1} dotted parts "
                                       f"(at most {MAX_API_PARTS})")
        if api is None or "." not in api:
            raise self.fail(node.func, "the called API must be a dotted name such as paddle.add")
        args = tuple(self.value(a) for a in node.args)
        kwargs = []
        for kw in node.keywords:
            if kw.arg is None:
                raise self.fail(kw.value, "'**' arguments are not allowed")
            if any(kw.arg == k for k, _ in kwargs):
                raise self.fail(kw.value, f"keyword argument '{kw.arg}' given twice")
            kwargs.append((kw.arg, self.value(kw.value)))
        return Case(api, args, tuple(kwargs), source=self.source, lineno=self.lineno)

    def value(self, node: ast.expr) -> Any:
        reader = _VALUE_READERS.get(type(node))
        if reader is None:
            raise self.fail(node, f"unsupported expression ({type(node).__name__})")
        return reader(self, node)

    def constant(self, node: ast.Constant) -> Any:
        if isinstance(node.value, bytes):
            raise self.fail(node, f"unsupported literal {node.value!r}")
        return node.value  # ``...`` is Ellipsis itself

    def name(self, node: ast.Name) -> Any:
        if node.id in _NAMES:
            return _NAMES[node.id]
        raise self.fail(node, f"unknown name '{node.id}' (strings need quotes)")

    def attribute(self, node: ast.Attribute) -> float:
        name = _dotted_name(node)
        if name in _CONSTANTS:
            return _CONSTANTS[name]
        raise self.fail(node, f"unknown constant '{name or node.attr}' (known: {', '.join(_CONSTANTS)})")

    def unary(self, node: ast.UnaryOp) -> Any:
        sign = _SIGNS.get(type(node.op))
        if sign is None:
            raise self.fail(node, f"unsupported expression ({type(node.op).__name__})")
        v = self.value(node.operand)
        if isinstance(v, bool) or not isinstance(v, (int, float, complex)):
            raise self.fail(node, "a sign applies to numbers only")
        return _canonical(sign(v))

    def binop(self, node: ast.BinOp) -> complex:
        op = _COMPLEX_OPS.get(type(node.op))
        if op is None:
            raise self.fail(node, "arithmetic is not allowed (write the value); only complex literals such as 1+2j")
        left, right = self.value(node.left), self.value(node.right)
        if not (_is_real(left) and isinstance(right, complex)):
            raise self.fail(node, "arithmetic is not allowed; only complex literals such as 1+2j")
        return _canonical(op(left, right))

    def list_display(self, node: ast.List) -> list:
        return [self.value(e) for e in node.elts]

    def tuple_display(self, node: ast.Tuple) -> tuple:
        return tuple(self.value(e) for e in node.elts)

    def subscript(self, node: ast.Subscript) -> Any:
        if not (isinstance(node.value, ast.Name) and node.value.id in ("list", "tuple")):
            raise self.fail(node, "only list[...] and tuple[...] may be subscripted")
        inner = node.slice
        items = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        values = [self.value(e) for e in items]
        return values if node.value.id == "list" else tuple(values)

    def tag(self, node: ast.Call) -> Any:
        if not isinstance(node.func, ast.Name):
            raise self.fail(node, "nested API calls are not allowed in arguments")
        name = node.func.id
        handler = _TAGS.get(name)
        if handler is None:
            raise self.fail(node, f"unknown tag '{name}' (expected {', '.join(_TAGS)})")
        if node.keywords and name != "Tensor":
            raise self.fail(node, f"{name}(...) takes no keyword arguments")
        return handler(self, node)

    def tensor(self, node: ast.Call) -> TensorSpec:
        params = list(node.args) + [kw.value for kw in node.keywords]
        if len(params) != 2:
            raise self.fail(node, 'Tensor takes a shape and a dtype: Tensor([2, 3],"float32")')
        shape = self.value(params[0])
        if not isinstance(shape, (list, tuple)) or not all(
            isinstance(d, int) and not isinstance(d, bool) for d in shape
        ):
            raise self.fail(params[0], f"a Tensor shape is a list of integers, got {shape!r}")
        if any(d < 0 for d in shape):
            raise self.fail(params[0], f"negative dimension in Tensor shape {list(shape)}")
        return TensorSpec(tuple(shape), self.dtype_name(params[1]))

    def dtype_name(self, node: ast.expr) -> str:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            name = node.value
        elif isinstance(node, ast.Name):
            name = node.id
        elif isinstance(node, ast.Attribute):
            name = node.attr  # paddle.float32 -> float32
        else:
            raise self.fail(node, "a dtype is a name such as float32")
        name = name.removeprefix("paddle.")
        if name not in DTYPE_SIZES:
            raise self.fail(node, f"unknown dtype '{name}' (known: {', '.join(DTYPE_SIZES)})")
        return name

    def dtype_tag(self, node: ast.Call) -> DtypeSpec:
        if len(node.args) != 1:
            raise self.fail(node, f"{node.func.id} takes one dtype name: {node.func.id}(float32)")
        return DtypeSpec(self.dtype_name(node.args[0]))

    def type_tag(self, node: ast.Call) -> TypeSpec:
        name = _dotted_name(node.args[0]) if len(node.args) == 1 else None
        if name is None:
            raise self.fail(node, "type takes one type name: type(int), type(numpy.float32)")
        if name not in TYPE_NAMES:
            raise self.fail(node.args[0], f"unknown type '{name}' (known: {', '.join(sorted(TYPE_NAMES))})")
        return TypeSpec(name)

    def slice_tag(self, node: ast.Call) -> SliceSpec:
        if not 1 <= len(node.args) <= 3:
            raise self.fail(node, "slice takes one to three arguments")
        parts = [self.value(a) for a in node.args]
        for a, p in zip(node.args, parts, strict=True):
            if p is not None and (not isinstance(p, int) or isinstance(p, bool)):
                raise self.fail(a, f"slice bounds are integers or None, got {p!r}")
        if len(parts) == 1:
            parts = [None, parts[0]]
        return SliceSpec(*parts)

    def complex_tag(self, node: ast.Call) -> complex:
        parts = [self.value(a) for a in node.args]
        if not 1 <= len(parts) <= 2 or not all(_is_real(p) for p in parts):
            raise self.fail(node, "complex takes one or two real numbers")
        return _canonical(complex(*parts))

    def seq_tag(self, node: ast.Call) -> Any:
        values = [self.value(a) for a in node.args]
        return values if node.func.id == "list" else tuple(values)


# Expression node type -> reader; a node type missing here is refused.
_VALUE_READERS: dict[type, Callable[[_Reader, Any], Any]] = {
    ast.Constant: _Reader.constant,
    ast.Name: _Reader.name,
    ast.Attribute: _Reader.attribute,
    ast.UnaryOp: _Reader.unary,
    ast.BinOp: _Reader.binop,
    ast.List: _Reader.list_display,
    ast.Tuple: _Reader.tuple_display,
    ast.Subscript: _Reader.subscript,
    ast.Call: _Reader.tag,
}

# Tag name -> reader of ``Tag(...)``.
_TAGS: dict[str, Callable[[_Reader, ast.Call], Any]] = {
    "Tensor": _Reader.tensor,
    "Dtype": _Reader.dtype_tag,
    "VarType": _Reader.dtype_tag,
    "type": _Reader.type_tag,
    "list": _Reader.seq_tag,
    "tuple": _Reader.seq_tag,
    "slice": _Reader.slice_tag,
    "complex": _Reader.complex_tag,
}
