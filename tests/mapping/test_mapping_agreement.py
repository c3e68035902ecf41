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
