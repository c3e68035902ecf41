"""PaddlePaddle/benchmark JSON configs become the same case objects as config lines."""

from __future__ import annotations

import json

import pytest

from opbench.cases import ConfigError, TensorSpec, load_benchmark_json, parse_line, resolve

LERP_JSON = [
    {"op": "lerp", "param_info": {
        "x": {"dtype": "float32", "shape": "[-1L, 102400L]", "type": "Variable"},
        "y": {"dtype": "float32", "shape": "[-1L, 102400L]", "type": "Variable"},
        "w": {"type": "float32", "value": "0.2"}}},
    {"op": "lerp", "param_info": {
        "x": {"dtype": "float64", "shape": "[-1L, 204800L]", "type": "Variable"},
        "y": {"dtype": "float64", "shape": "[-1L, 204800L]", "type": "Variable"},
        "w": {"type": "float32", "value": "0.5"}}, "repeat": 1000},
]


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_lerp_configs_match_config_lines(tmp_path):
    cases = load_benchmark_json(write(tmp_path, "lerp.json", LERP_JSON))
    assert cases[0] == parse_line('paddle.lerp(Tensor([16, 102400],"float32"), Tensor([16, 102400],"float32"), 0.2)')
    assert cases[1].args[0] == TensorSpec((16, 204800), "float64")
    assert cases[1].args[2] == 0.5


def test_unknown_dim_is_configurable(tmp_path):
    cases = load_benchmark_json(write(tmp_path, "lerp.json", LERP_JSON), unknown_dim=4)
    assert cases[0].args[0].shape == (4, 102400)


def test_list_params_scalars_and_keywords(tmp_path):
    data = {"op": "concat", "param_info": {
        "axis": {"type": "int", "value": "1"},
        "x": {"type": "list<Variable>",
              "x1": {"dtype": "float32", "shape": "[-1L, 48L]", "type": "Variable"},
              "x0": {"dtype": "float32", "shape": "[-1L, 256L]", "type": "Variable"}}}}
    [case] = load_benchmark_json(write(tmp_path, "concat.json", data))
    assert case.api == "paddle.concat"
    assert case.args == ([TensorSpec((16, 256), "float32"), TensorSpec((16, 48), "float32")], 1)


def test_softmax_keyword_after_gap(tmp_path):
    data = [{"op": "softmax", "param_info": {
        "x": {"dtype": "float16", "shape": "[-1L, 12L, 128L, 128L]", "type": "Variable"},
        "axis": {"type": "int", "value": "-1"}}}]
    [case] = load_benchmark_json(write(tmp_path, "softmax.json", data))
    assert case.api == "paddle.nn.functional.softmax"
    assert case.args[0] == TensorSpec((16, 12, 128, 128), "float16")
    assert case.args[1:] == (-1,) and case.kwargs == ()


def test_parameters_after_a_gap_go_by_name(tmp_path):
    data = [{"op": "softmax", "param_info": {
        "x": {"dtype": "float32", "shape": "[2L, 3L]", "type": "Variable"},
        "dtype": {"type": "string", "value": "float64"}}}]
    [case] = load_benchmark_json(write(tmp_path, "softmax.json", data))
    assert case.args == (TensorSpec((2, 3), "float32"),)
    assert case.kwargs == (("dtype", "float64"),)


def test_bad_configs_are_errors_and_others_still_load(tmp_path):
    data = [LERP_JSON[0], {"op": "no_such_op", "param_info": {}},
            {"op": "lerp", "param_info": {"x": {"type": "Variable", "dtype": "float32", "shape": "[oops]"}}}]
    items = load_benchmark_json(write(tmp_path, "mixed.json", data))
    assert not isinstance(items[0], ConfigError)
    assert isinstance(items[1], ConfigError) and "no_such_op" in items[1].reason
    assert isinstance(items[2], ConfigError) and "cannot read value" in items[2].reason


def test_invalid_json_names_line_and_column(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('[{"op": "lerp",\n  "param_info": }]')
    [err] = load_benchmark_json(path)
    assert isinstance(err, ConfigError) and err.lineno == 2 and "invalid JSON" in err.reason


def test_resolve_mixes_sources(tmp_path):
    suites = tmp_path / "suites"
    suites.mkdir()
    (suites / "mini.txt").write_text('paddle.exp(Tensor([2],"float32"), )\npaddle.exp(\n')
    found = resolve(["mini", str(write(tmp_path, "lerp.json", LERP_JSON)),
                     'paddle.abs(Tensor([3],"float32"), )'], suites)
    assert [c.api for c in found.cases] == ["paddle.exp", "paddle.lerp", "paddle.lerp", "paddle.abs"]
    assert len(found.errors) == 1 and found.errors[0].lineno == 2
    with pytest.raises(FileNotFoundError, match="mini"):
        resolve(["nope"], suites)
