// Paddle binding of the lerp core: GPU launchers (built only when Paddle has
// CUDA). Kernels run on the input's stream.
#include <vector>

#include "common/paddle_workspace.h"
#include "lerp_gpu.h"
#include "paddle/extension.h"
#include "paddle_common.h"

namespace opbench_paddle {
namespace {

// f(T{}) for the GPU core's element type; a launch error of the core (std::runtime_error) becomes Paddle's.
template <typename F>
void dispatch_gpu(paddle::DataType d, F&& f) {
  dispatch_dtype<__half, __nv_bfloat16>(d, [&](auto tag) {
    try {
      f(tag);
    } catch (const std::runtime_error& e) {
      PD_THROW(e.what());
    }
  });
}

}  // namespace

std::vector<paddle::Tensor> lerp_forward_gpu(const paddle::Tensor& x_, const paddle::Tensor& y_,
                                             const paddle::Tensor* w_, double ws) {
  LerpArgs a = lerp_args(x_, y_, w_);
  dispatch_gpu(a.x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    lerp_core::gpu::lerp_forward<T>(cptr<T>(a.x), cptr<T>(a.y), w_ ? cptr<T>(a.w) : nullptr, ws, mptr<T>(a.out),
                                    a.x.shape(), a.y.shape(), a.wshape, a.x.stream());
  });
  return {a.out};
}

std::vector<paddle::Tensor> lerp_backward_gpu(const paddle::Tensor& x_, const paddle::Tensor& y_,
                                              const paddle::Tensor* w_, double ws, const paddle::Tensor& g_) {
  BackwardArgs a = backward_args(x_, y_, w_, g_);
  oppaddle::Workspace scratch(a.x);
  dispatch_gpu(a.x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    lerp_core::gpu::lerp_backward<T>(cptr<T>(a.g), cptr<T>(a.x), cptr<T>(a.y), w_ ? cptr<T>(a.w) : nullptr, ws,
                                     mptr<T>(a.dx), mptr<T>(a.dy), nullptr, a.x.shape(), a.y.shape(), a.wshape,
                                     scratch.alloc(), a.x.stream());
  });
  return {a.dx, a.dy};
}

}  // namespace opbench_paddle
