"""Comparison figures on the host and on the device agree, and mean what they say."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accuracy.compare import host_figures
from accuracy.tolerances import Tolerance

TOL = Tolerance(1e-5, 1e-5)


def test_figures_of_a_known_difference():
    e = np.array([[1.0, 2.0], [4.0, 0.0]], np.float32)
    a = e.copy()
    a[1, 0] = 4.5
    f = host_figures(a, e, TOL)
    assert f.mismatches == 1 and f.first_index == (1, 0)
    assert f.max_abs == pytest.approx(0.5) and f.max_rel == pytest.approx(0.125)


def test_nan_equals_nan_and_equal_infinities_are_equal():
    e = np.array([np.nan, np.inf, -np.inf, 1.0])
    assert host_figures(e.copy(), e, Tolerance(0, 0)).mismatches == 0
    a = e.copy()
    a[3] = np.nan
    f = host_figures(a, e, TOL)
    assert f.mismatches == 1 and f.first_index == (3,) and math.isnan(f.max_abs)


def test_zero_reference_gives_infinite_relative_error():
    f = host_figures(np.array([1e-6]), np.array([0.0]), TOL)
    assert f.mismatches == 0 and math.isinf(f.max_rel)  # within atol, but rel is reported as it is


def test_integers_are_exact_and_scalars_work():
    assert host_figures(np.array([1, 2, 3]), np.array([1, 2, 4]), Tolerance(0, 0)).mismatches == 1
    assert host_figures(np.array(2.0), np.array(2.0), TOL).mismatches == 0
    assert host_figures(np.zeros((0, 3)), np.zeros((0, 3)), TOL).mismatches == 0


@pytest.mark.parametrize("framework", ["torch", "paddle"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64", "complex64"])
def test_device_figures_match_host_figures(framework, dtype):
    pytest.importorskip(framework)
    from opbench.backends import get_backend

    b = get_backend(framework, "cpu")
    rng = np.random.default_rng(1)
    e = rng.integers(-50, 50, (7, 9)) if dtype == "int64" else rng.random((7, 9))
    if dtype == "complex64":
        e = e + 1j * rng.random((7, 9))
    a = e.copy()
    a.flat[[5, 40]] += 3  # two clear mismatches
    if dtype in ("float32", "float64"):
        a.flat[11] = e.flat[11] = np.nan
    ta, te = b.from_numpy(a, dtype), b.from_numpy(e, dtype)
    host = host_figures(b.to_numpy(ta), b.to_numpy(te), TOL)
    dev = b.close_figures(ta, te, TOL.atol, TOL.rtol)
    assert dev[0] == host.mismatches == 2
    assert dev[3] == host.first_index == (0, 5)
    assert dev[1] == pytest.approx(host.max_abs, rel=1e-6)
    assert dev[2] == pytest.approx(host.max_rel, rel=1e-6)


@pytest.mark.parametrize("dtype", ["bfloat16", "float32", "int32"])
def test_device_figures_over_row_chunks_and_tail(dtype):
    pytest.importorskip("torch")
    from opbench.backends import get_backend

    b = get_backend("torch", "cpu")
    n = 3 * b.CLOSE_ROW + 5  # three full rows and a 5-element tail
    rng = np.random.default_rng(2)
    e = rng.integers(-9, 9, n) if dtype == "int32" else rng.random(n) + 0.5
    a = e.copy()
    a[[b.CLOSE_ROW + 7, n - 2]] += 4  # one mismatch in a row, one in the tail
    ta, te = b.from_numpy(a.reshape(-1, 1), dtype), b.from_numpy(e.reshape(-1, 1), dtype)
    host = host_figures(b.to_numpy(ta), b.to_numpy(te), TOL)
    count, max_abs, max_rel, first = b.close_figures(ta, te, TOL.atol, TOL.rtol)
    assert count == host.mismatches == 2
    assert first == host.first_index == (b.CLOSE_ROW + 7, 0)
    assert max_abs == pytest.approx(host.max_abs, rel=1e-6) and max_rel == pytest.approx(host.max_rel, rel=1e-6)
