// rms_norm CPU core (framework-free): y = x * rstd * w over the last dimension, rstd = 1/sqrt(mean(x^2) + eps).
// One path: rows in parallel (norm_common/norm_cpu.h, kCenter = false); dw summed over fixed row chunks.
#pragma once

#include "norm_common/norm_cpu.h"

namespace norm_core {

template <typename T, typename W>
void rms_norm_forward_cpu(const T* x, const W* w, T* y, float* rstd, int64_t rows, int64_t cols, float eps) {
  norm_forward_cpu<T, W, false>(x, w, nullptr, y, nullptr, rstd, rows, cols, eps);
}

template <typename T, typename W>
void rms_norm_backward_cpu(const T* dy, const T* x, const W* w, const float* rstd, T* dx, W* dw, int64_t rows,
                           int64_t cols) {
  norm_backward_cpu<T, W, false>(dy, x, w, nullptr, rstd, dx, dw, nullptr, rows, cols);
}

}  // namespace norm_core
