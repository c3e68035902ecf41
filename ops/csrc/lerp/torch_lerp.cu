// PyTorch binding of the lerp core: CUDA kernels on the current stream.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <tuple>
#include <vector>

#include "lerp.cuh"
#include "torch_common.h"

namespace opbench_torch {
namespace {

template <typename F>
void dispatch_cuda(at::ScalarType s, F&& f) {
  dispatch_dtype<__half, __nv_bfloat16>(s, std::forward<F>(f));
}

at::Tensor lerp_cuda(const at::Tensor& x_, const at::Tensor& y_, const std::optional<at::Tensor>& w_, double ws) {
  const auto os = check_args(x_, y_, w_);
  const c10::cuda::CUDAGuard guard(x_.device());
  at::Tensor x = x_.contiguous(), y = y_.contiguous();
  at::Tensor w = w_.has_value() ? w_->contiguous() : at::Tensor();
  at::Tensor out = at::empty(os, x.options());
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  dispatch_cuda(x.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    try {
      lerp_core::gpu::lerp_forward<T>(cptr<T>(x), cptr<T>(y), w.defined() ? cptr<T>(w) : nullptr, ws, mptr<T>(out),
                                      shape_of(x), shape_of(y), w.defined() ? shape_of(w) : lerp_core::Shape{},
                                      stream);
    } catch (const std::runtime_error& e) {
      TORCH_CHECK(false, e.what());
    }
  });
  return out;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lerp_backward_cuda(const at::Tensor& g_, const at::Tensor& x_,
                                                                  const at::Tensor& y_,
                                                                  const std::optional<at::Tensor>& w_, double ws,
                                                                  bool need_x, bool need_y, bool need_w) {
  const auto os = check_args(x_, y_, w_);
  TORCH_CHECK_VALUE(shape_of(g_) == os, "opbench lerp_backward: grad shape ", lerp_core::shape_str(shape_of(g_)),
                    " != output shape ", lerp_core::shape_str(os));
  const c10::cuda::CUDAGuard guard(x_.device());
  at::Tensor g = g_.to(x_.scalar_type()).contiguous(), x = x_.contiguous(), y = y_.contiguous();
  at::Tensor w = w_.has_value() ? w_->contiguous() : at::Tensor();
  need_w = need_w && w.defined();
  at::Tensor dx = need_x ? at::empty_like(x) : at::empty({0}, x.options());
  at::Tensor dy = need_y ? at::empty_like(y) : at::empty({0}, x.options());
  at::Tensor dw = need_w ? at::empty_like(w) : at::empty({0}, x.options());
  std::vector<at::Tensor> keep;  // workspaces stay alive until the kernels are enqueued
  lerp_core::gpu::Alloc alloc = [&](size_t bytes) -> void* {
    keep.push_back(at::empty({static_cast<int64_t>(bytes)}, x.options().dtype(at::kByte)));
    return keep.back().mutable_data_ptr();
  };
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  dispatch_cuda(x.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    try {
      lerp_core::gpu::lerp_backward<T>(cptr<T>(g), cptr<T>(x), cptr<T>(y), w.defined() ? cptr<T>(w) : nullptr, ws,
                                       need_x ? mptr<T>(dx) : nullptr, need_y ? mptr<T>(dy) : nullptr,
                                       need_w ? mptr<T>(dw) : nullptr, shape_of(x), shape_of(y),
                                       w.defined() ? shape_of(w) : lerp_core::Shape{}, alloc, stream);
    } catch (const std::runtime_error& e) {
      TORCH_CHECK(false, e.what());
    }
  });
  return {dx, dy, dw};
}

std::tuple<at::Tensor, at::Tensor> lerp_save_diff_cuda(const at::Tensor& x, const at::Tensor& y,
                                                       const at::Tensor& w) {
  const c10::cuda::CUDAGuard guard(x.device());
  SaveDiffArgs a = save_diff_args(x, y, w);
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  dispatch_cuda(a.x.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    try {
      lerp_core::gpu::lerp_forward_save_diff<T>(cptr<T>(a.x), cptr<T>(a.y), cptr<T>(a.w), mptr<T>(a.out),
                                                mptr<T>(a.diff), a.x.numel(), stream);
    } catch (const std::runtime_error& e) {
      TORCH_CHECK(false, e.what());
    }
  });
  return {a.out, a.diff};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lerp_backward_from_diff_cuda(const at::Tensor& g,
                                                                            const at::Tensor& diff,
                                                                            const at::Tensor& w, bool need_x,
                                                                            bool need_y, bool need_w) {
  const c10::cuda::CUDAGuard guard(w.device());
  FromDiffArgs a = from_diff_args(g, diff, w, need_x, need_y, need_w);
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  dispatch_cuda(a.w.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    try {
      lerp_core::gpu::lerp_backward_from_diff<T>(cptr<T>(a.g), cptr<T>(a.diff), cptr<T>(a.w),
                                                 need_x ? mptr<T>(a.dx) : nullptr, need_y ? mptr<T>(a.dy) : nullptr,
                                                 need_w ? mptr<T>(a.dw) : nullptr, a.w.numel(), stream);
    } catch (const std::runtime_error& e) {
      TORCH_CHECK(false, e.what());
    }
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
