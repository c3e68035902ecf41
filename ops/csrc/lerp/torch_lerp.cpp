// PyTorch binding of the lerp core: op schemas and the CPU kernels.
// The CUDA kernels are registered by torch_lerp.cu when it is built.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <tuple>

#include "common/torch_cpu_team.h"
#include "lerp_cpu.h"
#include "torch_common.h"

namespace opbench_torch {
namespace {

template <typename F>
void dispatch_cpu(at::ScalarType s, F&& f) {
  dispatch_dtype<lerp_core::half_t, lerp_core::bf16_t>(s, std::forward<F>(f));
}

at::Tensor lerp_cpu(const at::Tensor& x_, const at::Tensor& y_, const std::optional<at::Tensor>& w_, double ws) {
  const LerpArgs a = lerp_args(x_, y_, w_);
  dispatch_cpu(a.x.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    a.run<T>(lerp_core::lerp_forward_cpu<T>, ws);
  });
  return a.out;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lerp_backward_cpu(const at::Tensor& g_, const at::Tensor& x_,
                                                                 const at::Tensor& y_,
                                                                 const std::optional<at::Tensor>& w_, double ws,
                                                                 bool need_x, bool need_y, bool need_w) {
  const BackwardArgs a = backward_args(g_, x_, y_, w_, need_x, need_y, need_w);
  dispatch_cpu(a.x.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    a.run<T>(lerp_core::lerp_backward_cpu<T>, ws);
  });
  return {a.dx, a.dy, a.dw};
}

std::tuple<at::Tensor, at::Tensor> lerp_save_diff_cpu(const at::Tensor& x, const at::Tensor& y,
                                                      const at::Tensor& w) {
  SaveDiffArgs a = save_diff_args(x, y, w);
  dispatch_cpu(a.x.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    lerp_core::lerp_forward_save_diff_cpu<T>(cptr<T>(a.x), cptr<T>(a.y), cptr<T>(a.w), mptr<T>(a.out),
                                             mptr<T>(a.diff), shape_of(a.x), shape_of(a.w));
  });
  return {a.out, a.diff};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lerp_backward_from_diff_cpu(const at::Tensor& g,
                                                                           const at::Tensor& diff,
                                                                           const at::Tensor& w, bool need_x,
                                                                           bool need_y, bool need_w) {
  FromDiffArgs a = from_diff_args(g, diff, w, need_x, need_y, need_w);
  dispatch_cpu(a.w.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    lerp_core::lerp_backward_from_diff_cpu<T>(cptr<T>(a.g), cptr<T>(a.diff), cptr<T>(a.w),
                                              need_x ? mptr<T>(a.dx) : nullptr, need_y ? mptr<T>(a.dy) : nullptr,
                                              need_w ? mptr<T>(a.dw) : nullptr, shape_of(a.diff), shape_of(a.w));
  });
  return {a.dx, a.dy, a.dw};
}

using LerpSig = at::Tensor(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, double);
using LerpBwdSig = std::tuple<at::Tensor, at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&,
                                                                  const at::Tensor&,
                                                                  const std::optional<at::Tensor>&, double, bool,
                                                                  bool, bool);

using SaveDiffSig = std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&, const at::Tensor&);
using FromDiffSig = std::tuple<at::Tensor, at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&,
                                                                   const at::Tensor&, bool, bool, bool);

template <typename Sig>
c10::TypedOperatorHandle<Sig> op_handle(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Sig>();
}

// C++ autograd for `lerp_autograd` (same math as the Python register_autograd
// rule on `lerp`, without Python in the backward: lower launch overhead).
// Saves x, y, w; or diff = y - x and w when saves_diff() (torch_common.h).
struct LerpFn : public torch::autograd::Function<LerpFn> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& y,
                            const std::optional<at::Tensor>& w, double ws, bool diff_path) {
    ctx->saved_data["ws"] = ws;
    ctx->saved_data["diff"] = diff_path;
    at::AutoDispatchBelowADInplaceOrView guard;
    if (diff_path) {
      static auto op = op_handle<SaveDiffSig>("opbench_lerp::lerp_save_diff");
      auto [out, diff] = op.call(x, y, *w);
      ctx->save_for_backward({diff, *w});
      return out;
    }
    ctx->save_for_backward({x, y, w.has_value() ? *w : at::Tensor()});
    static auto op = op_handle<LerpSig>("opbench_lerp::lerp");
    return op.call(x, y, w, ws);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const bool diff_path = ctx->saved_data["diff"].toBool();
    const at::Tensor& w = saved.back();
    // needs_input_grad indexes tensor inputs only: w is edge 2 when present.
    const bool nx = ctx->needs_input_grad(0), ny = ctx->needs_input_grad(1);
    const bool nw = w.defined() && ctx->needs_input_grad(2);
    if (!(nx || ny || nw)) return {at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
    std::tuple<at::Tensor, at::Tensor, at::Tensor> res;
    if (diff_path) {
      static auto op = op_handle<FromDiffSig>("opbench_lerp::lerp_backward_from_diff");
      res = op.call(grads[0], saved[0], w, nx, ny, nw);
    } else {
      static auto op = op_handle<LerpBwdSig>("opbench_lerp::lerp_backward");
      std::optional<at::Tensor> wo = w.defined() ? std::optional<at::Tensor>(w) : std::nullopt;
      res = op.call(grads[0], saved[0], saved[1], wo, ctx->saved_data["ws"].toDouble(), nx, ny, nw);
    }
    return {nx ? std::get<0>(res) : at::Tensor(), ny ? std::get<1>(res) : at::Tensor(),
            nw ? std::get<2>(res) : at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

at::Tensor lerp_autograd(const at::Tensor& x, const at::Tensor& y, const std::optional<at::Tensor>& w, double ws) {
  // Decided here: Function::apply runs forward() with grad mode off.
  return LerpFn::apply(x, y, w, ws, at::GradMode::is_enabled() && saves_diff(x, y, w));
}

}  // namespace
}  // namespace opbench_torch

TORCH_LIBRARY(opbench_lerp, m) {
  m.def("lerp(Tensor x, Tensor y, Tensor? weight, float scalar_weight) -> Tensor");
  m.def(
      "lerp_backward(Tensor grad, Tensor x, Tensor y, Tensor? weight, float scalar_weight, bool need_x, "
      "bool need_y, bool need_w) -> (Tensor, Tensor, Tensor)");
  // Same as lerp, differentiable through a C++ autograd Function.
  m.def("lerp_autograd(Tensor x, Tensor y, Tensor? weight, float scalar_weight) -> Tensor");
  // The saved-diff pair used by lerp_autograd (x, y of one shape, float32/float64; see saves_diff()).
  m.def("lerp_save_diff(Tensor x, Tensor y, Tensor weight) -> (Tensor, Tensor)");
  m.def(
      "lerp_backward_from_diff(Tensor grad, Tensor diff, Tensor weight, bool need_x, bool need_y, bool need_w) "
      "-> (Tensor, Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(opbench_lerp, Autograd, m) { m.impl("lerp_autograd", &opbench_torch::lerp_autograd); }


TORCH_LIBRARY_IMPL(opbench_lerp, CPU, m) {
  m.impl("lerp", &opbench_torch::lerp_cpu);
  m.impl("lerp_backward", &opbench_torch::lerp_backward_cpu);
  m.impl("lerp_autograd", &opbench_torch::lerp_cpu);
  m.impl("lerp_save_diff", &opbench_torch::lerp_save_diff_cpu);
  m.impl("lerp_backward_from_diff", &opbench_torch::lerp_backward_from_diff_cpu);
}
