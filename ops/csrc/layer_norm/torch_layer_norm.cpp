// PyTorch binding of the layer_norm core: op schemas and the CPU kernels (torch_layer_norm.cu adds CUDA).
#include <ATen/ATen.h>
#include <torch/library.h>

#include "common/torch_cpu_team.h"
#include "layer_norm_cpu.h"
#include "norm_common/torch_norm.h"
#include "norm_common/torch_norm_autograd.h"

namespace opbench_norm {
namespace {

std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_fwd_cpu(const at::Tensor& x,
                                                                  const std::optional<at::Tensor>& w,
                                                                  const std::optional<at::Tensor>& b, double eps) {
  return forward<norm_core::half_t, norm_core::bf16_t>(
      "layer_norm", true, x, w, b, eps,
      [](auto* x, auto* w, auto* b, auto* y, float* mean, float* rstd, int64_t rows, int64_t cols, float eps) {
        norm_core::layer_norm_forward_cpu(x, w, b, y, mean, rstd, rows, cols, eps);
      });
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_bwd_cpu(const at::Tensor& g, const at::Tensor& x,
                                                                  const std::optional<at::Tensor>& w,
                                                                  const std::optional<at::Tensor>& b,
                                                                  const at::Tensor& mean, const at::Tensor& rstd,
                                                                  bool need_w, bool need_b) {
  return backward<norm_core::half_t, norm_core::bf16_t>(
      "layer_norm", true, g, x, w, b, mean, rstd, need_w, need_b,
      [](auto* g, auto* x, auto* w, const float* mean, const float* rstd, auto* dx, auto* dw, auto* db, int64_t rows,
         int64_t cols) { norm_core::layer_norm_backward_cpu(g, x, w, mean, rstd, dx, dw, db, rows, cols); });
}

}  // namespace
}  // namespace opbench_norm

TORCH_LIBRARY(opbench_layer_norm, m) {
  // y, mean and rstd ([rows] fp32, saved for the backward)
  m.def("layer_norm_fwd(Tensor x, Tensor? weight, Tensor? bias, float epsilon) -> (Tensor, Tensor, Tensor)");
  // dx, dw, db (each empty unless asked for and the parameter is given)
  m.def(
      "layer_norm_bwd(Tensor grad, Tensor x, Tensor? weight, Tensor? bias, Tensor mean, Tensor rstd, bool need_w, "
      "bool need_b) -> (Tensor, Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(opbench_layer_norm, CPU, m) {
  m.impl("layer_norm_fwd", &opbench_norm::layer_norm_fwd_cpu);
  m.impl("layer_norm_bwd", &opbench_norm::layer_norm_bwd_cpu);
}

TORCH_LIBRARY_IMPL(opbench_layer_norm, Autograd, m) {
  m.impl("layer_norm_fwd",
         [](const at::Tensor& x, const std::optional<at::Tensor>& w, const std::optional<at::Tensor>& b, double eps) {
           const auto out = opbench_norm::NormFunction<true>::apply(x, w, b, eps);
           return std::make_tuple(out[0], out[1], out[2]);
         });
}
