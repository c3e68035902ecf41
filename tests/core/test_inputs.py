"""Seeded inputs: same case and seed give the same bits everywhere; domains are honoured."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from opbench import inputs
from opbench.cases import TensorSpec, parse_line
from opbench.domains import DEFAULT, NONZERO, POSITIVE, Domain, index_into

LERP = 'paddle.lerp(Tensor([64, 33],"float32"), Tensor([64, 33],"float32"), Tensor([33],"bfloat16"), )'


def digest(arrays):
    import hashlib

    h = hashlib.sha256()
    for a in arrays:
        h.update(a.dtype.str.encode() + str(a.shape).encode() + np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def test_same_case_and_seed_same_bits_other_seed_other_bits():
    case = parse_line(LERP)
    a, b = inputs.generate(case, 0), inputs.generate(case, 0)
    assert digest(a) == digest(b)
    assert digest(inputs.generate(case, 1)) != digest(a)
    assert not np.array_equal(a[0], a[1]), "x and y of the same shape must differ"


def test_same_bits_in_a_fresh_process():
    code = ("import hashlib, numpy as np; from opbench import inputs; from opbench.cases import parse_line;"
            f"a = inputs.generate(parse_line({LERP!r}), 5);"
            "print(hashlib.sha256(b''.join(np.ascontiguousarray(x).tobytes() for x in a)).hexdigest())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    here = inputs.generate(parse_line(LERP), 5)
    import hashlib

    assert out == hashlib.sha256(b"".join(np.ascontiguousarray(x).tobytes() for x in here)).hexdigest()


def test_bfloat16_values_are_exact_bfloat16():
    arrays = inputs.generate(parse_line(LERP), 0)
    w = arrays[2]
    assert w.dtype == np.float32
    assert np.all((w.view(np.uint32) & 0xFFFF) == 0)


def test_round_to_bfloat16_ties_to_even_and_nan():
    x = np.array([1.0, 1.00390625, 1.01171875, np.nan, -2.5], np.float32)  # 1+2^-8 is a tie
    r = inputs.round_to_bfloat16(x)
    assert r[0] == 1.0 and r[1] == 1.0 and r[2] == 1.015625 and np.isnan(r[3]) and r[4] == -2.5


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_float_domains(dtype):
    rng = np.random.default_rng(0)
    spec = TensorSpec((4096,), dtype)
    d = inputs.draw(spec, DEFAULT, rng)
    assert d.dtype == np.dtype(dtype) and d.min() >= -1 and d.max() <= 1
    assert inputs.draw(spec, POSITIVE, rng).min() > 0
    assert np.abs(inputs.draw(spec, NONZERO, rng)).min() >= 0.1 - 1e-3


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_integer_ranges_fit_the_dtype(dtype):
    d = inputs.draw(TensorSpec((1000,), dtype), DEFAULT, np.random.default_rng(0))
    info = np.iinfo(dtype)
    assert d.dtype == np.dtype(dtype) and d.min() >= info.min and d.max() <= info.max
    assert len(np.unique(d)) > 10
    nz = inputs.draw(TensorSpec((1000,), dtype), NONZERO, np.random.default_rng(0))
    assert np.all(nz != 0)


def test_bool_and_complex():
    rng = np.random.default_rng(0)
    b = inputs.draw(TensorSpec((100,), "bool"), DEFAULT, rng)
    assert b.dtype == np.bool_ and 0 < b.sum() < 100
    c = inputs.draw(TensorSpec((100,), "complex64"), DEFAULT, rng)
    assert c.dtype == np.complex64 and np.abs(c.imag).max() > 0


def test_index_domain_bounds_follow_the_axis():
    case = parse_line('paddle.index_select(Tensor([5, 7],"float32"), Tensor([50],"int64"), axis=1, )')
    x, index = inputs.generate(case, 0)
    assert index.min() >= 0 and index.max() < 7 and len(np.unique(index)) > 3
    case0 = parse_line('paddle.gather(Tensor([3, 9],"float32"), Tensor([40],"int32"), )')
    _, index0 = inputs.generate(case0, 0)
    assert index0.max() < 3 and index0.dtype == np.int32


def test_domains_are_declared_per_api():
    (x,) = inputs.generate(parse_line('paddle.log(Tensor([1000],"float32"), )'), 0)
    assert x.min() > 0
    _, y = inputs.generate(parse_line('paddle.divide(Tensor([1000],"float32"), Tensor([1000],"float32"), )'), 0)
    assert np.abs(y).min() > 0.05


def test_tensors_of_equal_spec_share_values_across_cases():
    a = inputs.generate(parse_line('paddle.exp(Tensor([8, 8],"float32"), )'), 3)
    b = inputs.generate(parse_line('paddle.sin(Tensor([8, 8],"float32"), )'), 3)
    assert np.array_equal(a[0], b[0])


def test_domain_validation():
    with pytest.raises(ValueError):
        Domain(low=1, high=1)
    assert index_into("x").index_of == "x"


def _draw(domain, shape, dtype, context):
    return inputs.draw(TensorSpec(shape, dtype), domain, np.random.default_rng(1), context)


def test_shape_like_domains_give_valid_values():
    from opbench.domains import axes_of, broadcast_of, permutation_of, sections_of, shape_of

    s = _draw(shape_of("x"), (4,), "int64", (3, 4, 5))
    assert s.dtype == np.int64 and np.prod(s) == 60 and len(s) == 4
    assert np.prod(_draw(shape_of("x"), (2,), "int32", (0, 7))) == 0
    a = _draw(axes_of("x"), (2,), "int64", (3, 4, 5))
    assert len(set(a.tolist())) == 2 and all(0 <= v < 3 for v in a)
    assert 0 <= int(_draw(axes_of("x"), (), "int64", (3, 4))) < 2  # a 0-D axis tensor
    assert sorted(_draw(permutation_of("x"), (3,), "int64", (3, 4, 5)).tolist()) == [0, 1, 2]
    sec = _draw(sections_of("x"), (3,), "int64", 10)
    assert sec.sum() == 10 and sec.min() > 0
    b = _draw(broadcast_of("x"), (3,), "int64", (4, 1))
    assert b[1] == 4 and b.min() >= 1  # x's non-1 dims are kept, its size-1 dims may grow


def test_value_domains_sorted_spd_bound():
    from opbench.domains import SORTED, SPD, bounded_by

    s = _draw(SORTED, (3, 50), "float32", None)
    assert np.all(np.diff(s, axis=-1) >= 0)
    m = _draw(SPD, (2, 4, 4), "float64", None)
    assert np.allclose(m, np.swapaxes(m, -1, -2)) and np.all(np.linalg.eigvalsh(m) > 0)
    b = _draw(bounded_by("num_classes"), (200,), "int64", 7)
    assert b.min() >= 0 and b.max() < 7


@pytest.mark.parametrize(("shape", "dtype", "distinct"), [
    ((1, 50304), "float32", True),  # a uniform draw repeats 22-24 of these
    ((4, 4096), "float64", True),
    ((2, 300), "bfloat16", True),
    ((8, 2000), "float16", True),
    ((40000,), "bfloat16", False),  # more than the ~32,000 bfloat16 values in [-1, 1): ties cannot be avoided
])
def test_distinct_values_do_not_repeat_where_the_dtype_holds_them(shape, dtype, distinct) -> None:
    from opbench.domains import DISTINCT

    v = _draw(DISTINCT, shape, dtype, None).astype(np.float64)
    assert v.shape == shape and v.min() >= -1 and v.max() <= 1  # a 16-bit rounding may reach 1
    assert (np.unique(v).size == v.size) == distinct
    assert np.array_equal(v, _draw(DISTINCT, shape, dtype, None).astype(np.float64))  # seeded


def test_sorting_ops_draw_distinct_values() -> None:
    x, = inputs.generate(parse_line('paddle.argsort(Tensor([1, 50304],"float32"), descending=True, )'), 0)
    assert np.unique(x).size == x.size


@pytest.mark.parametrize(("shape", "axis", "size", "distinct"), [
    ((10, 799), 1, 8000, True),  # 7,990 indices: no repeat anywhere
    ((10, 3000), 1, 8000, True),  # 30,000 > 8,000: no repeat within a row
    ((3000, 10), 0, 8000, True),  # the same along the first axis
    ((4, 2), 0, 2, False),  # 4 indices into 2 positions a column: repeats cannot be avoided
])
def test_distinct_indices_do_not_repeat_along_their_axis(shape, axis, size, distinct) -> None:
    from opbench.domains import index_into

    domain = index_into("arr", distinct=True)
    v = _draw(domain, shape, "int64", (size, axis))
    assert v.shape == shape and v.min() >= 0 and v.max() < size
    slices = np.moveaxis(v, axis, -1).reshape(-1, shape[axis])
    assert all(np.unique(s).size == s.size for s in slices) == distinct
    assert np.array_equal(v, _draw(domain, shape, "int64", (size, axis)))  # seeded


def test_put_along_axis_draws_indices_without_repeats_in_a_row() -> None:
    """A repeated index makes which value lands, and which one gets the gradient, framework-defined."""
    line = ('paddle.put_along_axis(Tensor([10, 8000],"float32"), Tensor([10, 3000],"int64"), '
            'Tensor([10, 3000],"float32"), 1, )')
    _, indices, _ = inputs.generate(parse_line(line), 0)
    assert all(np.unique(row).size == row.size for row in indices)


@pytest.mark.parametrize("shape", [(1, 3, 8), (2, 3, 4, 5), (1, 2, 3, 4, 5)])
def test_plane_positions_are_a_permutation_of_each_plane(shape) -> None:
    from opbench.domains import PLANE_POSITIONS

    v = _draw(PLANE_POSITIONS, shape, "int64", None)
    plane = int(np.prod(shape[2:]))
    assert v.shape == shape and v.dtype == np.int64
    assert all(np.array_equal(np.sort(p), np.arange(plane)) for p in v.reshape(-1, plane))
    assert np.array_equal(v, _draw(PLANE_POSITIONS, shape, "int64", None))  # seeded


def test_max_unpool_draws_no_position_twice_in_a_plane() -> None:
    """Two values sent to one output position leave the kernel to pick which lands (PaddleAPITest's configs)."""
    line = ('paddle.nn.functional.max_unpool1d(Tensor([1, 3, 8],"float32"), Tensor([1, 3, 8],"int64"), '
            'kernel_size=2, stride=2, output_size=list[1,3,16,], )')
    _, indices = inputs.generate(parse_line(line), 0)
    assert all(np.unique(p).size == 8 for p in indices.reshape(3, 8))


def test_integer_tensors_get_a_domain_by_parameter_name():
    x, shape = inputs.generate(parse_line('paddle.reshape(Tensor([6, 10],"float32"), Tensor([3],"int64"), )'), 0)
    assert np.prod(shape) == 60
    _, axis = inputs.generate(parse_line('paddle.sum(Tensor([3, 4, 5],"float32"), Tensor([2],"int64"), )'), 0)
    assert len(set(axis.tolist())) == 2 and axis.max() < 3
    # a call's arguments given by one of Paddle's aliases are named by their parameter
    _, idx = inputs.generate(parse_line('paddle.index_select(Tensor([5, 7],"float32"), index=Tensor([9],"int64"), '
                                        'dim=1, )'), 0)
    assert idx.max() < 7


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_threaded_draw_gives_the_serial_bits(monkeypatch: pytest.MonkeyPatch, dtype: str) -> None:
    """A tensor drawn in chunks on threads has the bits of one serial draw, and leaves the generator
    where the serial draw does (a complex tensor draws its imaginary part after the real one)."""
    monkeypatch.setattr(inputs, "PARALLEL_CHUNK", 1000)
    spec = TensorSpec((7, 1001), dtype)
    serial_rng, threaded_rng = np.random.default_rng(11), np.random.default_rng(11)
    monkeypatch.setattr(inputs, "_DRAW_THREADS", 1)
    serial = inputs.draw(spec, DEFAULT, serial_rng)
    monkeypatch.setattr(inputs, "_DRAW_THREADS", 4)
    threaded = inputs.draw(spec, DEFAULT, threaded_rng)
    assert threaded.dtype == serial.dtype and threaded.tobytes() == serial.tobytes()
    assert threaded_rng.random() == serial_rng.random()
