// Shared by the PyTorch binding's CPU (.cpp) and CUDA (.cu) files: argument checks with one-line errors,
// shape helpers, and each op's inputs checked and made contiguous with its outputs allocated (the *Args).
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

template <typename T>
const T* cptr(const at::Tensor& t) {
  return reinterpret_cast<const T*>(t.const_data_ptr());
}
template <typename T>
T* mptr(const at::Tensor& t) {
  return t.defined() ? reinterpret_cast<T*>(t.mutable_data_ptr()) : nullptr;
}

// lerp's tensors: x, y, w checked (check_args) and made contiguous (w undefined for a scalar weight), the
// output allocated in the broadcast shape.
struct LerpArgs {
  at::Tensor x, y, w, out;

  // core(x, y, w, ws, out, x's shape, y's shape, w's shape, rest...) as T (a core's lerp_forward; w null and
  // its shape {} for a scalar weight).
  template <typename T, typename Core, typename... Rest>
  void run(Core&& core, double ws, Rest&&... rest) const {
    core(cptr<T>(x), cptr<T>(y), w.defined() ? cptr<T>(w) : nullptr, ws, mptr<T>(out), shape_of(x), shape_of(y),
         w.defined() ? shape_of(w) : lerp_core::Shape{}, std::forward<Rest>(rest)...);
  }
};
inline LerpArgs lerp_args(const at::Tensor& x, const at::Tensor& y, const std::optional<at::Tensor>& w) {
  const lerp_core::Shape os = check_args(x, y, w);
  LerpArgs a{x.contiguous(), y.contiguous(), w.has_value() ? w->contiguous() : at::Tensor(), at::Tensor()};
  a.out = at::empty(os, a.x.options());
  return a;
}

// lerp_backward's tensors: checked as lerp's and the gradient's shape against the output's; the gradient in
// x's dtype, all contiguous. A gradient asked for (need_w: and a weight tensor given) is allocated, any other
// is an empty tensor.
struct BackwardArgs {
  at::Tensor g, x, y, w, dx, dy, dw;
  bool need_x, need_y, need_w;

  // core(g, x, y, w, ws, dx, dy, dw, x's shape, y's shape, w's shape, rest...) as T (a core's lerp_backward; a
  // gradient not asked for is null).
  template <typename T, typename Core, typename... Rest>
  void run(Core&& core, double ws, Rest&&... rest) const {
    core(cptr<T>(g), cptr<T>(x), cptr<T>(y), w.defined() ? cptr<T>(w) : nullptr, ws, need_x ? mptr<T>(dx) : nullptr,
         need_y ? mptr<T>(dy) : nullptr, need_w ? mptr<T>(dw) : nullptr, shape_of(x), shape_of(y),
         w.defined() ? shape_of(w) : lerp_core::Shape{}, std::forward<Rest>(rest)...);
  }
};
inline BackwardArgs backward_args(const at::Tensor& g, const at::Tensor& x, const at::Tensor& y,
                                  const std::optional<at::Tensor>& w, bool need_x, bool need_y, bool need_w) {
  const lerp_core::Shape os = check_args(x, y, w);
  TORCH_CHECK_VALUE(shape_of(g) == os, "opbench lerp_backward: grad shape ", lerp_core::shape_str(shape_of(g)),
                    " != output shape ", lerp_core::shape_str(os));
  BackwardArgs a{g.to(x.scalar_type()).contiguous(), x.contiguous(), y.contiguous(),
                 w.has_value() ? w->contiguous() : at::Tensor(), {}, {}, {}, need_x, need_y, need_w && w.has_value()};
  a.dx = a.need_x ? at::empty_like(a.x) : at::empty({0}, a.x.options());
  a.dy = a.need_y ? at::empty_like(a.y) : at::empty({0}, a.x.options());
  a.dw = a.need_w ? at::empty_like(a.w) : at::empty({0}, a.x.options());
  return a;
}

// The saved-diff pair of ops takes two float32/float64 tensors of one shape (x and y forward; grad and diff
// backward) and a weight that broadcasts to it with a one-pass forward (lerp_core::saves_diff_layout).
inline void check_diff_args(const char* op, const at::Tensor& a, const at::Tensor& b, const at::Tensor& w) {
  TORCH_CHECK_VALUE(a.sizes() == b.sizes(), "opbench ", op, ": shapes ", a.sizes(), " and ", b.sizes(),
                    " differ (this op takes two tensors of one shape and a weight)");
  TORCH_CHECK_TYPE(a.scalar_type() == at::kFloat || a.scalar_type() == at::kDouble, "opbench ", op, ": dtype ",
                   a.scalar_type(), " is not taken (float32, float64: where y - x is exact)");
  TORCH_CHECK_VALUE(lerp_core::saves_diff_layout(shape_of(a), shape_of(b), shape_of(w)), "opbench ", op,
                    ": weight shape ", w.sizes(), " does not broadcast to ", a.sizes(),
                    " in a layout of the one-pass forward");
}

// Does the training forward save y - x instead of x and y? For CUDA float32/float64 x, y of one shape and a
// weight that needs a gradient and broadcasts to it (saves_diff_layout: full size, one element, or a layout
// of the nd kernel; y - x is then exact): the backward reads dout, w, diff instead of dout, w, x, y, as
// torch.compile's generated code does. Not on the CPU, whose backward is not bound by memory bandwidth:
// there the diff costs the forward a pass and made the training step slower (figures in d67dfab's message).
inline bool saves_diff(const at::Tensor& x, const at::Tensor& y, const std::optional<at::Tensor>& w) {
  if (!w.has_value() || !w->requires_grad() || !x.is_cuda()) return false;
  const auto s = x.scalar_type();
  return (s == at::kFloat || s == at::kDouble) && y.scalar_type() == s && w->scalar_type() == s &&
         y.device() == x.device() && w->device() == x.device() && x.sizes() == y.sizes() &&
         lerp_core::saves_diff_layout(shape_of(x), shape_of(y), shape_of(*w));
}

// The saved-diff forward's tensors: inputs checked and made contiguous, outputs allocated.
struct SaveDiffArgs {
  at::Tensor x, y, w, out, diff;
};
inline SaveDiffArgs save_diff_args(const at::Tensor& x, const at::Tensor& y, const at::Tensor& w) {
  check_args(x, y, w);
  check_diff_args("lerp_save_diff", x, y, w);
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
  check_args(diff, diff, w);
  check_diff_args("lerp_backward_from_diff", g, diff, w);
  FromDiffArgs a{g.to(diff.scalar_type()).contiguous(), diff.contiguous(), w.contiguous(), {}, {}, {}};
  auto grad = [&](bool need, const at::Tensor& like) {
    return need ? at::empty_like(like) : at::empty({0}, a.w.options());
  };
  a.dx = grad(need_x, a.diff);
  a.dy = grad(need_y, a.diff);
  a.dw = grad(need_w, a.w);
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

}  // namespace opbench_torch
