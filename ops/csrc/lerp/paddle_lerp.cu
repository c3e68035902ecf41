// Paddle binding of the lerp core: GPU launchers (built only when Paddle has
// CUDA). Kernels run on the input's stream.
#include <vector>

#include "lerp.cuh"
#include "paddle/extension.h"
#include "paddle_common.h"

namespace opbench_paddle {
namespace {

template <typename F>
void dispatch_gpu(paddle::DataType d, F&& f) {
  dispatch_dtype<__half, __nv_bfloat16>(d, std::forward<F>(f));
}

}  // namespace

std::vector<paddle::Tensor> lerp_forward_gpu(const paddle::Tensor& x_, const paddle::Tensor& y_,
                                             const paddle::Tensor* w_, double ws) {
  check_tensors(x_, y_, w_);
  paddle::Tensor x = x_.contiguous(), y = y_.contiguous();
  paddle::Tensor w = w_ ? w_->contiguous() : paddle::Tensor();
  const std::vector<int64_t> wshape = w_ ? w.shape() : std::vector<int64_t>{};
  auto os = out_shape(x.shape(), y.shape(), wshape);
  auto out = paddle::empty(os, x.dtype(), x.place());
  dispatch_gpu(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    try {
      lerp_core::gpu::lerp_forward<T>(cptr<T>(x), cptr<T>(y), w_ ? cptr<T>(w) : nullptr, ws, mptr<T>(out),
                                      x.shape(), y.shape(), wshape, x.stream());
    } catch (const std::runtime_error& e) {
      PD_THROW(e.what());
    }
  });
  return {out};
}

std::vector<paddle::Tensor> lerp_backward_gpu(const paddle::Tensor& x_, const paddle::Tensor& y_,
                                              const paddle::Tensor* w_, double ws, const paddle::Tensor& g_) {
  check_tensors(x_, y_, w_);
  paddle::Tensor x = x_.contiguous(), y = y_.contiguous(), g = g_.contiguous();
  paddle::Tensor w = w_ ? w_->contiguous() : paddle::Tensor();
  const std::vector<int64_t> wshape = w_ ? w.shape() : std::vector<int64_t>{};
  auto dx = paddle::empty(x.shape(), x.dtype(), x.place());
  auto dy = paddle::empty(y.shape(), y.dtype(), y.place());
  std::vector<paddle::Tensor> keep;  // workspaces stay alive until the kernels are enqueued
  lerp_core::gpu::Alloc alloc = [&](size_t bytes) -> void* {
    keep.push_back(paddle::empty({static_cast<int64_t>(bytes)}, paddle::DataType::UINT8, x.place()));
    return keep.back().data();
  };
  dispatch_gpu(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    try {
      lerp_core::gpu::lerp_backward<T>(cptr<T>(g), cptr<T>(x), cptr<T>(y), w_ ? cptr<T>(w) : nullptr, ws,
                                       mptr<T>(dx), mptr<T>(dy), nullptr, x.shape(), y.shape(), wshape, alloc,
                                       x.stream());
    } catch (const std::runtime_error& e) {
      PD_THROW(e.what());
    }
  });
  return {dx, dy};
}

}  // namespace opbench_paddle
