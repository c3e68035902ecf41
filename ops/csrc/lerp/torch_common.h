// Shared by the PyTorch binding's CPU (.cpp) and CUDA (.cu) files: argument
// checks with one-line errors, and shape helpers.
#pragma once

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "broadcast.h"

namespace opbench_torch {

inline lerp_core::Shape shape_of(const at::Tensor& t) { return lerp_core::Shape(t.sizes().begin(), t.sizes().end()); }

inline bool supported_dtype(at::ScalarType s) {
  return s == at::kFloat || s == at::kDouble || s == at::kHalf || s == at::kBFloat16;
}

// Checks dtypes/devices and returns the broadcast output shape.
inline lerp_core::Shape check_args(const at::Tensor& x, const at::Tensor& y, const std::optional<at::Tensor>& w) {
  TORCH_CHECK_TYPE(supported_dtype(x.scalar_type()),
                   "opbench lerp: dtype ", x.scalar_type(), " is not supported (float32, float64, float16, bfloat16)");
  TORCH_CHECK_TYPE(y.scalar_type() == x.scalar_type(), "opbench lerp: x and y dtypes differ (", x.scalar_type(),
                   " vs ", y.scalar_type(), ")");
  TORCH_CHECK(y.device() == x.device(), "opbench lerp: x and y are on different devices (", x.device(), " vs ",
              y.device(), ")");
  lerp_core::Shape ws;
  if (w.has_value()) {
    TORCH_CHECK_TYPE(w->scalar_type() == x.scalar_type(), "opbench lerp: weight dtype ", w->scalar_type(),
                     " differs from x dtype ", x.scalar_type());
    TORCH_CHECK(w->device() == x.device(), "opbench lerp: weight is on ", w->device(), ", x on ", x.device());
    ws = shape_of(*w);
  }
  try {
    return lerp_core::broadcast_shapes({shape_of(x), shape_of(y), ws});
  } catch (const std::invalid_argument& e) {
    TORCH_CHECK_VALUE(false, e.what());
  }
  return {};
}

// The saved-diff pair of ops takes three tensors of one shape (x, y, w forward; grad, diff, w backward).
inline void check_same_shapes(const char* op, const at::Tensor& a, const at::Tensor& b, const at::Tensor& c) {
  TORCH_CHECK_VALUE(a.sizes() == b.sizes() && a.sizes() == c.sizes(), "opbench ", op, ": shapes ", a.sizes(), ", ",
                    b.sizes(), " and ", c.sizes(), " differ (this op takes three tensors of one shape)");
}

// Does the training forward save y - x instead of x and y? For same-shape float32/float64 x, y, w
// when w needs a gradient (y - x is then exact, so dw is bitwise the same): the backward reads
// dout, w, diff (3 tensors) instead of dout, w, x, y (4), as torch.compile's generated code does.
inline bool saves_diff(const at::Tensor& x, const at::Tensor& y, const std::optional<at::Tensor>& w) {
  if (!w.has_value() || !w->requires_grad()) return false;
  const auto s = x.scalar_type();
  return (s == at::kFloat || s == at::kDouble) && y.scalar_type() == s && w->scalar_type() == s &&
         y.device() == x.device() && w->device() == x.device() && x.sizes() == y.sizes() &&
         x.sizes() == w->sizes();
}

// The saved-diff forward's tensors: inputs checked and made contiguous, outputs allocated.
struct SaveDiffArgs {
  at::Tensor x, y, w, out, diff;
};
inline SaveDiffArgs save_diff_args(const at::Tensor& x, const at::Tensor& y, const at::Tensor& w) {
  check_args(x, y, w);
  check_same_shapes("lerp_save_diff", x, y, w);
  SaveDiffArgs a{x.contiguous(), y.contiguous(), w.contiguous(), at::Tensor(), at::Tensor()};
  a.out = at::empty_like(a.x);
  a.diff = at::empty_like(a.x);
  return a;
}

// The saved-diff backward's tensors; a gradient not needed is an empty tensor.
struct FromDiffArgs {
  at::Tensor g, diff, w, dx, dy, dw;
};
inline FromDiffArgs from_diff_args(const at::Tensor& g, const at::Tensor& diff, const at::Tensor& w, bool need_x,
                                   bool need_y, bool need_w) {
  check_args(diff, w, std::nullopt);
  check_same_shapes("lerp_backward_from_diff", g, diff, w);
  FromDiffArgs a{g.to(diff.scalar_type()).contiguous(), diff.contiguous(), w.contiguous(), {}, {}, {}};
  auto grad = [&](bool need) { return need ? at::empty_like(a.w) : at::empty({0}, a.w.options()); };
  a.dx = grad(need_x);
  a.dy = grad(need_y);
  a.dw = grad(need_w);
  return a;
}

// Calls f(T{}) with the element type for `s`; Half and BF16 are the 2-byte types of the core that
// the caller uses (lerp_core::half_t/bf16_t on the CPU, __half/__nv_bfloat16 on the GPU).
template <typename Half, typename BF16, typename F>
void dispatch_dtype(at::ScalarType s, F&& f) {
  switch (s) {
    case at::kFloat: f(float{}); break;
    case at::kDouble: f(double{}); break;
    case at::kHalf: f(Half{}); break;
    case at::kBFloat16: f(BF16{}); break;
    default: TORCH_CHECK_TYPE(false, "opbench lerp: unsupported dtype ", s);
  }
}

template <typename T>
const T* cptr(const at::Tensor& t) {
  return reinterpret_cast<const T*>(t.const_data_ptr());
}
template <typename T>
T* mptr(const at::Tensor& t) {
  return t.defined() ? reinterpret_cast<T*>(t.mutable_data_ptr()) : nullptr;
}

}  // namespace opbench_torch
