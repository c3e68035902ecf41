"""Value domains: which values an API's input may hold, declared as data.

The mapping table attaches a :class:`Domain` to an API parameter (``log`` takes
positive ``x``, ``divide`` a non-zero ``y``, ``gather`` an ``index`` inside
``x``'s axis); :mod:`opbench.inputs` draws values from it. Keeping domains as
data, not as an if/elif chain, lets one table serve every API.
"""

from __future__ import annotations

from dataclasses import dataclass

# Floats are drawn from [-1, 1) unless an API says otherwise: wide enough to
# exercise signs and rounding, narrow enough that exp/pow/prod stay finite.
DEFAULT_LOW = -1.0
DEFAULT_HIGH = 1.0


@dataclass(frozen=True)
class Domain:
    """A range to draw one parameter's values from.

    ``low``/``high``: the half-open range ``[low, high)`` for floats (integers
    are clipped to what the dtype holds). ``min_abs``: values with a smaller
    magnitude are pushed out to ``±min_abs`` (non-zero divisors). ``index_of``:
    the values are indices into the parameter of that name, along the axis
    given by parameter ``axis_param`` (or ``axis`` when it is absent), so they
    lie in ``[0, size)``; ``index_of_rows`` draws indices into dim 0.
    """

    low: float = DEFAULT_LOW
    high: float = DEFAULT_HIGH
    min_abs: float = 0.0
    index_of: str | None = None
    axis_param: str | None = None
    axis: int = 0

    def __post_init__(self) -> None:
        if not self.low < self.high:
            raise ValueError(f"Domain needs low < high, got [{self.low}, {self.high})")


DEFAULT = Domain()
POSITIVE = Domain(low=0.1, high=2.0)
NONZERO = Domain(min_abs=0.1)
UNIT_OPEN = Domain(low=-0.9, high=0.9)  # strictly inside (-1, 1): atanh, erfinv
PROBABILITY = Domain(low=0.0, high=1.0)


def index_into(param: str, axis_param: str | None = "axis", axis: int = 0) -> Domain:
    """Indices valid for ``param`` along the axis named by ``axis_param`` (default ``axis``)."""
    return Domain(low=0.0, high=1.0, index_of=param, axis_param=axis_param, axis=axis)
