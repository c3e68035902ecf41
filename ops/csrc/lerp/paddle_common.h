// Shared by the Paddle binding's CPU (.cc) and GPU (.cu) files: argument checks, and each op's inputs
// checked and made contiguous with its outputs allocated (the *Args).
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "broadcast.h"
#include "common/paddle_tensor.h"
#include "paddle/extension.h"

namespace opbench_paddle {

using oppaddle::cptr;
using oppaddle::dtype_name;
using oppaddle::mptr;

inline bool supported_dtype(paddle::DataType d) {
  return d == paddle::DataType::FLOAT32 || d == paddle::DataType::FLOAT64 || d == paddle::DataType::FLOAT16 ||
         d == paddle::DataType::BFLOAT16;
}

// Broadcast output shape; throws with the shapes named.
inline std::vector<int64_t> out_shape(const std::vector<int64_t>& xs, const std::vector<int64_t>& ys,
                                      const std::vector<int64_t>& ws) {
  try {
    return lerp_core::broadcast_shapes({xs, ys, ws});
  } catch (const std::invalid_argument& e) {
    PD_THROW(e.what());
  }
  return {};
}

inline void check_tensors(const paddle::Tensor& x, const paddle::Tensor& y, const paddle::Tensor* w) {
  PD_CHECK(supported_dtype(x.dtype()), "opbench lerp: dtype ", dtype_name(x.dtype()),
           " is not supported (float32, float64, float16, bfloat16)");
  PD_CHECK(y.dtype() == x.dtype(), "opbench lerp: x and y dtypes differ (", dtype_name(x.dtype()), " vs ",
           dtype_name(y.dtype()), ")");
  PD_CHECK(x.place() == y.place(), "opbench lerp: x and y are on different devices");
  if (w) {
    PD_CHECK(w->dtype() == x.dtype(), "opbench lerp: weight dtype ", dtype_name(w->dtype()), " differs from x dtype ",
             dtype_name(x.dtype()));
    PD_CHECK(w->place() == x.place(), "opbench lerp: weight and x are on different devices");
  }
}

// lerp's tensors: x, y, w checked (check_tensors) and made contiguous (w undefined for a scalar weight, whose
// shape is then {}), the output allocated in the broadcast shape.
struct LerpArgs {
  paddle::Tensor x, y, w, out;
  std::vector<int64_t> wshape;
};
inline LerpArgs lerp_args(const paddle::Tensor& x, const paddle::Tensor& y, const paddle::Tensor* w) {
  check_tensors(x, y, w);
  LerpArgs a{x.contiguous(), y.contiguous(), w ? w->contiguous() : paddle::Tensor(), paddle::Tensor(), {}};
  if (w) a.wshape = a.w.shape();
  a.out = paddle::empty(out_shape(a.x.shape(), a.y.shape(), a.wshape), a.x.dtype(), a.x.place());
  return a;
}

// The backward's tensors: x, y, w as lerp's, the gradient contiguous, dx and dy allocated (x's and y's shapes).
struct BackwardArgs {
  paddle::Tensor x, y, w, g, dx, dy;
  std::vector<int64_t> wshape;
};
inline BackwardArgs backward_args(const paddle::Tensor& x, const paddle::Tensor& y, const paddle::Tensor* w,
                                  const paddle::Tensor& g) {
  check_tensors(x, y, w);
  BackwardArgs a{x.contiguous(), y.contiguous(), w ? w->contiguous() : paddle::Tensor(), g.contiguous(), {}, {}, {}};
  if (w) a.wshape = a.w.shape();
  a.dx = paddle::empty(a.x.shape(), a.x.dtype(), a.x.place());
  a.dy = paddle::empty(a.y.shape(), a.y.dtype(), a.y.place());
  return a;
}

// Calls f(T{}) with the element type for `d`; Half and BF16 are the 2-byte types of the core that
// the caller uses (lerp_core::half_t/bf16_t on the CPU, __half/__nv_bfloat16 on the GPU).
template <typename Half, typename BF16, typename F>
void dispatch_dtype(paddle::DataType d, F&& f) {
  switch (d) {
    case paddle::DataType::FLOAT32: f(float{}); break;
    case paddle::DataType::FLOAT64: f(double{}); break;
    case paddle::DataType::FLOAT16: f(Half{}); break;
    case paddle::DataType::BFLOAT16: f(BF16{}); break;
    default: PD_THROW("opbench lerp: unsupported dtype ", dtype_name(d));
  }
}

#ifdef PADDLE_WITH_CUDA
// Implemented in paddle_lerp.cu. `w` may be null (scalar weight `ws`).
std::vector<paddle::Tensor> lerp_forward_gpu(const paddle::Tensor& x, const paddle::Tensor& y,
                                             const paddle::Tensor* w, double ws);
std::vector<paddle::Tensor> lerp_backward_gpu(const paddle::Tensor& x, const paddle::Tensor& y,
                                              const paddle::Tensor* w, double ws, const paddle::Tensor& dout);
#endif

}  // namespace opbench_paddle
