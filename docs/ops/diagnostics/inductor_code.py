"""Prints the code torch.compile generates for lerp's training graph with a full-size tensor weight.

Shows what its forward saves for backward (there: `y - x`), hence what its backward reads.
"""

import torch
from torch._inductor.utils import run_and_get_code

x, y, w = (torch.rand(8192, 8192, device="cuda", requires_grad=True) for _ in range(3))
f = torch.compile(lambda a, b, c: torch.lerp(a, b, c), dynamic=False)


def step():
    out = f(x, y, w)
    return torch.autograd.grad(out, (x, y, w), torch.ones_like(out))


for code in run_and_get_code(step)[1]:
    print("=" * 100)
    print(code)
