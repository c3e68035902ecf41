"""The norm ops (rms_norm, layer_norm; every test runs for each): the torch binding on the CPU against a float64
reference and torch.nn.functional, forward and every gradient for float32/float16/bfloat16; dw determinism;
one-line errors; the Paddle binding on the CPU; and the same checks on CUDA (gpu-marked, larger shapes covering
every kernel path)."""

from __future__ import annotations

import os
import re
from typing import Any

import grad_bits
import norm_torch_checks as checks
import numpy as np
import pytest
from knob_rerun import rerun_with_env, rerun_with_knob_off
from norm_testlib import CPU_CASES, DTYPES, GPU_CASES, close, grad_scale, reference, rng_arrays

# Both ops run on one engine (ops/csrc/norm_common), so every test runs for each of them.
EPS = checks.EPS
pytestmark = pytest.mark.parametrize("kind", ["rms_norm", "layer_norm"])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(CPU_CASES))
def test_cpu_vs_float64(kind: str, norm_torch: Any, case: str, dtype: str) -> None:
    shape, wk, bk = CPU_CASES[case]
    checks.check_against_reference(norm_torch, kind, shape, wk, bk, dtype, "cpu")


def test_why_not_on_specs(kind: str) -> None:
    """The rule the providers ask before running a case (``OPS[api].why_not``, on the case's tensor specs): None
    for a call the op takes, else the one-line reason, a call that does not fit the signature included."""
    import ops
    from opbench.cases.model import TensorSpec

    why_not = ops.OPS[f"paddle.nn.functional.{kind}"].why_not
    x, w = TensorSpec((4, 8), "float32"), TensorSpec((8,), "float32")
    assert why_not(x, [8], w) is None
    assert why_not(x, 8, None, name="n") is None
    assert why_not(x, [4, 8], w) == f"{kind}: normalized_shape [4, 8] must be the last dim of x (shape [4, 8]) alone"
    assert why_not(x, [8], TensorSpec((4,), "float32")) == (f"{kind}: weight shape [4] must be [8] (the last dim of "
                                                           "x, shape [4, 8])")
    assert why_not(TensorSpec((4, 8), "int32"), [8]).startswith(f"{kind}: x dtype int32 is not supported")
    assert why_not(x, [8], bogus=1) == f"{kind}: got an unexpected keyword argument 'bogus'"


@pytest.mark.parametrize(("source", "least"), [("norm-paths", 14), ("norm-split", 10), ("norm-odd", 30),
                                               ("norm-odd-fwd", 15), ("norm-wave-fwd", 6)])
def test_ab_cases_are_ours(kind: str, source: str, least: int) -> None:
    """Every case of the norm-paths suite (what `gpu_run.sh OUT ab` times for each GPU path), of norm-split
    (the split backward's calls for an A/B of it), of norm-odd (the odd-length calls), of norm-odd-fwd (long and
    odd 2-byte rows for an A/B of the odd-row forwards) and of norm-wave-fwd (the fp32 grids of the wave of three
    blocks an SM) is one the op takes: a case it turned away would leave its
    path out of an A/B unnoticed."""
    import ops
    from opbench.cases import resolve

    res = resolve([source], device="gpu")
    assert not res.errors, res.errors
    cases = [c for c in res.cases if c.api == f"paddle.nn.functional.{kind}"]
    assert len(cases) >= least
    for c in cases:
        assert ops.OPS[c.api].why_not(*c.args, **c.kwargs_dict) is None, c


def test_cpu_long_row(kind: str, norm_torch: Any) -> None:
    checks.check_against_reference(norm_torch, kind, (3, 65536), "same", "same", "float32", "cpu")


def test_cpu_mean_far_from_zero(kind: str, norm_torch: Any) -> None:
    """Rows whose mean is 1000x their spread, each starting with its largest element: the CPU forward's one-pass
    moments (sums of x minus the mean of the row's first elements) keep y to float32 rounding."""
    torch = norm_torch
    r = np.random.default_rng(3)
    x = 1000.0 + r.standard_normal((16, 768))
    x[:, 0] = x.max(-1) + 3.0
    got = getattr(__import__("ops"), kind)(torch.tensor(x, dtype=torch.float32)).double().numpy()
    want = reference(kind, x.astype(np.float32).astype(np.float64), None, None, np.zeros_like(x), checks.EPS[kind])
    # the fp32 mean itself is rounded to half an ulp of 1000 (3e-5), which every fp32 kernel pays (torch: 7e-5)
    close(f"{kind} y", got, want["y"], "float32", scale=2.0)


@pytest.mark.parametrize("shape", [(16, 65536), (2048, 1000)])
def test_cpu_units_from_float64(kind: str, norm_torch: Any, shape: tuple[int, int]) -> None:
    """fp32 y and dx of rows of a standard normal within 4 units (float32 epsilon times the largest value) of
    float64: with the moments' shift the row's first element alone, layer_norm's were 8-10 (PyTorch's 1-2)."""
    torch = norm_torch
    r = np.random.default_rng(0)
    x, g, w = r.standard_normal(shape), r.standard_normal(shape), r.standard_normal(shape[-1])
    xt = torch.tensor(x, dtype=torch.float32, requires_grad=True)
    y = getattr(__import__("ops"), kind)(xt, torch.tensor(w, dtype=torch.float32))
    y.backward(torch.tensor(g, dtype=torch.float32))
    xf, wf, gf = (a.astype(np.float32).astype(np.float64) for a in (x, w, g))
    want = reference(kind, xf, wf, None, gf, checks.EPS[kind])
    for name, got in (("y", y.detach()), ("dx", xt.grad)):
        units = np.abs(got.double().numpy() - want[name]).max() / (np.finfo(np.float32).eps * np.abs(want[name]).max())
        assert units <= 4, f"{kind} {name}: {units:.1f} units from float64"


def test_cpu_f32_weight_f16_input(kind: str, norm_torch: Any) -> None:
    checks.check_against_reference(norm_torch, kind, (8, 96), "f32", "f32", "float16", "cpu")


@pytest.mark.parametrize("dtype", DTYPES)
def test_cpu_vs_torch(kind: str, norm_torch: Any, dtype: str) -> None:
    checks.check_against_torch(norm_torch, kind, (6, 130), dtype, "cpu")


def test_cpu_dw_deterministic(kind: str, norm_torch: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    checks.check_deterministic(norm_torch, kind, (300, 256), "float32", "cpu", monkeypatch)


@pytest.mark.parametrize(("what", "build", "exc", "part"), checks.BAD_INPUTS, ids=[b[0] for b in checks.BAD_INPUTS])
def test_bad_input(kind: str, norm_torch: Any, what: str, build: Any, exc: type, part: str) -> None:
    checks.check_bad_input(norm_torch, kind, build, exc, part, "cpu")


def test_opcheck(kind: str, norm_torch: Any) -> None:
    """Schema, fake (meta) rule and autograd registration agree with the kernels (torch.library.opcheck)."""
    torch = norm_torch
    x = torch.randn(4, 40, requires_grad=True)
    w = torch.randn(40, requires_grad=True)
    op = getattr(torch.ops, f"opbench_{kind}")
    args = (x, w, 1e-5) if kind == "rms_norm" else (x, w, torch.randn(40, requires_grad=True), 1e-5)
    torch.library.opcheck(getattr(op, f"{kind}_fwd"), args)


def test_compile(kind: str, norm_torch: Any) -> None:
    """Traced by torch.compile (fake rule) with the same result as eager; the C++ autograd rule traces too
    (aot_eager: the backward graph through the fake rule of the backward op) and gives eager's gradients."""
    import ops

    torch = norm_torch
    x = torch.randn(5, 48)
    fn = getattr(ops, kind)
    compiled = torch.compile(lambda t: fn(t, epsilon=EPS[kind]), backend="eager", fullgraph=True)
    assert torch.equal(compiled(x), fn(x, epsilon=EPS[kind]))
    xg, w = x.clone().requires_grad_(), torch.randn(48, requires_grad=True)

    def loss(t: Any, p: Any) -> Any:
        return fn(t, p, epsilon=EPS[kind]).square().sum()

    eager = torch.autograd.grad(loss(xg, w), (xg, w))
    traced = torch.autograd.grad(torch.compile(loss, backend="aot_eager", fullgraph=True)(xg, w), (xg, w))
    for a, b in zip(eager, traced, strict=True):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("case", ["odd_hidden", "one_row", "f32_params", "empty_rows"])
def test_paddle_cpu(kind: str, norm_paddle: Any, case: str) -> None:
    """The Paddle binding against the float64 reference (and Paddle's own CPU kernel where it has one)."""
    import ops

    paddle = norm_paddle
    shape, wk, bk = CPU_CASES[case]
    x_, w_, b_, g_ = rng_arrays(shape)
    x = paddle.to_tensor(x_, dtype="float32", stop_gradient=False)
    w = paddle.to_tensor(w_, dtype="float32", stop_gradient=False)
    b = paddle.to_tensor(b_, dtype="float32", stop_gradient=False)
    g = paddle.to_tensor(g_, dtype="float32")
    leaves = [x, w] + ([b] if kind == "layer_norm" else [])
    y = getattr(ops, kind)(*leaves, epsilon=EPS[kind])
    assert y.dtype == x.dtype and list(y.shape) == list(x.shape)
    grads = paddle.grad([y], leaves, [g], allow_unused=True) if y.size else [None] * len(leaves)
    want = reference(kind, x.numpy().astype(np.float64), w.numpy().astype(np.float64),
                     b.numpy().astype(np.float64), g_, EPS[kind])
    close("y", y.numpy(), want["y"], "float32")
    if not y.size:
        return
    for name, got in zip(("dx", "dw", "db"), grads, strict=False):
        close(name, got.numpy(), want[name], "float32", grad_scale(shape) if name != "dx" else 1.0)
    F = paddle.nn.functional
    try:
        eps = EPS[kind]
        theirs = F.layer_norm(x, shape[-1], w, b, eps) if kind == "layer_norm" else F.rms_norm(x, [shape[-1]], w, eps)
    except RuntimeError as exc:  # Paddle 3.3.1's CPU build has no rms_norm kernel
        assert "not registered" in str(exc)
        return
    close("y vs paddle", y.numpy(), theirs.numpy().astype(np.float64), "float32", 2.0)
    for name, a, t in zip(("dx", "dw", "db"), grads, paddle.grad([theirs], leaves, [g]), strict=False):
        close(f"{name} vs paddle", a.numpy(), t.numpy().astype(np.float64), "float32", 2 * grad_scale(shape))


def test_paddle_cpu_no_params(kind: str, norm_paddle: Any) -> None:
    import ops

    paddle = norm_paddle
    x = paddle.to_tensor(rng_arrays((3, 20))[0], dtype="float32", stop_gradient=False)
    y = getattr(ops, kind)(x)
    (dx,) = paddle.grad([y], [x], [paddle.ones_like(y)])
    want = reference(kind, x.numpy().astype(np.float64), None, None, np.ones((3, 20)), EPS[kind])
    close("y", y.numpy(), want["y"], "float32")
    close("dx", dx.numpy(), want["dx"], "float32")


def test_paddle_cpu_frozen_params(kind: str, norm_paddle: Any) -> None:
    """Parameters that take no gradient (stop_gradient) get none, and dx is unchanged: the backward skips
    their sums over the rows; a trainable weight beside a frozen bias still gets its own."""
    import ops

    paddle = norm_paddle
    x_, w_, b_, g_ = rng_arrays((7, 40))
    x = paddle.to_tensor(x_, dtype="float32", stop_gradient=False)
    w = paddle.to_tensor(w_, dtype="float32", stop_gradient=True)
    b = paddle.to_tensor(b_, dtype="float32", stop_gradient=True)
    params = [w] + ([b] if kind == "layer_norm" else [])
    want = reference(kind, x_.astype(np.float32).astype(np.float64), w.numpy().astype(np.float64),
                     b.numpy().astype(np.float64), g_, EPS[kind])
    y = getattr(ops, kind)(x, *params, epsilon=EPS[kind])
    (dx,) = paddle.grad([y], [x], [paddle.to_tensor(g_, dtype="float32")])
    close("dx", dx.numpy(), want["dx"], "float32")
    w.stop_gradient = False  # the weight trainable, the bias (layer_norm) still frozen
    y = getattr(ops, kind)(x, *params, epsilon=EPS[kind])
    dx, dw = paddle.grad([y], [x, w], [paddle.to_tensor(g_, dtype="float32")])
    close("dx", dx.numpy(), want["dx"], "float32")
    close("dw", dw.numpy(), want["dw"], "float32", grad_scale((7, 40)))


def test_paddle_bad_input(kind: str, norm_paddle: Any) -> None:
    import ops

    paddle = norm_paddle
    with pytest.raises(ValueError, match=r"weight shape \[3\] must be \[4\]"):
        getattr(ops, kind)(paddle.ones([2, 4]), paddle.ones([3]))




def _has_cuda() -> bool:
    """True where torch is installed and sees a CUDA GPU (the Paddle tests above run without torch)."""
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


CUDA = _has_cuda()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(GPU_CASES))
@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_vs_float64(kind: str, norm_torch: Any, case: str, dtype: str) -> None:
    shape, wk, bk = GPU_CASES[case]
    checks.check_against_reference(norm_torch, kind, shape, wk, bk, dtype, "cuda")


@pytest.mark.parametrize(
    "knob", ["NORM_EARLY", "NORM_FWD_EARLY_WIDE", "NORM_FWD_EARLY_LN2", "NORM_COLS", "NORM_FWD_SPREAD",
             "NORM_FWD_PREFETCH", "NORM_FWD_BATCH", "NORM_BWD_SPLIT", "NORM_ROW_CLUSTER", "NORM_SPLIT_VEC",
             "NORM_FWD_STAGED", "NORM_BWD_ONE_ROW", "NORM_BWD_PART_CLUSTERS", "NORM_BWD_DX_PASS",
             "NORM_DX_WARP4", "NORM_FINE", "NORM_FWD_WORDS", "NORM_FWD_HALF", "NORM_FWD_WAVE3"]
)
@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_knobs_off(kind: str, knob: str) -> None:
    """The kernels small grids take without the early parameter reads (NORM_EARLY=0; NORM_FWD_EARLY_WIDE=0: the
    forward's in blocks past 256 threads at more than a pack a thread; NORM_FWD_EARLY_LN2=0: the forward's for
    2-byte layer_norm rows of whole packs), without column blocks
    for dw/db (NORM_COLS=0: partial rows and finalize), with the forward's rows as the table first fits
    them, not a block a row at a pack a thread (NORM_FWD_SPREAD=0), or without the forward's prefetched
    parameters (NORM_FWD_PREFETCH=0) or its loads issued all at once in grids of a few blocks an SM
    (NORM_FWD_BATCH=0), few long rows on a cluster a row instead of the split backward
    (NORM_BWD_SPLIT=0), clusters of the table's 8 blocks whatever the row (NORM_ROW_CLUSTER=0), and the split
    backward's scalar accesses on rows of whole packs (NORM_SPLIT_VEC=0), and the forward's rows in registers
    where they would be staged in shared memory (NORM_FWD_STAGED=0), and one-row backwards as a row group beside
    col_sums blocks, not in one block (NORM_BWD_ONE_ROW=0), and grids of a few long rows a block without clusters
    that add their partial rows (NORM_BWD_PART_CLUSTERS=0), and mid-size grids on the row kernels with dw/db sums,
    not the dx pass and col_pass (NORM_BWD_DX_PASS=0), and the dx pass's rows of 65-128 packs without dw/db in
    128-thread blocks at 2 packs, not warps at 4 (NORM_DX_WARP4=0), and rows in the power-of-two shapes alone,
    not the rungs for many waves (NORM_FINE=0), and 2-byte rows at 512 x 8 with x held as floats, not
    as its words (NORM_FWD_WORDS=0), and at 4 packs a thread, not half the threads at 8 with x as words
    (NORM_FWD_HALF=0), and fp32 rows of 2,049-3,072 packs in grids of 2-3 rows an SM at 512 x 8, not 384 x 8
    (NORM_FWD_WAVE3=0), stay correct: the GPU cases again in a fresh
    process with the knob off (read once per process)."""
    r = rerun_with_knob_off(knob, f"{__file__}::test_cuda_vs_float64", "-k", kind)
    assert r.returncode == 0, r.stdout[-4000:]


@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_dependent_launch_off(kind: str) -> None:
    """With OPS_PDL=0 (the backward's second kernels, split_dx, finalize and col_pass, launched plainly, not to
    overlap the kernel before them) the GPU cases and dw's determinism hold: again in a fresh process."""
    r = rerun_with_env({"OPS_PDL": "0"}, f"{__file__}::test_cuda_vs_float64",
                       f"{__file__}::test_cuda_dw_deterministic", "-k", kind)
    assert r.returncode == 0, r.stdout[-4000:]


@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_dependent_launch_same_bits(kind: str, tmp_path: Any) -> None:
    """Backwards that take the split backward, partial rows and finalize, or the dx pass and col_pass give the
    same bits with the second kernel launched to overlap the first (the default) and plainly (OPS_PDL=0), each
    in a fresh process."""
    grad_bits.assert_same_bits(kind, {"OPS_PDL": "1"}, {"OPS_PDL": "0"}, tmp_path)


@pytest.mark.parametrize("shape", [(128, 2), (256, 2), (512, 2)])
@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_bwd_shapes_forced(kind: str, shape: tuple[int, int]) -> None:
    """The backward's block shapes at 2 packs a thread, which the fit takes only for few or many rows (or, 2-byte
    512 x 2, never), stay correct wherever they hold the row: the GPU cases again in a fresh process with the
    shape forced (NORM_BWD_TPR/NORM_BWD_VECS)."""
    env = {"NORM_BWD_TPR": str(shape[0]), "NORM_BWD_VECS": str(shape[1])}
    r = rerun_with_env(env, f"{__file__}::test_cuda_vs_float64", f"{__file__}::test_cuda_bwd_shape_taken", "-k",
                       kind)
    assert r.returncode == 0, r.stdout[-4000:]


@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_bwd_grid_off(kind: str) -> None:
    """Without the backward's few- and many-row table rows (NORM_BWD_GRID=0) every grid takes the first fit
    again, and stays correct: the GPU cases and the fits again in a fresh process."""
    r = rerun_with_env({"NORM_BWD_GRID": "0"}, f"{__file__}::test_cuda_vs_float64",
                       f"{__file__}::test_cuda_bwd_shape_taken", "-k", kind)
    assert r.returncode == 0, r.stdout[-4000:]


# f16 backwards and the block shape the table's fit gives them on an H100 (132 SMs): 2 packs a thread for few
# rows (at most a quarter of the SMs) and for many (one to 128 an SM) past half the 2-pack block's slots; 4
# otherwise and with NORM_BWD_GRID=0.
BWD_FITS = {(8, 2048): (128, 2), (64, 2048): (128, 4), (3000, 2048): (128, 4), (8, 4096): (256, 2),
            (64, 4096): (128, 4), (3000, 4096): (256, 2), (20000, 4096): (128, 4), (3000, 8192): (256, 4)}


@pytest.mark.parametrize("shape", list(BWD_FITS))
@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_bwd_shape_taken(kind: str, norm_torch: Any, shape: tuple[int, int]) -> None:
    """The backward runs bwd_reg in the block shape NORM_BWD_TPR x NORM_BWD_VECS where those are set and the
    shape holds the row (test_cuda_bwd_shapes_forced), else in the table's fit, BWD_FITS (kernel names under the
    profiler)."""
    import ops

    torch = norm_torch
    if torch.cuda.get_device_properties(0).multi_processor_count != 132:
        pytest.skip("BWD_FITS are the fits of a 132-SM GPU")
    forced = (int(os.environ.get("NORM_BWD_TPR", "0")), int(os.environ.get("NORM_BWD_VECS", "0")))
    fit = BWD_FITS[shape]
    if os.environ.get("NORM_BWD_GRID", "1") == "0":
        fit = (128, 4) if shape[1] <= 4096 else (256, 4)
    want = forced if forced[0] * forced[1] * 8 >= shape[1] else fit
    x = torch.randn(*shape, device="cuda", dtype=torch.float16, requires_grad=True)
    w = torch.randn(shape[1], device="cuda", dtype=torch.float16, requires_grad=True)
    y = getattr(ops, kind)(x, w, epsilon=EPS[kind])
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        torch.autograd.grad(y, [x, w], torch.ones_like(y))
        torch.cuda.synchronize()
    shapes = {(int(m[1]), int(m[2])) for e in prof.events()
              if (m := re.search(r"bwd_reg<[^,]+, [^,]+, \w+, (\d+), (\d+), 1,", e.name))}
    assert shapes == {want}, [e.name for e in prof.events()]


# Calls of rows of odd length (never staged) past a small grid, and the block shape (threads a row, packs a
# thread) fwd_reg or bwd_reg takes them in on a 132-SM GPU: a rung for many waves where one holds the row of a
# grid of at least 8 rows an SM, then the power-of-two shape NORM_FINE=0 leaves.
RUNG_FITS = {("fwd", (3000, 5119), "bfloat16"): ((160, 4), (256, 4)),
             ("fwd", (3000, 4433), "float16"): ((160, 4), (256, 4)),
             ("fwd", (3000, 12287), "bfloat16"): ((384, 4), (512, 4)),
             ("fwd", (3000, 6143), "float32"): ((384, 4), (512, 4)),
             ("fwd", (250, 12287), "float16"): ((512, 4), (512, 4)),  # under 8 rows an SM
             ("fwd", (3000, 6143), "float16"): ((256, 4), (256, 4)),  # 768 packs: no rung
             ("fwd", (3000, 12287), "float32"): ((512, 8), (512, 8)),
             ("bwd", (3000, 5119), "float16"): ((160, 4), (256, 4)),
             ("bwd", (3000, 12287), "bfloat16"): ((384, 4), (512, 4)),
             ("bwd", (3000, 6143), "float32"): ((384, 4), (512, 4)),
             ("bwd", (3000, 5119), "float32"): ((384, 4), (512, 4)),  # 1,280 packs
             ("bwd", (3000, 3071), "float16"): ((256, 2), (256, 2)),  # 384 packs: no rung
             ("bwd", (500, 12287), "float16"): ((512, 4), (512, 4))}


@pytest.mark.parametrize(("direction", "shape", "dtype"), list(RUNG_FITS))
@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_rung_taken(kind: str, norm_torch: Any, direction: str, shape: tuple[int, int], dtype: str) -> None:
    """The forward and the backward run in a rung for many waves where one holds the row of a grid of at least
    8 rows an SM, else (and with NORM_FINE=0, test_cuda_fine_off) in the power-of-two shape: RUNG_FITS, by
    kernel names under the profiler."""
    import ops

    torch = norm_torch
    if torch.cuda.get_device_properties(0).multi_processor_count != 132:
        pytest.skip("RUNG_FITS are the fits of a 132-SM GPU")
    fine, plain = RUNG_FITS[(direction, shape, dtype)]
    want = plain if os.environ.get("NORM_FINE", "1") == "0" else fine
    x = torch.randn(*shape, device="cuda", dtype=getattr(torch, dtype), requires_grad=True)
    w = torch.randn(shape[1], device="cuda", dtype=x.dtype, requires_grad=True)
    fn = getattr(ops, kind)
    y = fn(x, w, epsilon=EPS[kind]) if direction == "bwd" else None
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        if y is None:
            fn(x.detach(), w.detach(), epsilon=EPS[kind])
        else:
            torch.autograd.grad(y, [x, w], torch.ones_like(y))
        torch.cuda.synchronize()
    shapes = {(int(m[1]), int(m[2])) for e in prof.events()
              if (m := re.search(direction + r"_reg<[^,]+, [^,]+, \w+, (\d+), (\d+), 1,", e.name))}
    assert shapes == {want}, [e.name for e in prof.events()]


@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_fine_off(kind: str) -> None:
    """With NORM_FINE=0 both directions take the power-of-two shapes alone again: the fits in a fresh process."""
    r = rerun_with_env({"NORM_FINE": "0"}, f"{__file__}::test_cuda_rung_taken", "-k", kind)
    assert r.returncode == 0, r.stdout[-4000:]


# Forwards at 512 x 8 past 4 blocks an SM (no batched loads) on a 132-SM GPU, and whether fwd_reg holds
# x as its words (kWords): 2-byte rows alone, of whole packs or not, with 2-byte or fp32 weights; layer_norm's the
# same unless NORM_FWD_WORDS_LN=0 (test_cuda_words_ln_off).
WORDS_FITS = {((3000, 20001), "float16", "same"): True,
              ((600, 32768), "bfloat16", "same"): True,
              ((3000, 28877), "float16", "f32"): True,
              ((600, 32768), "bfloat16", "f32"): True,
              ((3000, 12287), "float32", "same"): False}
READS = {"0": "late", "kLate": "late", "4": "words", "kWords": "words"}  # FwdRead as the demangler prints it
# fwd_reg's threads a row, packs a thread and FwdRead in a kernel name (blocks of a row: 1)
FWD_READ = r"fwd_reg<[^,]+, [^,]+, \w+, (\d+), (\d+), 1, \w+, \(?norm_core::gpu::FwdRead(?:\)|::)(\w+)>"


def words_on(kind: str) -> bool:
    """Whether this process's forwards of `kind` may hold x as its words: NORM_FWD_WORDS (default on), and for
    layer_norm NORM_FWD_WORDS_LN (default on)."""
    env = os.environ.get
    return env("NORM_FWD_WORDS", "1") != "0" and (kind == "rms_norm" or env("NORM_FWD_WORDS_LN", "1") != "0")


def words4_on(kind: str) -> bool:
    """Whether this process's forwards of `kind` hold x as its words at 128 and 256 x 4: words_on, and
    NORM_FWD_WORDS4 (0 never, 1 rms_norm's, the default, 2 both ops')."""
    return words_on(kind) and int(os.environ.get("NORM_FWD_WORDS4", "1")) > (kind == "layer_norm")


def fwd_reg_launches(torch: Any, kind: str, fits: str, shape: tuple[int, int], dtype: str,
                     wk: str) -> tuple[set[tuple[int, int, str]], list[str]]:
    """The (threads a row, packs a thread, FwdRead) of each fwd_reg launch of one forward of `kind` on a fresh
    x and weight (wk: "same" dtype or "f32"), by kernel names under the profiler, and every event's name (for
    the failure message); skips where the GPU has not the 132 SMs the table `fits` names is for."""
    import ops

    if torch.cuda.get_device_properties(0).multi_processor_count != 132:
        pytest.skip(f"{fits} are the fits of a 132-SM GPU")
    x = torch.randn(*shape, device="cuda", dtype=getattr(torch, dtype))
    w = torch.randn(shape[1], device="cuda", dtype=x.dtype if wk == "same" else torch.float32)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        getattr(ops, kind)(x, w, epsilon=EPS[kind])
        torch.cuda.synchronize()
    names = [e.name for e in prof.events()]
    return {(int(m[1]), int(m[2]), READS.get(m[3], m[3])) for n in names if (m := re.search(FWD_READ, n))}, names


@pytest.mark.parametrize(("shape", "dtype", "wk"), list(WORDS_FITS))
@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_words_taken(kind: str, norm_torch: Any, shape: tuple[int, int], dtype: str, wk: str) -> None:
    """2-byte rows at 512 x 8 in grids past 4 blocks an SM run fwd_reg with x held as its words; the others,
    and all with NORM_FWD_WORDS=0 (test_cuda_words_off) or layer_norm's with NORM_FWD_WORDS_LN=0
    (test_cuda_words_ln_off), with x as floats: WORDS_FITS, by kernel names under the profiler."""
    words = WORDS_FITS[(shape, dtype, wk)] and words_on(kind)
    got, names = fwd_reg_launches(norm_torch, kind, "WORDS_FITS", shape, dtype, wk)
    reads = {read for tpr, vecs, read in got if (tpr, vecs) == (512, 8)}
    assert reads == {"words" if words else "late"}, names


@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_words_off(kind: str) -> None:
    """With NORM_FWD_WORDS=0 no forward holds x as its words: the fits in a fresh process."""
    r = rerun_with_env({"NORM_FWD_WORDS": "0"}, f"{__file__}::test_cuda_words_taken",
                       f"{__file__}::test_cuda_half_words_taken", f"{__file__}::test_cuda_words4_taken", "-k", kind)
    assert r.returncode == 0, r.stdout[-4000:]


# Forwards past a small grid on a 132-SM GPU: the table's block shape (threads a row, packs a thread), and the
# shape 2-byte rows take instead at each NORM_FWD_HALF (0, 1 (the default), 2) with x held as its words,
# or None where they keep the table's shape with x as floats. 512 x 4 holds 264 rows at once, 256 x 8 with words
# 528; 256 x 4 528, 128 x 8 with words 1,056; kOdd rows at 256 threads take the words past 48 rows an SM at 1
# (6,336 rows).
HALF_FITS = {((406, 16384), "float16", "same"): ((512, 4), (None, (256, 8), (256, 8))),
             ((500, 12287), "float16", "f32"): ((512, 4), (None, (256, 8), (256, 8))),
             ((6400, 5121), "bfloat16", "same"): ((256, 4), (None, (128, 8), (128, 8))),
             ((1100, 8001), "bfloat16", "same"): ((256, 4), (None, None, (128, 8))),
             ((11195, 8192), "float16", "same"): ((256, 4), (None, None, (128, 8))),
             ((300, 8001), "float16", "same"): ((256, 4), (None, None, None)),  # one wave of the floats
             ((6400, 5121), "float32", "same"): ((384, 4), (None, None, None))}


@pytest.mark.parametrize(("shape", "dtype", "wk"), list(HALF_FITS))
@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_half_words_taken(kind: str, norm_torch: Any, shape: tuple[int, int], dtype: str, wk: str) -> None:
    """2-byte rows past the 4-pack floats' wave run fwd_reg at half the threads and 8 packs with x held
    as its words, as NORM_FWD_HALF says (test_cuda_half_any: 2), and layer_norm's the same; fp32 rows and every
    call with NORM_FWD_HALF=0, NORM_FWD_WORDS=0 (test_cuda_words_off) or, for layer_norm, NORM_FWD_WORDS_LN=0
    (test_cuda_words_ln_off) keep the table's shape with x as floats: HALF_FITS, by kernel names under the
    profiler."""
    table, by_mode = HALF_FITS[(shape, dtype, wk)]
    half = by_mode[int(os.environ.get("NORM_FWD_HALF", "1"))] if words_on(kind) else None
    words4 = (shape, dtype, wk) in WORDS4_FITS and WORDS4_FITS[(shape, dtype, wk)][1] and words4_on(kind)
    got, names = fwd_reg_launches(norm_torch, kind, "HALF_FITS", shape, dtype, wk)
    assert {(tpr, vecs, read == "words") for tpr, vecs, read in got} == \
        {(*half, True) if half else (*table, words4)}, names


# Forwards at 128 and 256 x 4 on a 132-SM GPU: the table's block shape (threads a row, packs a thread), and whether
# x is held as its words there (words4_on): 2-byte rows of whole packs in grids past the floats' wave and
# fwd_staged's (2,112 rows at 128 threads, 1,056 at 256), not within the floats' wave, not fp32 rows.
WORDS4_FITS = {((3000, 4096), "float16", "same"): ((128, 4), True),
               ((2048, 8192), "bfloat16", "f32"): ((256, 4), True),
               ((11195, 8192), "float16", "same"): ((256, 4), True),
               ((300, 8192), "float16", "same"): ((256, 4), False),  # one wave of the floats
               ((3000, 4096), "float32", "same"): ((256, 4), False)}


@pytest.mark.parametrize(("shape", "dtype", "wk"), list(WORDS4_FITS))
@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_words4_taken(kind: str, norm_torch: Any, shape: tuple[int, int], dtype: str, wk: str) -> None:
    """2-byte rows of whole packs at 128 and 256 x 4 past the floats' wave run fwd_reg with x held as its words
    where words4_on says, at the table's shape: WORDS4_FITS, by kernel names under the profiler."""
    table, words = WORDS4_FITS[(shape, dtype, wk)]
    got, names = fwd_reg_launches(norm_torch, kind, "WORDS4_FITS", shape, dtype, wk)
    assert {(tpr, vecs, read == "words") for tpr, vecs, read in got} == {(*table, words and words4_on(kind))}, names


@pytest.mark.parametrize("mode", ["0", "2"])
@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_words4_modes(kind: str, mode: str) -> None:
    """With NORM_FWD_WORDS4=0 (x as floats at 4 packs) and 2 (layer_norm's rows as words too) the forwards stay
    correct and take the fits WORDS4_FITS gives: the GPU cases and the fits again in a fresh process."""
    r = rerun_with_env({"NORM_FWD_WORDS4": mode}, f"{__file__}::test_cuda_vs_float64",
                       f"{__file__}::test_cuda_words4_taken", "-k", kind)
    assert r.returncode == 0, r.stdout[-4000:]


@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_words_ln_off(kind: str) -> None:
    """With NORM_FWD_WORDS_LN=0 layer_norm's 2-byte forwards keep x as floats where rms_norm's hold its words,
    and stay correct: the GPU cases and the fits again in a fresh process."""
    if kind != "layer_norm":
        pytest.skip("NORM_FWD_WORDS_LN is layer_norm's")
    r = rerun_with_env({"NORM_FWD_WORDS_LN": "0"}, f"{__file__}::test_cuda_vs_float64",
                       f"{__file__}::test_cuda_words_taken", f"{__file__}::test_cuda_half_words_taken",
                       f"{__file__}::test_cuda_words4_taken", "-k", "layer_norm")
    assert r.returncode == 0, r.stdout[-4000:]


@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_half_any(kind: str) -> None:
    """With NORM_FWD_HALF=2 (half the threads with x as words in any grid past the floats' wave) the forwards
    stay correct and take the fits HALF_FITS gives: the GPU cases and the fits again in a fresh process."""
    r = rerun_with_env({"NORM_FWD_HALF": "2"}, f"{__file__}::test_cuda_vs_float64",
                       f"{__file__}::test_cuda_half_words_taken", "-k", kind)
    assert r.returncode == 0, r.stdout[-4000:]


# Forwards of rows of 2,049-3,072 packs on a 132-SM GPU: the block shape (threads a row, packs a thread) that
# runs them. fp32 grids of more than 2 rows an SM and at most 3 (265-396 rows) take 384 x 8 at three blocks an SM,
# every row in one wave; the others, 2-byte rows and every call with NORM_FWD_WAVE3=0, 512 x 8 (two an SM).
WAVE3_FITS = {((272, 12288), "float32"): (384, 8),
              ((396, 12288), "float32"): (384, 8),
              ((300, 12001), "float32"): (384, 8),  # loose elements
              ((264, 12288), "float32"): (512, 8),  # one wave of two an SM
              ((397, 12288), "float32"): (512, 8),
              ((300, 24576), "float16"): (512, 8)}


@pytest.mark.parametrize(("shape", "dtype"), list(WAVE3_FITS))
@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_wave3_taken(kind: str, norm_torch: Any, shape: tuple[int, int], dtype: str) -> None:
    """fp32 rows of 2,049-3,072 packs in grids of 265-396 rows run fwd_reg at 384 x 8 with late reads; the
    others, and all with NORM_FWD_WAVE3=0 (test_cuda_wave3_off), at 512 x 8: WAVE3_FITS, by kernel names under
    the profiler."""
    import ops

    torch = norm_torch
    if torch.cuda.get_device_properties(0).multi_processor_count != 132:
        pytest.skip("WAVE3_FITS are the fits of a 132-SM GPU")
    want = WAVE3_FITS[(shape, dtype)]
    if os.environ.get("NORM_FWD_WAVE3", "1") == "0":
        want = (512, 8)
    x = torch.randn(*shape, device="cuda", dtype=getattr(torch, dtype))
    w = torch.randn(shape[1], device="cuda", dtype=x.dtype)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        getattr(ops, kind)(x, w, epsilon=EPS[kind])
        torch.cuda.synchronize()
    got = {(int(m[1]), int(m[2])) for e in prof.events() if (m := re.search(FWD_READ, e.name))}
    assert got == {want}, [e.name for e in prof.events()]
    reads = {READS.get(m[3], m[3]) for e in prof.events() if (m := re.search(FWD_READ, e.name))}
    assert want != (384, 8) or reads == {"late"}, [e.name for e in prof.events()]


@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_wave3_off(kind: str) -> None:
    """With NORM_FWD_WAVE3=0 no forward takes 384 x 8: the fits in a fresh process."""
    r = rerun_with_env({"NORM_FWD_WAVE3": "0"}, f"{__file__}::test_cuda_wave3_taken", "-k", kind)
    assert r.returncode == 0, r.stdout[-4000:]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4096, 768), (64, 5121), (8, 16384)])
@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_vs_torch(kind: str, norm_torch: Any, shape: tuple[int, ...], dtype: str) -> None:
    checks.check_against_torch(norm_torch, kind, shape, dtype, "cuda")


@pytest.mark.parametrize("shape", [(20000, 1024), (3000, 4096), (700, 5121), (40, 3000), (5, 2001), (40, 20000),
                                   (200, 16384)])
@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_dw_deterministic(kind: str, norm_torch: Any, shape: tuple[int, ...]) -> None:
    checks.check_deterministic(norm_torch, kind, shape, "bfloat16", "cuda")


@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_unaligned_view(kind: str, norm_torch: Any) -> None:
    """A view starting one element into its storage takes the loop path and matches the aligned result."""
    import ops

    torch = norm_torch
    buf = torch.randn(64 * 1024 + 1, device="cuda", dtype=torch.bfloat16)
    x = buf[1:].view(64, 1024)
    fn = getattr(ops, kind)
    assert x.data_ptr() % 16 != 0
    eps = EPS[kind]
    torch.testing.assert_close(fn(x, epsilon=eps).float(), fn(x.clone(), epsilon=eps).float(), atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize(("shape", "dtype", "staged"), [
    ((1561, 2560), "float16", True),  # past the register kernel's 9 blocks an SM, under the staged kernel's 16
    ((900, 4096), "float32", True),  # 256-thread blocks: 6 an SM in registers, 8 staged
    ((1000, 2560), "float16", False),  # one register wave
    ((2500, 2560), "float16", False),  # past a staged wave too
    ((406, 16384), "float16", False),  # rows past 1,024 packs stay in registers
    ((1561, 2559), "float16", False),  # odd rows are never staged
])
@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_staged_forward_taken(kind: str, norm_torch: Any, shape: tuple[int, ...], dtype: str,
                                   staged: bool) -> None:
    """The forward stages rows of whole packs, up to 1,024 packs, in shared memory (fwd_staged) exactly where the
    register kernel's grid would run past one wave and the staged one's would not (kernel names under the
    profiler; a 132-SM GPU such as the H100 or H200, whose waves the cases are sized for)."""
    import ops

    torch = norm_torch
    if torch.cuda.get_device_properties(0).multi_processor_count != 132:
        pytest.skip("the cases are sized for the waves of a 132-SM GPU")
    x = torch.randn(shape, device="cuda", dtype=getattr(torch, dtype))
    w = torch.randn(shape[-1], device="cuda", dtype=x.dtype)
    fn = getattr(ops, kind)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn(x, w, epsilon=EPS[kind])
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if "norm_core" in e.name]
    assert names, [e.name for e in prof.events()]
    assert any("fwd_staged" in n for n in names) == staged, names


@pytest.mark.parametrize(("shape", "dtype", "grads", "dx_pass", "col_pass"), [
    ((1278, 1897), "bfloat16", True, "layer_norm", "layer_norm"),  # 9.7 MB of x and dy; dw and db: 2,048 rows
    ((1024, 768), "float32", True, True, True),  # dw alone: up to 1,024 rows
    ((1025, 768), "float32", True, "layer_norm", "layer_norm"),
    ((2049, 768), "float32", True, False, False),
    ((3000, 2048), "float32", True, False, False),  # 49 MB: past half of L2
    ((3000, 2048), "float32", False, True, False),  # no dw/db: the dx pass alone, at any size
    ((1278, 1897), "bfloat16", False, True, False),
    ((1024, 8192), "bfloat16", False, True, False),  # 512 threads at 2 packs
    ((1024, 8200), "bfloat16", False, False, False),  # past 1,024 packs: the table's kernels
    ((120, 3000), "float16", True, False, False),  # a small grid: dw/db by col_sums blocks in the row kernel's grid
    ((120, 3000), "float16", False, False, False),  # a small grid: the early row kernel
])
@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_dx_pass_taken(kind: str, norm_torch: Any, shape: tuple[int, ...], dtype: str, grads: bool,
                            dx_pass: bool | str, col_pass: bool | str) -> None:
    """The backward takes the dx pass (bwd_reg without dw/db sums) past a small grid for rows of up to 1,024
    packs: alone where no dw/db is asked for, and where they are, followed by col_pass for up to 1,024 rows a
    sum asked for (rms_norm's dw; layer_norm's dw and db) whose x and dy fit in half of L2; a name in place of
    True: that op's calls alone (kernel names under the profiler; GPUs of the SMs and L2 the cases are sized
    for, as the H100's 132 and 50 MB)."""
    import ops

    torch = norm_torch
    props = torch.cuda.get_device_properties(0)
    if not (120 <= props.multi_processor_count < 1278 and 26 * 2**20 <= props.L2_cache_size <= 96 * 2**20):
        pytest.skip("the cases are sized for 120 SMs or more and 26-96 MB of L2")
    x = torch.randn(shape, device="cuda", dtype=getattr(torch, dtype), requires_grad=True)
    params = [torch.randn(shape[-1], device="cuda", dtype=x.dtype, requires_grad=grads)
              for _ in range(2 if kind == "layer_norm" else 1)]
    y = getattr(ops, kind)(x, *params, epsilon=EPS[kind])
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        torch.autograd.grad(y, [x, *params] if grads else [x], torch.ones_like(y))
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if "norm_core" in e.name]
    assert names, [e.name for e in prof.events()]
    dx_pass = dx_pass if isinstance(dx_pass, bool) else dx_pass == kind
    col_pass = col_pass if isinstance(col_pass, bool) else col_pass == kind
    assert any(re.search(r"bwd_reg<.*, false, false>", n) for n in names) == dx_pass, names
    assert any("col_pass" in n for n in names) == col_pass, names
    if dx_pass:
        assert not any("finalize" in n for n in names), names


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("params", ["same", "f32"])
@pytest.mark.parametrize("offset", [1, 3, 6])
@pytest.mark.parametrize("shape", [(64, 1024), (33, 1001), (300, 5121)])
@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_params_off_alignment(kind: str, norm_torch: Any, shape: tuple[int, ...], offset: int, params: str,
                                   dtype: str) -> None:
    """Weight and bias views a few elements into their storage (rows of whole packs and of odd length, whose rows
    start at every offset from alignment; grids of warps and blocks, early reads and column blocks): 2-byte
    parameters read as they are used come from the aligned 16-byte granules around each pack, shifted in
    registers (load_shifted); held packs and 4-byte parameters, from scalar loads."""
    checks.check_against_reference(norm_torch, kind, shape, params, params, dtype, "cuda", param_offset=offset)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("offsets", [(1, 4), (0, 3), (5, 0), (2, None)])
@pytest.mark.parametrize("shape", [(33, 1001), (300, 5121), (40, 20001)])
@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_params_apart(kind: str, norm_torch: Any, shape: tuple[int, ...], offsets: tuple[int, int | None],
                           dtype: str) -> None:
    """2-byte weight and bias at different offsets from alignment, or no bias (None), over odd rows: layer_norm's
    forwards that read parameters through ShiftedParam where both sit alike take load_param's reads here (rms_norm
    has no bias: its weight at the first offset, through ShiftedParam)."""
    w_off, b_off = offsets
    bk = None if b_off is None else "same"
    checks.check_against_reference(norm_torch, kind, shape, "same", bk, dtype, "cuda", param_offset=w_off,
                                   bias_offset=b_off or 0)


@pytest.mark.parametrize("offset", [1, 3])
@pytest.mark.parametrize("dtype", DTYPES)
def test_cpu_params_off_alignment(kind: str, norm_torch: Any, dtype: str, offset: int) -> None:
    """The same views on the CPU: the op reads parameters by their data pointer, wherever it starts."""
    checks.check_against_reference(norm_torch, kind, (6, 37), "same", "same", dtype, "cpu", param_offset=offset)


@pytest.mark.parametrize(("what", "build", "exc", "part"), checks.BAD_INPUTS, ids=[b[0] for b in checks.BAD_INPUTS])
@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_bad_input(kind: str, norm_torch: Any, what: str, build: Any, exc: type, part: str) -> None:
    checks.check_bad_input(norm_torch, kind, build, exc, part, "cuda")


@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA GPU")
def test_cuda_cpu_weight(kind: str, norm_torch: Any) -> None:
    import ops

    torch = norm_torch
    with pytest.raises(ValueError, match="different devices"):
        getattr(ops, kind)(torch.ones(4, 8, device="cuda"), torch.ones(8))


@pytest.mark.parametrize("wants", ["x", "w", "b", "wb", "xb"])
def test_cpu_grads_only_where_asked(kind: str, norm_torch: Any, wants: str) -> None:
    """The C++ autograd rule gives each tensor that requires a gradient the one torch.nn.functional gives, and
    none to the others (its input indices skip a missing weight), also when the weight is left out."""
    import ops

    torch = norm_torch
    if kind == "rms_norm" and "b" in wants:
        pytest.skip("rms_norm has no bias")
    F = torch.nn.functional
    for with_w in (True, False):
        if not with_w and "w" in wants:
            continue
        g = torch.randn(6, 24)
        x = torch.randn(6, 24, requires_grad="x" in wants)
        w = torch.randn(24, requires_grad="w" in wants) if with_w else None
        b = torch.randn(24, requires_grad="b" in wants) if kind == "layer_norm" else None
        leaves = [t for t in (x, w, b) if t is not None and t.requires_grad]
        if kind == "layer_norm":
            ours, theirs = ops.layer_norm(x, w, b, epsilon=EPS[kind]), F.layer_norm(x, (24,), w, b, EPS[kind])
        else:
            ours, theirs = ops.rms_norm(x, w, epsilon=EPS[kind]), F.rms_norm(x, (24,), w, EPS[kind])
        assert ours.requires_grad
        for a, e in zip(torch.autograd.grad(ours, leaves, g), torch.autograd.grad(theirs, leaves, g), strict=True):
            torch.testing.assert_close(a, e, atol=1e-5, rtol=1e-4)


def test_cpu_backward_fills_no_zero_gradients(kind: str, norm_torch: Any) -> None:
    """The statistics (mean, rstd) take no gradient, and the backward does not fill one with zeros: on a GPU
    that fill was a kernel launch in every backward. Only the backward op runs under the profiler."""
    import ops

    torch = norm_torch
    x = torch.randn(6, 24, requires_grad=True)
    w = torch.randn(24, requires_grad=True)
    y = ops.layer_norm(x, w, None, epsilon=EPS[kind]) if kind == "layer_norm" else ops.rms_norm(x, w, EPS[kind])
    g = torch.randn(6, 24)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        dx, dw = torch.autograd.grad(y, [x, w], g)
    names = [e.name for e in prof.events()]
    assert any(f"{kind}_bwd" in n for n in names), names
    fills = [n for n in names if n in ("aten::zeros", "aten::zeros_like", "aten::zero_", "aten::fill_")]
    assert not fills, fills
    assert dx.shape == x.shape and dw.shape == w.shape
