"""GPU timing paths (skipped without CUDA): events, kernel, graph and host on the same small ops."""

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.serial]
if not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

from op_benchmark.runner import BenchConfig, Runner  # noqa: E402
from op_benchmark.stopping import default_rule  # noqa: E402
from op_benchmark.timers import make_timer  # noqa: E402
from opbench.backends import get_backend  # noqa: E402
from opbench.cases import parse_line  # noqa: E402


def test_kernel_time_excludes_the_flush_and_graph_skips_launch_overhead():
    b = get_backend("torch", "gpu")
    x = torch.rand(1024, device="cuda")
    med = {}
    for method in ("events", "kernel", "graph", "host"):
        s = make_timer(b, method).bind(lambda: x.mul(2.0))
        samples = sorted(s() for _ in range(30))
        med[method] = samples[15]
    # a 4 KB multiply is a ~2 us kernel; the 256 MiB flush alone takes ~100 us
    assert med["kernel"] < 20 and med["graph"] < 20
    assert med["kernel"] <= med["events"] * 1.5
    # host adds the launch latency the events method hides (a few us at least)
    assert med["host"] > med["events"]


@pytest.mark.parametrize("method", ["events", "kernel", "graph", "host"])
def test_runner_measures_lerp_every_direction(method):
    cfg = BenchConfig(providers=["torch"], device="gpu", method=method,
                      rule=default_rule(0.05, min_samples=10), warmup_s=0.01)
    recs = Runner(cfg, progress=False).run([parse_line(
        'paddle.lerp(Tensor([16, 102400],"float32"), Tensor([16, 102400],"float32"), 0.2)')])
    assert [r.status for r in recs] == ["ok"] * 3, [r.error for r in recs]
    for r in recs:
        assert r.method == method and r.median_us > 1 and r.gbps > 0 and r.samples >= 10


@pytest.mark.parametrize("method", ["events", "graph"])
def test_copy_floor_is_a_copy_of_the_case_bytes(method):
    """A copy of a large case's bytes runs near the copy bandwidth, and a small one's takes at least a launch."""
    from opbench.env import peak_bandwidth_gbps

    b = get_backend("torch", "gpu")
    peak = peak_bandwidth_gbps(b)
    cfg = BenchConfig(providers=["torch"], directions=["fwd"], device="gpu", method=method,
                      rule=default_rule(0.05, min_samples=10), warmup_s=0.01, copy_floor=True)
    big, small = Runner(cfg, progress=False).run([
        parse_line('paddle.lerp(Tensor([4096, 16384],"float32"), Tensor([4096, 16384],"float32"), 0.2)'),
        parse_line('paddle.lerp(Tensor([16, 16],"float32"), Tensor([16, 16],"float32"), 0.2)')])
    copy_gbps = big.bytes / (big.copy_us * 1e-6) / 1e9
    assert 0.8 * peak < copy_gbps < 1.1 * peak, (copy_gbps, peak)
    assert big.median_us > 0.8 * big.copy_us  # lerp moves the same bytes as the copy, no faster
    assert 1.0 < small.copy_us < 50.0
