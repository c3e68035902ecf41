// Paddle binding of the rms_norm core: GPU launchers (built only when Paddle has CUDA), on x's stream.
#include <vector>

#include "common/paddle_workspace.h"
#include "norm_common/paddle_norm.h"
#include "paddle/extension.h"
#include "rms_norm.cuh"

namespace opbench_norm {

std::vector<paddle::Tensor> rms_norm_forward_gpu(const paddle::Tensor& x, const paddle::Tensor& w, float eps) {
  return forward<__half, __nv_bfloat16>(
      "rms_norm", x, w, nullptr, eps,
      [&](auto* xp, auto* wp, auto*, auto* y, float*, float* rstd, int64_t rows, int64_t cols, float e) {
        try {
          norm_core::gpu::rms_norm_forward(xp, wp, y, rstd, rows, cols, e, x.stream());
        } catch (const std::runtime_error& err) {
          PD_THROW(err.what());
        }
      });
}

std::vector<paddle::Tensor> rms_norm_backward_gpu(const paddle::Tensor& x, const paddle::Tensor& w,
                                                  const paddle::Tensor& rstd, const paddle::Tensor& dout) {
  oppaddle::Workspace scratch(x);
  return backward<__half, __nv_bfloat16>(
      "rms_norm", x, w, nullptr, nullptr, rstd, dout,
      [&](auto* g, auto* xp, auto* wp, const float*, const float* rs, auto* dx, auto* dw, auto*, int64_t rows,
          int64_t cols) {
        try {
          norm_core::gpu::rms_norm_backward(g, xp, wp, rs, dx, dw, rows, cols, scratch.alloc(), x.stream());
        } catch (const std::runtime_error& err) {
          PD_THROW(err.what());
        }
      });
}

}  // namespace opbench_norm
