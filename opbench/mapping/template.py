"""Call templates: the torch side of a mapping entry written as the call it makes.

``"torch.sum(x, dim=axes(axis), keepdim=keepdim, dtype=dtype(dtype))"`` reads as the
PyTorch call, with Paddle's parameter names as the values. A template is parsed once with
:mod:`ast` into a :class:`Template`; nothing in it is executed. Its arguments are Paddle
parameter names, literals, lists/tuples of those, or one of the small :data:`TRANSFORMS`
applied to them (``dtype(...)``, ``axes(...)``, ...). A keyword argument whose value is
None is left out, so torch's own default applies (Paddle's None means "the default" too).
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from opbench.mapping.converters import axes, dtype_or_none, scalar, to_int, to_ints


def _tuple(v: Any) -> Any:
    return tuple(v) if isinstance(v, list) else v


def _neg(v: Any) -> Any:
    return None if v is None else not v


#: The functions a template may apply to a parameter, by the name it uses.
TRANSFORMS: dict[str, Callable[[Any], Any]] = {
    "dtype": dtype_or_none,
    "axes": axes,
    "ints": to_ints,
    "int": to_int,
    "scalar": scalar,
    "tuple": _tuple,
    "not_": _neg,
    "float": lambda v: None if v is None else float(scalar(v)),
}


@dataclass(frozen=True)
class _Param:
    name: str


@dataclass(frozen=True)
class _Apply:
    fn: str
    args: tuple[Any, ...]


@dataclass(frozen=True)
class _Seq:
    kind: type
    items: tuple[Any, ...]


class TemplateError(ValueError):
    """A template that does not parse or names something it may not."""


@dataclass(frozen=True)
class Template:
    """A parsed call template: the torch callable's dotted name and its argument expressions."""

    text: str
    target: str
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...]

    @property
    def names(self) -> frozenset[str]:
        """Every Paddle parameter the template reads."""
        out: set[str] = set()

        def walk(e: Any) -> None:
            if isinstance(e, _Param):
                out.add(e.name)
            elif isinstance(e, (_Apply, _Seq)):
                for a in e.args if isinstance(e, _Apply) else e.items:
                    walk(a)

        for e in (*self.args, *(v for _, v in self.kwargs)):
            walk(e)
        return frozenset(out)

    def bind(self, bound: Mapping[str, Any]) -> Callable[[], Any]:
        """The torch call with every argument worked out now, as a call with no arguments."""
        fn = resolve(self.target)
        args = tuple(_value(e, bound) for e in self.args)
        kwargs = {k: v for k, e in self.kwargs if (v := _value(e, bound)) is not None}
        return lambda: fn(*args, **kwargs)


def _value(e: Any, bound: Mapping[str, Any]) -> Any:
    if isinstance(e, _Param):
        return bound[e.name]
    if isinstance(e, _Apply):
        return TRANSFORMS[e.fn](*(_value(a, bound) for a in e.args))
    if isinstance(e, _Seq):
        return e.kind(_value(a, bound) for a in e.items)
    return e


def parse(text: str) -> Template:
    """Parse ``"torch.fn(arg, kw=expr)"``; TemplateError names what is not allowed."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as e:
        raise TemplateError(f"template {text!r}: {e.msg}") from None
    if not isinstance(node, ast.Call):
        raise TemplateError(f"template {text!r} is not a call")
    target = _dotted(node.func, text)
    if not target.startswith("torch."):
        raise TemplateError(f"template {text!r} must call a torch function")
    args = tuple(_expr(a, text) for a in node.args)
    kwargs = []
    for kw in node.keywords:
        if kw.arg is None:
            raise TemplateError(f"template {text!r}: '**' is not allowed")
        kwargs.append((kw.arg, _expr(kw.value, text)))
    return Template(text, target, args, tuple(kwargs))


def _dotted(node: ast.expr, text: str) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        raise TemplateError(f"template {text!r}: the callee must be a dotted name")
    parts.append(node.id)
    return ".".join(reversed(parts))


def _expr(node: ast.expr, text: str) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        return -node.operand.value
    if isinstance(node, ast.Name):
        return _Param(node.id)
    if isinstance(node, (ast.List, ast.Tuple)):
        return _Seq(list if isinstance(node, ast.List) else tuple, tuple(_expr(e, text) for e in node.elts))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in TRANSFORMS:
        return _Apply(node.func.id, tuple(_expr(a, text) for a in node.args))
    raise TemplateError(f"template {text!r}: {ast.unparse(node)!r} is not a parameter, literal or transform")


def resolve(dotted: str) -> Any:
    """The object at a dotted path such as ``torch.nn.functional.softmax`` or ``torch.Tensor.__add__``."""
    module_name, _, attr = dotted.rpartition(".")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError):
        parts = dotted.split(".")
        obj = importlib.import_module(parts[0])
        for part in parts[1:]:
            obj = getattr(obj, part)
        return obj
