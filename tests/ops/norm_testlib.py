"""Shared cases, float64 references and checks for the rms_norm and layer_norm op tests (torch and Paddle)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

DTYPES = ["float32", "float16", "bfloat16"]
# |ours - float64 reference| <= ATOL + RTOL * |reference|, per input dtype (one or two roundings to it)
TOL = {"float32": (2e-5, 2e-4), "float16": (3e-3, 6e-3), "bfloat16": (2.5e-2, 3e-2)}

# name: (x shape, weight, bias) with weight/bias "same" (x's dtype), "f32" or None
CPU_CASES: dict[str, tuple[tuple[int, ...], str | None, str | None]] = {
    "odd_hidden": ((5, 37), "same", "same"),
    "one_row": ((1, 1000), "same", "same"),
    "three_dims": ((2, 3, 64), "same", None),
    "no_params": ((4, 24), None, None),
    "f32_params": ((6, 130), "f32", "f32"),
    "bias_only": ((3, 16), None, "same"),
    "empty_rows": ((0, 16), "same", "same"),
    "empty_middle": ((2, 0, 8), "same", "same"),
    "odd_5121": ((2, 5121), "same", "same"),
}
# Larger cases for the GPU: every path (warp, block, cluster, loop; backward sums in registers and in shared
# memory), loose head/tail elements, row groups looping over rows, and a grid of one block writing dw/db
# itself.
GPU_CASES: dict[str, tuple[tuple[int, ...], str | None, str | None]] = {
    **CPU_CASES,
    "one_row_768": ((1, 768), "f32", "f32"),  # one row of whole packs: bwd_one_row
    "one_row_4096": ((1, 4096), None, None),
    "one_row_16384": ((1, 16384), "same", "same"),
    "warp_64": ((3000, 64), "same", "same"),
    "warp_1000": ((777, 1000), "same", "same"),
    "warp_1024": ((5000, 1024), "f32", "f32"),  # fwd: 2-byte rows in blocks of a pack a thread, f32 at 2
    "many_rows_2048": ((3000, 2048), "same", "same"),  # fwd: 2-byte rows in 128-thread blocks at 2 packs
    "block_4096": ((1500, 4096), "same", "same"),
    "block_8192": ((300, 8192), "same", None),
    "block_12288": ((400, 12288), "same", "same"),  # 2-byte bwd: a 512-thread block, sums in shared memory
    "odd_block_12001": ((300, 12001), "same", "same"),  # f32 fwd: 384 x 8, a wave of 3 blocks an SM (WAVE3_FITS)
    "wave3_12288": ((272, 12288), "same", "same"),  # the same, whole packs
    "block_16384": ((129, 16384), "same", "same"),  # fewer rows than SMs: a cluster each (fwd; bwd: see split_*)
    "spread_10000": ((150, 10000), "same", None),  # bwd: under two waves of 512-thread blocks (see split_*)
    # the rungs for many waves (at least 8 rows an SM), both directions: 2-byte rows of 5,119-5,120 in 160 x 4
    # and of 12,288 in 384 x 4, f32 rows of 5,119-6,143 in 384 x 4
    "fine_5120": ((1100, 5120), "same", "same"),
    "fine_odd_5119": ((1200, 5119), "same", "same"),
    "fine_12288": ((1100, 12288), "same", None),
    "fine_odd_6143": ((1100, 6143), "f32", "f32"),
    "odd_31": ((1000, 31), "f32", "f32"),
    "odd_999": ((333, 999), "same", "same"),
    "odd_many_rows": ((9000, 1001), "same", "same"),  # row groups loop over rows with loose elements
    "odd_block_5121": ((300, 5121), "same", "same"),
    "cluster_9001": ((50, 9001), "same", None),
    "cluster_65536": ((5, 65536), "same", "same"),
    "cluster_many_rows": ((700, 20000), "f32", "f32"),  # clusters looping over rows, of 5 blocks (row_cluster)
    "cluster_7_odd": ((400, 27001), "same", "same"),  # bwd (fwd f32): looping clusters of 7 blocks, loose elements
    "words_24576": ((600, 24576), "same", None),  # 2-byte fwd past 4 blocks an SM: 512 x 8, x held as words
    "words_odd_bias": ((300, 20001), "f32", "f32"),  # the same with loose elements
    # 2-byte fwd past the 4-pack floats' wave: half the threads at 8 packs, x held as words (HALF_FITS)
    "half_words_16384": ((406, 16384), "same", None),  # 512 x 4 -> 256 x 8: the words' wave holds the grid
    "half_words_odd_waves": ((6400, 5121), "f32", None),  # 256 x 4 -> 128 x 8: loose elements, 48 rows an SM
    # 2-byte fwd of whole packs at 128 and 256 x 4 past the floats' and fwd_staged's waves: rms_norm's x held
    # as words (WORDS4_FITS)
    "words4_4096": ((3000, 4096), "same", "same"),
    "words4_8192_f32": ((2048, 8192), "f32", "f32"),
    "loop_140001": ((2, 140001), "same", None),  # past a cluster: f32 fwd and every bwd take the loop
    "direct_dw": ((3, 768), "f32", "f32"),  # one block: dw/db written by the backward kernel itself
    "small_grid_warps": ((20, 500), "same", "same"),  # grids of a few blocks
    "small_grid_block": ((7, 3000), "same", "same"),
    "small_grid_two_packs": ((9, 6001), "same", "same"),  # fwd: 2-byte rows of 513-1,024 packs, 512 threads at 2
    "small_grid_odd": ((5, 2001), "f32", "f32"),
    "few_rows_16384": ((3, 16384), "same", "same"),  # fwd: a 512-thread block a row at 32 values, not a cluster
    "few_rows_odd": ((2, 12001), "same", None),
    # a block a row, more than 128 blocks: clusters of 8 add their blocks' sums (sm_90+) where the two-pass
    # backward does not take them (NORM_BWD_DX_PASS=0, the knob test; block_4096 in f32, warp_1024 and
    # odd_many_rows by default)
    "cluster_rows": ((400, 3000), "same", None),
    "cluster_rows_odd": ((300, 1999), "same", "same"),
    # bwd, past a small grid, up to 1,024 rows a dw/db sum asked for, x and dy in half of L2: the two-pass
    # backward (the dx pass, then col_pass by columns in clusters of row slices); col_pass loads of 8, 4, 2 or 1
    # elements
    "two_pass_warp_rows": ((700, 500), "same", "same"),  # 2-byte: warps at 2 packs, 4 rows a block
    "two_pass_odd": ((1278, 1897), "same", "same"),  # layer_norm (rms_norm: past 1,024 rows, the table)
    "two_pass_whole": ((513, 3072), "same", "same"),  # col_pass at 4 elements a load
    "two_pass_f32_params": ((1024, 768), "f32", "f32"),  # col_pass's fewest columns a block
    "two_pass_512x2": ((300, 8000), "same", None),  # 2-byte: 512 threads at 2 packs (f32: the table's kernels)
    "two_pass_bias_only": ((600, 1000), None, "same"),  # layer_norm's db alone (rms_norm: the dx pass alone)
    # bwd without dw/db past a small grid: the dx pass alone, at any size
    "dx_pass_no_params": ((2500, 1000), None, None),  # 2-byte: warps at 4 packs (NORM_DX_WARP4=0: 128 x 2)
    "dx_pass_no_params_f32": ((3000, 500), None, None),  # f32: warps at 4 packs
    "dx_pass_odd_no_params": ((3000, 4095), None, None),
    # small grids of at most 128 rows: dw/db made by column blocks of the backward's grid (col_sums)
    "cols_64_rows": ((64, 1024), "same", "same"),  # warps, one batch a column lane (16 lanes of 4 rows)
    "cols_two_batches": ((100, 7000), "same", "same"),  # two batches a lane
    "cols_odd_two_batches": ((90, 1001), "same", "same"),  # loose elements: 8 lanes of 8 rows, two batches
    "cols_block_f32_params": ((40, 4096), "f32", "f32"),
    "cols_cluster_odd": ((3, 20001), "same", "same"),  # a cluster a row, then whole clusters of column blocks
    "cols_129_rows": ((129, 3000), "same", "same"),  # one row past them: partial rows and finalize
    # fwd, a grid under a block an SM: 512-thread blocks read the parameters early (f32 at 512 x 8, 2-byte at
    # 512 x 4); with NORM_FWD_EARLY_WIDE=0 (the knob test) they prefetch them into L1 instead
    "prefetch_few_rows": ((39, 12288), "same", "same"),
    # fwd, grids of 1-4 blocks an SM: every load issued before any is used (kBatched), loose elements
    "batched_odd": ((200, 3001), "f32", "f32"),
    # fwd, more rows than the register kernel's wave but not than fwd_staged's: rows staged in shared memory
    # (NORM_FWD_STAGED=0 gives them the register kernel)
    "staged_2560": ((1561, 2560), "same", "same"),  # 128-thread blocks
    "staged_4096": ((900, 4096), "same", None),  # f32: 256-thread blocks
    "staged_f32_params": ((1400, 2560), "f32", "f32"),  # 2-byte rows: 12 blocks an SM
    # bwd, few long rows whose x and dy fit in L2: the split backward (split_sums + split_dx), which block_16384,
    # spread_10000, cluster_9001 and prefetch_few_rows also take; NORM_BWD_SPLIT=0 gives them a cluster a row.
    # Rows of whole packs take 16-byte accesses (scalar with NORM_SPLIT_VEC=0)
    "split_vec_rows": ((250, 16384), "same", "same"),  # lanes of 4-pack batches, the last one short
    "split_vec_f32_params": ((100, 24576), "f32", "f32"),  # 2-byte rows, fp32 weight packs of 32 bytes
    "split_odd": ((85, 37791), "same", "same"),  # odd length; split_sums at 16 values a thread
    "split_many_chunks": ((21, 48983), "same", "same"),  # 2-byte: 48 chunks a row, added by 8 lanes a row
    "split_f32_few_blocks": ((137, 6144), "same", "same"),  # f32: 48 16-byte split_dx blocks, so scalar ones
    "split_f32_params": ((40, 20000), "f32", "f32"),  # split_sums at 4 values a thread
    "split_no_params": ((30, 9001), None, None),
    "split_bias_only": ((17, 12000), None, "same"),  # the fewest rows past a small grid of clusters (132 SMs)
}


@functools.lru_cache(maxsize=4)
def rng_arrays(shape: tuple[int, ...], seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """x, weight, bias and the output gradient as float64 arrays (x with a non-zero mean); read-only, and kept
    for the next calls of the same shape (a case runs in each dtype one after another)."""
    r = np.random.default_rng(seed)
    n = shape[-1]
    x = r.standard_normal(shape) * 2.0 + 0.5
    arrays = (x, r.standard_normal(n), r.standard_normal(n), r.standard_normal(shape))
    for a in arrays:
        a.setflags(write=False)
    return arrays


def reference(kind: str, x: Any, w: Any, b: Any, g: Any, eps: float) -> dict[str, Any]:
    """float64 forward and gradients: y, dx, dw (sum of g * xhat), db (sum of g). numpy arrays or float64 torch
    tensors (on the GPU, so a large case's reference and check stay on the device); the same arithmetic."""
    n = x.shape[-1]
    zero = x.sum(-1, keepdims=True) * 0.0  # one zero a row (rows of no elements too)
    mu = x.mean(-1, keepdims=True) if kind == "layer_norm" and n else zero
    var = ((x - mu) ** 2).mean(-1, keepdims=True) if n else zero
    rstd = (var + eps) ** -0.5
    xh = (x - mu) * rstd
    wv = w if w is not None else 1.0
    y = xh * wv + (b if b is not None and kind == "layer_norm" else 0.0)
    wg = g * wv
    c1 = (wg * xh).mean(-1, keepdims=True) if n else zero
    c2 = wg.mean(-1, keepdims=True) if kind == "layer_norm" and n else 0.0
    dx = rstd * (wg - c2 - xh * c1)
    flat = (-1, n)
    return {"y": y, "dx": dx, "dw": (g * xh).reshape(flat).sum(0), "db": g.reshape(flat).sum(0)}


def close(name: str, got: Any, want: Any, dtype: str, scale: float = 1.0) -> None:
    """Assert |got - want| <= scale * (atol + rtol |want|), naming the worst element. numpy arrays, or torch
    tensors (compared where they are; only the worst element comes to the host)."""
    atol, rtol = TOL[dtype]
    got = got.double() if hasattr(got, "double") else np.asarray(got, dtype=np.float64)
    assert tuple(got.shape) == tuple(want.shape), f"{name}: shape {tuple(got.shape)} != {tuple(want.shape)}"
    if not np.prod(tuple(got.shape)):
        return
    err = abs(got - want) - scale * (atol + rtol * abs(want))
    i = tuple(int(k) for k in np.unravel_index(int(err.argmax()), tuple(err.shape)))
    assert float(err[i]) <= 0, f"{name} ({dtype}): got {float(got[i])} want {float(want[i])} at {i}"


def grad_scale(x_shape: tuple[int, ...]) -> float:
    """Tolerance factor for the parameter gradients, sums over all rows (error grows like sqrt(rows))."""
    rows = int(np.prod(x_shape[:-1])) if len(x_shape) > 1 else 1
    return max(1.0, float(np.sqrt(max(rows, 1))))


def param_dtype(which: str | None, dtype: str) -> str | None:
    return None if which is None else ("float32" if which == "f32" else dtype)


def call_kwargs(kind: str, w: Any, b: Any) -> dict[str, Any]:
    return {"weight": w} if kind == "rms_norm" else {"weight": w, "bias": b}
