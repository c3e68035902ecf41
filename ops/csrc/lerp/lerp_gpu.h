// lerp's GPU entry points as the bindings see them: declarations only, so a binding compiles no kernel.
// The definitions are lerp.cuh's; lerp_f32.cu, lerp_f64.cu, lerp_f16.cu and lerp_bf16.cu instantiate
// them (LERP_INSTANTIATE), one element type each, so the four compile in parallel.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>

#include "broadcast.h"

namespace lerp_core {
namespace gpu {

// The caller's scratch allocator (a framework's caching allocator): bytes -> device pointer, valid until
// the caller's stream has run the launches that use it.
using Alloc = std::function<void*(size_t bytes)>;

// out = x + w * (y - x) broadcast to out's shape; w null: the scalar w_scalar.
template <typename T>
void lerp_forward(const T* x, const T* y, const T* w, double w_scalar, T* out, const Shape& xs, const Shape& ys,
                  const Shape& ws_in, cudaStream_t stream);

// Gradients of lerp reduced to each input's shape; a null output is not computed.
template <typename T>
void lerp_backward(const T* g, const T* x, const T* y, const T* w, double w_scalar, T* dx, T* dy, T* dw,
                   const Shape& xs, const Shape& ys, const Shape& ws_in, const Alloc& alloc, cudaStream_t stream);

// Training forward of a weight needing a gradient (saves_diff_layout(xs, xs, ws); 4- and 8-byte types):
// out and diff = y - x in one pass, for lerp_backward_from_diff.
template <typename T>
void lerp_forward_save_diff(const T* x, const T* y, const T* w, T* out, T* diff, const Shape& xs, const Shape& ws,
                            cudaStream_t stream);

// Gradients from diff = y - x (x, y of shape xs): dx, dy with lerp_backward's bits, dw its sum (possibly split
// otherwise); a null output is not computed.
template <typename T>
void lerp_backward_from_diff(const T* g, const T* diff, const T* w, T* dx, T* dy, T* dw, const Shape& xs,
                             const Shape& ws, const Alloc& alloc, cudaStream_t stream);

}  // namespace gpu
}  // namespace lerp_core
