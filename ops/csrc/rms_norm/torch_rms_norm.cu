// PyTorch binding of the rms_norm core: CUDA kernels on the current stream.
#include <ATen/ATen.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/torch_workspace.h"
#include "norm_common/torch_norm.h"
#include "rms_norm.cuh"

namespace opbench_norm {
namespace {

std::tuple<at::Tensor, at::Tensor> rms_norm_fwd_cuda(const at::Tensor& x, const std::optional<at::Tensor>& w,
                                                     double eps) {
  const c10::cuda::CUDAGuard guard(x.device());
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  auto [y, mean, rstd] = forward<__half, __nv_bfloat16>(
      "rms_norm", false, x, w, std::nullopt, eps,
      [&](auto* x, auto* w, auto*, auto* y, float*, float* rstd, int64_t rows, int64_t cols, float eps) {
        try {
          norm_core::gpu::rms_norm_forward(x, w, y, rstd, rows, cols, eps, stream);
        } catch (const std::runtime_error& e) {
          TORCH_CHECK(false, e.what());
        }
      });
  return {y, rstd};
}

std::tuple<at::Tensor, at::Tensor> rms_norm_bwd_cuda(const at::Tensor& g, const at::Tensor& x,
                                                     const std::optional<at::Tensor>& w, const at::Tensor& rstd,
                                                     bool need_w) {
  const c10::cuda::CUDAGuard guard(x.device());
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  optorch::Workspace scratch(x);
  auto [dx, dw, db] = backward<__half, __nv_bfloat16>(
      "rms_norm", false, g, x, w, std::nullopt, at::Tensor(), rstd, need_w, false,
      [&](auto* g, auto* x, auto* w, const float*, const float* rstd, auto* dx, auto* dw, auto*, int64_t rows,
          int64_t cols) {
        try {
          norm_core::gpu::rms_norm_backward(g, x, w, rstd, dx, dw, rows, cols, scratch.alloc(), stream);
        } catch (const std::runtime_error& e) {
          TORCH_CHECK(false, e.what());
        }
      });
  return {dx, dw};
}

}  // namespace
}  // namespace opbench_norm

TORCH_LIBRARY_IMPL(opbench_rms_norm, CUDA, m) {
  m.impl("rms_norm_fwd", &opbench_norm::rms_norm_fwd_cuda);
  m.impl("rms_norm_bwd", &opbench_norm::rms_norm_bwd_cuda);
}
