// CPU implementation of lerp forward and backward (framework-free).
//
// Same algorithms as the CUDA core: the stable lerp form, fp16/bf16 computed
// in float, each gradient term computed in float (double for double) and the
// terms reduced to each input's shape in double in one pass over dout, so a
// reduction over millions of elements stays within a rounding of the exact sum. Pointers are raw, tensors
// contiguous; a null weight pointer means "scalar weight `w_scalar`".
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "broadcast.h"

namespace lerp_core {

// 2-byte storage types with the same layout as every framework's fp16/bf16.
struct half_t {
  uint16_t x;
};
struct bf16_t {
  uint16_t x;
};

inline uint32_t f32_bits(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return u;
}
inline float bits_f32(uint32_t u) {
  float v;
  std::memcpy(&v, &u, 4);
  return v;
}

inline float to_acc(half_t h) {
  uint32_t sign = static_cast<uint32_t>(h.x & 0x8000u) << 16;
  uint32_t exp = (h.x >> 10) & 0x1fu;
  uint32_t mant = h.x & 0x3ffu;
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return bits_f32(sign | 0x7f800000u | (mant << 13));
  return bits_f32(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}
inline float to_acc(bf16_t b) { return bits_f32(static_cast<uint32_t>(b.x) << 16); }
inline float to_acc(float v) { return v; }
inline double to_acc(double v) { return v; }

template <typename T>
inline T from_acc(typename AccOf<T>::type v);

template <>
inline float from_acc<float>(float v) {
  return v;
}
template <>
inline double from_acc<double>(double v) {
  return v;
}
template <>
inline half_t from_acc<half_t>(float v) {
  uint32_t f = f32_bits(v);
  uint16_t sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
  uint32_t a = f & 0x7fffffffu;
  if (a >= 0x7f800000u) return half_t{static_cast<uint16_t>(sign | (a > 0x7f800000u ? 0x7e00u : 0x7c00u))};
  if (a >= 0x477ff000u) return half_t{static_cast<uint16_t>(sign | 0x7c00u)};
  if (a < 0x38800000u) {  // half subnormal or zero: m * 2^-24, round to nearest even
    float m = std::nearbyint(bits_f32(a) * 16777216.0f);
    return half_t{static_cast<uint16_t>(sign | static_cast<uint16_t>(m))};
  }
  uint32_t mant = a & 0x7fffffu;
  uint32_t exp = (a >> 23) - 127 + 15;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return half_t{static_cast<uint16_t>(sign | h)};
}
template <>
inline bf16_t from_acc<bf16_t>(float v) {
  uint32_t u = f32_bits(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) return bf16_t{static_cast<uint16_t>((u >> 16) | 0x40u)};
  u += 0x7fffu + ((u >> 16) & 1u);
  return bf16_t{static_cast<uint16_t>(u >> 16)};
}

// Odometer over all dims of a layout (nk == 0 assumed): offsets per tensor.
struct Odometer {
  const Layout& lay;
  int nd;
  int64_t idx[kMaxDims] = {0};
  int64_t off[kNumT] = {0, 0, 0, 0};
  explicit Odometer(const Layout& l) : lay(l), nd(l.nk + l.nr) {}
  void next() {
    for (int i = nd - 1; i >= 0; --i) {
      for (int t = 0; t < kNumT; ++t) off[t] += lay.stride[t][i];
      if (++idx[i] < lay.size[i]) return;
      for (int t = 0; t < kNumT; ++t) off[t] -= lay.stride[t][i] * lay.size[i];
      idx[i] = 0;
    }
  }
};

// out = lerp(x, y, w) with broadcasting; out has the broadcast shape.
template <typename T>
void lerp_forward_cpu(const T* x, const T* y, const T* w, double w_scalar, T* out, const Shape& xs,
                      const Shape& ys, const Shape& ws) {
  using A = typename AccOf<T>::type;
  Shape os = broadcast_shapes({xs, ys, ws});
  int64_t n = numel_of(os);
  if (n == 0) return;
  Layout lay = make_layout(os, xs, ys, ws, -1);
  Odometer od(lay);
  const A wsc = static_cast<A>(w_scalar);
  for (int64_t i = 0; i < n; ++i, od.next()) {
    A wv = w ? to_acc(w[od.off[kW]]) : wsc;
    out[od.off[kOut]] = from_acc<T>(lerp_value<A>(to_acc(x[od.off[kX]]), to_acc(y[od.off[kY]]), wv));
  }
}

// Gradients of lerp: dx = sum_to_x(g * (1 - w)), dy = sum_to_y(g * w),
// dw = sum_to_w(g * (y - x)). A null output pointer means "not needed".
// Every requested output is fully written (zeros when dout is empty).
template <typename T>
void lerp_backward_cpu(const T* g, const T* x, const T* y, const T* w, double w_scalar, T* dx, T* dy, T* dw,
                       const Shape& xs, const Shape& ys, const Shape& ws) {
  using A = typename AccOf<T>::type;
  Shape os = broadcast_shapes({xs, ys, ws});
  int64_t n = numel_of(os);
  std::vector<double> ax(dx ? numel_of(xs) : 0, 0.0), ay(dy ? numel_of(ys) : 0, 0.0);
  std::vector<double> aw(dw ? numel_of(ws) : 0, 0.0);
  if (n > 0) {
    Layout lay = make_layout(os, xs, ys, ws, -1);
    Odometer od(lay);
    const A wsc = static_cast<A>(w_scalar);
    for (int64_t i = 0; i < n; ++i, od.next()) {
      A gv = to_acc(g[od.off[kOut]]);
      A wv = w ? to_acc(w[od.off[kW]]) : wsc;
      if (dx) ax[od.off[kX]] += static_cast<double>(gv * (A(1) - wv));
      if (dy) ay[od.off[kY]] += static_cast<double>(gv * wv);
      if (dw) aw[od.off[kW]] += static_cast<double>(gv * (to_acc(y[od.off[kY]]) - to_acc(x[od.off[kX]])));
    }
  }
  for (size_t i = 0; i < ax.size(); ++i) dx[i] = from_acc<T>(static_cast<A>(ax[i]));
  for (size_t i = 0; i < ay.size(); ++i) dy[i] = from_acc<T>(static_cast<A>(ay[i]));
  for (size_t i = 0; i < aw.size(); ++i) dw[i] = from_acc<T>(static_cast<A>(aw[i]));
}

// Training forward for same-shape x, y, w (n elements) when w needs a
// gradient: out = lerp(x, y, w) and diff = y - x (see the CUDA core).
template <typename T>
void lerp_forward_save_diff_cpu(const T* x, const T* y, const T* w, T* out, T* diff, int64_t n) {
  using A = typename AccOf<T>::type;
  for (int64_t i = 0; i < n; ++i) {
    const A xv = to_acc(x[i]), yv = to_acc(y[i]);
    out[i] = from_acc<T>(lerp_value<A>(xv, yv, to_acc(w[i])));
    diff[i] = from_acc<T>(yv - xv);
  }
}

// Gradients of same-shape x, y, w from diff = y - x; a null output is not computed.
template <typename T>
void lerp_backward_from_diff_cpu(const T* g, const T* diff, const T* w, T* dx, T* dy, T* dw, int64_t n) {
  using A = typename AccOf<T>::type;
  for (int64_t i = 0; i < n; ++i) {
    const A gv = to_acc(g[i]), wv = to_acc(w[i]);
    if (dx) dx[i] = from_acc<T>(gv * (A(1) - wv));
    if (dy) dy[i] = from_acc<T>(gv * wv);
    if (dw) dw[i] = from_acc<T>(gv * to_acc(diff[i]));
  }
}

}  // namespace lerp_core
