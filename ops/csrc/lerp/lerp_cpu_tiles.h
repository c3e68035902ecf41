// The CPU core's building blocks: runs along the innermost dimension, and tiles in the accumulation type.
//
// A kernel walks a range of positions of a Layout as runs of the innermost dimension (each tensor moves
// by a fixed stride along a run: 1 when contiguous, 0 when broadcast), and processes each run in tiles
// of kTile elements: the inputs are loaded into float (double for double) buffers, the arithmetic runs
// on the buffers in loops the compiler vectorizes, and the results are converted back on store.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#if defined(__F16C__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#include "broadcast.h"
#include "lerp_cpu_types.h"

namespace lerp_core {
namespace cpu {

constexpr int64_t kTile = 512;  // elements per tile: the buffers of a tile stay in L1

// Calls f(off, len) for each run of the positions [begin, end) over the dims [lo, hi) of `lay` in
// row-major order (dim hi-1 innermost). off[t] is tensor t's offset at the run's first position plus
// base[t]; along the run tensor t moves by lay.stride[t][hi-1]. Needs lo < hi.
template <typename F>
void for_each_run(const Layout& lay, int lo, int hi, int64_t begin, int64_t end, const int64_t base[kNumT],
                  F&& f) {
  if (begin >= end) return;
  const int in = hi - 1;
  int64_t idx[kMaxDims];
  int64_t off[kNumT];
  for (int t = 0; t < kNumT; ++t) off[t] = base[t];
  int64_t q = begin;
  for (int i = in; i >= lo; --i) {
    idx[i] = q % lay.size[i];
    q /= lay.size[i];
    for (int t = 0; t < kNumT; ++t) off[t] += idx[i] * lay.stride[t][i];
  }
  for (int64_t p = begin;;) {
    const int64_t len = std::min(lay.size[in] - idx[in], end - p);
    f(static_cast<const int64_t*>(off), len);
    p += len;
    if (p >= end) return;
    for (int t = 0; t < kNumT; ++t) off[t] -= idx[in] * lay.stride[t][in];  // back to the start of dim `in`
    idx[in] = 0;
    for (int i = in - 1; i >= lo; --i) {  // carry into the outer dims
      for (int t = 0; t < kNumT; ++t) off[t] += lay.stride[t][i];
      if (++idx[i] < lay.size[i]) break;
      for (int t = 0; t < kNumT; ++t) off[t] -= lay.size[i] * lay.stride[t][i];
      idx[i] = 0;
    }
  }
}

// The offsets of every tensor at kept position m (the dims [0, nk) of a layout).
inline void kept_offsets(const Layout& lay, int64_t m, int64_t off[kNumT]) {
  for (int t = 0; t < kNumT; ++t) off[t] = 0;
  for (int i = lay.nk - 1; i >= 0; --i) {
    const int64_t c = m % lay.size[i];
    m /= lay.size[i];
    for (int t = 0; t < kNumT; ++t) off[t] += c * lay.stride[t][i];
  }
}

// buf[i] = p[i * stride] in the accumulation type, for i < n.
template <typename T, typename A>
inline void load(const T* p, int64_t stride, int64_t n, A* __restrict__ buf) {
  if (stride == 1) {
    for (int64_t i = 0; i < n; ++i) buf[i] = to_acc(p[i]);
  } else if (stride == 0) {
    const A v = to_acc(p[0]);
    for (int64_t i = 0; i < n; ++i) buf[i] = v;
  } else {
    for (int64_t i = 0; i < n; ++i) buf[i] = to_acc(p[i * stride]);
  }
}

// p[i] = buf[i] converted to T, for i < n (p contiguous).
template <typename T, typename A>
inline void store(T* __restrict__ p, int64_t n, const A* __restrict__ buf) {
  for (int64_t i = 0; i < n; ++i) p[i] = from_acc<T>(buf[i]);
}

// fp16/bf16 tiles: contiguous runs through the shared row conversions (F16C / AVX2, eight at a time).
inline void load(const half_t* p, int64_t stride, int64_t n, float* __restrict__ buf) {
  if (stride != 1) return load<half_t, float>(p, stride, n, buf);
  opcore::to_float(p, buf, n);
}
inline void load(const bf16_t* p, int64_t stride, int64_t n, float* __restrict__ buf) {
  if (stride != 1) return load<bf16_t, float>(p, stride, n, buf);
  opcore::to_float(p, buf, n);
}
inline void store(half_t* __restrict__ p, int64_t n, const float* __restrict__ buf) { opcore::from_float(buf, p, n); }
inline void store(bf16_t* __restrict__ p, int64_t n, const float* __restrict__ buf) { opcore::from_float(buf, p, n); }

#if defined(__AVX2__) && defined(__F16C__)
// Eight 2-byte values to floats and back (the conversions of load() and store() above).
inline __m256 load8(const half_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline __m256 load8(const bf16_t* p) {
  const __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(h, 16));
}
inline void store8(half_t* p, __m256 v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
inline void store8(bf16_t* p, __m256 v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), opcore::bf16_round8(v)); }

// o[i] = lerp(x[i], y[i], w[i]) (w null: the scalar ws) for contiguous fp16/bf16 x, y, w and o, eight at a
// time in registers: loaded, computed and stored without the tile buffers (lerp_tile's and
// lerp_tile_scalar's arithmetic, a multiply and an add). Returns how many it did, a multiple of 8.
template <typename T>
inline int64_t lerp_run8(const T* x, const T* y, const T* w, float ws, int64_t n, T* o) {
  int64_t i = 0;
  if (w == nullptr) {
    const bool lo = std::fabs(ws) < 0.5f;
    const __m256 c = _mm256_set1_ps(lo ? ws : ws - 1.f);
    for (; i + 8 <= n; i += 8) {
      const __m256 vx = load8(x + i), vy = load8(y + i);
      store8(o + i, _mm256_add_ps(lo ? vx : vy, _mm256_mul_ps(c, _mm256_sub_ps(vy, vx))));
    }
    return i;
  }
  const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.f);
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (; i + 8 <= n; i += 8) {
    const __m256 vx = load8(x + i), vy = load8(y + i), vw = load8(w + i);
    const __m256 lo = _mm256_cmp_ps(_mm256_and_ps(vw, magnitude), half, _CMP_LT_OQ);
    const __m256 base = _mm256_blendv_ps(vy, vx, lo), coef = _mm256_blendv_ps(_mm256_sub_ps(vw, one), vw, lo);
    store8(o + i, _mm256_add_ps(base, _mm256_mul_ps(coef, _mm256_sub_ps(vy, vx))));
  }
  return i;
}
#endif

// The fused contiguous forward where there is one (2-byte types with AVX2 and F16C), else 0 elements.
template <typename T, typename A>
inline int64_t lerp_run_fused([[maybe_unused]] const T* x, [[maybe_unused]] const T* y,
                              [[maybe_unused]] const T* w, [[maybe_unused]] A ws, [[maybe_unused]] int64_t n,
                              [[maybe_unused]] T* o) {
#if defined(__AVX2__) && defined(__F16C__)
  if constexpr (std::is_same_v<T, half_t> || std::is_same_v<T, bf16_t>) return lerp_run8(x, y, w, ws, n, o);
#endif
  return 0;
}

// o[i] = lerp(x[i], y[i], w[i]) for a tile: lerp_value's arithmetic, written out so that it vectorizes.
template <typename A>
inline void lerp_tile(const A* __restrict__ x, const A* __restrict__ y, const A* __restrict__ w, int64_t n,
                      A* __restrict__ o) {
  for (int64_t i = 0; i < n; ++i) {
    const A d = y[i] - x[i];
    const bool lo = std::fabs(w[i]) < A(0.5);
    o[i] = (lo ? x[i] : y[i]) + (lo ? w[i] : w[i] - A(1)) * d;
  }
}

// A tile of n values at p (moving by stride) in the accumulation type: p itself when it already is a
// contiguous run of that type (float, double), else buf after a load.
template <typename T, typename A>
inline const A* view(const T* p, int64_t stride, int64_t n, A* buf) {
  if constexpr (std::is_same_v<T, A>) {
    if (stride == 1) return p;
  }
  load(p, stride, n, buf);
  return buf;
}

// Where a tile's results go before they reach the contiguous output p: p itself when T is the
// accumulation type, else buf (then written out by flush).
template <typename T, typename A>
inline A* out_tile(T* p, A* buf) {
  if constexpr (std::is_same_v<T, A>) {
    return p;
  } else {
    return buf;
  }
}

template <typename T, typename A>
inline void flush(T* p, int64_t n, const A* buf) {
  if constexpr (!std::is_same_v<T, A>) store(p, n, buf);
}

// The same for a scalar weight: its comparison is made once, so the loop is one multiply-add per element.
template <typename A>
inline void lerp_tile_scalar(const A* __restrict__ x, const A* __restrict__ y, A w, int64_t n, A* __restrict__ o) {
  if (std::fabs(w) < A(0.5)) {
    for (int64_t i = 0; i < n; ++i) o[i] = x[i] + w * (y[i] - x[i]);
  } else {
    const A c = w - A(1);
    for (int64_t i = 0; i < n; ++i) o[i] = y[i] + c * (y[i] - x[i]);
  }
}

// The weight as kernels see it: a tensor (p) or, when p is null, the scalar.
template <typename T>
struct Weight {
  const T* p;
  typename AccOf<T>::type scalar;
};

}  // namespace cpu
}  // namespace lerp_core
