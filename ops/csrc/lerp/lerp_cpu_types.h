// The lerp CPU core's element types and their conversions to and from the accumulation type (float for
// fp16/bf16/fp32, double for fp64); the 2-byte types and their rounding are common/cpu_half.h's.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "broadcast.h"
#include "common/cpu_half.h"

namespace lerp_core {

using opcore::bf16_t;
using opcore::bits_f32;
using opcore::f32_bits;
using opcore::half_t;

inline float to_acc(half_t h) { return opcore::half_to_float(h); }
inline float to_acc(bf16_t b) { return opcore::bf16_to_float(b); }
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
  return opcore::float_to_half(v);
}
template <>
inline bf16_t from_acc<bf16_t>(float v) {
  return opcore::float_to_bf16(v);
}

}  // namespace lerp_core
