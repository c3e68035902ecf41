"""Runs 'CASE|PROVIDER|DIRECTION' specs once each inside an NVTX range 'measure' (for ncu --nvtx-include).

Forward kernels only: autograd launches backward kernels from its own thread, outside the range.
"""

import sys

import torch
from common import timed

for spec in sys.argv[1:]:
    line, provider, direction = spec.split("|")
    call, t = timed(line, provider, direction)
    for _ in range(3):
        t.fn()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("measure")
    t.fn()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    print("ran", provider, direction, line, flush=True)
    del call, t
