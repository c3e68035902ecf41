// PyTorch binding of the layer_norm core: CUDA kernels on the current stream.
#include <ATen/ATen.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/torch_workspace.h"
#include "layer_norm.cuh"
#include "norm_common/torch_norm.h"

namespace opbench_norm {
namespace {

std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_fwd_cuda(const at::Tensor& x,
                                                                   const std::optional<at::Tensor>& w,
                                                                   const std::optional<at::Tensor>& b, double eps) {
  const c10::cuda::CUDAGuard guard(x.device());
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  return forward<__half, __nv_bfloat16>(
      "layer_norm", true, x, w, b, eps,
      [&](auto* x, auto* w, auto* b, auto* y, float* mean, float* rstd, int64_t rows, int64_t cols, float eps) {
        try {
          norm_core::gpu::layer_norm_forward(x, w, b, y, mean, rstd, rows, cols, eps, stream);
        } catch (const std::runtime_error& e) {
          TORCH_CHECK(false, e.what());
        }
      });
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_bwd_cuda(const at::Tensor& g, const at::Tensor& x,
                                                                   const std::optional<at::Tensor>& w,
                                                                   const std::optional<at::Tensor>& b,
                                                                   const at::Tensor& mean, const at::Tensor& rstd,
                                                                   bool need_w, bool need_b) {
  const c10::cuda::CUDAGuard guard(x.device());
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  optorch::Workspace scratch(x);
  return backward<__half, __nv_bfloat16>(
      "layer_norm", true, g, x, w, b, mean, rstd, need_w, need_b,
      [&](auto* g, auto* x, auto* w, const float* mean, const float* rstd, auto* dx, auto* dw, auto* db, int64_t rows,
          int64_t cols) {
        try {
          norm_core::gpu::layer_norm_backward(g, x, w, mean, rstd, dx, dw, db, rows, cols, scratch.alloc(), stream);
        } catch (const std::runtime_error& e) {
          TORCH_CHECK(false, e.what());
        }
      });
}

}  // namespace
}  // namespace opbench_norm

TORCH_LIBRARY_IMPL(opbench_layer_norm, CUDA, m) {
  m.impl("layer_norm_fwd", &opbench_norm::layer_norm_fwd_cuda);
  m.impl("layer_norm_bwd", &opbench_norm::layer_norm_bwd_cuda);
}
