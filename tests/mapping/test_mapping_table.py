"""The mapping table: lookups, argument binding, errors, benchmark op names, and Paddle's real signatures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from opbench.domains import Domain
from opbench.mapping import (
    REQUIRED,
    ApiMapping,
    MappingMissing,
    Param,
    api_for_benchmark_op,
    bind,
    is_mapped,
    lookup,
    mapped_apis,
)
from opbench.mapping.flops import bmm_flops, linear_flops, matmul_flops

REPO = Path(__file__).resolve().parents[2]

REQUIRED_APIS = [
    *(
        f"paddle.{n}"
        for n in (
            "lerp add subtract multiply divide maximum minimum pow where abs exp log sqrt rsqrt sin cos "
            "tanh erf square reciprocal floor clip scale cast sum mean max min prod logsumexp cumsum argmax "
            "matmul bmm reshape transpose concat stack squeeze unsqueeze expand gather index_select"
        ).split()
    ),
    *(
        f"paddle.nn.functional.{n}"
        for n in "relu gelu silu sigmoid leaky_relu softmax log_softmax layer_norm linear embedding".split()
    ),
]

# Parameters left out of the table on purpose: a graph label and an output buffer.
IGNORED_PARAMS = {"name", "out"}


def test_every_required_api_is_mapped() -> None:
    missing = [api for api in REQUIRED_APIS if not is_mapped(api)]
    assert not missing


def test_lookup_and_mapped_apis() -> None:
    apis = mapped_apis()
    assert apis == sorted(apis) and len(apis) == len(set(apis))
    assert set(REQUIRED_APIS) <= set(apis)
    m = lookup("paddle.nn.functional.softmax")
    assert isinstance(m, ApiMapping) and m.api == "paddle.nn.functional.softmax"
    assert [p.name for p in m.params] == ["x", "axis", "dtype", "name"]
    assert is_mapped("paddle.lerp") and not is_mapped("paddle.no_such_api")


def test_unmapped_api_raises_with_its_name() -> None:
    with pytest.raises(MappingMissing, match=r"no PyTorch mapping for paddle\.no_such_api"):
        lookup("paddle.no_such_api")
    assert issubclass(MappingMissing, LookupError)


def test_bind_positional_keyword_and_defaults() -> None:
    m = lookup("paddle.sum")
    assert bind(m, ("X",), {}) == {"x": "X", "axis": None, "dtype": None, "keepdim": False}
    bound = bind(m, ("X", [0, 1]), {"keepdim": True})
    assert bound == {"x": "X", "axis": [0, 1], "dtype": None, "keepdim": True}
    assert list(bind(m, (), {"keepdim": True, "x": "X"})) == ["x", "axis", "dtype", "keepdim"]
    # `name` is accepted (every Paddle API takes it) and dropped.
    assert "name" not in bind(m, ("X",), {"name": "s"})


def test_bind_keyword_only_parameter() -> None:
    m = lookup("paddle.add")
    assert bind(m, ("X", "Y"), {"alpha": 2}) == {"x": "X", "y": "Y", "alpha": 2}
    with pytest.raises(TypeError, match=r"paddle\.add\(\) takes at most 3 positional"):
        bind(m, ("X", "Y", None, 2), {})
    assert bind(m, ("X", "Y", None), {}) == {"x": "X", "y": "Y", "alpha": 1}  # Paddle's `name`, dropped


def test_bind_unknown_keyword() -> None:
    with pytest.raises(TypeError, match=r"paddle\.clip\(\) got an unexpected keyword argument 'lo'"):
        bind(lookup("paddle.clip"), ("X",), {"lo": 0.0})


def test_bind_too_many_positional() -> None:
    with pytest.raises(TypeError, match=r"paddle\.abs\(\) takes at most 2 positional arguments but 3"):
        bind(lookup("paddle.abs"), ("X", None, "Z"), {})


def test_bind_aliases_and_out() -> None:
    m = lookup("paddle.add")
    assert bind(m, (), {"input": "X", "other": "Y"}) == {"x": "X", "y": "Y", "alpha": 1}
    assert bind(m, ("X", "Y"), {"out": None}) == {"x": "X", "y": "Y", "alpha": 1}
    assert bind(m, ("X", "Y"), {"out": "Z"}) == {"x": "X", "y": "Y", "alpha": 1}  # a buffer: dropped


def test_bind_missing_required() -> None:
    with pytest.raises(TypeError, match=r"paddle\.lerp\(\) missing required argument 'weight'"):
        bind(lookup("paddle.lerp"), ("X", "Y"), {})


def test_bind_duplicate_argument() -> None:
    with pytest.raises(TypeError, match=r"paddle\.matmul\(\) got multiple values for argument 'x'"):
        bind(lookup("paddle.matmul"), ("X", "Y"), {"x": "X2"})


def test_api_for_benchmark_op() -> None:
    assert api_for_benchmark_op("lerp") == "paddle.lerp"
    assert api_for_benchmark_op("matmul") == "paddle.matmul"
    assert api_for_benchmark_op("softmax") == "paddle.nn.functional.softmax"
    assert api_for_benchmark_op("layer_norm") == "paddle.nn.functional.layer_norm"
    assert api_for_benchmark_op("elementwise") == "paddle.add"  # a config family: its default API
    with pytest.raises(MappingMissing, match="no_such_op"):
        api_for_benchmark_op("no_such_op")


def test_entries_are_well_formed() -> None:
    for api in mapped_apis():
        m = lookup(api)
        names = [p.name for p in m.params]
        assert (m.torch is None) != (m.convert is None), api
        for domain in m.domains.values():
            assert isinstance(domain, Domain)
            if domain.index_of is not None:
                assert domain.index_of in names, api
        # once a parameter has a default, every later positional one has one too
        positional = [p for p in m.params if not p.keyword_only]
        seen_default = False
        for p in positional:
            seen_default = seen_default or p.default is not REQUIRED
            assert p.default is not REQUIRED or not seen_default, f"{api}: {p.name}"


def test_api_mapping_rejects_bad_entries() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        ApiMapping("paddle.x", params=(Param("x"),))
    with pytest.raises(ValueError, match="not one of its parameters"):
        ApiMapping("paddle.x", "torch.abs(x)", params=(Param("x"),), nondiff=("y",))
    with pytest.raises(ValueError, match="template reads"):
        ApiMapping("paddle.x", "torch.abs(input)", params=(Param("x"),))
    with pytest.raises(ValueError, match="no recorded Paddle signature"):
        ApiMapping("paddle.no_such_api", "torch.abs(x)")


def test_flops() -> None:
    assert matmul_flops({"x": (16, 35, 1500), "y": (1500, 10000)}) == 2 * 16 * 35 * 1500 * 10000
    assert matmul_flops({"x": (4, 12, 64, 85), "y": (4, 12, 85, 512)}) == 2 * 48 * 64 * 85 * 512
    assert matmul_flops({"x": (16, 1024), "y": (37007, 1024)}) == 2 * 16 * 1024 * 37007  # transpose_y
    assert matmul_flops({"x": (1500, 16), "y": (1500, 7)}) == 2 * 16 * 1500 * 7  # transpose_x
    assert matmul_flops({"x": (2, 1, 8, 16), "y": (3, 16, 4)}) == 2 * 6 * 8 * 16 * 4  # broadcast batch
    assert matmul_flops({"x": (16,), "y": (16,)}) == 2 * 16
    assert bmm_flops({"x": (2, 8, 16), "y": (2, 16, 4)}) == 2 * 2 * 8 * 16 * 4
    assert linear_flops({"x": (2, 8, 16), "weight": (16, 4)}) == 2 * 16 * 16 * 4
    assert lookup("paddle.nn.functional.softmax").flops is None


def test_to_torch_dtype_spellings() -> None:
    torch = pytest.importorskip("torch")
    from opbench.mapping import to_torch_dtype

    assert to_torch_dtype("float32") is torch.float32
    assert to_torch_dtype("bfloat16") is torch.bfloat16
    assert to_torch_dtype("paddle.float16") is torch.float16
    assert to_torch_dtype("Dtype(float64)") is torch.float64
    assert to_torch_dtype("uint16") is torch.bfloat16  # Paddle's storage name for bfloat16
    assert to_torch_dtype(torch.int32) is torch.int32
    with pytest.raises(ValueError, match="unknown dtype"):
        to_torch_dtype("float13")


def test_to_torch_dtype_of_paddle_dtype_objects() -> None:
    torch = pytest.importorskip("torch")
    paddle = pytest.importorskip("paddle")
    from opbench.mapping import to_torch_dtype

    assert to_torch_dtype(paddle.float32) is torch.float32
    assert to_torch_dtype(paddle.bfloat16) is torch.bfloat16
    assert to_torch_dtype(paddle.int64) is torch.int64
    assert to_torch_dtype(paddle.bool) is torch.bool


def test_recorded_signatures_match_installed_paddle() -> None:
    """paddle_signatures.json is what ``python -m opbench.mapping.signatures`` makes from paddle 3.3.1."""
    pytest.importorskip("paddle")
    from opbench.mapping.signatures import generate, load

    real, recorded = generate(), load()
    for api in mapped_apis():
        assert recorded.get(api) == real.get(api), api
    assert set(recorded) == set(real)


def test_import_does_not_import_torch_or_paddle() -> None:
    code = (
        "import sys\n"
        "import opbench.mapping\n"
        "opbench.mapping.lookup('paddle.matmul')\n"
        "bad = [m for m in ('torch', 'paddle') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
