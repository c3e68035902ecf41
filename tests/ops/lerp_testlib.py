"""Shared cases, inputs and float64 NumPy references for the lerp op tests."""

from __future__ import annotations

from typing import Any

import numpy as np

DTYPES = ["float32", "float64", "float16", "bfloat16"]

# name: (x shape, y shape, weight shape or Python float)
CASES: dict[str, tuple[list[int], list[int], Any]] = {
    "scalar_lo": ([4, 37], [4, 37], 0.3),
    "scalar_hi": ([4, 37], [4, 37], 0.8),
    "scalar_neg": ([3, 11], [3, 11], -0.7),
    "scalar_tensor1": ([5, 9], [5, 9], [1]),
    "scalar_tensor0d": ([5, 9], [5, 9], []),
    "same_shape": ([3, 5, 8], [3, 5, 8], [3, 5, 8]),
    "bcast_issue": ([16, 1, 1, 1], [16, 3, 8, 8], [3, 1, 8]),
    "bcast_issue_scalar": ([16, 1, 1, 1], [16, 3, 8, 8], 0.5),
    "bcast_leading": ([2, 3, 4], [2, 2, 3, 4], 0.4),
    "bcast_middle": ([2, 1, 2, 5, 5], [2, 2, 1, 5, 5], 0.7),
    "bcast_middle_w": ([2, 1, 2, 5, 5], [2, 2, 1, 5, 5], [2, 1, 5]),
    "bcast_w_to_xy": ([2, 2, 5, 5], [2, 2, 5, 5], [5]),
    "bcast_y_small": ([6, 40], [40], [6, 1]),
    "w_grows_rank": ([3], [3], [2, 1]),
    "zero_d": ([], [], []),
    "zero_d_float": ([], [], 0.25),
    "empty": ([0, 3], [0, 3], 0.5),
    "empty_bcast": ([1, 3], [0, 3], [3]),
}

# Larger cases for the GPU: vectorized paths, tails, multi-block partial sums.
GPU_CASES: dict[str, tuple[list[int], list[int], Any]] = {
    "issue_bcast": ([16, 1, 1, 1], [16, 3, 224, 224], [3, 1, 224]),
    "issue_bcast_scalar": ([16, 1, 1, 1], [16, 3, 224, 224], 0.5),
    "middle_dims": ([8, 1, 64, 256], [8, 16, 1, 256], 0.3),
    "middle_dims_w": ([8, 1, 64, 256], [8, 16, 1, 256], [64, 1]),
    "odd_tail": ([1000003], [1000003], 0.2),
    "same_large": ([1000, 1024], [1000, 1024], [1000, 1024]),
    "same_odd": ([1000003], [1000003], [1000003]),  # the saved-diff path's scalar tail
    "column_reduce": ([1, 4096], [512, 4096], 0.7),
    "short_rows": ([4096, 1], [4096, 3], [3]),
    "scalar_tensor_dw": ([300, 1000], [300, 1000], [1]),
    "leading": ([3, 64, 64], [4, 3, 64, 64], [64]),
    # dw (kept dims innermost) and a second reduced gradient summed in the same pass
    "fused_dx_dw": ([5, 1, 1, 1], [5, 3, 7, 12], [3, 1, 12]),
    "fused_dy_dw": ([5, 3, 7, 12], [5, 1, 1, 1], [3, 1, 12]),
    "fused_two_dims": ([4, 1, 6, 1], [4, 3, 6, 8], [3, 1, 8]),
    "fused_many_slices": ([64, 1, 1, 1], [64, 2, 96, 160], [2, 1, 160]),
    # large broadcast forwards (compiled-dims kernel, 2 packs per thread): 3 dims, unvectorized
    # rows, 2-byte types
    "rows_carry": ([40000, 1, 64], [1, 3, 64], 0.3),
    "rows_odd": ([20000, 1, 67], [1, 3, 67], [3, 67]),
    "rows_half": ([16, 1, 128, 256], [16, 32, 1, 256], 0.3),
    # kept dims innermost over a short reduced range: several threads per group, no slices
    "short_reduce": ([3, 224, 224], [16, 3, 224, 224], 0.7),
    # broadcast forward: 5 collapsed dims (the runtime-dims kernel), and a size whose compiled-dims
    # kernel runs 2 packs per thread on a 132-SM GPU (one wave)
    "five_dims": ([3, 1, 4, 1, 5], [1, 2, 1, 6, 1], [4, 1, 1]),
    "nd_two_packs": ([16, 1, 1, 1], [16, 3, 160, 160], [3, 1, 160]),
    # backward summed over contiguous rows (rows kernel): one row; unvectorized rows; y reduced with a
    # one-element tensor weight; long rows in multi-step slices; more rows than a grid's y extent
    "rows_single": ([1], [262144], 0.3),
    "rows_odd_len": ([6, 1], [6, 1001], 0.4),
    "rows_dy": ([8, 3, 64, 64], [8, 1, 1, 1], [1]),
    "rows_long": ([2, 1], [2, 4000000], 0.6),
    "rows_many": ([66000, 1], [66000, 260], 0.2),
    # backward summed down the columns (cols kernel): the weight's gradient (x, y read); y reduced with a
    # weight per column; columns not a multiple of the pack (unvectorized)
    "cols_dw": ([4, 40000], [4, 40000], [40000]),
    "cols_dy_wcol": ([6, 50000], [50000], [50000]),
    "cols_odd": ([3, 70001], [8, 3, 70001], 0.4),
    # broadcast forward of 2^19 elements or more whose packs cross a row's or the tensor's end (gather
    # kernel): y gathered per element with rows of 692; a one-element y over an odd count; a weight of 10
    # columns (a crossing every few packs); one of 6 (2-byte types: rows shorter than a pack, several
    # crossings a pack); 4 dims with x, y gathered, w constant along rows
    "gather_rows": ([760, 4, 173], [1, 4, 173], [760, 4, 173]),
    "gather_tail": ([184791, 9], [1, 1], [184791, 9]),
    "gather_w_cols": ([52429, 10], [52429, 10], [1, 10]),
    "gather_w_short": ([87382, 6], [87382, 6], [1, 6]),
    "gather_nd4": ([128, 3, 1, 229], [128, 1, 6, 229], [1, 3, 6, 1]),
    # broadcast forwards whose innermost run divides no 16-byte pack but a narrower one (fwd_nd_kernel in 8-
    # or 4-byte packs; fp64 takes whole 16-byte packs): a weight of 7492 columns (8-byte packs) over 2^19
    # elements and more, where the gather kernel would otherwise run; a run of 6 (2-element packs of 2- and
    # 4-byte types) with y broadcast along it (one element a pack) and x, w along other dims
    "nd_narrow_w_row": ([90, 7492], [90, 7492], [1, 7492]),
    "nd_narrow_pairs": ([50, 1, 2, 6], [50, 9, 2, 1], [1, 9, 2, 6]),
    # rows kernel over rows whose length is not a multiple of the pack (whole packs from each row's first
    # aligned position, the ends one element a thread): one row (the weight's gradient, x, y read); rows
    # of several slices each
    "rows_ends_dw": ([1280427, 2], [1280427, 2], [1, 1]),
    "rows_ends_long": ([3, 1], [3, 300001], 0.4),
    # small backward (one launch): three reduced gradients; a whole block per element (345 positions);
    # dy and dw written full size by the reduced dx's groups; 32 lanes of two batches per element (140
    # positions) beside whole blocks (210, too few elements for 32-lane groups)
    "small_three": ([42, 1, 2, 6], [42, 755, 2, 1], [1, 755, 2, 6]),
    "small_block": ([12, 1], [1, 345], [12, 1]),
    "small_full": ([1, 494, 1], [35, 494, 2], [35, 494, 2]),
    "small_warp_batches": ([15, 2, 1, 2, 49], [1, 2, 140, 2, 49], [15, 1, 140, 2, 49]),
    "small_warp_few": ([3, 1, 5], [1, 210, 5], [3, 210, 1]),
    # a row of at most 1024 packs in one step of one block (no slices, no ticket): the weight's gradient of
    # a one-element weight over 6026 positions (x, y read; the row's ends one element a thread)
    "rows_whole_ends": ([3013, 2], [3013, 2], [1]),
    # gen_r in slices whose last block adds the partials (ticket counters): one kept index of 6000 positions in
    # a few slices (one thread adds them in order), four rows of 300000 in many slices (a warp adds them); one
    # of 1148 (at most 2 packs a thread) whole in one block
    "gen_r_ticket_few": ([1, 1], [1500, 4], [1500, 4]),
    "gen_r_whole": ([1, 1], [287, 4], [287, 4]),
    # tile2d's short-row kernel reading a per-column weight it sums no gradient of (test_cuda_gradient_subsets,
    # needs x or xy): x summed along rows of 40, w read a column at a time; with dw asked for, tile2d's tiles
    "t2rows_col_read": ([14001, 1], [14001, 40], [1, 40]),
    "gen_r_ticket_many": ([4, 1], [4, 300000], [4, 300000]),
    # gen_r in 8-byte packs where 16-byte ones do not divide the reduced run: a one-element y with x and w
    # full (dw reads x, y) over 1663092 positions (4-element packs of 2-byte types), and 1663110 (f32 pairs)
    "gen_r_half": ([184788, 9], [1, 1], [184788, 9]),
    "gen_r_half_f32": ([184790, 9], [1, 1], [184790, 9]),
    # cols_sliced_kernel over row slices, the column partials added by the chunked finalize (more rows than
    # one pass takes, or too few columns for a wave): a per-column weight's gradient over columns of a
    # multiple of 4, not 8 (8-byte packs of 2-byte types, tiles of 235 packs); a weight of 768 columns over
    # 2048 rows (16-byte packs, 2 row lanes for 2-byte types); y reduced down 1500 rows of 3002 columns
    # (8-byte f32 packs, single 2-byte columns: tiles of 251, an odd block size); a weight of 224 columns
    # over 2688 rows (28 packs of 2-byte types, 9 row lanes: a lane count that is no power of two)
    "cols_sliced_dw": ([364, 7492], [364, 7492], [1, 7492]),
    "cols_sliced_w768": ([2048, 768], [2048, 768], [768]),
    "cols_sliced_dy": ([1500, 3002], [3002], 0.3),
    "cols_sliced_narrow": ([4, 3, 224, 224], [4, 3, 224, 224], [224]),
    # cols_sliced_kernel over dout [O, K, G], the gradient kept along K, G adjacent columns a target (over
    # 2^19 positions, so not the small kernel): the weight's gradient with 31 one-column packs a target, in 4
    # row slices and (6 rows) in one; y reduced over [64, 1200, 7] with a scalar weight (16 slices); y
    # reduced over [256, 300, 8] with a weight one a column (whole packs a target where 8 columns fill them)
    "cols_groups_dw": ([9, 2, 1100, 31], [9, 2, 1100, 31], [1, 1, 1100, 1]),
    "cols_groups_one_slice": ([3, 2, 3000, 31], [3, 2, 3000, 31], [1, 1, 3000, 1]),
    "cols_groups_dy": ([64, 1200, 7], [1200, 1], 0.4),
    "cols_groups_wcol": ([256, 300, 8], [300, 1], [300, 8]),
    # the cols kernels with a full-size weight, dw and the other input's gradient written on the way: y
    # reduced down 1500 rows of 692 columns (8-byte packs of 2-byte types); x reduced over dout [800, 50, 28]
    # (targets of 28 columns, x read one value a target); x reduced over [2000, 300, 3] (one-column packs);
    # y reduced over 16 rows of 40000 columns (one pass for 4- and 8-byte types)
    "cols_wfull_dy": ([1500, 4, 173], [1, 4, 173], [1500, 4, 173]),
    "cols_wfull_groups": ([1, 50, 1, 1], [400, 2, 50, 14, 2], [400, 2, 50, 14, 2]),
    "cols_wfull_odd": ([1, 300, 1], [2000, 300, 3], [2000, 300, 3]),
    "cols_wfull_one_pass": ([16, 40000], [40000], [16, 40000]),
}


def sum_to(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Reduce a broadcast array back to `shape` (the gradient rule)."""
    lead = a.ndim - len(shape)
    a = a.sum(axis=tuple(range(lead))) if lead else a
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and a.shape[i] != 1)
    return a.sum(axis=axes, keepdims=True).reshape(shape) if axes else a.reshape(shape)


def draw(case: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, Any]:
    """float64 x, y and weight (array or float) for a case; weights cover both formula branches."""
    xs, ys, ws = {**CASES, **GPU_CASES}[case]
    x = rng.standard_normal(xs)
    y = rng.standard_normal(ys)
    w = ws if isinstance(ws, float) else rng.uniform(-0.6, 1.6, ws)
    return x, y, w


def reference(x: np.ndarray, y: np.ndarray, w: Any, g: np.ndarray) -> dict[str, np.ndarray]:
    """Forward and gradients in float64 (stable form, as both frameworks)."""
    wa = np.asarray(w, dtype=np.float64)
    d = y - x
    out = np.where(np.abs(wa) < 0.5, x + wa * d, y - d * (1.0 - wa))
    out = np.broadcast_to(out, np.broadcast_shapes(x.shape, y.shape, wa.shape))
    ref = {
        "out": np.array(out),
        "dx": sum_to(np.broadcast_to(g * (1.0 - wa), out.shape), x.shape),
        "dy": sum_to(np.broadcast_to(g * wa, out.shape), y.shape),
    }
    if not isinstance(w, float):
        ref["dw"] = sum_to(np.broadcast_to(g * d, out.shape), wa.shape)
    return ref


EPS = {"float32": 2.0**-23, "float64": 2.0**-52, "float16": 2.0**-10, "bfloat16": 2.0**-7}


def assert_close(actual: np.ndarray, expected: np.ndarray, dtype: str, what: str, terms: int = 1) -> None:
    """Within the dtype's rounding (a few ulps, scaled with the number of summed terms)."""
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    if expected.size == 0:
        return
    assert np.all(np.isfinite(actual)), f"{what}: non-finite values"
    eps = EPS[dtype]
    if dtype in ("float16", "bfloat16"):
        rtol = eps + 8 * 2.0**-23 * max(1, terms) ** 0.5  # one rounding of the float32 result
    else:
        rtol = 8 * eps * max(1, terms) ** 0.5 + (1e-5 if dtype == "float32" else 1e-12)
    scale = float(np.abs(expected).max()) + 1e-30
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * scale, err_msg=what)


def terms_of(out_shape: tuple[int, ...], shape: tuple[int, ...]) -> int:
    """How many elements of the output are summed into one gradient element."""
    n_out = int(np.prod(out_shape)) if out_shape else 1
    n_in = int(np.prod(shape)) if shape else 1
    return max(1, n_out // max(1, n_in))


def _torch_tensor(torch: Any, a: np.ndarray, dtype: str, device: str = "cpu", grad: bool = True) -> Any:
    t = torch.tensor(a, dtype=torch.float64, device=device).to(getattr(torch, dtype))
    return t.requires_grad_(grad)


def _torch_np(t: Any) -> np.ndarray:
    return t.detach().double().cpu().numpy()


def run_torch_case(torch: Any, case: str, dtype: str, device: str, seed: int = 0, needs: str = "xyw") -> None:
    """Our torch op vs the NumPy reference on the rounded inputs (forward, and the gradients of the inputs
    named in `needs`, the others not requiring one; a float weight has none)."""
    from ops import lerp

    rng = np.random.default_rng(seed)
    x, y, w = draw(case, rng)
    tx, ty = _torch_tensor(torch, x, dtype, device, "x" in needs), _torch_tensor(torch, y, dtype, device, "y" in needs)
    tw = w if isinstance(w, float) else _torch_tensor(torch, w, dtype, device, "w" in needs)
    out = lerp(tx, ty, tw)
    xr, yr = _torch_np(tx), _torch_np(ty)
    wr = w if isinstance(w, float) else _torch_np(tw)
    g = rng.standard_normal(out.shape)
    tg = _torch_tensor(torch, g, dtype, device, grad=False)
    ref = reference(xr, yr, wr, _torch_np(tg))
    assert out.dtype == tx.dtype and tuple(out.shape) == ref["out"].shape
    assert_close(_torch_np(out), ref["out"], dtype, f"{case} {dtype} out")
    named = [("dx", tx), ("dy", ty)] + ([] if isinstance(w, float) else [("dw", tw)])
    named = [(name, t) for name, t in named if t.requires_grad]
    if not named:
        return
    grads = torch.autograd.grad(out, [t for _, t in named], tg, allow_unused=True)
    for (name, t), gr in zip(named, grads, strict=True):
        assert gr is not None, f"{case} {dtype} {name} missing"
        assert_close(_torch_np(gr), ref[name], dtype, f"{case} {dtype} {name} (needs {needs})",
                     terms_of(ref["out"].shape, tuple(t.shape)))


def saved_by_forward(torch: Any, x: Any, y: Any, w: Any) -> list[Any]:
    """The tensors our op's autograd saves for its backward (packed through saved_tensors_hooks)."""
    from ops import lerp

    saved: list[Any] = []

    def pack(t: Any) -> Any:
        saved.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        lerp(x, y, w)
    return saved


# Weights of a (37, 53) x and y whose training forward saves y - x: full size, one element (also 0-dim),
# broadcast per row, per column, and both (the contig kernel, and the nd kernel's layouts).
SAVED_DIFF_WEIGHTS = ((37, 53), (1,), (), (37, 1), (53,), (1, 53))
# Weights against x, y [37, 54], whose rows of 54 divide no 16-byte f32 pack but 8-byte ones (the GPU's
# saved-diff forward then runs the nd kernel at the narrower pack).
SAVED_DIFF_NARROW = ((54,), (37, 1))
# x, y and a per-row weight over enough rows for the backward's short-row kernel, whose rows of 54 it reads in
# 8-byte packs (y - x saved; f64: whole 16-byte packs).
SAVED_DIFF_ROWS = ((20000, 54), (20000, 1))


def check_diff_grads(torch: Any, ours: Any, plain: Any, inputs: list[Any], x: Any, w: Any, note: Any) -> None:
    """The saved-diff path's gradients against the x, y path's: bitwise, except a broadcast weight's, whose
    sums the two paths may split differently (each kernel's occupancy sets its grid): close to them."""
    for t, p, q in zip(inputs, ours, plain, strict=True):
        assert p.shape == q.shape, note
        if t is w and w.shape != x.shape:
            tol = (1e-4, 1e-3) if p.dtype == torch.float32 else (1e-10, 1e-9)
            torch.testing.assert_close(p, q, rtol=tol[0], atol=tol[1], msg=lambda m: f"{note}: {m}")
        else:
            assert torch.equal(p, q), note


def check_saved_diff(torch: Any, device: str, monkeypatch: Any) -> None:
    """CUDA float32/float64 x, y of one shape with a weight that needs a gradient and broadcasts to them:
    the forward saves y - x and w (not x and y) and gives the x, y path's output bit for bit; every subset of
    gradients is what the x, y path gives (check_diff_grads), and the same bits on a second run."""
    from ops import lerp

    monkeypatch.setenv("OPBENCH_TORCH_AUTOGRAD", "cpp")
    gen = torch.Generator(device="cpu").manual_seed(3)

    def mk(dtype: Any, shape: tuple[int, ...] = (37, 53), grad: bool = True) -> Any:
        return torch.randn(shape, generator=gen, dtype=dtype).to(device).requires_grad_(grad)

    cases = [((37, 53), w) for w in SAVED_DIFF_WEIGHTS] + [((37, 54), w) for w in SAVED_DIFF_NARROW]
    cases.append(SAVED_DIFF_ROWS)
    for dtype in (torch.float32, torch.float64):
        for shape, wshape in cases:
            x, y, w = mk(dtype, shape), mk(dtype, shape), mk(dtype, wshape)
            saved = saved_by_forward(torch, x, y, w)
            assert len(saved) == 2 and torch.equal(saved[0], (y - x).detach()), wshape
            assert torch.equal(saved[1], w)
            monkeypatch.setenv("OPBENCH_TORCH_AUTOGRAD", "python")
            plain_out = lerp(x, y, w)
            monkeypatch.setenv("OPBENCH_TORCH_AUTOGRAD", "cpp")
            assert torch.equal(lerp(x, y, w), plain_out), wshape
            g = mk(dtype, shape, grad=False)
            for inputs in ([x, y, w], [w], [x, w], [y, w]):
                ours = torch.autograd.grad(lerp(x, y, w), inputs, g)
                again = torch.autograd.grad(lerp(x, y, w), inputs, g)
                assert all(torch.equal(p, q) for p, q in zip(ours, again, strict=True)), wshape
                monkeypatch.setenv("OPBENCH_TORCH_AUTOGRAD", "python")  # saves x, y, w
                plain = torch.autograd.grad(lerp(x, y, w), inputs, g)
                monkeypatch.setenv("OPBENCH_TORCH_AUTOGRAD", "cpp")
                check_diff_grads(torch, ours, plain, inputs, x, w, wshape)
    # Not taken: 2-byte types (y - x would be rounded), w without a gradient, x and y of different shapes,
    # a weight of more dims than x, a layout of more than 4 collapsed dims (no one-pass forward), no_grad.
    half = [mk(torch.float16) for _ in range(3)]
    assert len(saved_by_forward(torch, *half)) == 3
    x, y = mk(torch.float32), mk(torch.float32)
    assert len(saved_by_forward(torch, x, y, mk(torch.float32, grad=False))) == 3
    assert len(saved_by_forward(torch, x, mk(torch.float32, (37, 1)), mk(torch.float32, (53,)))) == 3
    assert len(saved_by_forward(torch, x, y, mk(torch.float32, (2, 37, 53)))) == 3
    six = (2, 3, 2, 3, 2, 3)
    assert len(saved_by_forward(torch, mk(torch.float32, six), mk(torch.float32, six),
                                 mk(torch.float32, (2, 1, 2, 1, 2, 1)))) == 3
    with torch.no_grad():
        assert saved_by_forward(torch, x, y, mk(torch.float32)) == []
