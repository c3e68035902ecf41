// rms_norm CUDA core (framework-free): y = x * rstd * w over the last dimension,
// rstd = 1/sqrt(mean(x^2) + eps) saved in fp32 for the backward. T: float, __half, __nv_bfloat16;
// W (weight): T or float; fp32 accumulation. The kernels are norm_common's, with kCenter = false.
// Paths (a warp, a block or a cluster of blocks per row with the row in registers, or a loop for rows
// past those) are chosen in norm_common/norm_launch.cuh. Backward dw: fp32 partial rows added in a fixed
// order (the same bits every run, no atomics). The engine is compiled by rms_norm_<dtype>_fwd.cu and _bwd.cu,
// one element type and direction each; this header only declares it, so a binding that includes it compiles no kernel.
#pragma once

#include "norm_common/norm_gpu.h"

namespace norm_core {
namespace gpu {

template <typename T, typename W>
void rms_norm_forward(const T* x, const W* w, T* y, float* rstd, int64_t rows, int64_t cols, float eps,
                      cudaStream_t stream) {
  norm_forward<T, W, false>(x, w, nullptr, y, nullptr, rstd, rows, cols, eps, stream);
}

template <typename T, typename W>
void rms_norm_backward(const T* dy, const T* x, const W* w, const float* rstd, T* dx, W* dw, int64_t rows,
                       int64_t cols, const Alloc& alloc, cudaStream_t stream) {
  norm_backward<T, W, false>(dy, x, w, nullptr, rstd, dx, dw, nullptr, rows, cols, alloc, stream);
}

}  // namespace gpu
}  // namespace norm_core
