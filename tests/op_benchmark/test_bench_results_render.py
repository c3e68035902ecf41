import csv
import io
import json

import pytest

from op_benchmark import render
from op_benchmark.results import BenchResult, Record, read_json, write_json
from op_benchmark.stats import Measurement

REQUIRED = {"case", "provider", "direction", "device", "method", "median_us", "min_us", "iqr_us", "noise",
            "samples", "gbps", "pct_peak_bw", "status", "error"}


def ok(provider, median, direction="fwd", case="paddle.lerp(A)", spread=0.01):
    r = Record(case=case, api="paddle.lerp", provider=provider, direction=direction, device="gpu",
               method="events", bytes=3 * 10**6)
    r.set_measurement(Measurement.of([median * (1 + spread * k) for k in (-1, 0, 0, 1)] * 5), peak_gbps=3000.0)
    return r


def sample_records():
    return [ok("paddle", 100.0), ok("torch", 50.0), ok("torch-ops", 25.0),
            ok("paddle", 200.0, "bwd"), ok("torch", 199.0, "bwd", spread=0.2),
            Record(case="paddle.lerp(A)", api="paddle.lerp", provider="torch-ops", direction="bwd",
                   device="gpu", method="events", status="error", error="RuntimeError: boom"),
            Record(case="paddle.nope(B)", api="paddle.nope", provider="torch", direction="fwd", device="gpu",
                   method="events", status="not_applicable", error="no PyTorch mapping for paddle.nope")]


def test_derived_rates():
    r = ok("torch", 100.0)
    assert r.gbps == pytest.approx(3e6 / 100e-6 / 1e9)
    assert r.pct_peak_bw == pytest.approx(100 * r.gbps / 3000.0)


def test_json_round_trip_and_shape(tmp_path):
    path = tmp_path / "r.json"
    write_json(BenchResult({"device": "gpu"}, {"method": "events"}, sample_records()), path)
    data = json.loads(path.read_text())
    assert data["schema"] == "opbench.bench/1" and data["env"] == {"device": "gpu"}
    for r in data["records"]:
        assert REQUIRED <= set(r)
    assert data["records"][0]["samples"] == 20 and len(data["records"][0]["samples_us"]) == 20
    back = read_json(path)
    assert [r.key for r in back.records] == [r.key for r in sample_records()]
    assert back.records[0].median_us == pytest.approx(100.0)


def test_copy_floor_survives_the_file_and_the_rounds(tmp_path):
    from op_benchmark.results import merge_rounds

    passes = [[ok("torch-ops", m)] for m in (25.0, 26.0, 24.0)]
    for recs, copy_us in zip(passes, (20.0, 30.0, 21.0), strict=True):
        recs[0].copy_us = copy_us
    merged = merge_rounds(passes, peak_gbps=3000.0)
    assert len(merged) == 1 and merged[0].copy_us == pytest.approx(21.0)  # the rounds' median copy
    path = tmp_path / "r.json"
    write_json(BenchResult({}, {}, merged), path)
    assert read_json(path).records[0].copy_us == pytest.approx(21.0)
    old = json.loads(path.read_text())
    del old["records"][0]["copy_us"]  # a file written before the field existed
    path.write_text(json.dumps(old))
    assert read_json(path).records[0].copy_us is None


@pytest.mark.parametrize("text, msg", [("{", "not JSON"), ("[]", "no 'records'"),
                                       ('{"records": [{"case": "x"}]}', "record 0"),
                                       ('{"schema": "other/9", "records": []}', "schema")])
def test_read_json_names_what_is_wrong(tmp_path, text, msg):
    p = tmp_path / "bad.json"
    p.write_text(text)
    with pytest.raises(ValueError, match=msg) as e:
        read_json(p)
    assert str(p) in str(e.value) and "\n" not in str(e.value)


def test_markdown_tables_per_direction_with_speedups_and_verdicts():
    text = render.markdown(sample_records(), {"device": "gpu", "gpu": {"name": "H100"}, "time": "t"},
                           provider_order=["paddle", "torch", "torch-ops"], wide=True)
    assert "### fwd" in text and "### bwd" in text and "### fwd+bwd" not in text
    fwd = text.split("### fwd")[1].split("### bwd")[0]
    header = next(line for line in fwd.splitlines() if line.startswith("| case"))
    cols = [c.strip() for c in header.strip("|").split("|")]
    assert cols == ["case", "paddle (us)", "torch (us)", "torch-ops (us)", "torch vs paddle",
                    "torch-ops vs paddle", "torch-ops vs torch", "verdict"]
    row = next(line for line in fwd.splitlines() if "lerp(A)" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[4:7] == ["2.00x", "4.00x", "2.00x"]
    assert cells[7] == "torch-ops fastest (2.00x vs torch)"
    bwd = text.split("### bwd")[1]
    assert "(within noise)" in bwd  # 200 vs 199 with 20% spread
    assert "error" in bwd
    assert "RuntimeError: boom" in text and "no PyTorch mapping for paddle.nope" in text


def test_csv_has_one_row_per_record():
    rows = list(csv.DictReader(io.StringIO(render.to_csv(sample_records()))))
    assert len(rows) == len(sample_records())
    assert rows[0]["provider"] == "paddle" and float(rows[0]["median_us"]) == pytest.approx(100.0)
    assert rows[5]["status"] == "error"


def _table(text, direction):
    part = text.split(f"### {direction}\n")[1].split("###")[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in part.splitlines() if line.startswith("|")]
    return rows[0], rows[2:]


def test_pr_table_is_candidate_vs_paddle_and_the_industry_best():
    recs = [ok("paddle", 100.0), ok("torch", 50.0), ok("torch-compile", 40.0), ok("paddle-ops", 20.0),
            ok("torch-ops", 21.0),
            ok("paddle", 10.0, "bwd"), ok("torch", 30.0, "bwd"), ok("paddle-ops", 20.0, "bwd"),
            ok("torch", 30.0, "fwd+bwd", case="paddle.lerp(B)"), ok("torch-ops", 29.9, "fwd+bwd", case="paddle.lerp(B)",
                                                                    spread=0.2)]
    text = render.markdown(recs, {"device": "gpu"})
    head, rows = _table(text, "fwd")
    assert head == ["case", "paddle-ops (us)", "paddle (us)", "vs paddle", "best other (us)", "vs best", "verdict"]
    assert rows[0][1] == "20.0" and rows[0][3] == "5.00x" and rows[0][4] == "40.0 (torch-compile)"
    assert rows[0][5] == "2.00x" and rows[0][6] == "faster (2.00x vs torch-compile)"
    _, rows = _table(text, "bwd")  # slower than Paddle's kernel: the PR rule a reviewer checks first
    assert rows[0][3] == "0.50x" and rows[0][6] == "SLOWER than paddle (0.50x)"
    head, rows = _table(text, "fwd+bwd")  # no Paddle record at all: no Paddle columns; a tie is within noise
    assert head == ["case", "torch-ops (us)", "best other (us)", "vs best", "verdict"]
    assert rows[0][4].startswith("~ torch (within noise")


def test_without_a_candidate_the_wide_table_is_shown():
    text = render.markdown([ok("paddle", 100.0), ok("torch", 50.0)], {"device": "gpu"})
    head, _ = _table(text, "fwd")
    assert head == ["case", "paddle (us)", "torch (us)", "torch vs paddle", "verdict"]


def test_case_labels_are_short_and_unambiguous():
    line = 'paddle.lerp(Tensor([16, 102400],"float32"), Tensor([16, 102400],"float32"), 0.2, )'
    assert render.case_label(line) == "lerp([16,102400], [16,102400], 0.2) f32"
    mixed = 'paddle.add(Tensor([2],"float16"), Tensor([2],"int64"), )'
    assert render.case_label(mixed) == "add([2] float16, [2] int64)"
    a, b = 'paddle.x.lerp(Tensor([2],"float32"), )', 'paddle.y.lerp(Tensor([2],"float32"), )'
    assert render._labels([a, b]) == {a: a, b: b}  # same short label: the full lines are kept
