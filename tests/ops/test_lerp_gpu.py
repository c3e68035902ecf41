"""Forward and backward of every lerp path x dtype on a CUDA GPU (torch binding),
against float64 NumPy and torch.lerp. Skipped without CUDA."""

from __future__ import annotations

from typing import Any

import grad_bits
import numpy as np
import pytest
from knob_rerun import rerun_with_env, rerun_with_knob_off
from lerp_testlib import (
    CASES,
    DTYPES,
    GPU_CASES,
    check_diff_grads,
    check_saved_diff,
    run_torch_case,
    saved_by_forward,
)

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.slow,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU"),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(CASES) + list(GPU_CASES))
def test_cuda_vs_numpy(torch_ext: Any, case: str, dtype: str) -> None:
    run_torch_case(torch_ext, case, dtype, "cuda", seed=4)


@pytest.mark.parametrize("needs", ["x", "y", "w", "xy", "xw", "yw"])
@pytest.mark.parametrize("case", ["cols_wfull_dy", "cols_wfull_groups", "cols_wfull_odd", "cols_wfull_one_pass",
                                  "cols_groups_dw", "cols_sliced_dw", "gather_rows", "fused_dx_dw", "issue_bcast",
                                  "t2rows_col_read"])
def test_cuda_gradient_subsets(torch_ext: Any, case: str, needs: str) -> None:
    """Only some inputs needing a gradient (the backward then writes fewer full-size gradients on its way: a
    full-size weight without dw, dw without the other input's gradient): against the float64 reference."""
    run_torch_case(torch_ext, case, "float32", "cuda", seed=6, needs=needs)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("needs", ["x", "xy"])
def test_cuda_t2rows_col_read(torch_ext: Any, needs: str, dtype: str) -> None:
    """The short-row kernel reading a per-column weight it sums no gradient of, in every dtype (2-byte packs
    are held raw, a column operand's elements loaded one by one): against the float64 reference."""
    run_torch_case(torch_ext, "t2rows_col_read", dtype, "cuda", seed=6, needs=needs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", [c for c in list(CASES) + list(GPU_CASES) if not c.startswith("empty")])
def test_cuda_vs_torch_lerp(torch_ext: Any, case: str, dtype: str) -> None:
    """x, y and tensor-weight grads match torch.lerp on the GPU."""
    from lerp_testlib import draw

    from ops import lerp

    rng = np.random.default_rng(5)
    x, y, w = draw(case, rng)
    dt = getattr(torch, dtype)
    mk = lambda a: torch.tensor(a, dtype=dt, device="cuda", requires_grad=True)  # noqa: E731
    tx, ty = mk(x), mk(y)
    tw = w if isinstance(w, float) else mk(w)
    ours, theirs = lerp(tx, ty, tw), torch.lerp(tx, ty, tw)
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-11, "atol": 1e-11}
    torch.testing.assert_close(ours, theirs, **tol)
    inputs = [tx, ty] + ([] if isinstance(w, float) else [tw])
    g = torch.randn(ours.shape, dtype=dt, device="cuda")
    a = torch.autograd.grad(ours, inputs, g)
    b = torch.autograd.grad(theirs, inputs, g)
    for p, q in zip(a, b, strict=True):
        scale = max(1.0, float(q.abs().max())) if q.numel() else 1.0
        torch.testing.assert_close(p, q, rtol=tol["rtol"] * 10, atol=tol["atol"] * 10 * scale)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cuda_unaligned(torch_ext: Any, dtype: str) -> None:
    """Pointers off 16-byte alignment take the scalar path and stay correct."""
    from ops import lerp

    dt = getattr(torch, dtype)
    base = torch.randn(2, 4097, device="cuda").to(dt)
    x, y = base[0, 1:], base[1, 1:]
    w = torch.rand(4096, device="cuda").to(dt)[None][:, :].expand(1, 4096)[0]
    ref = torch.lerp(x.double(), y.double(), w.double())
    torch.testing.assert_close(lerp(x, y, w).double(), ref, rtol=1e-2, atol=1e-2)
    torch.testing.assert_close(lerp(x, y, 0.3).double(), torch.lerp(x.double(), y.double(), 0.3), rtol=1e-2,
                               atol=1e-2)
    # broadcast forward and backward off alignment: y a row broadcast over x's rows
    xb, yb = x.view(64, 64), y[:64]
    ref = torch.lerp(xb.double(), yb.double(), 0.3)
    torch.testing.assert_close(lerp(xb, yb, 0.3).double(), ref, rtol=1e-2, atol=1e-2)
    torch.testing.assert_close(lerp(xb, yb, w[:64]).double(), torch.lerp(xb.double(), yb.double(), w[:64].double()),
                               rtol=1e-2, atol=1e-2)
    if dtype in ("float32", "float64"):  # the saved-diff forward and backward, off alignment
        xs, ys, ws = (t.detach().requires_grad_() for t in (x, y, w))
        g = torch.randn(4097, device="cuda").to(dt)[1:]
        got = torch.autograd.grad(lerp(xs, ys, ws), (xs, ys, ws), g)
        want = torch.autograd.grad(torch.lerp(xs, ys, ws), (xs, ys, ws), g)
        for p, q in zip(got, want, strict=True):
            torch.testing.assert_close(p, q)


@pytest.mark.parametrize("weight", ["tensor", "scalar"])
def test_cuda_deterministic(torch_ext: Any, weight: str) -> None:
    """Reductions use fixed-order partial sums (the rows kernel's last block too): bitwise equal across runs."""
    from ops import lerp

    x = torch.randn(16, 1, 1, 1, device="cuda", requires_grad=True)
    y = torch.randn(16, 3, 224, 224, device="cuda", requires_grad=True)
    w = torch.rand(3, 1, 224, device="cuda", requires_grad=True) if weight == "tensor" else 0.5
    inputs = (x, y, w) if weight == "tensor" else (x, y)
    g = torch.randn(16, 3, 224, 224, device="cuda")
    r1 = torch.autograd.grad(lerp(x, y, w), inputs, g)
    for _ in range(3):
        r2 = torch.autograd.grad(lerp(x, y, w), inputs, g)
        for p, q in zip(r1, r2, strict=True):
            assert torch.equal(p, q)


def test_cuda_small_deterministic_and_captured(torch_ext: Any) -> None:
    """The small backward (three reduced gradients in one launch): bitwise equal across runs and when replayed
    from a CUDA graph."""
    _check_deterministic_and_captured([42, 1, 2, 6], [42, 755, 2, 1], [1, 755, 2, 6])


@pytest.mark.parametrize("knob", ["LERP_SMALL", "LERP_ROWS_WHOLE", "LERP_ROW_COUNTERS", "LERP_COLS_SLICES",
                                  "LERP_COLS_GROUPS", "LERP_COLS_WFULL", "LERP_T2ROWS",
                                  "LERP_GEN_WHOLE", "LERP_FWD_NARROW", "LERP_T2ROWS_NARROW",
                                  "LERP_T2ROWS_XY"])
def test_cuda_paths_with_knob_off(knob: str) -> None:
    """The paths the small-problem choices take over stay correct: the GPU cases again in a fresh process with
    the knob off (read once per process): LERP_SMALL=0 (tile2d, rows, cols, gen_r/gen_k with finalize instead
    of the small kernel), LERP_ROWS_WHOLE=0 (short rows in slices, summed by the last block or a finalize),
    LERP_ROW_COUNTERS=0 (rows and gen_r slices summed by a finalize launch, not by their last block),
    LERP_COLS_SLICES=0 (the layouts cols takes in row slices back on tile2d or gen_k), LERP_COLS_GROUPS=0 (dout
    [O, K, G] back on gen_r), LERP_COLS_WFULL=0 (a full-size weight back on tile2d, gen_k or gen_r),
    LERP_T2ROWS=0 (short rows with row gradients alone back on tile2d's tiles), LERP_GEN_WHOLE=0 (gen_r's short
    reduced runs in slices), LERP_FWD_NARROW=0 (broadcast forwards of no whole 16-byte packs back on the gather
    kernel or one-element packs), LERP_T2ROWS_NARROW=0 (short rows of no whole 16-byte packs back on tile2d's
    tiles), LERP_T2ROWS_XY=0 (short rows of x, y one per row and w full on the short-row kernel that reads the
    layout at run time)."""
    r = rerun_with_knob_off(knob, *(f"{__file__}::{name}" for name in
                                    ("test_cuda_vs_numpy", "test_cuda_tile2d",
                                     "test_cuda_tile2d_deterministic_and_captured")))
    assert r.returncode == 0, r.stdout[-4000:]


def test_cuda_dependent_launch_off() -> None:
    """With OPS_PDL=0 (every finalize_kernel launched plainly, not to overlap the kernel of its partials) the
    GPU cases stay correct, and captured replays match: the cases again in a fresh process."""
    r = rerun_with_env({"OPS_PDL": "0"}, *(f"{__file__}::{name}" for name in
                                           ("test_cuda_vs_numpy", "test_cuda_tile2d_deterministic_and_captured",
                                            "test_cuda_cols_slices_deterministic_and_captured")))
    assert r.returncode == 0, r.stdout[-4000:]


def test_cuda_dependent_launch_same_bits(tmp_path: Any) -> None:
    """The backwards whose reduced gradients take a finalize_kernel give the same bits with it launched to
    overlap the kernel before it (the default) and launched plainly (OPS_PDL=0), each in a fresh process."""
    grad_bits.assert_same_bits("lerp", {"OPS_PDL": "1"}, {"OPS_PDL": "0"}, tmp_path)


@pytest.mark.parametrize("packs", ["2", "4"])
def test_cuda_packs_forced(packs: str) -> None:
    """Every case again in a fresh process with LERP_PACKS forcing the packs a thread of the flat kernels
    (contig and nd, one-element packs and the gather kernel included), which their launches otherwise choose
    by size: U=4 of the gather kernel only fits one wave in a narrow band of sizes per dtype."""
    r = rerun_with_env({"LERP_PACKS": packs}, f"{__file__}::test_cuda_vs_numpy")
    assert r.returncode == 0, r.stdout[-4000:]


def test_cuda_graph_capture(torch_ext: Any) -> None:
    """Captured into a CUDA graph, the rows backward sums its partials by a finalize launch instead of the
    per-stream counters: replays give the eager result, bit for bit, also on another stream."""
    from ops import lerp

    x = torch.randn(16, 1, 1, 1, device="cuda", requires_grad=True)
    y = torch.randn(16, 3, 224, 224, device="cuda", requires_grad=True)
    g = torch.randn(16, 3, 224, 224, device="cuda")
    eager = torch.autograd.grad(lerp(x, y, 0.5), (x, y), g)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up on a side stream, as torch.cuda.graph asks
        torch.autograd.grad(lerp(x, y, 0.5), (x, y), g)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = torch.autograd.grad(lerp(x, y, 0.5), (x, y), g)
    for stream in (torch.cuda.current_stream(), side):
        for p in captured:
            p.zero_()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            graph.replay()
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        for p, q in zip(captured, eager, strict=True):
            assert torch.equal(p, q)
    # eager calls after the graph still use (and reset) the counters correctly
    again = torch.autograd.grad(lerp(x, y, 0.5), (x, y), g)
    for p, q in zip(again, eager, strict=True):
        assert torch.equal(p, q)


def test_cuda_saved_diff(torch_ext: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tensor weight that needs a gradient: y - x saved instead of x and y, same gradients."""
    check_saved_diff(torch_ext, "cuda", monkeypatch)


# Backward over a [rows, cols] view with every gradient in one pass (tile2d): per-row, per-column and
# one-element operands, vectorized and scalar packs, tails, a persistent grid, column sums by the last block
# (a thread or a warp per sum) or by a finalize launch; t2_x_one and t2_x_row_long (f64) take other paths.
# Rows of whole 16-byte packs, at most 256 positions, whose reduced gradients are all row sums take the short-row
# kernel (lane groups of 1-32 a row; over 2^19 positions, so not the small kernel):
# t2_xy_rows (2-byte types: 8 packs, 8 lanes a row), t2_xy_rows_tail (a last warp with one live row),
# t2_xy_rows_short (a lane a row in every dtype), t2_xw_rows, and with the saved y - x (fp32, fp64; 2-byte
# types take the rows kernel) t2_w_row_many (fp64, its blocks looping over the rows past one wave),
# t2_w_row_256 (128 packs of fp64) and t2_w_row_2 (fp64, a lane a row); rows that divide into narrower packs
# take it at those (t2_w_row_54, t2_w_row_52, t2_xy_rows_narrow below, t2_w_row and t2_w_row_many in fp32);
# rows of odd length (t2_xy_rows_odd, t2_unvectorized) stay on tile2d's tiles.
TILE2D_CASES: dict[str, tuple[list[int], list[int], Any]] = {
    "t2_w_row": ([3001, 90], [3001, 90], [3001, 1]),
    "t2_w_row_many": ([40000, 90], [40000, 90], [40000, 1]),
    "t2_x_row_y_col": ([6783, 1], [1, 13], [6783, 1]),
    "t2_x_row_y_col_scalar": ([6783, 1], [1, 13], 0.3),
    "t2_three_cols": ([1, 3], [1201, 1], [1, 3]),
    "t2_col155": ([1, 155], [831, 1], [1, 155]),
    "t2_col345": ([12, 1], [1, 345], [12, 1]),
    "t2_y_col": ([6, 2, 5, 65], [1, 1, 1, 65], [6, 2, 5, 65]),
    "t2_x_one": ([1, 1], [287, 4], [287, 4]),
    "t2_w_col_ticket": ([20000, 10], [20000, 10], [1, 10]),
    "t2_y_col_finalize": ([24300, 4, 173], [1, 4, 173], [24300, 4, 173]),  # 2^24+ positions: finalize launch
    "t2_unvectorized": ([999, 1023], [999, 1023], [999, 1]),
    "t2_x_row_long": ([500, 1], [500, 1500], [500, 1500]),
    "t2_xy_rows": ([9000, 1], [9000, 1], [9000, 64]),
    "t2_xy_rows_tail": ([9001, 1], [9001, 1], [9001, 64]),
    "t2_xy_rows_short": ([70001, 1], [70001, 1], [70001, 8]),
    "t2_xy_rows_odd": ([9000, 1], [9000, 1], [9000, 63]),
    "t2_xw_rows": ([9000, 1], [9000, 64], [9000, 1]),
    "t2_w_row_256": ([3000, 256], [3000, 256], [3000, 1]),
    "t2_w_row_2": ([300001, 2], [300001, 2], [300001, 1]),
    # short rows that divide no 16-byte pack but a narrower one (the short-row kernel at 8- or 4-byte packs):
    # rows of 54 (f32 pairs, 2-byte pairs; f64 whole packs), of 52 (2-byte quads), x and y summed along rows
    # of 62 (pairs)
    "t2_w_row_54": ([20000, 54], [20000, 54], [20000, 1]),
    "t2_w_row_52": ([20000, 52], [20000, 52], [20000, 1]),
    "t2_xy_rows_narrow": ([9000, 1], [9000, 1], [9000, 62]),
}


def _t2_grads(case: str, dtype: str, seed: int) -> tuple[list[Any], dict[str, np.ndarray], list[Any]]:
    from lerp_testlib import reference

    from ops import lerp

    rng = np.random.default_rng(seed)
    xs, ys, ws = TILE2D_CASES[case]
    dt = getattr(torch, dtype)
    mk = lambda a: torch.tensor(a, device="cuda").to(dt).requires_grad_()  # noqa: E731
    tx, ty = mk(rng.standard_normal(xs)), mk(rng.standard_normal(ys))
    tw = ws if isinstance(ws, float) else mk(rng.uniform(-0.6, 1.6, ws))
    out = lerp(tx, ty, tw)
    tg = torch.tensor(rng.standard_normal(tuple(out.shape)), device="cuda").to(dt)
    inputs = [tx, ty] + ([] if isinstance(tw, float) else [tw])
    grads = list(torch.autograd.grad(out, inputs, tg))
    npy = lambda t: t.detach().double().cpu().numpy()  # noqa: E731
    ref = reference(npy(tx), npy(ty), tw if isinstance(tw, float) else npy(tw), npy(tg))
    return grads, ref, inputs


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(TILE2D_CASES))
def test_cuda_tile2d(torch_ext: Any, case: str, dtype: str) -> None:
    from lerp_testlib import assert_close, terms_of

    grads, ref, inputs = _t2_grads(case, dtype, seed=7)
    for name, t, gr in zip(["dx", "dy", "dw"], inputs, grads, strict=False):
        assert_close(gr.detach().double().cpu().numpy(), ref[name], dtype, f"{case} {dtype} {name}",
                     terms_of(ref["out"].shape, tuple(t.shape)))


@pytest.mark.parametrize("case", ["t2_x_row_y_col", "t2_w_col_ticket", "t2_y_col_finalize", "t2_w_row_many",
                                  "t2_xy_rows", "t2_w_row_54"])
def test_cuda_tile2d_deterministic_and_captured(torch_ext: Any, case: str) -> None:
    """Fixed-order sums: bitwise equal across runs, and under graph capture (finalize launch instead of the
    last block's sums) equal to the eager result."""
    _check_deterministic_and_captured(*TILE2D_CASES[case])


@pytest.mark.parametrize("case", ["gen_r_ticket_few", "gen_r_ticket_many", "gen_r_whole"])
def test_cuda_gen_r_ticket_deterministic_and_captured(torch_ext: Any, case: str) -> None:
    """gen_r's slices added by their last block (one thread in order, or a warp), and a short run whole in one
    block: bitwise equal across runs, and under graph capture (a finalize launch in the same order) equal to the
    eager result."""
    _check_deterministic_and_captured(*GPU_CASES[case])


@pytest.mark.parametrize("case", ["cols_sliced_dw", "cols_sliced_w768", "cols_sliced_narrow", "cols_groups_dw",
                                  "cols_wfull_dy", "cols_wfull_groups"])
def test_cuda_cols_slices_deterministic_and_captured(torch_ext: Any, case: str) -> None:
    """cols_sliced_kernel's row slices (row lanes summed in lane order; a target's columns in column order)
    added by the chunked finalize launch: bitwise equal across runs, and under graph capture equal to the eager
    result."""
    _check_deterministic_and_captured(*GPU_CASES[case])


def _check_deterministic_and_captured(xs: list[int], ys: list[int], ws: list[int]) -> None:
    """Gradients of lerp(x, y, w) with these shapes: bitwise equal across runs and when replayed from a CUDA
    graph captured after a warm-up on a side stream."""
    from ops import lerp

    x = torch.randn(xs, device="cuda", requires_grad=True)
    y = torch.randn(ys, device="cuda", requires_grad=True)
    w = torch.rand(ws, device="cuda", requires_grad=True)
    g = torch.randn(torch.broadcast_shapes(x.shape, y.shape, w.shape), device="cuda")
    eager = torch.autograd.grad(lerp(x, y, w), (x, y, w), g)
    for _ in range(2):
        for p, q in zip(torch.autograd.grad(lerp(x, y, w), (x, y, w), g), eager, strict=True):
            assert torch.equal(p, q)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.autograd.grad(lerp(x, y, w), (x, y, w), g)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = torch.autograd.grad(lerp(x, y, w), (x, y, w), g)
    for p in captured:
        p.zero_()
    graph.replay()
    torch.cuda.synchronize()
    for p, q in zip(captured, eager, strict=True):
        assert torch.equal(p, q)


# The saved-diff backward over each backward path: every case whose x and y have the output's shape and
# whose weight tensor is broadcast (rows, cols, sliced and grouped cols, tile2d, small, gather-forward
# layouts), plus the sweep's two layouts that motivated it, shrunk: a per-row weight of rows of 90 and a
# weight kept along the outer and inner dims of [O, K, G].
def _diff_cases() -> dict[str, tuple[list[int], list[int], Any]]:
    cases = {**CASES, **GPU_CASES, **TILE2D_CASES,
             "diff_w_rows": ([37399, 90], [37399, 90], [37399, 1]),
             "diff_w_outer_inner": ([532, 1124, 4], [532, 1124, 4], [532, 1, 4])}
    return {k: v for k, v in cases.items()
            if isinstance(v[2], list) and v[0] == v[1] and len(v[2]) <= len(v[0])
            and 1 < np.prod(v[0], dtype=np.int64) and np.prod(v[2], dtype=np.int64) < np.prod(v[0], dtype=np.int64)}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", list(_diff_cases()))
def test_cuda_saved_diff_paths(torch_ext: Any, case: str, dtype: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A broadcast weight that needs a gradient: the forward saves y - x (two tensors); the output, dx and dy
    are bitwise those of the x, y path and dw close to its (the backward's paths read no x: kXYDiff), and a
    second run gives the same bits."""
    from ops import lerp

    xs, _, ws = _diff_cases()[case]
    dt = getattr(torch, dtype)
    gen = torch.Generator(device="cpu").manual_seed(11)
    x, y, w = (torch.randn(s, generator=gen, dtype=dt).cuda().requires_grad_() for s in (xs, xs, ws))
    g = torch.randn(xs, generator=gen, dtype=dt).cuda()
    monkeypatch.setenv("OPBENCH_TORCH_AUTOGRAD", "cpp")
    assert len(saved_by_forward(torch, x, y, w)) == 2
    for inputs in ([x, y, w], [w]):
        out = lerp(x, y, w)
        ours = torch.autograd.grad(out, inputs, g)
        again = torch.autograd.grad(lerp(x, y, w), inputs, g)
        assert all(torch.equal(p, q) for p, q in zip(ours, again, strict=True))
        monkeypatch.setenv("OPBENCH_TORCH_AUTOGRAD", "python")
        plain_out = lerp(x, y, w)
        plain = torch.autograd.grad(plain_out, inputs, g)
        monkeypatch.setenv("OPBENCH_TORCH_AUTOGRAD", "cpp")
        assert torch.equal(out, plain_out)
        check_diff_grads(torch, ours, plain, inputs, x, w, case)
