// Paddle binding of the layer_norm core: CPU kernels and the op registrations (opbench_layer_norm:
// X, Weight, Bias -> Out, Mean, Rstd; its grad gives X@GRAD, Weight@GRAD and Bias@GRAD).
#include <vector>

#include "common/paddle_cpu_team.h"
#include "layer_norm_cpu.h"
#include "norm_common/paddle_norm.h"
#include "paddle/extension.h"

namespace opbench_norm {
namespace {

// weight_grad / bias_grad: whether the caller's weight / bias takes a gradient (read by the backward).
std::vector<paddle::Tensor> LayerNormForward(const paddle::Tensor& x, const paddle::Tensor& w,
                                             const paddle::Tensor& b, float eps, bool /*weight_grad*/,
                                             bool /*bias_grad*/) {
  if (x.is_cpu()) {
    return forward<norm_core::half_t, norm_core::bf16_t>(
        "layer_norm", x, w, &b, eps,
        [](auto* x, auto* w, auto* b, auto* y, float* mean, float* rstd, int64_t rows, int64_t cols, float eps) {
          norm_core::layer_norm_forward_cpu(x, w, b, y, mean, rstd, rows, cols, eps);
        });
  }
#ifdef PADDLE_WITH_CUDA
  if (x.is_gpu()) return layer_norm_forward_gpu(x, w, b, eps);
#endif
  PD_THROW("opbench layer_norm: unsupported place");
}

std::vector<paddle::Tensor> LayerNormBackward(const paddle::Tensor& x, const paddle::Tensor& w,
                                              const paddle::Tensor& b, const paddle::Tensor& mean,
                                              const paddle::Tensor& rstd, const paddle::Tensor& dout, bool weight_grad,
                                              bool bias_grad) {
  if (x.is_cpu()) {
    return backward<norm_core::half_t, norm_core::bf16_t>(
        "layer_norm", x, w, &b, &mean, rstd, dout,
        [](auto* g, auto* x, auto* w, const float* mean, const float* rstd, auto* dx, auto* dw, auto* db,
           int64_t rows, int64_t cols) {
          norm_core::layer_norm_backward_cpu(g, x, w, mean, rstd, dx, dw, db, rows, cols);
        },
        weight_grad, bias_grad);
  }
#ifdef PADDLE_WITH_CUDA
  if (x.is_gpu()) return layer_norm_backward_gpu(x, w, b, mean, rstd, dout);
#endif
  PD_THROW("opbench layer_norm: unsupported place");
}

std::vector<std::vector<int64_t>> LayerNormInferShape(const std::vector<int64_t>& xs, const std::vector<int64_t>& ws,
                                                      const std::vector<int64_t>& bs) {
  return {xs, {rows_of(xs)}, {rows_of(xs)}};
}
std::vector<paddle::DataType> LayerNormInferDtype(const paddle::DataType& xd, const paddle::DataType& wd,
                                                  const paddle::DataType& bd) {
  return {xd, paddle::DataType::FLOAT32, paddle::DataType::FLOAT32};
}
std::vector<std::vector<int64_t>> LayerNormGradInferShape(
    const std::vector<int64_t>& xs, const std::vector<int64_t>& ws, const std::vector<int64_t>& bs,
    const std::vector<int64_t>& ms, const std::vector<int64_t>& rs, const std::vector<int64_t>& gs) {
  return {xs, ws, bs};
}

}  // namespace
}  // namespace opbench_norm

PD_BUILD_OP(opbench_layer_norm)
    .Inputs({"X", "Weight", "Bias"})
    .Outputs({"Out", "Mean", "Rstd"})
    .Attrs({"epsilon: float", "weight_grad: bool", "bias_grad: bool"})
    .SetKernelFn(PD_KERNEL(opbench_norm::LayerNormForward))
    .SetInferShapeFn(PD_INFER_SHAPE(opbench_norm::LayerNormInferShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(opbench_norm::LayerNormInferDtype));

PD_BUILD_GRAD_OP(opbench_layer_norm)
    .Inputs({"X", "Weight", "Bias", "Mean", "Rstd", paddle::Grad("Out")})
    .Outputs({paddle::Grad("X"), paddle::Grad("Weight"), paddle::Grad("Bias")})
    .Attrs({"weight_grad: bool", "bias_grad: bool"})
    .SetKernelFn(PD_KERNEL(opbench_norm::LayerNormBackward))
    .SetInferShapeFn(PD_INFER_SHAPE(opbench_norm::LayerNormGradInferShape));
