"""``paddle.Tensor`` methods with no function of the same name: operators (dunders), ``astype``, ..."""

from __future__ import annotations

from opbench.mapping.spec import ApiMapping as M
from opbench.mapping.spec import Param

T = "paddle.Tensor."
SELF_OTHER = (Param("x"), Param("y"))

ENTRIES: list[M] = [
    M(T + "__add__", "torch.Tensor.__add__(x, y)", params=SELF_OTHER),
]
