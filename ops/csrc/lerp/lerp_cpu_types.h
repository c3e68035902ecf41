// fp16 and bf16 storage types for the CPU core and their conversions to and from float.
//
// Each framework's fp16/bf16 has this 2-byte layout, so the bindings cast their pointers to these types.
// Conversions round to nearest even, keep subnormals, infinities and NaNs (as a quiet NaN).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

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

// Written with selects rather than branches so that loops over a tile of values vectorize.
inline float to_acc(half_t h) {
  const uint32_t sign = static_cast<uint32_t>(h.x & 0x8000u) << 16;
  const uint32_t exp = (h.x >> 10) & 0x1fu, mant = h.x & 0x3ffu;
  const uint32_t sub = f32_bits(static_cast<float>(mant) * 5.9604644775390625e-8f);  // mant * 2^-24, exact
  const uint32_t normal = ((exp + 112u) << 23) | (mant << 13);
  const uint32_t special = 0x7f800000u | (mant << 13);  // inf, NaN
  return bits_f32(sign | (exp == 0 ? sub : (exp == 31 ? special : normal)));
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
  const uint32_t f = f32_bits(v);
  const uint32_t sign = (f >> 16) & 0x8000u, a = f & 0x7fffffffu;
  // normal: rebias the exponent, round the 13 dropped bits to nearest even (a carry may raise the exponent)
  const uint32_t normal = (a - (112u << 23) + 0xfffu + ((a >> 13) & 1u)) >> 13;
  // subnormal: adding 0.5 leaves the value rounded to a multiple of 2^-24 in the low mantissa bits
  const uint32_t sub = f32_bits(bits_f32(a) + 0.5f) - 0x3f000000u;
  const uint32_t h = a > 0x7f800000u ? 0x7e00u : (a >= 0x477ff000u ? 0x7c00u : (a < 0x38800000u ? sub : normal));
  return half_t{static_cast<uint16_t>(sign | h)};
}
template <>
inline bf16_t from_acc<bf16_t>(float v) {
  // a select rather than a branch (NaN: the quiet NaN with the same sign and high payload bits)
  const uint32_t u = f32_bits(v);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return bf16_t{static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? (u >> 16) | 0x40u : rounded)};
}

}  // namespace lerp_core
