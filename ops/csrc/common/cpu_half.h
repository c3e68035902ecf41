// fp16 and bf16 storage types of the ops' CPU cores and their scalar conversions to and from float
// (to_f32/from_f32 over float, fp16 and bf16 alike).
//
// Every framework's fp16/bf16 has this 2-byte layout, so the bindings cast their pointers to these types.
// Conversions round to nearest even and keep subnormals, infinities and NaNs (a NaN stays a quiet NaN);
// they are written with selects rather than branches so that loops over a row or tile vectorize.
// to_float/from_float convert contiguous rows, eight values at a time where the CPU has F16C (fp16) or
// AVX2 (bf16), with the same bits as the scalar conversions.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__F16C__) || defined(__AVX2__)
#include <immintrin.h>
#endif

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

// One value to float and back (float passes through): the element conversions of the cores' fp32
// accumulation.
inline float to_f32(float v) { return v; }
inline float to_f32(half_t h) { return half_to_float(h); }
inline float to_f32(bf16_t b) { return bf16_to_float(b); }

template <typename T>
inline T from_f32(float v);
template <>
inline float from_f32<float>(float v) {
  return v;
}
template <>
inline half_t from_f32<half_t>(float v) {
  return float_to_half(v);
}
template <>
inline bf16_t from_f32<bf16_t>(float v) {
  return float_to_bf16(v);
}

#if defined(__AVX2__)
// Eight floats to bf16, rounded to nearest even with integer adds; a NaN becomes the quiet NaN of
// float_to_bf16.
inline __m128i bf16_round8(__m256 v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb), 16);
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
  const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
                                         _mm256_set1_epi32(0x7f800000));
  const __m256i h = _mm256_blendv_epi8(rounded, quiet, nan);  // every lane in [0, 0xffff]: packus is exact
  return _mm_packus_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}
#endif

// out[i] = p[i] as float, for i < n.
inline void to_float(const float* p, float* out, int64_t n) {
  if (out != p) std::memcpy(out, p, static_cast<size_t>(n) * sizeof(float));
}
inline void to_float(const half_t* p, float* __restrict__ out, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i))));
#endif
  for (; i < n; ++i) out[i] = half_to_float(p[i]);
}
inline void to_float(const bf16_t* p, float* __restrict__ out, int64_t n) {
  int64_t i = 0;
#if defined(__AVX2__)
  for (; i + 8 <= n; i += 8) {
    const __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)));
    _mm256_storeu_ps(out + i, _mm256_castsi256_ps(_mm256_slli_epi32(h, 16)));
  }
#endif
  for (; i < n; ++i) out[i] = bf16_to_float(p[i]);
}

// p[i] = v[i] rounded to the 2-byte type (copied for float), for i < n.
inline void from_float(const float* v, float* p, int64_t n) {
  if (p != v) std::memcpy(p, v, static_cast<size_t>(n) * sizeof(float));
}
inline void from_float(const float* __restrict__ v, half_t* __restrict__ p, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(v + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
  for (; i < n; ++i) p[i] = float_to_half(v[i]);
}
inline void from_float(const float* __restrict__ v, bf16_t* __restrict__ p, int64_t n) {
  int64_t i = 0;
#if defined(__AVX2__)
  for (; i + 8 <= n; i += 8) _mm_storeu_si128(reinterpret_cast<__m128i*>(p + i), bf16_round8(_mm256_loadu_ps(v + i)));
#endif
  for (; i < n; ++i) p[i] = float_to_bf16(v[i]);
}

}  // namespace opcore
