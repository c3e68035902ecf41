// Paddle binding of the rms_norm core: CPU kernels and the op registrations (opbench_rms_norm:
// X, Weight -> Out, Rstd; its grad gives X@GRAD and Weight@GRAD).
#include <vector>

#include "common/paddle_cpu_team.h"
#include "norm_common/paddle_norm.h"
#include "paddle/extension.h"
#include "rms_norm_cpu.h"

namespace opbench_norm {
namespace {

// weight_grad: whether the caller's weight takes a gradient (read by the backward).
std::vector<paddle::Tensor> RmsNormForward(const paddle::Tensor& x, const paddle::Tensor& w, float eps,
                                           bool /*weight_grad*/) {
  if (x.is_cpu()) {
    return forward<norm_core::half_t, norm_core::bf16_t>(
        "rms_norm", x, w, nullptr, eps,
        [](auto* x, auto* w, auto*, auto* y, float*, float* rstd, int64_t rows, int64_t cols, float eps) {
          norm_core::rms_norm_forward_cpu(x, w, y, rstd, rows, cols, eps);
        });
  }
#ifdef PADDLE_WITH_CUDA
  if (x.is_gpu()) return rms_norm_forward_gpu(x, w, eps);
#endif
  PD_THROW("opbench rms_norm: unsupported place");
}

std::vector<paddle::Tensor> RmsNormBackward(const paddle::Tensor& x, const paddle::Tensor& w,
                                            const paddle::Tensor& rstd, const paddle::Tensor& dout, bool weight_grad) {
  if (x.is_cpu()) {
    return backward<norm_core::half_t, norm_core::bf16_t>(
        "rms_norm", x, w, nullptr, nullptr, rstd, dout,
        [](auto* g, auto* x, auto* w, const float*, const float* rstd, auto* dx, auto* dw, auto*, int64_t rows,
           int64_t cols) { norm_core::rms_norm_backward_cpu(g, x, w, rstd, dx, dw, rows, cols); },
        weight_grad);
  }
#ifdef PADDLE_WITH_CUDA
  if (x.is_gpu()) return rms_norm_backward_gpu(x, w, rstd, dout);
#endif
  PD_THROW("opbench rms_norm: unsupported place");
}

std::vector<std::vector<int64_t>> RmsNormInferShape(const std::vector<int64_t>& xs, const std::vector<int64_t>& ws) {
  return {xs, {rows_of(xs)}};
}
std::vector<paddle::DataType> RmsNormInferDtype(const paddle::DataType& xd, const paddle::DataType& wd) {
  return {xd, paddle::DataType::FLOAT32};
}
std::vector<std::vector<int64_t>> RmsNormGradInferShape(const std::vector<int64_t>& xs,
                                                        const std::vector<int64_t>& ws,
                                                        const std::vector<int64_t>& rs,
                                                        const std::vector<int64_t>& gs) {
  return {xs, ws};
}

}  // namespace
}  // namespace opbench_norm

PD_BUILD_OP(opbench_rms_norm)
    .Inputs({"X", "Weight"})
    .Outputs({"Out", "Rstd"})
    .Attrs({"epsilon: float", "weight_grad: bool"})
    .SetKernelFn(PD_KERNEL(opbench_norm::RmsNormForward))
    .SetInferShapeFn(PD_INFER_SHAPE(opbench_norm::RmsNormInferShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(opbench_norm::RmsNormInferDtype));

PD_BUILD_GRAD_OP(opbench_rms_norm)
    .Inputs({"X", "Weight", "Rstd", paddle::Grad("Out")})
    .Outputs({paddle::Grad("X"), paddle::Grad("Weight")})
    .Attrs({"weight_grad: bool"})
    .SetKernelFn(PD_KERNEL(opbench_norm::RmsNormBackward))
    .SetInferShapeFn(PD_INFER_SHAPE(opbench_norm::RmsNormGradInferShape));
