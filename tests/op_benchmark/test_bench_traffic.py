import pytest

from op_benchmark import traffic
from opbench.cases import parse_line


def io_for(case, grads, outputs, grad_outputs):
    return traffic.case_io(case, grads, outputs, grad_outputs)


def test_default_model_counts_inputs_outputs_and_grads():
    case = parse_line('paddle.multiply(Tensor([1024],"float32"), Tensor([1024],"float32"))')
    io = io_for(case, [True, False], [((1024,), "float32")], [((1024,), "float32")])
    assert traffic.bytes_moved(case, "fwd", io) == 3 * 4096
    assert traffic.bytes_moved(case, "bwd", io) == 4096 + 2 * 4096 + 4096  # dout + x, y + dx
    assert traffic.bytes_moved(case, "fwd+bwd", io) == 3 * 4096 + 4 * 4096


def test_lerp_backward_reads_x_y_only_for_the_weight_grad():
    scalar = parse_line('paddle.lerp(Tensor([1000],"float32"), Tensor([1000],"float32"), 0.5)')
    io = io_for(scalar, [True, True], [((1000,), "float32")], [((1000,), "float32")])
    assert traffic.bytes_moved(scalar, "bwd", io) == 3 * 4000  # read dout, write dx, dy
    full = parse_line('paddle.lerp(Tensor([1000],"float32"), Tensor([1000],"float32"), Tensor([1000],"float32"))')
    io = io_for(full, [True, True, True], [((1000,), "float32")], [((1000,), "float32")])
    assert traffic.bytes_moved(full, "bwd", io) == 4000 * (1 + 3 + 1 + 1)  # dout; dx, dy, dw; w; y - x saved
    half = parse_line('paddle.lerp(Tensor([1000],"float16"), Tensor([1000],"float16"), Tensor([1000],"float16"))')
    io = io_for(half, [True, True, True], [((1000,), "float16")], [((1000,), "float16")])
    assert traffic.bytes_moved(half, "bwd", io) == 2000 * (1 + 3 + 1 + 2)  # x, y: a 2-byte y - x would round
    rows = parse_line('paddle.lerp(Tensor([10, 100],"float64"), Tensor([10, 100],"float64"), '
                      'Tensor([10, 1],"float64"))')
    io = io_for(rows, [True, True, True], [((10, 100), "float64")], [((10, 100), "float64")])
    assert traffic.bytes_moved(rows, "bwd", io) == 8000 * (1 + 2 + 1) + 2 * 80  # dout; dx, dy; y - x; w, dw
    bx = parse_line('paddle.lerp(Tensor([10, 1],"float32"), Tensor([10, 100],"float32"), '
                    'Tensor([10, 100],"float32"))')
    io = io_for(bx, [True, True, True], [((10, 100), "float32")], [((10, 100), "float32")])
    assert traffic.bytes_moved(bx, "bwd", io) == 4000 * (1 + 1 + 2 + 1) + 40 * 2  # dout; dy, dw; w; y; x, dx


def test_flops_from_mapping_for_matmul_and_none_for_elementwise():
    mm = parse_line('paddle.matmul(Tensor([64, 32],"float32"), Tensor([32, 16],"float32"))')
    assert traffic.flops(mm, "fwd") == pytest.approx(2 * 64 * 32 * 16)
    assert traffic.flops(mm, "fwd+bwd") == pytest.approx(3 * 2 * 64 * 32 * 16)
    add = parse_line('paddle.add(Tensor([64],"float32"), Tensor([64],"float32"))')
    assert traffic.flops(add, "fwd") is None


def test_read_share_is_the_default_models_mix():
    from op_benchmark.traffic import CaseIO, TensorIO, read_share

    x, w = TensorIO("x", (4, 8), "float32", True), TensorIO("weight", (8,), "float32", True)
    io = CaseIO((x, w), (TensorIO("out", (4, 8), "float32"),), (TensorIO("grad_out", (4, 8), "float32"),))
    assert read_share("fwd", io) == pytest.approx(160 / 288)  # x and w read, out written
    assert read_share("bwd", io) == pytest.approx(288 / 448)  # dout, x, w read; dx, dw written
    assert read_share("fwd+bwd", io) == pytest.approx((160 + 288) / (288 + 448))
    assert read_share("fwd", CaseIO((), (), ())) == 0.5
