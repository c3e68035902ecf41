"""Gradients of fixed, seeded backwards of one op on the GPU, computed in a fresh process with a launch setting in
its environment, so the GPU tests can compare two settings bit for bit (the ops read their knobs once per process).

Run as a script: ``python grad_bits.py OP OUT.pt`` saves OP's gradients for its CASES to OUT.pt.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

# Backwards picked from the design notes' cases of the paths with a second kernel (a finalize of partial sums, the
# split backward's dx pass, col_pass; lerp's finalize_kernel), beside others: (shapes of the inputs, dtype).
CASES: dict[str, list[tuple[tuple[tuple[int, ...], ...], str]]] = {
    "lerp": [(((3, 1000, 1), (64, 3, 1000, 7), (1,)), "bfloat16"),       # x summed over the outer and last dims
             (((32, 128, 768), (32, 128, 768), (768,)), "bfloat16"),     # a weight per column, row slices
             (((9, 2, 5246, 31), (9, 2, 5246, 31), (1, 1, 5246, 1)), "float16"),
             (((16, 1, 1, 1), (16, 3, 224, 224), (3, 1, 224)), "float32"),
             (((1, 3), (1201, 1), (1201, 3)), "float32"),                 # two reduced gradients
             (((20000, 90), (20000, 90), (20000, 1)), "float32"),         # a weight a row: short rows summed
             (((42, 1, 2, 6), (42, 755, 2, 1), (1, 755, 2, 6)), "float32")],
    "rms_norm": [(((21, 48983),), "float16"), (((40, 20000),), "bfloat16"), (((200, 16384),), "float32"),
                 (((3000, 4096),), "bfloat16"), (((700, 5121),), "float16"), (((1278, 1897),), "bfloat16"),
                 (((513, 3072),), "float16"), (((20000, 1024),), "float32")],
}
CASES["layer_norm"] = CASES["rms_norm"]


def grads(op: str) -> dict[str, Any]:
    """Every gradient of OP's CASES on the GPU, on inputs drawn from a fixed seed: name -> CPU tensor."""
    import torch

    import ops

    fn = getattr(ops, op)
    gen = torch.Generator(device="cuda").manual_seed(0)
    out: dict[str, Any] = {}
    for i, (shapes, dtype) in enumerate(CASES[op]):
        dt = getattr(torch, dtype)

        def draw(shape: tuple[int, ...], dt: Any = dt) -> Any:
            return torch.randn(shape, generator=gen, device="cuda").to(dt).requires_grad_()

        if op == "lerp":
            x, y, w = (draw(s) for s in shapes)
            leaves, result = (x, y, w), fn(x, y, w)
        else:
            x = draw(shapes[0])
            w = draw(shapes[0][-1:])
            b = draw(shapes[0][-1:]) if op == "layer_norm" else None
            leaves = (x, w) if b is None else (x, w, b)
            result = fn(x, w) if b is None else fn(x, w, b)
        g = torch.randn(result.shape, generator=gen, device="cuda").to(result.dtype)
        names = ("dx", "dy", "dw") if op == "lerp" else ("dx", "dw", "db")
        for name, t in zip(names, torch.autograd.grad(result, leaves, g), strict=False):
            out[f"{i}:{name}"] = t.cpu()
    return out


def grads_with_env(op: str, env: dict[str, str], path: Path) -> dict[str, Any]:
    """grads(op) computed in a fresh process with `env` added to its environment."""
    import torch

    r = subprocess.run([sys.executable, __file__, op, str(path)], env={**os.environ, **env}, capture_output=True,
                       text=True, check=False)
    assert r.returncode == 0, r.stderr[-4000:]
    return torch.load(path)


def assert_same_bits(op: str, env_a: dict[str, str], env_b: dict[str, str], tmp: Path) -> None:
    """OP's gradients bitwise equal under two environments, each in a fresh process."""
    import torch

    a = grads_with_env(op, env_a, tmp / "a.pt")
    b = grads_with_env(op, env_b, tmp / "b.pt")
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), f"{op} gradient {k} differs between {env_a} and {env_b}"


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: `import ops`
    import torch

    torch.save(grads(sys.argv[1]), sys.argv[2])
