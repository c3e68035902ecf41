"""``paddle.vision.ops``, ``paddle.incubate`` and ``paddle.geometric`` APIs that PyTorch can express."""

from __future__ import annotations

from opbench.mapping.spec import ApiMapping as M

ENTRIES: list[M] = []
