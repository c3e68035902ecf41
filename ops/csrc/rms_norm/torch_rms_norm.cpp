// PyTorch binding of the rms_norm core: op schemas and the CPU kernels (torch_rms_norm.cu adds CUDA).
#include <ATen/ATen.h>
#include <torch/library.h>

#include "common/torch_cpu_team.h"
#include "norm_common/torch_norm.h"
#include "norm_common/torch_norm_autograd.h"
#include "rms_norm_cpu.h"

namespace opbench_norm {
namespace {

std::tuple<at::Tensor, at::Tensor> rms_norm_fwd_cpu(const at::Tensor& x, const std::optional<at::Tensor>& w,
                                                    double eps) {
  auto [y, mean, rstd] = forward<norm_core::half_t, norm_core::bf16_t>(
      "rms_norm", false, x, w, std::nullopt, eps,
      [](auto* x, auto* w, auto*, auto* y, float*, float* rstd, int64_t rows, int64_t cols, float eps) {
        norm_core::rms_norm_forward_cpu(x, w, y, rstd, rows, cols, eps);
      });
  return {y, rstd};
}

std::tuple<at::Tensor, at::Tensor> rms_norm_bwd_cpu(const at::Tensor& g, const at::Tensor& x,
                                                    const std::optional<at::Tensor>& w, const at::Tensor& rstd,
                                                    bool need_w) {
  auto [dx, dw, db] = backward<norm_core::half_t, norm_core::bf16_t>(
      "rms_norm", false, g, x, w, std::nullopt, at::Tensor(), rstd, need_w, false,
      [](auto* g, auto* x, auto* w, const float*, const float* rstd, auto* dx, auto* dw, auto*, int64_t rows,
         int64_t cols) { norm_core::rms_norm_backward_cpu(g, x, w, rstd, dx, dw, rows, cols); });
  return {dx, dw};
}

}  // namespace
}  // namespace opbench_norm

TORCH_LIBRARY(opbench_rms_norm, m) {
  // y and rstd ([rows] fp32, saved for the backward)
  m.def("rms_norm_fwd(Tensor x, Tensor? weight, float epsilon) -> (Tensor, Tensor)");
  // dx, dw (empty unless need_w and a weight is given)
  m.def("rms_norm_bwd(Tensor grad, Tensor x, Tensor? weight, Tensor rstd, bool need_w) -> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(opbench_rms_norm, CPU, m) {
  m.impl("rms_norm_fwd", &opbench_norm::rms_norm_fwd_cpu);
  m.impl("rms_norm_bwd", &opbench_norm::rms_norm_bwd_cpu);
}

TORCH_LIBRARY_IMPL(opbench_rms_norm, Autograd, m) {
  m.impl("rms_norm_fwd", [](const at::Tensor& x, const std::optional<at::Tensor>& w, double eps) {
    const auto out = opbench_norm::NormFunction<false>::apply(x, w, std::optional<at::Tensor>(), eps);
    return std::make_tuple(out[0], out[1]);
  });
}
