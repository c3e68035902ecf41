"""The mapping's machinery: templates, refusing what it cannot express, derived variants, error outcomes."""

from __future__ import annotations

import pytest

from opbench.mapping import (
    ApiMapping,
    MappingError,
    MappingUnsupported,
    bind,
    is_mapped,
    lookup,
)
from opbench.mapping import template as tp
from opbench.mapping.table import variants


def test_template_reads_parameters_literals_and_transforms() -> None:
    t = tp.parse("torch.sum(x, dim=axes(axis), keepdim=keepdim, dtype=dtype(dtype), out=None)")
    assert t.target == "torch.sum"
    assert t.names == {"x", "axis", "keepdim", "dtype"}
    assert tp.parse("torch.flip(x, [0, -1])").names == {"x"}


@pytest.mark.parametrize("bad", [
    "torch.abs(x.T)",  # attribute access on a value
    "torch.abs(open(x))",  # a call that is not a transform
    "numpy.abs(x)",  # not torch
    "torch.abs(**x)",
    "x + 1",
])
def test_template_refuses_anything_but_the_allow_list(bad: str) -> None:
    with pytest.raises(tp.TemplateError):
        tp.parse(bad)


def test_transforms_accept_paddle_argument_forms() -> None:
    torch = pytest.importorskip("torch")
    assert tp.TRANSFORMS["axes"]([0, torch.tensor(2)]) == (0, 2)
    assert tp.TRANSFORMS["axes"]([]) is None
    assert tp.TRANSFORMS["ints"](torch.tensor([3, 4])) == [3, 4]
    assert tp.TRANSFORMS["int"](torch.tensor([5])) == 5
    assert tp.TRANSFORMS["dtype"]("float16") is torch.float16


def test_keyword_bound_to_none_is_left_out() -> None:
    torch = pytest.importorskip("torch")
    call = tp.parse("torch.nn.functional.softmax(x, dim=axis, dtype=dtype(dtype))").bind(
        {"x": torch.ones(2, 3), "axis": -1, "dtype": None})
    assert torch.allclose(call(), torch.full((2, 3), 1 / 3))


def test_a_parameter_the_template_ignores_must_keep_its_default() -> None:
    torch = pytest.importorskip("torch")
    from opbench.mapping import prepare_torch_call

    x = torch.ones(2, 3)
    prepare_torch_call("paddle.nn.functional.relu", (x, None), {})  # `name` positional: dropped
    entry = ApiMapping("paddle.nn.functional.leaky_relu", "torch.nn.functional.leaky_relu(x)")
    bound = bind(entry, (x,), {"negative_slope": 0.5})
    assert bound["negative_slope"] == 0.5
    import opbench.mapping as mapping

    saved = mapping._BY_API["paddle.nn.functional.leaky_relu"]
    mapping._BY_API["paddle.nn.functional.leaky_relu"] = entry
    try:
        with pytest.raises(MappingUnsupported, match="negative_slope=0.5"):
            prepare_torch_call("paddle.nn.functional.leaky_relu", (x,), {"negative_slope": 0.5})
        prepare_torch_call("paddle.nn.functional.leaky_relu", (x,), {"negative_slope": 0.01})  # the default
    finally:
        mapping._BY_API["paddle.nn.functional.leaky_relu"] = saved


def test_variants_are_derived_when_paddle_has_them_with_the_same_parameters() -> None:
    for api in ("paddle.Tensor.abs", "paddle.Tensor.abs_", "paddle.Tensor.exp_", "paddle.nn.functional.relu_"):
        assert is_mapped(api), api
    assert lookup("paddle.Tensor.exp_").inplace and not lookup("paddle.Tensor.exp").inplace
    assert {v.api for v in variants(lookup("paddle.where"))}.isdisjoint({"paddle.where_", "paddle.Tensor.where_"})


def test_aliases_bind_by_paddle_name() -> None:
    assert bind(lookup("paddle.add"), (), {"input": 1, "other": 2})["x"] == 1


# -- outcomes ---------------------------------------------------------------------------------------
def _check(line: str, subject: str = "paddle", **kw) -> dict:
    from accuracy.check import Checker, Settings
    from opbench.cases import parse_line

    return Checker(Settings(subject=subject, reference="torch", **kw)).check(parse_line(line))


@pytest.fixture
def swap_entry():
    """Replace one table entry for the test's duration."""
    import opbench.mapping as mapping

    saved: dict[str, ApiMapping] = {}

    def swap(entry: ApiMapping) -> None:
        saved.setdefault(entry.api, mapping._BY_API[entry.api])
        mapping._BY_API[entry.api] = entry

    yield swap
    mapping._BY_API.update(saved)


def _broken(a: dict) -> object:
    return a["no_such_argument"]


@pytest.mark.parametrize("entry,named", [
    (ApiMapping("paddle.abs", "torch.abs(x, x, x)"), "torch.abs(x, x, x)"),  # torch refuses the arguments
    (ApiMapping("paddle.abs", convert=_broken), f"{__name__}._broken"),  # a converter bug
])
def test_errors_of_our_mapping_are_mapping_errors_naming_the_converter(swap_entry, entry, named) -> None:
    pytest.importorskip("torch")
    from accuracy import outcomes as oc

    swap_entry(entry)
    rec = _check('paddle.abs(Tensor([3],"float32"), )', subject="torch")
    assert rec["outcome"] == oc.MAPPING_ERROR, rec
    assert rec["converter"] == named and "paddle.abs" in rec["error"]
    assert oc.is_failing(rec)


def test_a_torch_kernel_error_stays_a_torch_error() -> None:
    pytest.importorskip("torch")
    from accuracy import outcomes as oc

    rec = _check('paddle.matmul(Tensor([3, 4],"float32"), Tensor([5, 6],"float32"), )', subject="torch")
    assert rec["outcome"] == oc.TORCH_ERROR, rec


def test_no_kernel_for_the_dtype_is_unsupported_and_fails_only_when_strict() -> None:
    pytest.importorskip("paddle")
    from accuracy import outcomes as oc

    rec = _check('paddle.mean(Tensor([3, 4],"float16"), )')
    assert rec["outcome"] == oc.UNSUPPORTED and "float16" in rec["error"]
    assert not oc.is_failing(rec) and oc.is_failing(rec, strict=True)


def test_error_outcome_of_mapping_exceptions() -> None:
    from accuracy import outcomes as oc

    assert oc.error_outcome(MappingError("paddle.x", "torch.x(x)", TypeError("bad")), "torch") == oc.MAPPING_ERROR
    assert oc.error_outcome(MappingUnsupported("x"), "torch") == oc.MAPPING_MISSING
    assert oc.error_outcome(RuntimeError('"addmm" not implemented for \'Half\''), "torch") == oc.UNSUPPORTED
    assert oc.error_outcome(RuntimeError("(NotFound) The kernel with key (CPU) of kernel `x` is not registered."),
                            "paddle") == oc.UNSUPPORTED
    assert oc.error_outcome(RuntimeError("(NotFound) The kernel `rms_norm` is not registered.\n  [Hint: ...]"),
                            "paddle") == oc.UNSUPPORTED  # no kernel for the op at all on this device
    assert oc.error_outcome(RuntimeError("(NotFound) The kernel `x` was registered twice"), "paddle") == oc.PADDLE_ERROR
    assert oc.error_outcome(RuntimeError("(NotFound) no such file"), "paddle") == oc.PADDLE_ERROR


def test_inplace_api_runs_on_a_copy_and_matches_torch() -> None:
    pytest.importorskip("paddle")
    from opbench.cases import parse_line
    from opbench.providers import get_provider

    case = parse_line('paddle.Tensor.exp_(Tensor([3, 4],"float32"), )')
    call = get_provider("paddle").prepare(case)
    before = call.backend.to_numpy(call.tensors[0]).copy()
    out = call.forward()
    assert (call.backend.to_numpy(call.tensors[0]) == before).all()  # the input is untouched
    assert abs(call.backend.to_numpy(out) - __import__("numpy").exp(before)).max() < 1e-6
    assert _check(case.to_line())["outcome"] == "pass"


def test_issue_lines_that_were_wrong_now_pass() -> None:
    pytest.importorskip("paddle")
    for line in ('paddle.nn.functional.relu(Tensor([4, 3],"float32"), None, )',
                 'paddle.reshape(Tensor([3, 4, 5],"float32"), Tensor([4],"int64"), )',
                 'paddle.max(Tensor([3, 4, 5],"float32"), Tensor([2],"int64"), )',
                 'paddle.cast(Tensor([1, 3],"bool"), dtype="int", )',
                 'paddle.cast(Tensor([1, 3],"float32"), "float8_e5m2", )'):
        assert _check(line)["outcome"] == "pass", line
