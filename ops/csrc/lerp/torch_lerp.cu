// PyTorch binding of the lerp core: CUDA kernels on the current stream.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <tuple>

#include "common/torch_workspace.h"
#include "lerp_gpu.h"
#include "torch_common.h"

namespace opbench_torch {
namespace {

// f(T{}) for the GPU core's element type; a launch error of the core (std::runtime_error) becomes a c10::Error.
template <typename F>
void dispatch_cuda(at::ScalarType s, F&& f) {
  dispatch_dtype<__half, __nv_bfloat16>(s, [&](auto tag) {
    try {
      f(tag);
    } catch (const std::runtime_error& e) {
      TORCH_CHECK(false, e.what());
    }
  });
}

at::Tensor lerp_cuda(const at::Tensor& x_, const at::Tensor& y_, const std::optional<at::Tensor>& w_, double ws) {
  const LerpArgs a = lerp_args(x_, y_, w_);
  const c10::cuda::CUDAGuard guard(a.x.device());
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  dispatch_cuda(a.x.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    a.run<T>(lerp_core::gpu::lerp_forward<T>, ws, stream);
  });
  return a.out;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lerp_backward_cuda(const at::Tensor& g_, const at::Tensor& x_,
                                                                  const at::Tensor& y_,
                                                                  const std::optional<at::Tensor>& w_, double ws,
                                                                  bool need_x, bool need_y, bool need_w) {
  const BackwardArgs a = backward_args(g_, x_, y_, w_, need_x, need_y, need_w);
  const c10::cuda::CUDAGuard guard(a.x.device());
  optorch::Workspace scratch(a.x);
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  dispatch_cuda(a.x.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    a.run<T>(lerp_core::gpu::lerp_backward<T>, ws, scratch.alloc(), stream);
  });
  return {a.dx, a.dy, a.dw};
}

std::tuple<at::Tensor, at::Tensor> lerp_save_diff_cuda(const at::Tensor& x, const at::Tensor& y,
                                                       const at::Tensor& w) {
  const c10::cuda::CUDAGuard guard(x.device());
  SaveDiffArgs a = save_diff_args(x, y, w);
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  dispatch_cuda(a.x.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    lerp_core::gpu::lerp_forward_save_diff<T>(cptr<T>(a.x), cptr<T>(a.y), cptr<T>(a.w), mptr<T>(a.out),
                                              mptr<T>(a.diff), shape_of(a.x), shape_of(a.w), stream);
  });
  return {a.out, a.diff};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lerp_backward_from_diff_cuda(const at::Tensor& g,
                                                                            const at::Tensor& diff,
                                                                            const at::Tensor& w, bool need_x,
                                                                            bool need_y, bool need_w) {
  const c10::cuda::CUDAGuard guard(w.device());
  FromDiffArgs a = from_diff_args(g, diff, w, need_x, need_y, need_w);
  optorch::Workspace scratch(a.diff);
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  dispatch_cuda(a.w.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    lerp_core::gpu::lerp_backward_from_diff<T>(cptr<T>(a.g), cptr<T>(a.diff), cptr<T>(a.w),
                                               need_x ? mptr<T>(a.dx) : nullptr, need_y ? mptr<T>(a.dy) : nullptr,
                                               need_w ? mptr<T>(a.dw) : nullptr, shape_of(a.diff), shape_of(a.w),
                                               scratch.alloc(), stream);
  });
  return {a.dx, a.dy, a.dw};
}

}  // namespace
}  // namespace opbench_torch

TORCH_LIBRARY_IMPL(opbench_lerp, CUDA, m) {
  m.impl("lerp", &opbench_torch::lerp_cuda);
  m.impl("lerp_backward", &opbench_torch::lerp_backward_cuda);
  m.impl("lerp_autograd", &opbench_torch::lerp_cuda);
  m.impl("lerp_save_diff", &opbench_torch::lerp_save_diff_cuda);
  m.impl("lerp_backward_from_diff", &opbench_torch::lerp_backward_from_diff_cuda);
}
