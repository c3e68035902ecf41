"""PaddleAPITest's config forms (Ellipsis, math constants, VarType, type(...), list[], float8), round trips,
robustness (deep nesting, '#' in strings, binary files) and the model/grammar module layering."""

from __future__ import annotations

import ast
import math
import pickle
from pathlib import Path

import pytest

import opbench.cases.model as model_module
from opbench.cases import (
    FLOAT8_DTYPES,
    FLOAT_DTYPES,
    ConfigError,
    DtypeSpec,
    SizeRefused,
    SliceSpec,
    TensorSpec,
    TypeSpec,
    format_case,
    format_value,
    load_benchmark_json,
    load_case_file,
    parse_line,
    parse_lines,
)

# Written in PaddleAPITest's form (no spaces after commas in lists, trailing ", " before ")").
CORPUS_LIKE = [
    'paddle.Tensor.__getitem__(Tensor([64, 8, 512],"float16"), tuple(Ellipsis,slice(None,128,None),), )',
    'paddle.Tensor.__getitem__(Tensor([3, 4, 5],"float32"), tuple(...,1,), )',
    'paddle.Tensor.__setitem__(Tensor([6, 7],"float32"), tuple(Ellipsis,None,), 1.0, )',
    'paddle.Tensor.masked_fill(Tensor([12, 30],"float32"), Tensor([12, 30],"bool"), -math.inf, )',
    'paddle.clip(Tensor([5, 9],"float64"), min=-math.inf, max=math.inf, )',
    'paddle.full(list[2,3,], math.nan, )',
    'paddle.scale(Tensor([4],"float32"), scale=math.pi, bias=math.e, )',
    'paddle.Tensor.astype(Tensor([10, 11],"float32"), VarType(float64), )',
    'paddle.cast(Tensor([8],"int32"), dtype=VarType(bool), )',
    'paddle.Tensor.astype(Tensor([13],"int64"), type(numpy.float32), )',
    'paddle.argmax(x=Tensor([3, 17],"float32"), axis=1, dtype=type(numpy.int64), )',
    'paddle.Tensor.astype(Tensor([2],"float32"), type(int), )',
    'paddle.zeros_like(Tensor([2, 2],"int8"), type(numpy.bool), )',
    'paddle.full_like(Tensor([5],"float16"), 0, dtype=type(float), )',
    'paddle.mean(Tensor([6, 2],"float32"), axis=list[], keepdim=False, )',
    'paddle.reshape(Tensor([1, 1],"float64"), list[], )',
    'paddle.tensordot(Tensor([3, 3, 3],"float32"), Tensor([3, 3, 3],"float32"), list[list[0,1,],list[],], )',
    'paddle.empty(tuple(1024,512,), dtype=Dtype(float8_e4m3fn), )',
    'paddle.split(Tensor([256, 96],"float8_e5m2"), num_or_sections=list[32,64,], axis=-1, )',
    'paddle.complex(Tensor([4],"float32"), Tensor([4],"float32"), )',
    'paddle.full(list[2,], complex(math.nan,-math.inf), )',
    'paddle.full(list[2,], complex(nan,nan), )',
    'paddle.nn.functional.pad(Tensor([1, 3, 8, 8],"float32"), pad=list[1,1,1,1,], mode="constant", value=0.0, )',
    'paddle.where(Tensor([7],"bool"), Tensor([7],"float32"), Tensor([7],"float32"), )',
    'paddle.Tensor.__getitem__(Tensor([9],"int64"), slice(1,None,2), )',
    'paddle.einsum("ij,jk->ik", Tensor([2, 3],"float32"), Tensor([3, 4],"float32"), )',
    'paddle.linspace(0, 1, 5, dtype="float32", name="list[]", )',
]


@pytest.mark.parametrize("line", CORPUS_LIKE)
def test_corpus_like_lines_round_trip(line):
    case = parse_line(line)
    again = parse_line(case.to_line())
    assert again == case
    assert again.to_line() == case.to_line() == format_case(case)


@pytest.mark.parametrize(
    ("text", "value", "printed"),
    [
        ("Ellipsis", Ellipsis, "Ellipsis"),
        ("...", Ellipsis, "Ellipsis"),
        ("math.inf", math.inf, "math.inf"),
        ("-math.inf", -math.inf, "-math.inf"),
        ("inf", math.inf, "math.inf"),
        ("math.pi", math.pi, repr(math.pi)),
        ("math.e", math.e, repr(math.e)),
        ("VarType(float64)", DtypeSpec("float64"), "Dtype(float64)"),
        ("VarType(paddle.bfloat16)", DtypeSpec("bfloat16"), "Dtype(bfloat16)"),
        ("type(int)", TypeSpec("int"), "type(int)"),
        ("type(numpy.float32)", TypeSpec("numpy.float32"), "type(numpy.float32)"),
        ("type(numpy.bool_)", TypeSpec("numpy.bool_"), "type(numpy.bool_)"),
        ("list[]", [], "[]"),
        ("list[ ]", [], "[]"),
        ("tuple[]", (), "tuple()"),
        ("list[list[],list[1,],]", [[], [1]], "[[], [1]]"),
        ('"list[]"', "list[]", '"list[]"'),
        ('Tensor([4, 2],"float8_e4m3fn")', TensorSpec((4, 2), "float8_e4m3fn"), 'Tensor([4, 2],"float8_e4m3fn")'),
        ("Dtype(float8_e5m2)", DtypeSpec("float8_e5m2"), "Dtype(float8_e5m2)"),
    ],
)
def test_paddleapitest_values(text, value, printed):
    (got,) = parse_line(f"paddle.f({text}, )").args
    assert got == value and type(got) is type(value)
    assert format_value(got) == printed


def test_nan_reads_as_one_object_so_equal_lines_give_equal_cases():
    line = "paddle.f(math.nan, -nan, complex(math.nan,1.0), list[nan,], )"
    a, b = parse_line(line), parse_line(line)
    assert a == b and parse_line(a.to_line()) == a
    assert all(math.isnan(v) for v in a.args[:2])
    assert math.isnan(a.args[2].real) and a.args[2].imag == 1.0


def test_float8_dtypes_have_a_size_but_are_not_generated_floats():
    assert parse_line('paddle.f(Tensor([3, 5],"float8_e4m3fn"), )').nbytes == 15
    assert FLOAT8_DTYPES.isdisjoint(FLOAT_DTYPES)


@pytest.mark.parametrize(
    "inner",
    [
        "-" * 5000 + "1",
        "+".join(["1j"] * 5000),
        "[" * 5000 + "1" + "]" * 5000,
        "tuple(" * 5000 + ")" * 5000,
        "list[" * 5000 + "]" * 5000,
    ],
    ids=["signs", "sums", "lists", "tuples", "subscripts"],
)
def test_deep_nesting_is_a_config_error_not_a_recursion_error(inner):
    with pytest.raises(ConfigError):
        parse_line(f"paddle.f({inner}, )")


def test_deep_dotted_api_is_a_config_error():
    with pytest.raises(ConfigError, match="nested too deeply"):
        parse_line("paddle" + ".a" * 5000 + "()")


def test_hash_inside_strings_and_trailing_comments():
    lines = [
        'paddle.f(Tensor([2],"float32"), name="a#b", )  # a comment with a quote " in it',
        "paddle.f(sep='#', ) # 'x",
        '   # only a comment, "list[]"',
        'paddle.f("#", "\\"#", )',
    ]
    items = parse_lines(lines, "h.txt")
    assert not [i for i in items if isinstance(i, ConfigError)], items
    assert [c.lineno for c in items] == [1, 2, 4]
    assert items[0].kwargs == (("name", "a#b"),)
    assert items[1].kwargs == (("sep", "#"),)
    assert items[2].args == ("#", '"#')
    assert all(parse_line(c.to_line()) == c for c in items)


def test_binary_file_is_one_config_error(tmp_path):
    binary = tmp_path / "blob.txt"
    binary.write_bytes(b'paddle.f(Tensor([2],"float32"), )\n\x7fELF\xd0\xcf\x11\n')
    (err,) = load_case_file(binary)
    assert isinstance(err, ConfigError)
    assert str(err).startswith(f"{binary}:2:5: not a UTF-8 text file")
    nul = tmp_path / "nul.txt"
    nul.write_bytes(b"paddle.f(1, )\x00\x00\n")
    (err,) = load_case_file(nul)
    assert "not a UTF-8 text file" in err.reason and err.lineno == 1
    json_blob = tmp_path / "blob.json"
    json_blob.write_bytes(b"\xff\xfe[]")
    (err,) = load_benchmark_json(json_blob)
    assert "not a UTF-8 text file" in err.reason


def test_utf8_bom_is_dropped(tmp_path):
    f = tmp_path / "bom.txt"
    f.write_bytes(b'\xef\xbb\xbfpaddle.f(Tensor([2],"float32"), )\n')
    (case,) = load_case_file(f)
    assert case.api == "paddle.f"


def test_errors_survive_pickling():
    err = SizeRefused(10, 5, line="paddle.f()", lineno=4, col=1, source="s.txt")
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is SizeRefused and str(back) == str(err) and (back.need_bytes, back.limit_bytes) == (10, 5)
    plain = ConfigError("bad", "x", 2, 3, "s.txt")
    back = pickle.loads(pickle.dumps(plain))
    assert (back.reason, back.lineno, back.col, back.source) == ("bad", 2, 3, "s.txt")


def test_model_imports_no_other_cases_module():
    """model.py is the bottom layer: grammar imports it, never the other way round (no import cycle)."""
    tree = ast.parse(Path(model_module.__file__).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not {m for m in imported if m.startswith("opbench")}, imported


def test_slices_and_specs_print_back():
    case = parse_line("paddle.f(slice(None,3,None), type(numpy.int8), VarType(int32), Ellipsis, )")
    assert case.args == (SliceSpec(None, 3, None), TypeSpec("numpy.int8"), DtypeSpec("int32"), Ellipsis)
    assert case.to_line() == "paddle.f(slice(None, 3, None), type(numpy.int8), Dtype(int32), Ellipsis, )"
