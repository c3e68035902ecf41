"""A training-style loop with three hidden device<->host round trips per step (PyTorch).

Run it under ``opbench tools syncs tools/examples/hidden_sync.py``; the fixed version is
``hidden_sync_fixed.py``. Each step:

- ``y[y > 0]``: boolean-mask indexing calls nonzero, whose output size depends on the data,
  so the GPU copies a count back and the host waits;
- ``torch.tensor(y.shape, device=...)``: a tiny shape tensor built on the host and copied to
  the GPU every step (the GpuMemcpySync of Paddle's device_guard guide);
- ``if mean.item() > 0.5``: a Python branch on a GPU value waits for all queued work.
"""

import argparse

import torch


def step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    y = x * w - 0.1  # elementwise: the example needs no library set-up (cuBLAS) to profile
    positive = y[y > 0]  # hidden: nonzero -> D2H copy of the count + sync
    shape = torch.tensor(y.shape, device=y.device)  # hidden: tiny H2D copy from pageable memory
    mean = positive.mean() / shape[1]
    if mean.item() > 0.5:  # hidden: D2H copy + sync for a Python bool
        y = y * 0.5
    return torch.tanh(y)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--size", type=int, default=1024)
    args = p.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    g = torch.Generator(device=device).manual_seed(0)
    x = torch.randn(args.size, args.size, device=device, generator=g)
    w = torch.rand(args.size, args.size, device=device, generator=g)
    for _ in range(args.steps):
        x = step(x, w)


if __name__ == "__main__":
    main()
