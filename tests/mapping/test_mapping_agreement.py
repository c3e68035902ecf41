"""Every line of opbench/suites/core.txt gives the same forward result on Paddle and on its torch mapping.

Runs both CPU providers with one seed (identical inputs) and compares with a per-dtype
tolerance. A failure names the suite line, so a wrong mapping or a bad line shows at once.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("paddle")
pytest.importorskip("torch")

from opbench.cases import parse_line  # noqa: E402
from opbench.inputs import generate  # noqa: E402
from opbench.providers import flatten, get_provider  # noqa: E402

SUITE = Path(__file__).resolve().parents[2] / "opbench" / "suites" / "core.txt"

# (rtol, atol) per output dtype; integer and bool outputs must match exactly.
TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-7, 1e-7),
    "float32": (1e-5, 1e-5),
    "float16": (1e-3, 1e-3),
    "bfloat16": (1e-2, 1e-2),
}


def _suite_lines() -> list[pytest.param]:
    params = []
    for lineno, raw in enumerate(SUITE.read_text().splitlines(), 1):
        line = raw.strip()
        if line and not line.startswith("#"):
            params.append(pytest.param(lineno, line, id=f"L{lineno}:{line[:90]}"))
    return params


@pytest.mark.parametrize(("lineno", "line"), _suite_lines())
def test_paddle_and_torch_agree(lineno: int, line: str) -> None:
    case = parse_line(line, lineno=lineno, source=str(SUITE))
    values = generate(case, seed=0)
    results = {}
    for name in ("paddle", "torch"):
        call = get_provider(name, device="cpu").prepare(case, values=values, requires_grad=False)
        shapes = [tuple(call.backend.to_numpy(t).shape) for t in call.tensors]
        assert shapes == [tuple(spec.shape) for spec in case.tensors()], f"{name} built inputs of shapes {shapes}"
        results[name] = (call.backend, flatten(call.forward()))
    (pb, pouts), (tb, touts) = results["paddle"], results["torch"]
    assert len(pouts) == len(touts), f"{line}: {len(pouts)} Paddle outputs vs {len(touts)} torch outputs"
    for i, (p, t) in enumerate(zip(pouts, touts, strict=True)):
        pdt, tdt = pb.dtype_name(p), tb.dtype_name(t)
        assert pdt == tdt, f"{line}: output {i} dtype {pdt} (Paddle) vs {tdt} (torch)"
        pa, ta = np.asarray(pb.to_numpy(p)), np.asarray(tb.to_numpy(t))
        assert pa.shape == ta.shape, f"{line}: output {i} shape {pa.shape} (Paddle) vs {ta.shape} (torch)"
        if pdt in TOLERANCES:
            rtol, atol = TOLERANCES[pdt]
            np.testing.assert_allclose(
                pa.astype(np.float64), ta.astype(np.float64), rtol=rtol, atol=atol, err_msg=line
            )
        else:
            np.testing.assert_array_equal(pa, ta, err_msg=line)


@pytest.mark.parametrize(("dtype", "param_dtype"), [("float64", "float32"), ("float16", "float32"),
                                                     ("bfloat16", "float32")])
def test_layer_norm_with_parameters_of_another_dtype(dtype: str, param_dtype: str) -> None:
    """Paddle keeps AMP's float32 weights beside float16 inputs; PyTorch's CUDA layer_norm refuses some such mixes
    (an odd row) and its CPU one a float64 input with float32 weights. The mapping computes in the wider dtype and
    rounds the output once to x's, with the parameters' grads in their own dtype."""
    import torch

    case = parse_line(f'paddle.nn.functional.layer_norm(Tensor([16, 7],"{dtype}"), [7], Tensor([7],"{param_dtype}"), '
                      f'Tensor([7],"{param_dtype}"), 1e-05, )')
    call = get_provider("torch", device="cpu").prepare(case, values=generate(case, seed=0), requires_grad=True)
    y = flatten(call.forward())[0]
    x, w, b = call.tensors
    assert y.dtype == x.dtype
    expect = torch.nn.functional.layer_norm(x.detach().double(), [7], w.detach().double(), b.detach().double(), 1e-5)
    assert torch.allclose(y.detach().double(), expect, rtol=2 ** -7, atol=2 ** -7)  # one rounding to x's dtype
    y.float().sum().backward()
    assert x.grad.dtype == x.dtype and w.grad.dtype == w.dtype and b.grad.dtype == b.dtype
