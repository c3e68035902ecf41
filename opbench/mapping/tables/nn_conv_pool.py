"""``paddle.nn.functional`` convolution, pooling, resampling and padding."""

from __future__ import annotations

from opbench.mapping.spec import ApiMapping as M

ENTRIES: list[M] = []
