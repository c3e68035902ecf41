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
