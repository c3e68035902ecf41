"""Tables, notes, JSON and PNG from recorded figures (no GPU needed)."""

from __future__ import annotations

import argparse
import json
import types
from collections import Counter

import pytest

from tools import clocks, overlap, syncs, timing_pitfalls, transfer
from tools import sync_attribution as sa
from tools.report import ToolResult, emit, fmt_bytes, render, write_png

MiB = 2**20
# Recorded on an H100 host (PCIe Gen5): ms per copy at 4 KiB and 64 MiB.
SWEEP = {"sizes": [4096, 64 * MiB], "methods": {
    "h2d_pageable": {"label": "x.to(dev)", "direction": "H2D", "memory": "pageable", "non_blocking": False,
                     "ms": [0.012, 5.6]},
    "h2d_pinned_nb": {"label": "d.copy_(pinned, non_blocking=True)", "direction": "H2D",
                      "memory": "pre-allocated pinned", "non_blocking": True, "ms": [0.004, 1.3]},
    "d2h_pin_call": {"label": "g.cpu().pin_memory()", "direction": "D2H", "memory": "pinned per call",
                     "non_blocking": False, "ms": [0.05, 21.0]},
    "d2h_pinned_nb": {"label": "pinned.copy_(g, non_blocking=True)", "direction": "D2H",
                      "memory": "pre-allocated pinned", "non_blocking": True, "ms": [0.005, None]},
}}


def test_fmt_bytes():
    assert [fmt_bytes(x) for x in (0, 4096, 1536 * 1024, 2**30, None)] == ["0 B", "4 KiB", "1.5 MiB", "1 GiB", "-"]


def test_transfer_table_and_headline_ratios():
    r = transfer.build_result(SWEEP, None)
    text = render(r)
    assert "| H2D   | pageable" in text and "4K GB/s" in text and "64M GB/s" in text
    assert "12.0" in text  # latency of a pageable 4 KiB copy in us
    s = r.data["summary"]
    assert s["h2d_pinned_vs_pageable"]["ratio"] == pytest.approx(5.6 / 1.3)
    assert s["h2d_pinned_vs_pageable"]["pinned_gbps"] == pytest.approx(64 * MiB / 1.3 / 1e6)
    # the missing 64 MiB figure of d2h_pinned_nb falls back to the largest size both have
    assert s["d2h_cpu_pin_vs_prealloc"]["size"] == 4096
    assert any("pinned" in n and "4.31x" in n for n in r.notes)


def test_transfer_default_sizes_span_4k_to_1g():
    assert transfer.DEFAULT_SIZES[0] == 4096 and transfer.DEFAULT_SIZES[-1] == 2**30


def test_offload_table():
    off = {"layers": 30, "per_layer": 2, "shape": [1, 16800, 1536], "dtype": "float16", "tensor_bytes": 51609600,
           "total_bytes": 60 * 51609600, "schemes": {
               ".cpu() / .to(dev)": {"store_ms": 1595.6, "load_ms": 314.3, "store_gbps": 1.9, "load_gbps": 9.9},
               "pre-allocated pinned": {"store_ms": 137.9, "load_ms": 116.5, "store_gbps": 22.5, "load_gbps": 26.6}}}
    text = render(transfer.build_result(None, off))
    assert "30 layers x 2 tensors of (1, 16800, 1536) float16 (2.9 GiB each way)" in text
    assert "1,595.6" in text and "137.9" in text


def recorded_overlap(**kw):
    m = {"layers": 30, "shape": [1, 16800, 1536], "dtype": "float16", "intensity": 20, "streams": 2, "repeats": 5,
         "layer_bytes": 51609600, "h2d_ms": 58.15, "compute_ms": 38.83, "d2h_ms": 62.47, "single_ms": 178.03,
         "multi_ms": 90.52, "results_match": True, "mismatched_layers": []}
    return {**m, **kw}


def test_overlap_derived_figures():
    d = overlap.derive(recorded_overlap())  # the note's own figures
    assert d["sum_ms"] == pytest.approx(159.45)
    assert d["speedup"] == pytest.approx(178.03 / 90.52)
    assert d["overlap"] == pytest.approx((178.03 - 90.52) / (178.03 - 62.47))
    r = overlap.build_result(recorded_overlap())
    text = render(r)
    assert "1.97x" in text and "76% of the hideable time" in text and "| results match one stream | yes" in text
    assert r.exit_code == 0


def test_overlap_mismatch_is_the_reported_failure():
    r = overlap.build_result(recorded_overlap(results_match=False, mismatched_layers=[3, 7]))
    assert r.exit_code == 1 and "NO (layers [3, 7])" in render(r)


def test_timing_pitfalls_table():
    d = {"workload": "torch.matmul (20, 8192) x (8192, 5120) float16", "samples": 50, "bench_us": 60.0,
         "bench_spread_us": [59.5, 60.8], "h2d_inside_us": 14000.0, "warm_l2_us": 52.0, "first_call_us": 900.0,
         "steady_us": 60.0, "clock_before": {"sm_mhz": 1980, "sm_max_mhz": 1980},
         "clock_after": {"sm_mhz": 1755, "sm_max_mhz": 1980}}
    text = render(timing_pitfalls.build_result(d))
    assert "233.33x" in text and "0.87x" in text and "15.00x" in text
    assert "SM clock 1980 MHz before, 1755 MHz after" in text


def test_clocks_from_a_fake_nvml(monkeypatch):
    from opbench import nvml

    fake = types.SimpleNamespace(
        NVML_CLOCK_SM=0, NVML_CLOCK_MEM=1, NVML_TEMPERATURE_GPU=0,
        nvmlInit=lambda: None, nvmlDeviceGetCount=lambda: 1, nvmlDeviceGetHandleByIndex=lambda i: "h",
        nvmlDeviceGetName=lambda h: b"NVIDIA H100 80GB HBM3", nvmlSystemGetDriverVersion=lambda: "580.1",
        nvmlDeviceGetClockInfo=lambda h, k: [1200, 2619][k],
        nvmlDeviceGetMaxClockInfo=lambda h, k: [1980, 2619][k],
        nvmlDeviceGetCurrentClocksEventReasons=lambda h: 0x4,
        nvmlDeviceGetTemperature=lambda h, s: 71, nvmlDeviceGetPowerUsage=lambda h: 690000,
        nvmlDeviceGetEnforcedPowerLimit=lambda h: 700000,
        nvmlDeviceGetUtilizationRates=lambda h: types.SimpleNamespace(gpu=100),
        nvmlDeviceGetApplicationsClock=lambda h, k: 1980,
        nvmlDeviceGetSupportedMemoryClocks=lambda h: [2619],
        nvmlDeviceGetSupportedGraphicsClocks=lambda h, m: [1410, 1980],
    )
    monkeypatch.setattr(nvml, "pynvml", fake)
    nvml.available.cache_clear()
    try:
        args = argparse.Namespace(index=None, lock=None, reset=False)
        r = clocks.run(args)
    finally:
        nvml.available.cache_clear()
    text = render(r)
    assert "NVIDIA H100 80GB HBM3" in text and r.tables[0].rows[0] == ["SM", 1200, 1980, "61%"]
    assert "sw_power_cap" in text and "power-capped" in text and "below 75% of its maximum" in text
    assert "690 W of 700 W" in text and r.data["supported_sm_mhz"] == [1980, 1410]


def test_clock_lock_needs_root(monkeypatch):
    from opbench import nvml
    from opbench.cli import UsageError

    monkeypatch.setattr(nvml, "available", lambda: True)
    monkeypatch.setattr(nvml, "handle", lambda index=None: "h")
    monkeypatch.setattr(clocks, "_is_root", lambda: False)
    locked = []
    monkeypatch.setattr(nvml, "lock_sm_clock", lambda h, mhz: locked.append(mhz))
    with pytest.raises(UsageError, match="need root"):
        clocks.run(argparse.Namespace(index=None, lock=1410, reset=False))
    assert locked == []


def test_syncs_report_and_exit_codes():
    f = sa.Finding("Tensor.item (aten::item)", "train.py:18 (step)", "D2H copy (pageable) + stream sync",
                   "aten::item", calls=20, copies=20, syncs=20, host_us=5300.0, device_us=28.0, nbytes=80,
                   advice="keep it on the device")
    r = syncs.build_result([f], Counter({"train.py:22 (step)": 20}), "train.py", "torch", True)
    text = render(r)
    assert "| Tensor.item (aten::item) | train.py:18 (step)" in text and "5.300" in text and "80 B" in text
    assert "set_sync_debug_mode('warn') flagged" in text and r.exit_code == 1
    clean = syncs.build_result([], Counter(), "fixed.py", "torch", True)
    assert clean.exit_code == 0 and "no device<->host copy or synchronize found" in render(clean)
    failed = syncs.build_result([f], None, "t.py", "torch", True, error="ValueError: boom")
    assert failed.exit_code == 2 and "the script failed (ValueError: boom)" in render(failed)


def test_emit_writes_json_and_notes_missing_matplotlib(tmp_path):
    r = overlap.build_result(recorded_overlap())
    lines: list[str] = []
    code = emit(r, str(tmp_path / "o.json"), str(tmp_path / "o.png"), print_fn=lines.append)
    data = json.loads((tmp_path / "o.json").read_text())
    assert code == 0 and data["tool"] == "overlap" and data["data"]["speedup"] == pytest.approx(178.03 / 90.52)
    assert data["tables"][0]["rows"][0][0] == "H2D alone (all layers)"
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert any("matplotlib is not installed" in x for x in lines) and not (tmp_path / "o.png").exists()
    else:
        assert (tmp_path / "o.png").stat().st_size > 1000


def test_emit_keeps_figures_when_a_file_cannot_be_written(tmp_path):
    lines: list[str] = []
    code = emit(overlap.build_result(recorded_overlap()), str(tmp_path / "missing" / "o.json"), None,
                print_fn=lines.append)
    assert code == 2 and "| speedup" in lines[0] and lines[-1].startswith("could not write")


def test_clocks_has_no_plot(tmp_path):
    assert "no plot" in write_png(ToolResult("clocks", []), tmp_path / "c.png")
