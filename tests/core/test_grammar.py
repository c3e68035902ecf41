"""The config-line grammar: round trips, every accepted form, every malformed form."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opbench.cases import (
    DTYPE_SIZES,
    TYPE_NAMES,
    ConfigError,
    DtypeSpec,
    SizeRefused,
    SliceSpec,
    TensorSpec,
    TypeSpec,
    check_memory,
    format_case,
    parse_line,
    parse_lines,
)
from opbench.cases.model import Case

LERP = 'paddle.lerp(Tensor([16, 102400],"float32"), Tensor([16, 102400],"float32"), 0.2, )'


def test_lerp_line_parses_to_specs():
    case = parse_line(LERP)
    assert case.api == "paddle.lerp"
    assert case.args == (TensorSpec((16, 102400), "float32"), TensorSpec((16, 102400), "float32"), 0.2)
    assert case.kwargs == ()
    assert case.to_line() == LERP
    assert case.nbytes == 2 * 16 * 102400 * 4


@pytest.mark.parametrize(
    ("line", "expected_args", "expected_kwargs"),
    [
        ('paddle.concat(tuple(Tensor([31376, 768],"float32"),Tensor([1, 768],"float32"),), axis=0, )',
         ((TensorSpec((31376, 768), "float32"), TensorSpec((1, 768), "float32")),), (("axis", 0),)),
        ('paddle.Tensor.astype(Tensor([1,1,1,1],"int64"), Dtype(float32), )',
         (TensorSpec((1, 1, 1, 1), "int64"), DtypeSpec("float32")), ()),
        ('paddle.add_n(list[Tensor([2],"float16"),Tensor([2],"float16"),], )',
         ([TensorSpec((2,), "float16"), TensorSpec((2,), "float16")],), ()),
        ("paddle.f(slice(1, None, 2), slice(3), )", (SliceSpec(1, None, 2), SliceSpec(None, 3, None)), ()),
        ("paddle.f(complex(1, -2), 3+4j, 2j, )", (complex(1, -2), complex(3, 4), 2j), ()),
        ("paddle.f(None, True, False, )", (None, True, False), ()),
        ("paddle.f(-1, +2, -1.5e-3, 1E5, )", (-1, 2, -1.5e-3, 1e5), ()),
        ('paddle.f(x="mean", y=\'sum\', )', (), (("x", "mean"), ("y", "sum"))),
        ("paddle.f([[1, 2], (3, 4)], )", ([[1, 2], (3, 4)],), ()),
        ('paddle.f(Tensor([],"float32"), Tensor([0, 4],"bfloat16"), )',
         (TensorSpec((), "float32"), TensorSpec((0, 4), "bfloat16")), ()),
        ('  paddle.f( Tensor( [2 ,3] , "bool" ) ,  axis = -1 ,  )  ',
         (TensorSpec((2, 3), "bool"),), (("axis", -1),)),
        ('paddle.f(Tensor([2], dtype="int32"), )', (TensorSpec((2,), "int32"),), ()),
        ("paddle.f(Dtype(paddle.bfloat16), Dtype(\"int8\"))", (DtypeSpec("bfloat16"), DtypeSpec("int8")), ()),
    ],
)
def test_accepted_forms(line, expected_args, expected_kwargs):
    case = parse_line(line)
    assert case.args == expected_args
    assert case.kwargs == expected_kwargs
    again = parse_line(case.to_line())
    assert again == case


def test_inf_and_nan():
    case = parse_line("paddle.clip(Tensor([3],\"float32\"), -inf, inf, nan, )")
    lo, hi, n = case.args[1:]
    assert lo == -math.inf and hi == math.inf and math.isnan(n)
    assert parse_line(case.to_line()).to_line() == case.to_line()


@pytest.mark.parametrize(
    ("line", "col", "reason"),
    [
        ("paddle.add(Tensor([2],\"float32\")", 11, "never closed"),
        ("paddle.add(1,,2)", 14, "syntax error"),
        ("paddle.add(Tensor([2],\"float33\"))", 23, "unknown dtype 'float33'"),
        ("paddle.add(Tensor([-1, 2],\"float32\"))", 19, "negative dimension"),
        ("paddle.add(Tensor([1.5],\"float32\"))", 19, "list of integers"),
        ("paddle.add(Tensor([2]))", 12, "shape and a dtype"),
        ("paddle.add(foo)", 12, "unknown name 'foo'"),
        ("paddle.add(__import__('os'))", 12, "unknown tag '__import__'"),
        ("paddle.add(x.y())", 12, "nested API calls"),
        ("paddle.add(1 * 2)", 12, "arithmetic is not allowed"),
        ("paddle.add(1 + 2)", 12, "complex literals"),
        ("paddle.add(**kw)", 14, "'**' arguments"),
        ("paddle.add(lambda: 1)", 12, "unsupported expression"),
        ("paddle.add(b'x')", 12, "unsupported literal"),
        ("paddle.add(-'a')", 12, "numbers only"),
        ("add", 1, "one API call"),
        ("(lambda: 1)()", 2, "dotted name"),
        ("paddle.add(slice(1.5))", 18, "integers or None"),
        ("paddle.add(Dtype(1))", 18, "dtype is a name"),
        ("paddle.add(dict[1])", 12, "only list[...]"),
        ("paddle.add(slice(1, step=2))", 12, "no keyword"),
        # forms PaddleAPITest's config files use, refused for a reason of the line itself
        ('paddle.assign(., Tensor([],"float32"), )', 15, "syntax error"),
        ('paddle.f(Tensor([1, 64//4],"float32"), )', 21, "arithmetic is not allowed"),
        ('paddle.f(Tensor([2],"int64"), )paddle.f(Tensor([2],"int64"), )', 32, "syntax error"),
        ('paddle.concat(list[Tensor([2],"int64"),Tensor([2],"int64"),Tenso ...', 19, "never closed"),
        ("paddle.f(type(numpy.float80), )", 15, "unknown type 'numpy.float80'"),
        ("paddle.f(type(1), )", 10, "type takes one type name"),
        ("paddle.f(type(os.system), )", 15, "unknown type 'os.system'"),
        ("paddle.f(math.floor, )", 10, "unknown constant 'math.floor'"),
        ("paddle.f(os.environ, )", 10, "unknown constant 'os.environ'"),
        ("paddle.f(VarType(float33), )", 18, "unknown dtype 'float33'"),
        ("paddle.f(x[], )", 10, "syntax error"),
        ("paddle.f(x=1, x=2, )", 17, "given twice"),
        ("paddle.f(not 1, )", 10, "unsupported expression"),
        ("paddle.f(Ellipsis(), )", 10, "unknown tag 'Ellipsis'"),
        ("paddle.f(1)\0", 12, "NUL byte"),
    ],
)
def test_malformed_lines_name_line_column_and_reason(line, col, reason):
    with pytest.raises(ConfigError) as info:
        parse_line(line, lineno=7, source="cases.txt")
    err = info.value
    assert err.lineno == 7 and err.source == "cases.txt"
    assert err.col == col, str(err)
    assert reason in err.reason
    assert str(err).startswith(f"cases.txt:7:{col}: ")


def test_case_file_comments_blank_lines_and_errors_keep_going():
    text = [
        "# a comment",
        "",
        LERP + "  # trailing comment",
        "paddle.add(Tensor([2],\"float32\"), Tensor([2],\"float32\"), name=\"a#b\", )",
        "paddle.add(",
        "   ",
        "paddle.exp(Tensor([3],\"float64\"), )",
    ]
    items = parse_lines(text, "f.txt")
    cases = [i for i in items if not isinstance(i, ConfigError)]
    errors = [i for i in items if isinstance(i, ConfigError)]
    assert [c.lineno for c in cases] == [3, 4, 7]
    assert cases[1].kwargs == (("name", "a#b"),)
    assert len(errors) == 1 and errors[0].lineno == 5


def test_memory_limit_refuses_before_allocation():
    case = parse_line(LERP)
    check_memory(case, case.nbytes)
    with pytest.raises(SizeRefused, match="more than the") as info:
        check_memory(case, case.nbytes - 1)
    assert isinstance(info.value, ConfigError)  # callers that catch ConfigError still catch it
    assert (info.value.need_bytes, info.value.limit_bytes) == (case.nbytes, case.nbytes - 1)
    assert info.value.reason.startswith("too large: inputs need ")
    check_memory(case, None)


# -- property-based round trips ------------------------------------------------------------------
_dtypes = st.sampled_from(sorted(DTYPE_SIZES))
_tensors = st.builds(TensorSpec, st.lists(st.integers(0, 4096), max_size=5).map(tuple), _dtypes)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False),
    st.complex_numbers(allow_nan=False, allow_infinity=False),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=8),
    st.builds(DtypeSpec, _dtypes),
    st.builds(SliceSpec, st.none() | st.integers(-9, 9), st.none() | st.integers(-9, 9),
              st.none() | st.integers(1, 9)),
    st.builds(TypeSpec, st.sampled_from(sorted(TYPE_NAMES))),
    st.sampled_from([Ellipsis, math.nan, math.inf, -math.inf, math.pi]),
)
_values = st.recursive(
    st.one_of(_scalars, _tensors),
    lambda inner: st.lists(inner, max_size=3) | st.lists(inner, max_size=3).map(tuple),
    max_leaves=8,
)
_names = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda s: s not in ("lambda", "if", "else", "or", "and", "not", "in", "is", "for", "def", "del",
                        "pass", "try", "with", "as", "from", "import", "class", "while", "yield",
                        "return", "raise", "global", "nonlocal", "assert", "break", "continue",
                        "except", "finally", "elif", "async", "await")
)


@settings(max_examples=300, deadline=None)
@given(
    api=st.lists(_names, min_size=1, max_size=3).map(lambda p: "paddle." + ".".join(p)),
    args=st.lists(_values, max_size=4).map(tuple),
    kwargs=st.dictionaries(_names, _values, max_size=3).map(lambda d: tuple(d.items())),
)
def test_round_trip_generated(api, args, kwargs):
    case = Case(api, args, kwargs)
    line = format_case(case)
    parsed = parse_line(line)
    assert parsed == case, line
    assert format_case(parsed) == line
