// Device helpers of the norm ops' CUDA core: fp32 conversions, 16-byte packs, and sums over the
// threads that share one row (a sub-warp, a warp, or a whole block), always added in a fixed order.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace norm_core {
namespace gpu {

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__device__ __forceinline__ T from_f(float v);
template <>
__device__ __forceinline__ float from_f<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half from_f<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// V elements loaded or stored at once (V * sizeof(T) is 16 bytes for the row tensor's type; a float
// weight of a 2-byte input is 32 bytes, two 16-byte accesses).
template <typename T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

template <typename T, int V>
__device__ __forceinline__ Pack<T, V> load_pack(const T* p) {
  return *reinterpret_cast<const Pack<T, V>*>(p);
}
template <typename T, int V>
__device__ __forceinline__ void store_pack(T* p, const Pack<T, V>& v) {
  *reinterpret_cast<Pack<T, V>*>(p) = v;
}

// Sums K values over the kTPR threads of a row group (groups are kTPR consecutive threads; a group
// of more than 32 is the whole block). Every thread of the group gets the sums. `smem` holds at least
// K * 32 floats; the block-wide form syncs twice, so every thread of the block must call it.
template <int kTPR, int K>
__device__ __forceinline__ void group_sum(float (&v)[K], float* smem) {
  constexpr int kWarpSpan = kTPR < 32 ? kTPR : 32;
#pragma unroll
  for (int off = kWarpSpan / 2; off > 0; off /= 2) {
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] += __shfl_xor_sync(0xffffffffu, v[k], off);
  }
  if constexpr (kTPR > 32) {
    constexpr int kWarps = kTPR / 32;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) {
#pragma unroll
      for (int k = 0; k < K; ++k) smem[k * 32 + warp] = v[k];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < K; ++k) {
      float s = 0.f;
#pragma unroll
      for (int i = 0; i < kWarps; ++i) s += smem[k * 32 + i];
      v[k] = s;
    }
    __syncthreads();
  }
}

// Block-wide sum of K values for blocks of any multiple of 32 threads (the row-loop kernels).
template <int K>
__device__ __forceinline__ void block_sum(float (&v)[K], float* smem) {
#pragma unroll
  for (int off = 16; off > 0; off /= 2) {
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] += __shfl_xor_sync(0xffffffffu, v[k], off);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  if (lane == 0) {
#pragma unroll
    for (int k = 0; k < K; ++k) smem[k * 32 + warp] = v[k];
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < K; ++k) {
    float s = 0.f;
    for (int i = 0; i < warps; ++i) s += smem[k * 32 + i];
    v[k] = s;
  }
  __syncthreads();
}

}  // namespace gpu
}  // namespace norm_core
