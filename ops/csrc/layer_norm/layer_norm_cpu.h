// layer_norm CPU core (framework-free): y = (x - mean) * rstd * w + b over the last dimension,
// rstd = 1/sqrt(var + eps) (mean and variance from one pass of shifted sums). One path: rows in parallel (norm_common/norm_cpu.h,
// kCenter = true); dw and db summed over fixed row chunks.
#pragma once

#include "norm_common/norm_cpu.h"

namespace norm_core {

template <typename T, typename W>
void layer_norm_forward_cpu(const T* x, const W* w, const W* b, T* y, float* mean, float* rstd, int64_t rows,
                            int64_t cols, float eps) {
  norm_forward_cpu<T, W, true>(x, w, b, y, mean, rstd, rows, cols, eps);
}

template <typename T, typename W>
void layer_norm_backward_cpu(const T* dy, const T* x, const W* w, const float* mean, const float* rstd, T* dx,
                             W* dw, W* db, int64_t rows, int64_t cols) {
  norm_backward_cpu<T, W, true>(dy, x, w, mean, rstd, dx, dw, db, rows, cols);
}

}  // namespace norm_core
