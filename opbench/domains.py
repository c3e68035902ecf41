"""Value domains: which values an API's input may hold, declared as data.

The mapping table attaches a :class:`Domain` to an API parameter (``log`` takes
positive ``x``, ``divide`` a non-zero ``y``, ``gather`` an ``index`` inside
``x``'s axis, ``reshape`` a ``shape`` tensor holding a shape with ``x``'s element
count); :mod:`opbench.inputs` draws values from it. A parameter with no declared
domain that is an integer tensor named like a shape, an axis or an index gets the
domain :data:`BY_NAME` gives, so ``paddle.reshape(x, Tensor([4],"int64"))`` gets a
valid shape and ``paddle.max(x, Tensor([2],"int64"))`` valid axes. Keeping domains
as data, not as an if/elif chain, lets one table serve every API.
"""

from __future__ import annotations

from dataclasses import dataclass

# Floats are drawn from [-1, 1) unless an API says otherwise: wide enough to
# exercise signs and rounding, narrow enough that exp/pow/prod stay finite.
DEFAULT_LOW = -1.0
DEFAULT_HIGH = 1.0

#: What a domain's values are; each kind has one drawing function in :mod:`opbench.inputs`.
KINDS = (
    "uniform",  # values in [low, high), pushed out of (-min_abs, min_abs)
    "index",  # integers in [0, size of `of` along an axis)
    "bound",  # integers in [0, the value of the int argument `of`)
    "shape",  # a shape (one int per element) whose product is `of`'s element count
    "broadcast",  # a shape (one int per element) that `of`'s shape broadcasts to
    "axes",  # distinct valid axes of `of`
    "permutation",  # a permutation of `of`'s axes
    "sections",  # positive sizes that sum to `of`'s size along an axis
    "sorted",  # uniform values, sorted along the last axis
    "distinct",  # floats in [low, high) that never repeat in the tensor, where its dtype holds that many
    "spd",  # symmetric positive-definite matrices (the last two dims)
    "boxes",  # [K, 4] boxes (x1, y1, x2, y2), x1 < x2 and y1 < y2, inside the image `of` ([N, C, H, W])
    "plane_positions",  # each [N, C] plane's flat positions, a permutation of the plane's own (max_unpool's)
)

#: The kinds drawn from the domain alone; the others refer to another argument (`of`).
SELF_CONTAINED = frozenset({"uniform", "sorted", "distinct", "spd", "plane_positions"})


@dataclass(frozen=True)
class Domain:
    """How to draw one parameter's values.

    ``kind`` is one of :data:`KINDS`. ``low``/``high``: the half-open range for
    ``uniform`` and ``sorted`` floats (integers are clipped to what the dtype holds).
    ``min_abs``: smaller magnitudes are pushed out to ``±min_abs`` (non-zero divisors).
    ``of`` names the parameter the values refer to (the tensor indexed, reshaped,
    reduced, or the int bounding them); the axis is the value of parameter
    ``axis_param`` when the call gives an int there, else ``axis``. ``distinct`` indices
    never repeat in the tensor while it holds no more of them than the axis has, else in each
    of its slices along that axis while a slice holds no more (a scatter that overwrites, where
    a repeat makes the result, or which value gets the gradient, depend on which write lands last).
    """

    low: float = DEFAULT_LOW
    high: float = DEFAULT_HIGH
    min_abs: float = 0.0
    kind: str = "uniform"
    of: str | None = None
    axis_param: str | None = None
    axis: int = 0
    distinct: bool = False

    def __post_init__(self) -> None:
        if not self.low < self.high:
            raise ValueError(f"Domain needs low < high, got [{self.low}, {self.high})")
        if self.kind not in KINDS:
            raise ValueError(f"unknown domain kind {self.kind!r} (known: {', '.join(KINDS)})")
        if (self.of is None) != (self.kind in SELF_CONTAINED):
            raise ValueError(f"a {self.kind!r} domain {'needs' if self.of is None else 'takes no'} `of`")

    @property
    def index_of(self) -> str | None:
        """The parameter an ``index`` domain's values index into (None for other kinds)."""
        return self.of if self.kind == "index" else None


DEFAULT = Domain()
POSITIVE = Domain(low=0.1, high=2.0)
NONNEGATIVE = Domain(low=0.0, high=2.0)
NONZERO = Domain(min_abs=0.1)
UNIT_OPEN = Domain(low=-0.9, high=0.9)  # strictly inside (-1, 1): atanh, erfinv
PROBABILITY = Domain(low=0.0, high=1.0)
SORTED = Domain(kind="sorted")
# Ties make a sort's order, its indices and its gradient's routing depend on the kernel (the uniform draw's
# float32 values repeat 22-24 times in 50,304 of them, its bfloat16 ones 53 times in 300): the sorting and
# selecting ops take values that do not repeat.
DISTINCT = Domain(kind="distinct")
SPD = Domain(kind="spd")
# max_unpool's indices: where each input value lands in its output plane. Any position of a plane as large as
# the input's is valid (the output's is at least that), and none may repeat in a plane: two values sent to one
# position leave the kernel to pick which lands.
PLANE_POSITIONS = Domain(kind="plane_positions")


def index_into(param: str, axis_param: str | None = "axis", axis: int = 0, distinct: bool = False) -> Domain:
    """Indices valid for ``param`` along the axis named by ``axis_param`` (default ``axis``)."""
    return Domain(low=0.0, high=1.0, kind="index", of=param, axis_param=axis_param, axis=axis, distinct=distinct)


def bounded_by(param: str) -> Domain:
    """Integers in ``[0, n)`` where ``n`` is the int argument ``param`` (``one_hot``'s ``num_classes``)."""
    return Domain(low=0.0, high=1.0, kind="bound", of=param)


def boxes_in(param: str) -> Domain:
    """Boxes ``(x1, y1, x2, y2)`` inside the image ``param`` (``[N, C, H, W]``): ``roi_align``'s rois."""
    return Domain(kind="boxes", of=param)


def shape_of(param: str) -> Domain:
    """A shape with ``param``'s element count (``reshape``'s ``shape`` given as a tensor)."""
    return Domain(kind="shape", of=param)


def broadcast_of(param: str) -> Domain:
    """A shape ``param`` broadcasts to (``expand``/``broadcast_to``'s ``shape`` given as a tensor)."""
    return Domain(kind="broadcast", of=param)


def axes_of(param: str) -> Domain:
    """Distinct valid axes of ``param`` (a reduction's ``axis`` given as a tensor)."""
    return Domain(kind="axes", of=param)


def permutation_of(param: str) -> Domain:
    """A permutation of ``param``'s axes (``transpose``'s ``perm`` given as a tensor)."""
    return Domain(kind="permutation", of=param)


def sections_of(param: str, axis_param: str | None = "axis", axis: int = 0) -> Domain:
    """Positive sizes summing to ``param``'s size along the axis (``split``'s sections as a tensor)."""
    return Domain(kind="sections", of=param, axis_param=axis_param, axis=axis)


#: Domains of integer tensors by parameter name, for APIs that declare none: the meaning of
#: these names is the same across Paddle's APIs. The first tensor parameter is ``x``.
BY_NAME: dict[str, Domain] = {
    "shape": shape_of("x"),
    "axis": axes_of("x"),
    "dim": axes_of("x"),
    "perm": permutation_of("x"),
    "index": index_into("x"),
    "indices": index_into("x"),
    "num_or_sections": sections_of("x"),
    "repeat_times": Domain(low=1.0, high=3.0),
    "repeats": Domain(low=1.0, high=3.0),
}
