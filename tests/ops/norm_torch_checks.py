"""The torch-binding checks shared by test_norms.py (CPU and CUDA)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from norm_testlib import call_kwargs, close, grad_scale, param_dtype, reference, rng_arrays

EPS = {"rms_norm": 1e-6, "layer_norm": 1e-5}


def _t(torch: Any, a: np.ndarray | None, dtype: str | None, device: str, grad: bool = True, offset: int = 0) -> Any:
    """`a` as a tensor; `offset` > 0: a view starting that many elements into a larger tensor (off alignment)."""
    if a is None or dtype is None:
        return None
    t = torch.tensor(a, dtype=torch.float32).to(getattr(torch, dtype)).to(device)
    if offset:
        buf = torch.zeros(offset + t.numel(), dtype=t.dtype, device=device)
        buf[offset:] = t.reshape(-1)
        t = buf[offset:].view(t.shape)
    return t.requires_grad_(grad)


def run(torch: Any, kind: str, shape: tuple[int, ...], wk: str | None, bk: str | None, dtype: str,
        device: str, param_offset: int = 0, bias_offset: int | None = None) -> dict[str, Any]:
    """Our op's y and gradients and the float64 reference on the rounded inputs, as float64 tensors on `device`
    (a GPU case's reference runs there); weight and bias start `param_offset` elements into their storage (the
    bias `bias_offset` where given)."""
    import ops

    fn = getattr(ops, kind)
    x_, w_, b_, g_ = rng_arrays(shape)
    x = _t(torch, x_, dtype, device)
    w = _t(torch, w_, param_dtype(wk, dtype), device, offset=param_offset)
    b_off = param_offset if bias_offset is None else bias_offset
    b = _t(torch, b_, param_dtype(bk, dtype), device, offset=b_off) if kind == "layer_norm" else None
    g = _t(torch, g_, dtype, device, grad=False)
    y = fn(x, **call_kwargs(kind, w, b), epsilon=EPS[kind])
    assert y.dtype == x.dtype and y.shape == x.shape and y.device == x.device
    leaves = [t for t in (x, w, b) if t is not None]
    grads = torch.autograd.grad(y, leaves, g)
    got = {"y": y, "dx": grads[0]}
    if w is not None:
        got["dw"] = grads[1]
        assert grads[1].dtype == w.dtype
    if b is not None:
        got["db"] = grads[-1]
    as64 = {k: v.detach().double() for k, v in got.items()}

    def f64(t: Any) -> Any:
        return None if t is None else t.detach().double()

    want = reference(kind, f64(x), f64(w), f64(b), f64(g), EPS[kind])
    return {"got": as64, "want": want, "tensors": (x, w, b, g)}


def check_against_reference(torch: Any, kind: str, shape: tuple[int, ...], wk: str | None, bk: str | None,
                            dtype: str, device: str, param_offset: int = 0, bias_offset: int | None = None) -> None:
    r = run(torch, kind, shape, wk, bk, dtype, device, param_offset, bias_offset)
    for name, got in r["got"].items():
        scale = grad_scale(shape) if name in ("dw", "db") else 1.0
        close(f"{kind} {name}", got, r["want"][name], dtype, scale)


def check_against_torch(torch: Any, kind: str, shape: tuple[int, ...], dtype: str, device: str) -> None:
    """Same inputs through torch.nn.functional: outputs and gradients agree within the dtype's tolerance."""
    r = run(torch, kind, shape, "same", "same", dtype, device)
    x, w, b, g = (None if t is None else t.detach().requires_grad_() for t in r["tensors"])
    F = torch.nn.functional
    n = (shape[-1],)
    y = F.rms_norm(x, n, w, EPS[kind]) if kind == "rms_norm" else F.layer_norm(x, n, w, b, EPS[kind])
    grads = torch.autograd.grad(y, [t for t in (x, w, b) if t is not None], g)
    theirs = {"y": y, "dx": grads[0], "dw": grads[1]} | ({"db": grads[2]} if b is not None else {})
    for name, t in theirs.items():
        scale = 2 * grad_scale(shape) if name in ("dw", "db") else 2.0
        close(f"{kind} {name} vs torch", r["got"][name], t.detach().double(), dtype, scale)


def check_deterministic(torch: Any, kind: str, shape: tuple[int, ...], dtype: str, device: str,
                        monkeypatch: pytest.MonkeyPatch | None = None) -> None:
    """dw (and db) bits identical over two runs (and, on the CPU, over thread counts 1 and 2)."""
    outs = []
    for threads in ("1", "2", "2"):
        if monkeypatch is not None:
            monkeypatch.setenv("OPBENCH_CPU_THREADS", threads)
        r = run(torch, kind, shape, "same", "same", dtype, device)
        outs.append({k: v for k, v in r["got"].items() if k in ("dw", "db")})
    for o in outs[1:]:
        for k in o:
            assert torch.equal(o[k], outs[0][k]), f"{kind} {k} differs between runs"


BAD_INPUTS = [
    # (description, build(torch, device) -> (x, kwargs), exception, message part)
    ("weight shape", lambda t, d: (t.ones(4, 8, device=d), {"weight": t.ones(7, device=d)}), ValueError,
     "weight shape [7] must be [8]"),
    ("weight 2-D", lambda t, d: (t.ones(4, 8, device=d), {"weight": t.ones(1, 8, device=d)}), ValueError,
     "[1, 8]"),
    ("int x", lambda t, d: (t.ones(4, 8, dtype=t.int32, device=d), {}), TypeError, "int32"),
    ("float64 x", lambda t, d: (t.ones(4, 8, dtype=t.float64, device=d), {}), TypeError, "float64"),
    ("weight dtype", lambda t, d: (t.ones(4, 8, dtype=t.float16, device=d),
                                   {"weight": t.ones(8, dtype=t.bfloat16, device=d)}), TypeError, "bfloat16"),
    ("eps zero", lambda t, d: (t.ones(4, 8, device=d), {"epsilon": 0.0}), ValueError, "epsilon"),
    ("eps nan", lambda t, d: (t.ones(4, 8, device=d), {"epsilon": float("nan")}), ValueError, "epsilon"),
    ("devices", lambda t, d: (t.ones(4, 8, device=d), {"weight": t.ones(8, device="meta")}), ValueError,
     "different devices"),
    ("0-d x", lambda t, d: (t.ones((), device=d), {}), ValueError, "at least one dim"),
]


def check_bad_input(torch: Any, kind: str, build: Any, exc: type, part: str, device: str) -> None:
    import ops

    x, kwargs = build(torch, device)
    with pytest.raises(exc) as info:
        getattr(ops, kind)(x, **kwargs)
    msg = str(info.value)
    assert part in msg and "\n" not in msg and kind in msg, msg
