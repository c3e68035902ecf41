// Shared by the PyTorch bindings of rms_norm and layer_norm (CPU .cpp and CUDA .cu): argument checks
// with one-line errors, the [rows, cols] view, output allocation and the (input, weight) dtype dispatch.
// The per-op files only say which core function runs.
#pragma once

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <cmath>
#include <optional>
#include <tuple>
#include <utility>

namespace opbench_norm {

inline bool input_dtype_ok(at::ScalarType s) { return s == at::kFloat || s == at::kHalf || s == at::kBFloat16; }

inline void check_param(const char* op, const char* what, const at::Tensor& x, const std::optional<at::Tensor>& p) {
  if (!p.has_value()) return;
  TORCH_CHECK_VALUE(p->dim() == 1 && p->size(0) == x.size(-1), "opbench ", op, ": ", what, " shape ", p->sizes(),
                    " must be [", x.size(-1), "] (the last dim of x, shape ", x.sizes(), ")");
  TORCH_CHECK_TYPE(p->scalar_type() == x.scalar_type() || p->scalar_type() == at::kFloat, "opbench ", op, ": ", what,
                   " dtype ", p->scalar_type(), " must be x's dtype ", x.scalar_type(), " or float32");
  TORCH_CHECK(p->device() == x.device(), "opbench ", op, ": ", what, " is on ", p->device(), ", x on ", x.device());
}

// Checks the forward's arguments; returns the weight/bias dtype.
inline at::ScalarType check_args(const char* op, const at::Tensor& x, const std::optional<at::Tensor>& w,
                                 const std::optional<at::Tensor>& b, double eps) {
  TORCH_CHECK_TYPE(input_dtype_ok(x.scalar_type()), "opbench ", op, ": x dtype ", x.scalar_type(),
                   " is not supported (float32, float16, bfloat16)");
  TORCH_CHECK_VALUE(x.dim() >= 1, "opbench ", op, ": x must have at least one dim, got shape ", x.sizes());
  TORCH_CHECK_VALUE(std::isfinite(eps) && eps > 0, "opbench ", op, ": epsilon must be finite and > 0, got ", eps);
  check_param(op, "weight", x, w);
  check_param(op, "bias", x, b);
  if (w.has_value() && b.has_value()) {
    TORCH_CHECK_TYPE(w->scalar_type() == b->scalar_type(), "opbench ", op, ": weight dtype ", w->scalar_type(),
                     " and bias dtype ", b->scalar_type(), " differ");
  }
  return w.has_value() ? w->scalar_type() : (b.has_value() ? b->scalar_type() : x.scalar_type());
}

inline int64_t cols_of(const at::Tensor& x) { return x.size(-1); }
inline int64_t rows_of(const at::Tensor& x) {
  int64_t r = 1;
  for (int64_t d = 0; d + 1 < x.dim(); ++d) r *= x.size(d);
  return r;
}

inline at::Tensor contig(const std::optional<at::Tensor>& t) { return t.has_value() ? t->contiguous() : at::Tensor(); }

// Calls f(T{}, W{}) for input dtype `xs` and weight dtype `ws` (ws is xs or float32); Half and BF16
// are the core's 2-byte types (norm_core::half_t/bf16_t on the CPU, __half/__nv_bfloat16 on the GPU).
template <typename Half, typename BF16, typename F>
void dispatch(at::ScalarType xs, at::ScalarType ws, F&& f) {
  const bool wf = ws == at::kFloat;
  switch (xs) {
    case at::kFloat: f(float{}, float{}); break;
    case at::kHalf: wf ? f(Half{}, float{}) : f(Half{}, Half{}); break;
    case at::kBFloat16: wf ? f(BF16{}, float{}) : f(BF16{}, BF16{}); break;
    default: TORCH_CHECK_TYPE(false, "opbench norm: unsupported dtype ", xs);
  }
}

template <typename T>
const T* cptr(const at::Tensor& t) {
  return t.defined() ? reinterpret_cast<const T*>(t.const_data_ptr()) : nullptr;
}
template <typename T>
T* mptr(const at::Tensor& t) {
  return t.defined() ? reinterpret_cast<T*>(t.mutable_data_ptr()) : nullptr;
}

// Forward: y (x's shape and dtype), mean (layer_norm; [rows] fp32, else empty), rstd ([rows] fp32).
// `run(T, W, x, w, b, y, mean, rstd, rows, cols)` runs the core.
template <typename Half, typename BF16, typename Run>
std::tuple<at::Tensor, at::Tensor, at::Tensor> forward(const char* op, bool center, const at::Tensor& x_,
                                                       const std::optional<at::Tensor>& w_,
                                                       const std::optional<at::Tensor>& b_, double eps, Run&& run) {
  const at::ScalarType ws = check_args(op, x_, w_, b_, eps);
  const at::Tensor x = x_.contiguous(), w = contig(w_), b = contig(b_);
  const int64_t rows = rows_of(x), cols = cols_of(x);
  at::Tensor y = at::empty(x.sizes(), x.options());
  const auto f32 = x.options().dtype(at::kFloat);
  at::Tensor mean = at::empty({center ? rows : 0}, f32), rstd = at::empty({rows}, f32);
  dispatch<Half, BF16>(x.scalar_type(), ws, [&](auto t, auto p) {
    using T = decltype(t);
    using W = decltype(p);
    run(cptr<T>(x), cptr<W>(w), cptr<W>(b), mptr<T>(y), center ? mptr<float>(mean) : nullptr, mptr<float>(rstd),
        rows, cols, static_cast<float>(eps));
  });
  return {y, mean, rstd};
}

// Backward: dx, and dw / db (the weight's / bias's shape and dtype) where asked for, else empty.
// `run(T, W, dy, x, w, mean, rstd, dx, dw, db, rows, cols)` runs the core.
template <typename Half, typename BF16, typename Run>
std::tuple<at::Tensor, at::Tensor, at::Tensor> backward(const char* op, bool center, const at::Tensor& g_,
                                                        const at::Tensor& x_, const std::optional<at::Tensor>& w_,
                                                        const std::optional<at::Tensor>& b_, const at::Tensor& mean_,
                                                        const at::Tensor& rstd_, bool need_w, bool need_b, Run&& run) {
  const at::ScalarType ws = check_args(op, x_, w_, b_, 1.0);
  TORCH_CHECK_VALUE(g_.sizes() == x_.sizes(), "opbench ", op, ": grad shape ", g_.sizes(), " != x shape ", x_.sizes());
  const int64_t rows = rows_of(x_), cols = cols_of(x_);
  TORCH_CHECK_VALUE(rstd_.numel() == rows && (!center || mean_.numel() == rows), "opbench ", op,
                    ": saved statistics hold ", rstd_.numel(), " rows, x has ", rows);
  const at::Tensor x = x_.contiguous(), g = g_.to(x_.scalar_type()).contiguous(), w = contig(w_);
  const at::Tensor rstd = rstd_.contiguous(), mean = center ? mean_.contiguous() : at::Tensor();
  need_w = need_w && w_.has_value();
  need_b = center && need_b && b_.has_value();
  at::Tensor dx = at::empty(x.sizes(), x.options());
  const auto popts = x.options().dtype(ws);
  at::Tensor dw = need_w ? at::empty({cols}, popts) : at::empty({0}, popts);
  at::Tensor db = need_b ? at::empty({cols}, popts) : at::empty({0}, popts);
  dispatch<Half, BF16>(x.scalar_type(), ws, [&](auto t, auto p) {
    using T = decltype(t);
    using W = decltype(p);
    run(cptr<T>(g), cptr<T>(x), cptr<W>(w), center ? cptr<float>(mean) : nullptr, cptr<float>(rstd), mptr<T>(dx),
        need_w ? mptr<W>(dw) : nullptr, need_b ? mptr<W>(db) : nullptr, rows, cols);
  });
  return {dx, dw, db};
}

}  // namespace opbench_norm
