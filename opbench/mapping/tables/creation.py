"""Creation, random and utility APIs: full, zeros, arange, linspace, eye, rand, broadcast_shape, ..."""

from __future__ import annotations

from opbench.mapping.spec import ApiMapping as M

ENTRIES: list[M] = []
