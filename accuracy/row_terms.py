"""Terms of the reductions inside ops whose outputs keep the reduced dims, for the float64 bound.

A normalization's statistics (layer_norm's mean and variance over its normalized dims, rms_norm's
mean square), softmax's sum along its axis and logcumsumexp's running sum round every element of an
output of the input's shape, and their gradients sum along the same rows; cov's and corrcoef's
elements sum over the observations after subtracting their means. The float64 run on ones that
counts a sum's terms cannot count these (layer_norm and cov of ones are zero, softmax's 1/n and
logcumsumexp's 1 + log(k) are no counts), so without this
table a float32 layer_norm over 65,536 elements would be allowed the rounding of one operation.
:mod:`accuracy.bound` allows ``log2`` of an element's terms; the checker multiplies the terms it
counts by the row's here, since an element that sums normalized values passes through both trees.
Ops whose output is the reduction itself (a loss, cosine similarity) need no entry: the sizes count it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from opbench.cases import Case, TensorSpec

#: A rule: the call's arguments bound to Paddle's parameter names -> the terms of the row each
#: output element is normalized by (None when the arguments do not say).
Rule = Callable[[Mapping[str, Any]], "int | None"]

F = "paddle.nn.functional."
IF = "paddle.incubate.nn.functional."


def _shape(bound: Mapping[str, Any], name: str) -> tuple[int, ...] | None:
    v = bound.get(name)
    return tuple(v.shape) if isinstance(v, TensorSpec) else None


def _dims(value: Any) -> list[int] | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return [value]
    if isinstance(value, list | tuple) and all(isinstance(d, int) and not isinstance(d, bool) for d in value):
        return list(value)
    return None


def trailing(param: str) -> Rule:
    """Rows of the trailing dims the parameter lists (layer_norm's ``normalized_shape``, an int or a list)."""
    def rule(bound: Mapping[str, Any]) -> int | None:
        dims = _dims(bound.get(param))
        return math.prod(dims) if dims else None
    return rule


def _at_axis(bound: Mapping[str, Any], axis_param: str, x: str) -> tuple[tuple[int, ...], int] | None:
    """The input's shape and the axis the parameter names, when it is one of the input's."""
    shape, axis = _shape(bound, x), bound.get(axis_param)
    if not shape or not isinstance(axis, int) or not -len(shape) <= axis < len(shape):
        return None
    return shape, axis % len(shape)


def along(axis_param: str, x: str = "x") -> Rule:
    """Rows along one axis of the input (softmax's ``axis``)."""
    def rule(bound: Mapping[str, Any]) -> int | None:
        at = _at_axis(bound, axis_param, x)
        return at[0][at[1]] if at else None
    return rule


def scan(axis_param: str, x: str = "x") -> Rule:
    """A running sum's rows: along its axis, or the whole flattened input where no axis is given (logcumsumexp's)."""
    by_axis = along(axis_param, x)

    def rule(bound: Mapping[str, Any]) -> int | None:
        if bound.get(axis_param) is not None:
            return by_axis(bound)
        shape = _shape(bound, x)
        return math.prod(shape) if shape is not None else None
    return rule


def observations(bound: Mapping[str, Any]) -> int | None:
    """cov's and corrcoef's rows: the observations each variable's mean and each product's sum run over (the
    columns of a 2-D input with ``rowvar``, else its rows; a 1-D input's elements)."""
    shape = _shape(bound, "x")
    if not shape or len(shape) > 2:
        return None
    if len(shape) == 1:
        return shape[0]
    return shape[1] if bound.get("rowvar", True) is not False else shape[0]


def from_axis(axis_param: str, x: str = "x") -> Rule:
    """Rows of the input's dims from one axis on (the fused norms' ``begin_norm_axis``)."""
    def rule(bound: Mapping[str, Any]) -> int | None:
        at = _at_axis(bound, axis_param, x)
        return math.prod(at[0][at[1]:]) if at else None
    return rule


def _channels_last(bound: Mapping[str, Any]) -> bool:
    fmt = bound.get("data_format")
    return isinstance(fmt, str) and fmt.startswith("N") and fmt.endswith("C")


def _spatial(shape: tuple[int, ...], channels_last: bool) -> int:
    return math.prod(shape[1:-1] if channels_last else shape[2:])


def group_norm(bound: Mapping[str, Any]) -> int | None:
    """A group's channels times the spatial dims."""
    shape, groups = _shape(bound, "x"), bound.get("num_groups")
    if not shape or len(shape) < 2 or not isinstance(groups, int) or groups <= 0:
        return None
    last = _channels_last(bound)
    return max(1, (shape[-1] if last else shape[1]) // groups) * _spatial(shape, last)


def instance_norm(bound: Mapping[str, Any]) -> int | None:
    """The spatial dims of one channel of one sample."""
    shape = _shape(bound, "x")
    return _spatial(shape, _channels_last(bound)) if shape and len(shape) > 2 else None


def batch_norm(bound: Mapping[str, Any]) -> int | None:
    """In training, the batch and spatial dims of one channel; with running statistics, no row."""
    shape = _shape(bound, "x")
    if not shape or bound.get("training") is not True or bound.get("use_global_stats") is True:
        return None
    return shape[0] * _spatial(shape, _channels_last(bound))


#: The ops whose every output element is normalized by, or is, a reduction over a row of its input.
ROW_TERMS: dict[str, Rule] = {
    F + "layer_norm": trailing("normalized_shape"),
    F + "rms_norm": trailing("normalized_shape"),
    F + "softmax": along("axis"),
    F + "log_softmax": along("axis"),
    F + "normalize": along("axis"),
    F + "group_norm": group_norm,
    F + "instance_norm": instance_norm,
    F + "batch_norm": batch_norm,
    IF + "fused_rms_norm": from_axis("begin_norm_axis"),
    "paddle.logcumsumexp": scan("axis"),
    "paddle.Tensor.logcumsumexp": scan("axis"),
    "paddle.linalg.cov": observations,
    "paddle.Tensor.cov": observations,
    "paddle.linalg.corrcoef": observations,
    "paddle.Tensor.corrcoef": observations,
}


def row_terms(case: Case) -> float:
    """Terms of the row each output element of ``case`` is normalized by; 1 for ops without one."""
    rule = ROW_TERMS.get(case.api)
    if rule is None:
        return 1.0
    from opbench.mapping import MappingMissing, bind, lookup

    try:
        n = rule(bind(lookup(case.api), case.args, case.kwargs_dict))
    except (MappingMissing, TypeError, KeyError, ValueError):
        return 1.0
    return float(max(n or 1, 1))
