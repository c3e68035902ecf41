"""The per-dtype table, per-API overrides (TOML), the global override, and bad files."""

from __future__ import annotations

import pytest

from accuracy.tolerances import DEFAULT_TABLE, Tolerance, ToleranceFileError, build, load_overrides


def test_default_table_orders_precisions_and_integers_are_exact():
    t = build(use_defaults=False)
    f64, f32, f16, bf16 = (t.for_("paddle.add", d) for d in ("float64", "float32", "float16", "bfloat16"))
    assert f64.rtol < f32.rtol < f16.rtol < bf16.rtol
    assert t.for_("paddle.add", "complex64") == DEFAULT_TABLE["complex64"]
    for d in ("int32", "int64", "bool", "uint8"):
        assert t.for_("paddle.add", d).exact


def test_per_api_overrides_by_dtype_and_for_all_floats(tmp_path):
    f = tmp_path / "tol.toml"
    f.write_text('["paddle.pow"]\natol = 1e-3\nrtol = 2e-3\n\n["paddle.matmul".bfloat16]\natol = 0.1\nrtol = 0.05\n')
    t = build([f], use_defaults=False)
    assert t.for_("paddle.pow", "float32") == Tolerance(1e-3, 2e-3)
    assert t.for_("paddle.pow", "int64").exact  # "*" covers floating dtypes only
    assert t.for_("paddle.matmul", "bfloat16") == Tolerance(0.1, 0.05)
    assert t.for_("paddle.matmul", "float32") == DEFAULT_TABLE["float32"]
    assert t.for_("paddle.add", "float32") == DEFAULT_TABLE["float32"]


def test_global_atol_rtol_override_everything(tmp_path):
    f = tmp_path / "tol.toml"
    f.write_text('["paddle.pow"]\natol = 1e-3\n')
    t = build([f], atol=0.5, rtol=0.25, use_defaults=False)
    assert t.for_("paddle.pow", "float32") == Tolerance(0.5, 0.25)
    assert t.for_("paddle.add", "int64") == Tolerance(0.5, 0.25)


@pytest.mark.parametrize("text, words", [
    ('["paddle.pow"]\natl = 1\n', "unknown keys"),
    ('["paddle.pow".int64]\natol = 1\n', "not a floating dtype"),
    ('["paddle.pow"]\natol = -1\n', ">= 0"),
    ('["paddle.pow"\n', "not valid TOML"),
])
def test_bad_tolerance_files_name_the_problem(tmp_path, text, words):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(ToleranceFileError, match=words) as e:
        load_overrides(f)
    assert str(f) in str(e.value)


def test_shipped_overrides_parse():
    build()  # accuracy/tolerances.toml must load
