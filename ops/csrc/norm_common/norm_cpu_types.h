// The norm ops' CPU element types and their conversions to and from float (fp32 accumulation); the
// 2-byte types and their rounding are common/cpu_half.h's.
#pragma once

#include <cstdint>

#include "common/cpu_half.h"

namespace norm_core {

using opcore::bf16_t;
using opcore::bits_f32;
using opcore::f32_bits;
using opcore::half_t;

inline float to_f32(float v) { return v; }
inline float to_f32(bf16_t b) { return opcore::bf16_to_float(b); }
inline float to_f32(half_t h) { return opcore::half_to_float(h); }

template <typename T>
inline T from_f32(float v);
template <>
inline float from_f32<float>(float v) {
  return v;
}
template <>
inline bf16_t from_f32<bf16_t>(float v) {
  return opcore::float_to_bf16(v);
}
template <>
inline half_t from_f32<half_t>(float v) {
  return opcore::float_to_half(v);
}

}  // namespace norm_core
