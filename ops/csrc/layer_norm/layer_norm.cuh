// layer_norm CUDA core (framework-free): y = (x - mean) * rstd * w + b over the last
// dimension, mean and rstd = 1/sqrt(var + eps) saved in fp32 for the backward. T: float, __half,
// __nv_bfloat16; W (weight, bias): T or float; fp32 accumulation, two-pass variance from registers.
// The kernels and paths are norm_common's (norm_launch.cuh), with kCenter = true. Backward dw, db:
// fp32 partial rows added in a fixed order (the same bits every run, no atomics). The engine is compiled by
// layer_norm_<dtype>_fwd.cu and _bwd.cu, one element type and direction each; this header only declares it,
// so a binding that includes it compiles no kernel.
#pragma once

#include "norm_common/norm_gpu.h"

namespace norm_core {
namespace gpu {

template <typename T, typename W>
void layer_norm_forward(const T* x, const W* w, const W* b, T* y, float* mean, float* rstd, int64_t rows,
                        int64_t cols, float eps, cudaStream_t stream) {
  norm_forward<T, W, true>(x, w, b, y, mean, rstd, rows, cols, eps, stream);
}

template <typename T, typename W>
void layer_norm_backward(const T* dy, const T* x, const W* w, const float* mean, const float* rstd, T* dx, W* dw,
                         W* db, int64_t rows, int64_t cols, const Alloc& alloc, cudaStream_t stream) {
  norm_backward<T, W, true>(dy, x, w, mean, rstd, dx, dw, db, rows, cols, alloc, stream);
}

}  // namespace gpu
}  // namespace norm_core
