// CPU core shared by rms_norm and layer_norm (framework-free, header-only): normalization over the
// last dimension of a [rows, cols] row-major tensor, forward and backward, fp32 accumulation.
//
//   kCenter = false: rms_norm,   y = x * rstd * w,                rstd = 1 / sqrt(mean(x^2) + eps)
//   kCenter = true : layer_norm, y = (x - mean) * rstd * w + b,   rstd = 1 / sqrt(mean((x - mean)^2) + eps)
//
// T is the element type (float, half_t, bf16_t), W the weight/bias type (T or float); a null weight
// means 1, a null bias 0. The forward writes per-row mean (layer_norm) and rstd in fp32 for the
// backward. Rows run in parallel on opcore::parallel_for. The backward's weight/bias gradients are
// sums over rows: rows are cut into chunks whose count depends on the row count only, each chunk sums
// its rows in order into its own fp32 partial row, and the partials are added in chunk order, so
// the bits do not depend on the thread count. Row sums use kLanes independent accumulators (added in a
// fixed order) so the loops vectorize without reassociation flags.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "common/cpu_parallel.h"
#include "norm_cpu_types.h"

namespace norm_core {

constexpr int kLanes = 16;

// Sum of f(j) for j in [0, n) with kLanes interleaved accumulators.
template <typename F>
inline float lane_sum(int64_t n, F&& f) {
  float acc[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int l = 0; l < kLanes; ++l) acc[l] += f(j + l);
  }
  for (int l = 0; j + l < n; ++l) acc[l] += f(j + l);
  float s = 0.f;
  for (int l = 0; l < kLanes; ++l) s += acc[l];
  return s;
}

// Eight fp32 lanes as one GCC/Clang vector value (one AVX register, two SSE ones), so the accumulators of
// a row statistic stay in registers.
typedef float lanes8_t __attribute__((vector_size(8 * sizeof(float))));

// The mean of x[0, 8), its adds in a tree: the row's sums wait for it, so its latency is paid once a row.
inline float shift_of(const float* __restrict__ x) {
  lanes8_t h;
  std::memcpy(&h, x, sizeof h);
  return (((h[0] + h[4]) + (h[2] + h[6])) + ((h[1] + h[5]) + (h[3] + h[7]))) * 0.125f;
}

// Mean and variance of a row in one pass over memory: sums of x - k and (x - k)^2 with k the mean of the
// row's first 8 elements (its first element in a shorter row), in 16 lanes added in lane order. The
// variance is the difference of the two sums' terms, which loses to cancellation as much as
// (mean - k)^2 / var, about 1/8 here: with k the first element alone, rows of a standard normal lost up
// to 10 units of float32 against float64 (PyTorch's 1).
inline void row_moments(const float* __restrict__ x, int64_t n, float inv_n, float* mean, float* var) {
  const float k = n >= 8 ? shift_of(x) : x[0];
  lanes8_t a0 = {}, a1 = {}, q0 = {}, q1 = {};
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    lanes8_t u0, u1;
    std::memcpy(&u0, x + j, sizeof u0);  // unaligned loads; no function returns the vector type (its ABI
    std::memcpy(&u1, x + j + 8, sizeof u1);  // differs with and without AVX)
    u0 -= k;
    u1 -= k;
    a0 += u0;
    a1 += u1;
    q0 += u0 * u0;
    q1 += u1 * u1;
  }
  float s = 0.f, ss = 0.f;
  for (int l = 0; l < 8; ++l) {
    s += a0[l] + a1[l];
    ss += q0[l] + q1[l];
  }
  for (; j < n; ++j) {
    const float u = x[j] - k;
    s += u;
    ss += u * u;
  }
  const float d = s * inv_n;
  *mean = k + d;
  *var = std::max(0.f, ss * inv_n - d * d);
}

template <typename T>
inline void load_row(const T* src, float* dst, int64_t n) {
  opcore::to_float(src, dst, n);  // F16C / AVX2 eight at a time for fp16 / bf16
}

// A row as fp32: converted into `buf`, or the row itself when it is fp32 already.
template <typename T>
inline const float* f32_row(const T* src, float* buf, int64_t n) {
  load_row(src, buf, n);
  return buf;
}
inline const float* f32_row(const float* src, float*, int64_t) { return src; }

// y = (x - mu) * rs * w + b for one row (restrict-qualified so the loop vectorizes without alias checks),
// computed in fp32 into `tmp` (fp32 y: into y itself) and rounded to T by the row conversion.
template <typename T>
inline void fwd_row_out(const float* __restrict__ xf, const float* __restrict__ wf, const float* __restrict__ bf,
                        T* yr, float* __restrict__ tmp, float mu, float rs, int64_t n) {
  float* out = std::is_same<T, float>::value ? reinterpret_cast<float*>(yr) : tmp;
  for (int64_t j = 0; j < n; ++j) out[j] = (xf[j] - mu) * rs * wf[j] + bf[j];
  opcore::from_float(out, yr, n);
}

// The backward's first pass over a row: xhat and g * w into scratch rows, and sum(g * w * xhat) and sum(g * w)
// in kLanes lanes added in lane order (so the loop vectorizes without reassociation flags).
inline void bwd_pass1(const float* __restrict__ x, const float* __restrict__ g, const float* __restrict__ wf,
                      float mu, float rs, float* __restrict__ xh, float* __restrict__ wg, int64_t n, float* s1,
                      float* s2) {
  float a1[kLanes] = {}, a2[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      const float xv = (x[j + l] - mu) * rs, wv = g[j + l] * wf[j + l];
      xh[j + l] = xv;
      wg[j + l] = wv;
      a1[l] += wv * xv;
      a2[l] += wv;
    }
  }
  for (int l = 0; j + l < n; ++l) {
    const float xv = (x[j + l] - mu) * rs, wv = g[j + l] * wf[j + l];
    xh[j + l] = xv;
    wg[j + l] = wv;
    a1[l] += wv * xv;
    a2[l] += wv;
  }
  *s1 = *s2 = 0.f;
  for (int l = 0; l < kLanes; ++l) {
    *s1 += a1[l];
    *s2 += a2[l];
  }
}

// The second pass: dx in fp32, and the row's dw (g * xhat) and db (g) terms when their rows are given.
template <bool kW, bool kB>
inline void bwd_pass2(const float* __restrict__ g, const float* __restrict__ xh, const float* __restrict__ wg,
                      float rs, float c1, float c2, float* __restrict__ dx, float* __restrict__ accw,
                      float* __restrict__ accb, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    dx[j] = rs * (wg[j] - c2 - xh[j] * c1);
    if (kW) accw[j] += g[j] * xh[j];
    if (kB) accb[j] += g[j];
  }
}

// One row of the backward: two passes over the row (fp32 rows read in place, fp16/bf16 rows converted
// first into xb/gb); dx is computed in fp32 (into dx itself for fp32, else into dxs, then rounded).
template <typename T, bool kCenter>
inline void bwd_row(const T* xr, const T* gr, const float* wf, float mu, float rs, float inv_n, float* xb, float* gb,
                    float* xh, float* wg, float* dxs, T* dxr, float* accw, float* accb, int64_t n) {
  const float* x = f32_row(xr, xb, n);
  const float* g = f32_row(gr, gb, n);
  float s1, s2;
  bwd_pass1(x, g, wf, mu, rs, xh, wg, n, &s1, &s2);
  const float c1 = s1 * inv_n, c2 = kCenter ? s2 * inv_n : 0.f;
  float* dx = std::is_same<T, float>::value ? reinterpret_cast<float*>(dxr) : dxs;
  if (accw != nullptr && accb != nullptr) {
    bwd_pass2<true, true>(g, xh, wg, rs, c1, c2, dx, accw, accb, n);
  } else if (accw != nullptr) {
    bwd_pass2<true, false>(g, xh, wg, rs, c1, c2, dx, accw, accb, n);
  } else if (accb != nullptr) {
    bwd_pass2<false, true>(g, xh, wg, rs, c1, c2, dx, accw, accb, n);
  } else {
    bwd_pass2<false, false>(g, xh, wg, rs, c1, c2, dx, accw, accb, n);
  }
  if (!std::is_same<T, float>::value) opcore::from_float(dxs, dxr, n);
}

// The weight or bias as an fp32 row (f32_row: the caller's own when it is fp32 already, else converted once
// per call into `buf`), or `absent` (1 or 0) in `buf` when there is none.
template <typename W>
inline const float* param_row(const W* p, int64_t n, float absent, std::vector<float>& buf) {
  if (p == nullptr) {
    buf.assign(static_cast<size_t>(n), absent);
    return buf.data();
  }
  buf.resize(std::is_same<W, float>::value ? 0 : static_cast<size_t>(n));
  return f32_row(p, buf.data(), n);
}

template <typename T, typename W, bool kCenter>
void norm_forward_cpu(const T* x, const W* w, const W* b, T* y, float* mean, float* rstd, int64_t rows,
                      int64_t cols, float eps) {
  if (rows <= 0) return;
  if (cols <= 0) {
    for (int64_t r = 0; r < rows; ++r) {
      if (kCenter) mean[r] = 0.f;
      rstd[r] = 1.f / std::sqrt(eps);
    }
    return;
  }
  std::vector<float> wbuf, bbuf;
  const float *wf = param_row(w, cols, 1.f, wbuf), *bf = param_row(b, cols, 0.f, bbuf);
  const float inv_n = 1.f / static_cast<float>(cols);
  opcore::parallel_for(rows, cols, [&](int64_t r0, int64_t r1) {
    // fp16/bf16 rows in fp32 and their output before rounding; an fp32 row is read and written in place
    std::vector<float> buf(std::is_same<T, float>::value ? 0 : static_cast<size_t>(2 * cols));
    for (int64_t r = r0; r < r1; ++r) {
      const float* xf = f32_row(x + r * cols, buf.data(), cols);
      float mu = 0.f, var;
      if (kCenter) {
        row_moments(xf, cols, inv_n, &mu, &var);
      } else {
        var = lane_sum(cols, [&](int64_t j) { return xf[j] * xf[j]; }) * inv_n;
      }
      const float rs = 1.f / std::sqrt(var + eps);
      if (kCenter) mean[r] = mu;
      rstd[r] = rs;
      fwd_row_out(xf, wf, bf, y + r * cols, buf.empty() ? nullptr : buf.data() + cols, mu, rs, cols);
    }
  });
}

inline void add_row(const float* __restrict__ src, float* __restrict__ dst, int64_t n) {
  for (int64_t j = 0; j < n; ++j) dst[j] += src[j];
}

// Rows per chunk of the backward's parameter-gradient sums: a function of the row count only.
inline int64_t chunk_rows(int64_t rows) {
  constexpr int64_t kMaxChunks = 64, kMinRows = 8;
  return std::max<int64_t>(kMinRows, (rows + kMaxChunks - 1) / kMaxChunks);
}

// dx for every row; dw (sum of dy * xhat) and db (sum of dy) when not null.
template <typename T, typename W, bool kCenter>
void norm_backward_cpu(const T* dy, const T* x, const W* w, const float* mean, const float* rstd, T* dx, W* dw,
                       W* db, int64_t rows, int64_t cols) {
  if (cols <= 0) return;
  const bool need_w = dw != nullptr, need_b = kCenter && db != nullptr;
  if (rows <= 0) {
    for (int64_t j = 0; j < cols; ++j) {
      if (need_w) dw[j] = from_f32<W>(0.f);
      if (need_b) db[j] = from_f32<W>(0.f);
    }
    return;
  }
  std::vector<float> wbuf;
  const float* wf = param_row(w, cols, 1.f, wbuf);
  const float inv_n = 1.f / static_cast<float>(cols);
  const int64_t per = chunk_rows(rows), chunks = (rows + per - 1) / per;
  std::vector<float> pw(need_w ? static_cast<size_t>(chunks * cols) : 0, 0.f);
  std::vector<float> pb(need_b ? static_cast<size_t>(chunks * cols) : 0, 0.f);
  opcore::parallel_for(chunks, per * cols, [&](int64_t c0, int64_t c1) {
    std::vector<float> buf(static_cast<size_t>(5 * cols));
    float *xb = buf.data(), *gb = xb + cols, *xh = gb + cols, *wg = xh + cols, *dxs = wg + cols;
    for (int64_t c = c0; c < c1; ++c) {
      float* accw = need_w ? pw.data() + c * cols : nullptr;
      float* accb = need_b ? pb.data() + c * cols : nullptr;
      for (int64_t r = c * per; r < std::min(rows, (c + 1) * per); ++r) {
        bwd_row<T, kCenter>(x + r * cols, dy + r * cols, wf, kCenter ? mean[r] : 0.f, rstd[r], inv_n, xb, gb,
                            xh, wg, dxs, dx + r * cols, accw, accb, cols);
      }
    }
  });
  if (!(need_w || need_b)) return;
  // Column blocks in parallel; within one, the chunks' partial rows are added in chunk order.
  opcore::parallel_for(cols, chunks, [&](int64_t j0, int64_t j1) {
    std::vector<float> sw(static_cast<size_t>(j1 - j0), 0.f), sb(static_cast<size_t>(j1 - j0), 0.f);
    for (int64_t c = 0; c < chunks; ++c) {
      if (need_w) add_row(pw.data() + c * cols + j0, sw.data(), j1 - j0);
      if (need_b) add_row(pb.data() + c * cols + j0, sb.data(), j1 - j0);
    }
    for (int64_t j = j0; j < j1; ++j) {
      if (need_w) dw[j] = from_f32<W>(sw[j - j0]);
      if (need_b) db[j] = from_f32<W>(sb[j - j0]);
    }
  });
}

}  // namespace norm_core
