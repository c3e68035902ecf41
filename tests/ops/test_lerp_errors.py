"""Bad arguments raise one-line errors naming shapes/dtypes/devices: no crash, no wrong result."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest


def _torch() -> Any:
    return pytest.importorskip("torch")


def _paddle() -> Any:
    return pytest.importorskip("paddle")


def test_not_broadcastable_torch() -> None:
    torch = _torch()
    from ops import lerp

    with pytest.raises(ValueError, match=r"\[2, 3\].*\[4, 3\]"):
        lerp(torch.zeros(2, 3), torch.zeros(4, 3), 0.5)


def test_not_broadcastable_weight_torch() -> None:
    torch = _torch()
    from ops import lerp

    with pytest.raises(ValueError, match=r"\[5\].*not broadcastable"):
        lerp(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(5))


def test_mixed_dtypes_torch() -> None:
    torch = _torch()
    from ops import lerp

    with pytest.raises(TypeError, match="float32 vs float64"):
        lerp(torch.zeros(3), torch.zeros(3, dtype=torch.float64), 0.5)
    with pytest.raises(TypeError, match="weight dtype float16 differs from x dtype float32"):
        lerp(torch.zeros(3), torch.zeros(3), torch.zeros(3, dtype=torch.float16))


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool", "complex64"])
def test_integer_dtype_torch(dtype: str) -> None:
    torch = _torch()
    from ops import lerp

    t = torch.zeros(3, dtype=getattr(torch, dtype))
    with pytest.raises(TypeError, match=f"dtype {dtype} of x is not supported"):
        lerp(t, t, 0.5)


def test_mixed_devices_torch() -> None:
    torch = _torch()
    from ops import lerp

    with pytest.raises(ValueError, match="different devices.*cpu.*meta"):
        lerp(torch.zeros(3), torch.zeros(3, device="meta"), 0.5)


def test_bad_weight_type_torch() -> None:
    torch = _torch()
    from ops import lerp

    with pytest.raises(TypeError, match="weight must be"):
        lerp(torch.zeros(3), torch.zeros(3), "0.5")
    with pytest.raises(TypeError, match="weight must be"):
        lerp(torch.zeros(3), torch.zeros(3), True)
    with pytest.raises(TypeError, match="x must be"):
        lerp(np.zeros(3), torch.zeros(3), 0.5)


def test_mixed_frameworks() -> None:
    torch = _torch()
    paddle = _paddle()
    from ops import lerp

    with pytest.raises(TypeError, match="y must be a torch tensor"):
        lerp(torch.zeros(3), paddle.zeros([3]), 0.5)
    with pytest.raises(TypeError, match="weight is a paddle tensor"):
        lerp(torch.zeros(3), torch.zeros(3), paddle.zeros([3]))


def test_errors_paddle() -> None:
    paddle = _paddle()
    from ops import lerp

    with pytest.raises(ValueError, match=r"\[2, 3\].*\[4, 3\]"):
        lerp(paddle.zeros([2, 3]), paddle.zeros([4, 3]), 0.5)
    with pytest.raises(TypeError, match="float32 vs float64"):
        lerp(paddle.zeros([3]), paddle.zeros([3], dtype="float64"), 0.5)
    with pytest.raises(TypeError, match="dtype int64 of x is not supported"):
        lerp(paddle.zeros([3], dtype="int64"), paddle.zeros([3], dtype="int64"), 0.5)
    with pytest.raises(TypeError, match="weight dtype float64 differs"):
        lerp(paddle.zeros([3]), paddle.zeros([3]), paddle.zeros([3], dtype="float64"))


@pytest.mark.slow
def test_cpp_checks_torch(torch_ext: Any) -> None:
    """The C++ op checks too (called directly, bypassing the Python validation)."""
    torch = torch_ext
    with pytest.raises(ValueError, match="not broadcastable"):
        torch.ops.opbench_lerp.lerp(torch.zeros(2, 3), torch.zeros(4, 3), None, 0.5)
    with pytest.raises(TypeError, match="dtypes differ"):
        torch.ops.opbench_lerp.lerp(torch.zeros(3), torch.zeros(3, dtype=torch.float64), None, 0.5)
    with pytest.raises(TypeError, match="not supported"):
        torch.ops.opbench_lerp.lerp(torch.zeros(3, dtype=torch.int64), torch.zeros(3, dtype=torch.int64), None, 0.5)


@pytest.mark.slow
def test_cpp_checks_paddle(paddle_ext: Any) -> None:
    """The Paddle op's own checks raise (not crash) when called directly."""
    from ops import build

    mod = build.load("paddle")
    paddle = paddle_ext
    with pytest.raises(Exception, match="not broadcastable"):
        mod.opbench_lerp_scalar(paddle.zeros([2, 3]), paddle.zeros([4, 3]), 0.5)


def test_checks_after_a_passing_call_torch(torch_ext: Any) -> None:
    """The eager fast path (shapes found broadcastable once, then a set lookup) still refuses a call that
    differs from a passing one in dtype, weight type, shape or device, with the full checks' messages; its
    shape cache stays bounded."""
    import importlib

    from ops import lerp

    torch = torch_ext
    mod = importlib.import_module("ops.lerp")
    x, y, w = torch.zeros(2, 3), torch.zeros(3), torch.zeros(2, 1)
    for _ in range(2):  # the second call takes the fast path
        assert lerp(x, y, w).shape == (2, 3)
    assert (x.shape, y.shape, w.shape) in mod._BCAST_OK
    with pytest.raises(TypeError, match="float32 vs float64"):
        lerp(x, y.double(), w)
    with pytest.raises(TypeError, match="weight dtype float64"):
        lerp(x, y, w.double())
    with pytest.raises(TypeError, match="weight must be"):
        lerp(x, y, "0.5")
    with pytest.raises(ValueError, match="not broadcastable"):
        lerp(x, torch.zeros(4), w)
    torch.testing.assert_close(lerp(x + 1, y, 1), torch.zeros(2, 3))  # an int weight: the full checks, then the op
    for n in range(2, mod._MAX_BCAST_OK + 10):
        lerp(torch.zeros(n, 1), torch.zeros(1, 2), 0.5)
    assert len(mod._BCAST_OK) <= mod._MAX_BCAST_OK
