"""``paddle.fft`` and ``paddle.signal``."""

from __future__ import annotations

from opbench.mapping.spec import ApiMapping as M

ENTRIES: list[M] = []
