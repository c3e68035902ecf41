"""The config-line grammar (PaddleAPITest's form), parsed with :mod:`ast` and an allow-list.

``paddle.lerp(Tensor([16, 102400],"float32"), Tensor([16, 102400],"float32"), 0.2, )``

Python's parser does the tokenizing; :class:`_Reader` walks the tree and accepts
only literals and the tags ``Tensor``, ``Dtype``, ``list[...]``, ``tuple(...)``,
``slice(...)`` and ``complex(...)``. Nothing from a config line is ever executed.
"""

from __future__ import annotations

import ast
import math
from typing import Any

from opbench.cases.model import DTYPE_SIZES, Case, ConfigError, DtypeSpec, SliceSpec, TensorSpec

_NAMED_FLOATS = {"inf": math.inf, "nan": math.nan}


def parse_line(line: str, *, lineno: int = 1, source: str = "<line>") -> Case:
    """Parse one config line into a :class:`Case`; raise :class:`ConfigError` naming line, column, reason."""
    text = line.strip()
    lead = len(line) - len(line.lstrip())
    if not text:
        raise ConfigError("empty line", line, lineno, 1, source)
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as e:
        col = (e.offset or 1) + lead
        raise ConfigError(f"syntax error: {e.msg}", line, lineno, col, source) from None
    return _Reader(line, lineno, source, lead).case(tree.body)


class _Reader:
    """Turns an allow-listed expression tree into case values; anything else is a ConfigError."""

    def __init__(self, line: str, lineno: int, source: str, lead: int):
        self.line, self.lineno, self.source, self.lead = line, lineno, source, lead

    def fail(self, node: ast.AST, reason: str) -> ConfigError:
        col = getattr(node, "col_offset", 0) + 1 + self.lead
        return ConfigError(reason, self.line, self.lineno, col, self.source)

    def case(self, node: ast.expr) -> Case:
        if not isinstance(node, ast.Call):
            raise self.fail(node, "a case is one API call, like paddle.add(Tensor([2],\"float32\"), ...)")
        api = self.dotted(node.func)
        args = tuple(self.value(a) for a in node.args)
        kwargs = []
        for kw in node.keywords:
            if kw.arg is None:
                raise self.fail(kw.value, "'**' arguments are not allowed")
            kwargs.append((kw.arg, self.value(kw.value)))
        return Case(api, args, tuple(kwargs), source=self.source, lineno=self.lineno)

    def dotted(self, node: ast.expr) -> str:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or not parts:
            raise self.fail(node, "the called API must be a dotted name such as paddle.add")
        parts.append(node.id)
        return ".".join(reversed(parts))

    def value(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bytes) or node.value is Ellipsis:
                raise self.fail(node, f"unsupported literal {node.value!r}")
            return node.value
        if isinstance(node, ast.Name):
            if node.id in _NAMED_FLOATS:
                return _NAMED_FLOATS[node.id]
            raise self.fail(node, f"unknown name '{node.id}' (strings need quotes)")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = self.value(node.operand)
            if isinstance(v, bool) or not isinstance(v, (int, float, complex)):
                raise self.fail(node, "a sign applies to numbers only")
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            return self.complex_literal(node)
        if isinstance(node, ast.List):
            return [self.value(e) for e in node.elts]
        if isinstance(node, ast.Tuple):
            return tuple(self.value(e) for e in node.elts)
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.Call):
            return self.tag(node)
        raise self.fail(node, f"unsupported expression ({type(node).__name__})")

    def complex_literal(self, node: ast.BinOp) -> complex:
        left, right = self.value(node.left), self.value(node.right)
        ok = isinstance(left, (int, float)) and not isinstance(left, bool) and isinstance(right, complex)
        if not ok:
            raise self.fail(node, "arithmetic is not allowed; only complex literals such as 1+2j")
        return left + right if isinstance(node.op, ast.Add) else left - right

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
        handler = {
            "Tensor": self.tensor,
            "Dtype": self.dtype_tag,
            "slice": self.slice_tag,
            "complex": self.complex_tag,
            "tuple": self.seq_tag,
            "list": self.seq_tag,
        }.get(name)
        if handler is None:
            raise self.fail(node, f"unknown tag '{name}' (expected Tensor, Dtype, list, tuple, slice, complex)")
        if node.keywords and name != "Tensor":
            raise self.fail(node, f"{name}(...) takes no keyword arguments")
        return handler(node)

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
        dtype = self.dtype_name(params[1])
        return TensorSpec(tuple(shape), dtype)

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
            raise self.fail(node, "Dtype takes one dtype name: Dtype(float32)")
        return DtypeSpec(self.dtype_name(node.args[0]))

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
        if not 1 <= len(parts) <= 2 or not all(
            isinstance(p, (int, float)) and not isinstance(p, bool) for p in parts
        ):
            raise self.fail(node, "complex takes one or two real numbers")
        return complex(*parts)

    def seq_tag(self, node: ast.Call) -> Any:
        values = [self.value(a) for a in node.args]
        return values if node.func.id == "list" else tuple(values)


def format_value(v: Any) -> str:
    """Print one argument in the config grammar."""
    if isinstance(v, TensorSpec):
        return f'Tensor([{", ".join(map(str, v.shape))}],"{v.dtype}")'
    if isinstance(v, DtypeSpec):
        return f"Dtype({v.name})"
    if isinstance(v, SliceSpec):
        return f"slice({format_value(v.start)}, {format_value(v.stop)}, {format_value(v.step)})"
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, complex):
        return f"complex({format_value(v.real)}, {format_value(v.imag)})"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        if '"' in v or "\\" in v or not v.isprintable():
            return repr(v)
        return f'"{v}"'
    if isinstance(v, list):
        return "[" + ", ".join(format_value(e) for e in v) + "]"
    if isinstance(v, tuple):
        return "tuple(" + "".join(format_value(e) + ", " for e in v) + ")"
    raise TypeError(f"cannot print {type(v).__name__} in a config line")


def format_case(case: Case) -> str:
    """Print a case as a config line, PaddleAPITest style (trailing ``, ``)."""
    parts = [format_value(a) for a in case.args] + [f"{k}={format_value(v)}" for k, v in case.kwargs]
    return f"{case.api}(" + "".join(p + ", " for p in parts) + ")"
