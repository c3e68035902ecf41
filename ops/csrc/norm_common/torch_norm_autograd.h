// The autograd rule of the PyTorch norm ops, in C++: rms_norm_fwd / layer_norm_fwd (kCenter) called
// below autograd, their backward op called from the graph. A Python rule (torch.library.register_autograd)
// cost more host time per training step than a small row's kernels.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include <optional>
#include <tuple>

namespace opbench_norm {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

template <bool kCenter>
struct NormOps;

template <>
struct NormOps<false> {  // rms_norm
  static std::tuple<at::Tensor, at::Tensor, at::Tensor> fwd(const at::Tensor& x, const std::optional<at::Tensor>& w,
                                                            const std::optional<at::Tensor>&, double eps) {
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("opbench_rms_norm::rms_norm_fwd", "")
                               .typed<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&,
                                                                         const std::optional<at::Tensor>&, double)>();
    auto [y, rstd] = op.call(x, w, eps);
    return {y, at::Tensor(), rstd};
  }
  static std::tuple<at::Tensor, at::Tensor, at::Tensor> bwd(const at::Tensor& g, const at::Tensor& x,
                                                            const std::optional<at::Tensor>& w,
                                                            const std::optional<at::Tensor>&, const at::Tensor&,
                                                            const at::Tensor& rstd, bool need_w, bool) {
    static const auto op =
        c10::Dispatcher::singleton()
            .findSchemaOrThrow("opbench_rms_norm::rms_norm_bwd", "")
            .typed<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&,
                                                      const std::optional<at::Tensor>&, const at::Tensor&, bool)>();
    auto [dx, dw] = op.call(g, x, w, rstd, need_w);
    return {dx, dw, at::Tensor()};
  }
};

template <>
struct NormOps<true> {  // layer_norm
  static std::tuple<at::Tensor, at::Tensor, at::Tensor> fwd(const at::Tensor& x, const std::optional<at::Tensor>& w,
                                                            const std::optional<at::Tensor>& b, double eps) {
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("opbench_layer_norm::layer_norm_fwd", "")
                               .typed<std::tuple<at::Tensor, at::Tensor, at::Tensor>(
                                   const at::Tensor&, const std::optional<at::Tensor>&,
                                   const std::optional<at::Tensor>&, double)>();
    return op.call(x, w, b, eps);
  }
  static std::tuple<at::Tensor, at::Tensor, at::Tensor> bwd(const at::Tensor& g, const at::Tensor& x,
                                                            const std::optional<at::Tensor>& w,
                                                            const std::optional<at::Tensor>& b, const at::Tensor& mean,
                                                            const at::Tensor& rstd, bool need_w, bool need_b) {
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("opbench_layer_norm::layer_norm_bwd", "")
                               .typed<std::tuple<at::Tensor, at::Tensor, at::Tensor>(
                                   const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&,
                                   const std::optional<at::Tensor>&, const at::Tensor&, const at::Tensor&, bool,
                                   bool)>();
    return op.call(g, x, w, b, mean, rstd, need_w, need_b);
  }
};

inline std::optional<at::Tensor> given(const at::Tensor& t) {
  return t.defined() ? std::optional<at::Tensor>(t) : std::nullopt;
}

// Inputs (x, weight, bias, epsilon); outputs (y, mean, rstd) for layer_norm, (y, rstd) for rms_norm (which
// passes no bias); the statistics are not differentiable.
template <bool kCenter>
struct NormFunction : public torch::autograd::Function<NormFunction<kCenter>> {
  static variable_list forward(AutogradContext* ctx, const at::Tensor& x, const std::optional<at::Tensor>& w,
                               const std::optional<at::Tensor>& b, double eps) {
    at::AutoDispatchBelowADInplaceOrView below;
    // The statistics take no gradient: left undefined, not filled with zeros (a kernel launch per backward).
    ctx->set_materialize_grads(false);
    auto [y, mean, rstd] = NormOps<kCenter>::fwd(x, w, b, eps);
    ctx->save_for_backward({x, w.value_or(at::Tensor()), b.value_or(at::Tensor()), mean, rstd});
    if constexpr (kCenter) {
      ctx->mark_non_differentiable({mean, rstd});
      return {y, mean, rstd};
    } else {
      ctx->mark_non_differentiable({rstd});
      return {y, rstd};
    }
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list s = ctx->get_saved_variables();
    const std::optional<at::Tensor> w = given(s[1]), b = given(s[2]);
    // needs_input_grad counts tensor inputs only: a missing weight takes no index
    const bool need_w = w.has_value() && ctx->needs_input_grad(1);
    const bool need_b = b.has_value() && ctx->needs_input_grad(w.has_value() ? 2 : 1);
    const at::Tensor g = grads[0].defined() ? grads[0] : at::zeros_like(s[0]);
    auto [dx, dw, db] = NormOps<kCenter>::bwd(g, s[0], w, b, s[3], s[4], need_w, need_b);
    return {ctx->needs_input_grad(0) ? dx : at::Tensor(), need_w ? dw : at::Tensor(), need_b ? db : at::Tensor(),
            at::Tensor()};
  }
};

}  // namespace opbench_norm
