// Paddle binding of the layer_norm core: GPU launchers (built only when Paddle has CUDA), on x's stream.
#include <vector>

#include "common/paddle_workspace.h"
#include "layer_norm.cuh"
#include "norm_common/paddle_norm.h"
#include "paddle/extension.h"

namespace opbench_norm {

std::vector<paddle::Tensor> layer_norm_forward_gpu(const paddle::Tensor& x, const paddle::Tensor& w,
                                                   const paddle::Tensor& b, float eps) {
  return forward<__half, __nv_bfloat16>(
      "layer_norm", x, w, &b, eps,
      [&](auto* xp, auto* wp, auto* bp, auto* y, float* mean, float* rstd, int64_t rows, int64_t cols, float e) {
        try {
          norm_core::gpu::layer_norm_forward(xp, wp, bp, y, mean, rstd, rows, cols, e, x.stream());
        } catch (const std::runtime_error& err) {
          PD_THROW(err.what());
        }
      });
}

std::vector<paddle::Tensor> layer_norm_backward_gpu(const paddle::Tensor& x, const paddle::Tensor& w,
                                                    const paddle::Tensor& b, const paddle::Tensor& mean,
                                                    const paddle::Tensor& rstd, const paddle::Tensor& dout) {
  oppaddle::Workspace scratch(x);
  return backward<__half, __nv_bfloat16>(
      "layer_norm", x, w, &b, &mean, rstd, dout,
      [&](auto* g, auto* xp, auto* wp, const float* mu, const float* rs, auto* dx, auto* dw, auto* db, int64_t rows,
          int64_t cols) {
        try {
          norm_core::gpu::layer_norm_backward(g, xp, wp, mu, rs, dx, dw, db, rows, cols, scratch.alloc(), x.stream());
        } catch (const std::runtime_error& err) {
          PD_THROW(err.what());
        }
      });
}

}  // namespace opbench_norm
