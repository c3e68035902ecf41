// lerp CUDA core, part: element conversions, 128-bit packs, the stable lerp value (every path uses them).
// Included in order by lerp.cuh; see its header for the paths and when each is chosen.
#pragma once


#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "broadcast.h"
#include "common/dependent_launch.cuh"
#include "common/device_convert.cuh"

namespace lerp_core {
namespace gpu {

// Element conversions to and from the accumulation type (AccOf): common/device_convert.cuh's for fp32, fp16
// and bf16; fp64 stays as it is.
template <typename T>
__device__ __forceinline__ typename AccOf<T>::type cvt_in(T v) {
  if constexpr (std::is_same_v<T, double>) {
    return v;
  } else {
    return opcore::gpu::to_f32(v);
  }
}

template <typename T>
__device__ __forceinline__ T cvt_out(typename AccOf<T>::type v) {
  if constexpr (std::is_same_v<T, double>) {
    return v;
  } else {
    return opcore::gpu::from_f32<T>(v);
  }
}

template <typename T, int VEC>
struct alignas(sizeof(T) * VEC) Pack {
  T v[VEC];
};

// Two floats rounded to a 2-byte type and packed into one 32-bit word by one
// instruction (F2FP ... PACK_AB), as __float2half_rn / __float2bfloat16_rn
// would round them one by one.
__device__ __forceinline__ uint32_t cvt_pair(__half, float a, float b) {
  const __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<const uint32_t*>(&h);
}
__device__ __forceinline__ uint32_t cvt_pair(__nv_bfloat16, float a, float b) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<const uint32_t*>(&h);
}

template <typename T, int VEC, typename A, typename I>
__device__ __forceinline__ void store_pack(T* __restrict__ p, I off, const A (&v)[VEC]) {
  if constexpr (VEC == 1) {
    p[off] = cvt_out<T>(v[0]);
  } else if constexpr (sizeof(T) == 2) {  // pairs rounded and packed together
    Pack<uint32_t, VEC / 2> pk;
#pragma unroll
    for (int k = 0; k < VEC / 2; ++k) pk.v[k] = cvt_pair(T(), v[2 * k], v[2 * k + 1]);
    *reinterpret_cast<Pack<uint32_t, VEC / 2>*>(p + off) = pk;
  } else {
    Pack<T, VEC> pk;
#pragma unroll
    for (int k = 0; k < VEC; ++k) pk.v[k] = cvt_out<T>(v[k]);
    *reinterpret_cast<Pack<T, VEC>*>(p + off) = pk;
  }
}

// Offsets of the used tensors (bit t of `mask`) at position idx of dims
// [lo, hi). I = int32_t: all offsets/indices < 2^31, divisions by multiply
// (magic numbers); I = int64_t: plain 64-bit division.
template <typename I>
__device__ __forceinline__ void decompose_dev(const Layout& lay, int lo, int hi, I idx, unsigned mask,
                                              I (&off)[kNumT]) {
#pragma unroll
  for (int t = 0; t < kNumT; ++t) off[t] = 0;
  if (hi <= lo) return;
  for (int i = hi - 1; i > lo; --i) {
    I q;
    if (sizeof(I) == 4) {
      q = static_cast<I>(fast_div(static_cast<uint32_t>(idx), lay.magic[i], lay.shift[i]));
    } else {
      q = idx / static_cast<I>(lay.size[i]);
    }
    const I c = idx - q * static_cast<I>(lay.size[i]);
    idx = q;
#pragma unroll
    for (int t = 0; t < kNumT; ++t)
      if (mask & (1u << t)) off[t] += c * static_cast<I>(lay.stride[t][i]);
  }
#pragma unroll
  for (int t = 0; t < kNumT; ++t)
    if (mask & (1u << t)) off[t] += idx * static_cast<I>(lay.stride[t][lo]);
}

template <typename A>
__device__ __forceinline__ A block_sum(A v) {
  __shared__ A red[32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
  __syncthreads();  // red[] may still be read from a previous call
  if (lane == 0) red[wid] = v;
  __syncthreads();
  const int nw = (blockDim.x + 31) >> 5;
  v = (threadIdx.x < nw) ? red[threadIdx.x] : A(0);
  if (wid == 0) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  }
  return v;
}

}  // namespace gpu
}  // namespace lerp_core
