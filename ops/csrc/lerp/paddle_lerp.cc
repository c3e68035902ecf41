// Paddle binding of the lerp core: CPU kernels and the op registrations.
// Ops: opbench_lerp (tensor weight) and opbench_lerp_scalar (weight attr).
// Gradients for X and Y only (as Paddle's lerp), always initialized and
// reduced to the inputs' shapes (Paddle does not reduce custom-op grads).
#include <vector>

#include "common/paddle_cpu_team.h"
#include "lerp_cpu.h"
#include "paddle/extension.h"
#include "paddle_common.h"

namespace opbench_paddle {
namespace {

template <typename F>
void dispatch_cpu(paddle::DataType d, F&& f) {
  dispatch_dtype<lerp_core::half_t, lerp_core::bf16_t>(d, std::forward<F>(f));
}

std::vector<paddle::Tensor> forward_cpu(const paddle::Tensor& x_, const paddle::Tensor& y_, const paddle::Tensor* w_,
                                        double ws) {
  LerpArgs a = lerp_args(x_, y_, w_);
  dispatch_cpu(a.x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    lerp_core::lerp_forward_cpu<T>(cptr<T>(a.x), cptr<T>(a.y), w_ ? cptr<T>(a.w) : nullptr, ws, mptr<T>(a.out),
                                   a.x.shape(), a.y.shape(), a.wshape);
  });
  return {a.out};
}

std::vector<paddle::Tensor> backward_cpu(const paddle::Tensor& x_, const paddle::Tensor& y_, const paddle::Tensor* w_,
                                         double ws, const paddle::Tensor& g_) {
  BackwardArgs a = backward_args(x_, y_, w_, g_);
  dispatch_cpu(a.x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    lerp_core::lerp_backward_cpu<T>(cptr<T>(a.g), cptr<T>(a.x), cptr<T>(a.y), w_ ? cptr<T>(a.w) : nullptr, ws,
                                    mptr<T>(a.dx), mptr<T>(a.dy), nullptr, a.x.shape(), a.y.shape(), a.wshape);
  });
  return {a.dx, a.dy};
}

std::vector<paddle::Tensor> LerpForward(const paddle::Tensor& x, const paddle::Tensor& y, const paddle::Tensor& w) {
  if (x.is_cpu()) return forward_cpu(x, y, &w, 0.0);
#ifdef PADDLE_WITH_CUDA
  if (x.is_gpu()) return lerp_forward_gpu(x, y, &w, 0.0);
#endif
  PD_THROW("opbench lerp: unsupported place");
}

std::vector<paddle::Tensor> LerpBackward(const paddle::Tensor& x, const paddle::Tensor& y, const paddle::Tensor& w,
                                         const paddle::Tensor& dout) {
  if (x.is_cpu()) return backward_cpu(x, y, &w, 0.0, dout);
#ifdef PADDLE_WITH_CUDA
  if (x.is_gpu()) return lerp_backward_gpu(x, y, &w, 0.0, dout);
#endif
  PD_THROW("opbench lerp: unsupported place");
}

std::vector<paddle::Tensor> LerpScalarForward(const paddle::Tensor& x, const paddle::Tensor& y, double weight) {
  if (x.is_cpu()) return forward_cpu(x, y, nullptr, weight);
#ifdef PADDLE_WITH_CUDA
  if (x.is_gpu()) return lerp_forward_gpu(x, y, nullptr, weight);
#endif
  PD_THROW("opbench lerp: unsupported place");
}

std::vector<paddle::Tensor> LerpScalarBackward(const paddle::Tensor& x, const paddle::Tensor& y,
                                               const paddle::Tensor& dout, double weight) {
  if (x.is_cpu()) return backward_cpu(x, y, nullptr, weight, dout);
#ifdef PADDLE_WITH_CUDA
  if (x.is_gpu()) return lerp_backward_gpu(x, y, nullptr, weight, dout);
#endif
  PD_THROW("opbench lerp: unsupported place");
}

std::vector<std::vector<int64_t>> LerpInferShape(const std::vector<int64_t>& xs, const std::vector<int64_t>& ys,
                                                 const std::vector<int64_t>& ws) {
  return {out_shape(xs, ys, ws)};
}
std::vector<std::vector<int64_t>> LerpScalarInferShape(const std::vector<int64_t>& xs,
                                                       const std::vector<int64_t>& ys) {
  return {out_shape(xs, ys, {})};
}
std::vector<paddle::DataType> LerpInferDtype(const paddle::DataType& xd, const paddle::DataType& yd,
                                             const paddle::DataType& wd) {
  return {xd};
}
std::vector<paddle::DataType> LerpScalarInferDtype(const paddle::DataType& xd, const paddle::DataType& yd) {
  return {xd};
}
std::vector<std::vector<int64_t>> LerpGradInferShape(const std::vector<int64_t>& xs, const std::vector<int64_t>& ys,
                                                     const std::vector<int64_t>& ws,
                                                     const std::vector<int64_t>& gs) {
  return {xs, ys};
}
std::vector<std::vector<int64_t>> LerpScalarGradInferShape(const std::vector<int64_t>& xs,
                                                           const std::vector<int64_t>& ys,
                                                           const std::vector<int64_t>& gs) {
  return {xs, ys};
}

}  // namespace
}  // namespace opbench_paddle

PD_BUILD_OP(opbench_lerp)
    .Inputs({"X", "Y", "Weight"})
    .Outputs({"Out"})
    .SetKernelFn(PD_KERNEL(opbench_paddle::LerpForward))
    .SetInferShapeFn(PD_INFER_SHAPE(opbench_paddle::LerpInferShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(opbench_paddle::LerpInferDtype));

PD_BUILD_GRAD_OP(opbench_lerp)
    .Inputs({"X", "Y", "Weight", paddle::Grad("Out")})
    .Outputs({paddle::Grad("X"), paddle::Grad("Y")})
    .SetKernelFn(PD_KERNEL(opbench_paddle::LerpBackward))
    .SetInferShapeFn(PD_INFER_SHAPE(opbench_paddle::LerpGradInferShape));

PD_BUILD_OP(opbench_lerp_scalar)
    .Inputs({"X", "Y"})
    .Outputs({"Out"})
    .Attrs({"weight: double"})
    .SetKernelFn(PD_KERNEL(opbench_paddle::LerpScalarForward))
    .SetInferShapeFn(PD_INFER_SHAPE(opbench_paddle::LerpScalarInferShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(opbench_paddle::LerpScalarInferDtype));

PD_BUILD_GRAD_OP(opbench_lerp_scalar)
    .Inputs({"X", "Y", paddle::Grad("Out")})
    .Outputs({paddle::Grad("X"), paddle::Grad("Y")})
    .Attrs({"weight: double"})
    .SetKernelFn(PD_KERNEL(opbench_paddle::LerpScalarBackward))
    .SetInferShapeFn(PD_INFER_SHAPE(opbench_paddle::LerpScalarGradInferShape));
