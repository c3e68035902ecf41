// fp16 and bf16 storage types of the ops' CPU cores and their scalar conversions to and from float.
//
// Every framework's fp16/bf16 has this 2-byte layout, so the bindings cast their pointers to these types.
// Conversions round to nearest even and keep subnormals, infinities and NaNs (a NaN stays a quiet NaN);
// they are written with selects rather than branches so that loops over a row or tile vectorize.
#pragma once

#include <cstdint>
#include <cstring>

namespace opcore {

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

inline float half_to_float(half_t h) {
  const uint32_t sign = static_cast<uint32_t>(h.x & 0x8000u) << 16;
  const uint32_t exp = (h.x >> 10) & 0x1fu, mant = h.x & 0x3ffu;
  const uint32_t sub = f32_bits(static_cast<float>(mant) * 5.9604644775390625e-8f);  // mant * 2^-24, exact
  const uint32_t normal = ((exp + 112u) << 23) | (mant << 13);
  const uint32_t special = 0x7f800000u | (mant << 13);  // inf, NaN
  return bits_f32(sign | (exp == 0 ? sub : (exp == 31 ? special : normal)));
}

inline float bf16_to_float(bf16_t b) { return bits_f32(static_cast<uint32_t>(b.x) << 16); }

inline half_t float_to_half(float v) {
  const uint32_t f = f32_bits(v);
  const uint32_t sign = (f >> 16) & 0x8000u, a = f & 0x7fffffffu;
  // normal: rebias the exponent, round the 13 dropped bits to nearest even (a carry may raise the exponent)
  const uint32_t normal = (a - (112u << 23) + 0xfffu + ((a >> 13) & 1u)) >> 13;
  // subnormal: adding 0.5 leaves the value rounded to a multiple of 2^-24 in the low mantissa bits
  const uint32_t sub = f32_bits(bits_f32(a) + 0.5f) - 0x3f000000u;
  const uint32_t h = a > 0x7f800000u ? 0x7e00u : (a >= 0x477ff000u ? 0x7c00u : (a < 0x38800000u ? sub : normal));
  return half_t{static_cast<uint16_t>(sign | h)};
}

inline bf16_t float_to_bf16(float v) {
  // NaN: the quiet NaN with the same sign and high payload bits
  const uint32_t u = f32_bits(v);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return bf16_t{static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? (u >> 16) | 0x40u : rounded)};
}

}  // namespace opcore
