// CUDA core of lerp forward and backward (framework-free, header-only).
//
// Element types: float, double, __half, __nv_bfloat16 (the last two computed
// in float). Accumulation in float (double for double). Tensors contiguous,
// raw pointers, every launch on the caller's stream. Paths, chosen on the host
// from the shapes:
//   contig : x, y (and a full weight) have the output's shape; the weight is
//            an attribute or a one-element tensor read once into a register.
//            One fused pass, 128-bit loads/stores when aligned, scalar tail.
//   gen_r  : broadcasting; the dims a gradient is reduced over are innermost.
//            One block per (kept index, slice of the reduced range) reduces in
//            registers + shared memory; full-size outputs written on the way.
//   gen_k  : broadcasting; the kept dims are innermost (column-like sums).
//            One thread per (kept index, slice of the reduced range).
// A reduction that needs more than one block per output element writes
// per-slice partials to a small workspace, summed in a second tiny pass.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "broadcast.h"

namespace lerp_core {
namespace gpu {

template <typename T>
struct Acc {
  using type = float;
};
template <>
struct Acc<double> {
  using type = double;
};

__device__ __forceinline__ float cvt_in(float v) { return v; }
__device__ __forceinline__ double cvt_in(double v) { return v; }
__device__ __forceinline__ float cvt_in(__half v) { return __half2float(v); }
__device__ __forceinline__ float cvt_in(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__device__ __forceinline__ T cvt_out(typename Acc<T>::type v);
template <>
__device__ __forceinline__ float cvt_out<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ double cvt_out<double>(double v) {
  return v;
}
template <>
__device__ __forceinline__ __half cvt_out<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 cvt_out<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

template <typename T, int VEC>
struct alignas(sizeof(T) * VEC) Pack {
  T v[VEC];
};

// VEC values from p[off..off+VEC), or p[off] repeated when `bcast`.
template <typename T, int VEC, typename A, typename I>
__device__ __forceinline__ void load_pack(const T* __restrict__ p, I off, bool bcast, A (&o)[VEC]) {
  if (VEC == 1 || bcast) {
    A v = cvt_in(p[off]);
#pragma unroll
    for (int k = 0; k < VEC; ++k) o[k] = v;
  } else {
    Pack<T, VEC> pk = *reinterpret_cast<const Pack<T, VEC>*>(p + off);
#pragma unroll
    for (int k = 0; k < VEC; ++k) o[k] = cvt_in(pk.v[k]);
  }
}

template <typename T, int VEC, typename A, typename I>
__device__ __forceinline__ void store_pack(T* __restrict__ p, I off, const A (&v)[VEC]) {
  if (VEC == 1) {
    p[off] = cvt_out<T>(v[0]);
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

// ---------------------------------------------------------------- contig --
// wmode: 0 attribute scalar, 1 one-element tensor (read once), 2 full tensor.
// Each thread handles U packs per step, all loads issued before the stores.
// U = 1 measured best on an H200 (U = 2/4 made bf16 8192x8192 forward ~15%
// slower, no gain elsewhere): a full grid already keeps enough loads in flight.
template <typename T>
__host__ __device__ constexpr int unroll_of() {
  return 1;
}

template <typename T, int VEC>
__global__ void __launch_bounds__(256)
    fwd_contig_kernel(const T* __restrict__ x, const T* __restrict__ y, const T* __restrict__ w, int wmode,
                      typename Acc<T>::type wsc, T* __restrict__ out, int64_t n) {
  using A = typename Acc<T>::type;
  constexpr int kUnroll = unroll_of<T>();
  const A wr = wmode == 1 ? cvt_in(w[0]) : wsc;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t nv = n / VEC;
  for (int64_t base = tid; base < nv; base += stride * kUnroll) {
    A xv[kUnroll][VEC], yv[kUnroll][VEC], wv[kUnroll][VEC];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t i = base + u * stride;
      if (i < nv) {
        load_pack<T, VEC>(x, i * VEC, false, xv[u]);
        load_pack<T, VEC>(y, i * VEC, false, yv[u]);
        if (wmode == 2) {
          load_pack<T, VEC>(w, i * VEC, false, wv[u]);
        } else {
#pragma unroll
          for (int k = 0; k < VEC; ++k) wv[u][k] = wr;
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t i = base + u * stride;
      if (i < nv) {
        A o[VEC];
#pragma unroll
        for (int k = 0; k < VEC; ++k) o[k] = lerp_value<A>(xv[u][k], yv[u][k], wv[u][k]);
        store_pack<T, VEC>(out, i * VEC, o);
      }
    }
  }
  for (int64_t i = nv * VEC + tid; i < n; i += stride) {
    A wv = wmode == 2 ? cvt_in(w[i]) : wr;
    out[i] = cvt_out<T>(lerp_value<A>(cvt_in(x[i]), cvt_in(y[i]), wv));
  }
}

template <typename T, int VEC>
__global__ void __launch_bounds__(256)
    bwd_contig_kernel(const T* __restrict__ g, const T* __restrict__ x, const T* __restrict__ y,
                      const T* __restrict__ w, int wmode, typename Acc<T>::type wsc, T* __restrict__ dx,
                      T* __restrict__ dy, T* __restrict__ dw, int64_t n) {
  using A = typename Acc<T>::type;
  constexpr int kUnroll = unroll_of<T>();
  const A wr = wmode == 1 ? cvt_in(w[0]) : wsc;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t nv = n / VEC;
  for (int64_t base = tid; base < nv; base += stride * kUnroll) {
    A gv[kUnroll][VEC], wv[kUnroll][VEC];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t i = base + u * stride;
      if (i < nv) {
        load_pack<T, VEC>(g, i * VEC, false, gv[u]);
        if (wmode == 2) {
          load_pack<T, VEC>(w, i * VEC, false, wv[u]);
        } else {
#pragma unroll
          for (int k = 0; k < VEC; ++k) wv[u][k] = wr;
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t i = base + u * stride;
      if (i >= nv) continue;
      A o[VEC];
      if (dx) {
#pragma unroll
        for (int k = 0; k < VEC; ++k) o[k] = gv[u][k] * (A(1) - wv[u][k]);
        store_pack<T, VEC>(dx, i * VEC, o);
      }
      if (dy) {
#pragma unroll
        for (int k = 0; k < VEC; ++k) o[k] = gv[u][k] * wv[u][k];
        store_pack<T, VEC>(dy, i * VEC, o);
      }
      if (dw) {
        A xv[VEC], yv[VEC];
        load_pack<T, VEC>(x, i * VEC, false, xv);
        load_pack<T, VEC>(y, i * VEC, false, yv);
#pragma unroll
        for (int k = 0; k < VEC; ++k) o[k] = gv[u][k] * (yv[k] - xv[k]);
        store_pack<T, VEC>(dw, i * VEC, o);
      }
    }
  }
  for (int64_t i = nv * VEC + tid; i < n; i += stride) {
    A gv = cvt_in(g[i]);
    A wv = wmode == 2 ? cvt_in(w[i]) : wr;
    if (dx) dx[i] = cvt_out<T>(gv * (A(1) - wv));
    if (dy) dy[i] = cvt_out<T>(gv * wv);
    if (dw) dw[i] = cvt_out<T>(gv * (cvt_in(y[i]) - cvt_in(x[i])));
  }
}

// --------------------------------------------------------------- general --
template <typename T>
struct GenArgs {
  const T* g = nullptr;  // dout (backward)
  const T* x = nullptr;
  const T* y = nullptr;
  const T* w = nullptr;  // null: scalar wsc
  double wsc = 0.0;
  T* out = nullptr;                          // forward output
  T* dx = nullptr;                           // full-size gradients written in this pass
  T* dy = nullptr;
  T* dw = nullptr;
  T* tgt = nullptr;                          // reduced gradient (when P == 1)
  typename Acc<T>::type* ws = nullptr;       // partials [P, M] (when P > 1)
  int target = -1;                           // kX, kY, kW or -1
  int P = 1;
  int64_t chunk = 0;
  unsigned mask = 0xfu;  // tensors whose offsets are needed (bit kOut, kX, kY, kW)
};

// Values loaded for one position (VEC consecutive along the innermost dim).
// Forward: a0 = x, a1 = y; backward: a0 = dout.
template <typename T, int VEC>
struct Vals {
  typename Acc<T>::type a0[VEC], a1[VEC], w[VEC];
};

// Positions handled per batch: all loads of a batch are issued before any
// use. 1 measured best on an H200: batches of 2-4 raised register use to
// ~100 and cost more in occupancy than they gained in loads in flight.
template <int VEC>
__host__ __device__ constexpr int batch_of() {
  return 1;
}

template <typename T, int VEC, bool FWD, typename I>
__device__ __forceinline__ void load_vals(const Layout& lay, const GenArgs<T>& a, int inner, const I (&o)[kNumT],
                                          Vals<T, VEC>& v) {
  using A = typename Acc<T>::type;
  if (a.w) {
    load_pack<T, VEC>(a.w, o[kW], lay.stride[kW][inner] == 0, v.w);
  } else {
#pragma unroll
    for (int k = 0; k < VEC; ++k) v.w[k] = static_cast<A>(a.wsc);
  }
  if (FWD) {
    load_pack<T, VEC>(a.x, o[kX], lay.stride[kX][inner] == 0, v.a0);
    load_pack<T, VEC>(a.y, o[kY], lay.stride[kY][inner] == 0, v.a1);
  } else {
    load_pack<T, VEC>(a.g, o[kOut], false, v.a0);
  }
}

template <typename T, int VEC, bool FWD, typename I>
__device__ __forceinline__ void use_vals(const Layout& lay, const GenArgs<T>& a, int inner, const I (&o)[kNumT],
                                         const Vals<T, VEC>& v, typename Acc<T>::type (&contrib)[VEC]) {
  using A = typename Acc<T>::type;
  A r[VEC];
  if (FWD) {
#pragma unroll
    for (int k = 0; k < VEC; ++k) r[k] = lerp_value<A>(v.a0[k], v.a1[k], v.w[k]);
    store_pack<T, VEC>(a.out, o[kOut], r);
    return;
  }
  if (a.dx || a.target == kX) {
#pragma unroll
    for (int k = 0; k < VEC; ++k) r[k] = v.a0[k] * (A(1) - v.w[k]);
    if (a.dx) store_pack<T, VEC>(a.dx, o[kOut], r);
    if (a.target == kX) {
#pragma unroll
      for (int k = 0; k < VEC; ++k) contrib[k] += r[k];
    }
  }
  if (a.dy || a.target == kY) {
#pragma unroll
    for (int k = 0; k < VEC; ++k) r[k] = v.a0[k] * v.w[k];
    if (a.dy) store_pack<T, VEC>(a.dy, o[kOut], r);
    if (a.target == kY) {
#pragma unroll
      for (int k = 0; k < VEC; ++k) contrib[k] += r[k];
    }
  }
  if (a.dw || a.target == kW) {
    A xv[VEC], yv[VEC];
    load_pack<T, VEC>(a.x, o[kX], lay.stride[kX][inner] == 0, xv);
    load_pack<T, VEC>(a.y, o[kY], lay.stride[kY][inner] == 0, yv);
#pragma unroll
    for (int k = 0; k < VEC; ++k) r[k] = v.a0[k] * (yv[k] - xv[k]);
    if (a.dw) store_pack<T, VEC>(a.dw, o[kOut], r);
    if (a.target == kW) {
#pragma unroll
      for (int k = 0; k < VEC; ++k) contrib[k] += r[k];
    }
  }
}

// Positions r = start, start + step, ... < end over the reduced dims, offset
// by the kept-dims offsets `ok`; batched loads, then use.
template <typename T, int VEC, bool FWD, typename I>
__device__ __forceinline__ void run_range(const Layout& lay, const GenArgs<T>& a, int inner, const I (&ok)[kNumT],
                                          I start, I end, I step, typename Acc<T>::type (&acc)[VEC]) {
  constexpr int U = batch_of<VEC>();
  const int rlo = lay.nk, rhi = lay.nk + lay.nr;
  for (I r = start; r < end; r += step * U) {
    I o[U][kNumT];
    Vals<T, VEC> v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const I ru = r + u * step;
      if (ru < end) {
        decompose_dev<I>(lay, rlo, rhi, ru, a.mask, o[u]);
#pragma unroll
        for (int t = 0; t < kNumT; ++t) o[u][t] += ok[t];
        load_vals<T, VEC, FWD>(lay, a, inner, o[u], v[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (r + u * step < end) use_vals<T, VEC, FWD>(lay, a, inner, o[u], v[u], acc);
    }
  }
}

// Reduced dims innermost: grid (P slices of L, kept indices j).
template <typename T, int VEC, bool FWD, typename I>
__global__ void __launch_bounds__(256) gen_r_kernel(Layout lay, GenArgs<T> a) {
  using A = typename Acc<T>::type;
  const int inner = lay.nk + lay.nr - 1;
  for (int64_t j = blockIdx.y; j < lay.M; j += gridDim.y) {
    I ok[kNumT];
    decompose_dev<I>(lay, 0, lay.nk, static_cast<I>(j), a.mask, ok);
    const int64_t r0 = static_cast<int64_t>(blockIdx.x) * a.chunk;
    const int64_t r1 = (r0 + a.chunk < lay.L) ? r0 + a.chunk : lay.L;
    A acc[VEC];
#pragma unroll
    for (int k = 0; k < VEC; ++k) acc[k] = A(0);
    run_range<T, VEC, FWD, I>(lay, a, inner, ok, static_cast<I>(r0 + static_cast<int64_t>(threadIdx.x) * VEC),
                              static_cast<I>(r1), static_cast<I>(blockDim.x) * VEC, acc);
    if (!FWD && a.target >= 0) {
      A s = A(0);
#pragma unroll
      for (int k = 0; k < VEC; ++k) s += acc[k];
      s = block_sum(s);
      if (threadIdx.x == 0) {
        if (a.P == 1) {
          a.tgt[j] = cvt_out<T>(s);
        } else {
          a.ws[static_cast<int64_t>(blockIdx.x) * lay.M + j] = s;
        }
      }
    }
  }
}

// Kept dims innermost: thread per VEC kept indices, grid.y = P slices of L.
template <typename T, int VEC, typename I>
__global__ void __launch_bounds__(256) gen_k_kernel(Layout lay, GenArgs<T> a) {
  using A = typename Acc<T>::type;
  const int inner = lay.nk - 1;
  const int64_t ngroups = lay.M / VEC;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * a.chunk;
  const int64_t r1 = (r0 + a.chunk < lay.L) ? r0 + a.chunk : lay.L;
  for (int64_t jg = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; jg < ngroups;
       jg += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = jg * VEC;
    I ok[kNumT];
    decompose_dev<I>(lay, 0, lay.nk, static_cast<I>(j), a.mask, ok);
    A acc[VEC];
#pragma unroll
    for (int k = 0; k < VEC; ++k) acc[k] = A(0);
    run_range<T, VEC, false, I>(lay, a, inner, ok, static_cast<I>(r0), static_cast<I>(r1), I(1), acc);
    if (a.P == 1) {
      store_pack<T, VEC>(a.tgt, j, acc);
    } else {
#pragma unroll
      for (int k = 0; k < VEC; ++k) a.ws[static_cast<int64_t>(blockIdx.y) * lay.M + j + k] = acc[k];
    }
  }
}

template <typename T>
__global__ void __launch_bounds__(256)
    finalize_kernel(const typename Acc<T>::type* __restrict__ ws, int P, int64_t M, T* __restrict__ tgt) {
  using A = typename Acc<T>::type;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < M;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    A s = A(0);
    for (int p = 0; p < P; ++p) s += ws[static_cast<int64_t>(p) * M + j];
    tgt[j] = cvt_out<T>(s);
  }
}

// Few targets, many partials: one warp per target, lanes split the partials
// (fixed order, so the result is deterministic).
template <typename T>
__global__ void __launch_bounds__(256)
    finalize_warp_kernel(const typename Acc<T>::type* __restrict__ ws, int P, int64_t M, T* __restrict__ tgt) {
  using A = typename Acc<T>::type;
  const int lane = threadIdx.x & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x >> 5);
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5); j < M; j += warps) {
    A s = A(0);
    for (int p = lane; p < P; p += 32) s += ws[static_cast<int64_t>(p) * M + j];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (lane == 0) tgt[j] = cvt_out<T>(s);
  }
}

// ------------------------------------------------------------------ host --
using Alloc = std::function<void*(size_t bytes)>;

inline void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("lerp CUDA error in ") + what + ": " + cudaGetErrorString(e));
}

inline int sm_count() {
  static int cache[64] = {0};  // per device; racing writers store the same value
  int dev = 0, n = 0;
  check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
  if (dev >= 0 && dev < 64 && cache[dev] > 0) return cache[dev];
  check_cuda(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute");
  n = n > 0 ? n : 1;
  if (dev >= 0 && dev < 64) cache[dev] = n;
  return n;
}

// Block cap for the grid-stride contig kernels: SMs x LERP_BLOCKS_PER_SM
// (default 0 = no cap, one pack per thread: measured 4-6% faster than a
// 16-blocks-per-SM cap on bf16/f32 8192x8192, H200). Read once.
inline int64_t grid_cap() {
  static const int per_sm = [] {
    const char* e = std::getenv("LERP_BLOCKS_PER_SM");
    return e ? std::atoi(e) : 0;
  }();
  return per_sm > 0 ? int64_t(sm_count()) * per_sm : (int64_t(1) << 30);
}

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// Can dims be read VEC-wide along `inner`? Needs every used tensor's stride
// there in {0, 1}, every other stride a multiple of VEC, size % VEC == 0.
inline bool vec_ok(const Layout& lay, int inner, int vec, const bool (&used)[kNumT]) {
  if (vec <= 1) return true;
  if (inner < 0 || lay.size[inner] % vec != 0) return false;
  for (int t = 0; t < kNumT; ++t) {
    if (!used[t]) continue;
    if (lay.stride[t][inner] == 0) continue;  // read as one broadcast scalar per pack
    for (int i = 0; i < lay.nk + lay.nr; ++i) {
      int64_t s = lay.stride[t][i];
      if (i == inner) {
        if (s != 0 && s != 1) return false;
      } else if (s % vec != 0) {
        return false;
      }
    }
  }
  return true;
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Largest offset tensor t reaches over the layout.
inline int64_t max_offset(const Layout& lay, int t) {
  int64_t m = 0;
  for (int i = 0; i < lay.nk + lay.nr; ++i) m += (lay.size[i] - 1) * lay.stride[t][i];
  return m;
}

template <typename T>
__host__ __device__ constexpr int vec_of() {
  return static_cast<int>(16 / sizeof(T));
}

template <typename T, bool FWD>
void launch_contig(const T* a0, const T* x, const T* y, const T* w, int wmode, double wsc, T* o0, T* o1, T* o2,
                   int64_t n, cudaStream_t stream) {
  using A = typename Acc<T>::type;
  constexpr int V = vec_of<T>();
  bool al = aligned16(a0) && aligned16(o0) && aligned16(o1) && aligned16(o2) && (wmode != 2 || aligned16(w));
  if (FWD) al = al && aligned16(x) && aligned16(y);
  if (!FWD && o2) al = al && aligned16(x) && aligned16(y);
  const int64_t work = ceil_div(al ? ceil_div(n, V) : n, unroll_of<T>());
  const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>(ceil_div(work, 256), grid_cap()));
  if (FWD) {
    if (al) {
      fwd_contig_kernel<T, V><<<blocks, 256, 0, stream>>>(x, y, w, wmode, static_cast<A>(wsc), o0, n);
    } else {
      fwd_contig_kernel<T, 1><<<blocks, 256, 0, stream>>>(x, y, w, wmode, static_cast<A>(wsc), o0, n);
    }
  } else {
    if (al) {
      bwd_contig_kernel<T, V><<<blocks, 256, 0, stream>>>(a0, x, y, w, wmode, static_cast<A>(wsc), o0, o1, o2, n);
    } else {
      bwd_contig_kernel<T, 1><<<blocks, 256, 0, stream>>>(a0, x, y, w, wmode, static_cast<A>(wsc), o0, o1, o2, n);
    }
  }
  check_cuda(cudaGetLastError(), "contig kernel launch");
}

// One general pass over the output positions: forward, or backward with at
// most one reduced target (a.target) plus any full-size gradients.
template <typename T, bool FWD>
void launch_general(const Layout& lay, GenArgs<T> a, const Alloc& alloc, cudaStream_t stream) {
  using A = typename Acc<T>::type;
  constexpr int V = vec_of<T>();
  const int sms = sm_count();
  const int64_t want_blocks = static_cast<int64_t>(sms) * 8;
  const int nd = lay.nk + lay.nr;
  bool used[kNumT] = {true, FWD || a.target == kW || a.dw != nullptr, FWD || a.target == kW || a.dw != nullptr,
                      a.w != nullptr};
  a.mask = 0;
  for (int t = 0; t < kNumT; ++t) a.mask |= used[t] ? (1u << t) : 0u;
  if (a.target >= 0) a.mask |= 1u << a.target;
  const int64_t lim = (int64_t(1) << 31) - (int64_t(1) << 20);  // headroom for batched index steps
  bool small = lay.M < lim && lay.L < lim;
  for (int i = 0; i < nd; ++i) small = small && lay.size[i] < (int64_t(1) << 31);
  for (int t = 0; t < kNumT; ++t) small = small && max_offset(lay, t) < (int64_t(1) << 31) - 16;
  const bool al = aligned16(a.g) && aligned16(a.x) && aligned16(a.y) && aligned16(a.w) && aligned16(a.out) &&
                  aligned16(a.dx) && aligned16(a.dy) && aligned16(a.dw) && aligned16(a.tgt);
  // Reduced innermost (or nothing to reduce) -> gen_r; kept innermost -> gen_k.
  const bool inner_r = a.target < 0 || (lay.nr > 0 && lay.stride[kOut][nd - 1] == 1 && lay.L >= 256) ||
                       lay.nk == 0;
  if (inner_r) {
    const int inner = nd - 1;
    const bool vec = al && lay.nr > 0 && vec_ok(lay, inner, V, used);
    const int v = vec ? V : 1;
    const int64_t gy = std::min<int64_t>(lay.M, 65535);
    // No reduction: one pack per thread (a full grid, like the contig path).
    // Reduction: enough blocks to fill the GPU, at most one pack per thread.
    const int64_t max_p = std::max<int64_t>(1, ceil_div(lay.L, int64_t(256) * v));
    int64_t P = a.target < 0 ? max_p : std::min<int64_t>(max_p, std::max<int64_t>(1, ceil_div(want_blocks, gy)));
    P = std::min<int64_t>(P, (int64_t(1) << 31) - 1);
    int64_t chunk = ceil_div(ceil_div(lay.L, P), v) * v;
    P = std::max<int64_t>(1, ceil_div(lay.L, chunk));
    a.chunk = chunk;
    a.P = static_cast<int>(P);
    if (!FWD && a.target >= 0 && P > 1) a.ws = static_cast<A*>(alloc(sizeof(A) * P * lay.M));
    dim3 grid(static_cast<unsigned>(P), static_cast<unsigned>(gy));
    if (vec && small) {
      gen_r_kernel<T, V, FWD, int32_t><<<grid, 256, 0, stream>>>(lay, a);
    } else if (vec) {
      gen_r_kernel<T, V, FWD, int64_t><<<grid, 256, 0, stream>>>(lay, a);
    } else if (small) {
      gen_r_kernel<T, 1, FWD, int32_t><<<grid, 256, 0, stream>>>(lay, a);
    } else {
      gen_r_kernel<T, 1, FWD, int64_t><<<grid, 256, 0, stream>>>(lay, a);
    }
    check_cuda(cudaGetLastError(), "gen_r kernel launch");
  } else {
    const int inner = lay.nk - 1;
    const bool vec = al && vec_ok(lay, inner, V, used);
    const int v = vec ? V : 1;
    const int64_t groups = lay.M / v;
    const int64_t gx = std::min<int64_t>(ceil_div(groups, 256), int64_t(sms) * 16);
    int64_t P = std::max<int64_t>(1, ceil_div(want_blocks, gx));
    P = std::min<int64_t>(P, std::max<int64_t>(1, ceil_div(lay.L, 16)));
    P = std::min<int64_t>(P, 65535);
    const int64_t chunk = ceil_div(lay.L, P);
    P = ceil_div(lay.L, chunk);
    a.chunk = chunk;
    a.P = static_cast<int>(P);
    if (P > 1) a.ws = static_cast<A*>(alloc(sizeof(A) * P * lay.M));
    dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(P));
    if (vec && small) {
      gen_k_kernel<T, V, int32_t><<<grid, 256, 0, stream>>>(lay, a);
    } else if (vec) {
      gen_k_kernel<T, V, int64_t><<<grid, 256, 0, stream>>>(lay, a);
    } else if (small) {
      gen_k_kernel<T, 1, int32_t><<<grid, 256, 0, stream>>>(lay, a);
    } else {
      gen_k_kernel<T, 1, int64_t><<<grid, 256, 0, stream>>>(lay, a);
    }
    check_cuda(cudaGetLastError(), "gen_k kernel launch");
  }
  if (!FWD && a.target >= 0 && a.P > 1) {
    if (a.P >= 16 && lay.M <= int64_t(sms) * 64) {
      const int64_t blocks = std::max<int64_t>(1, ceil_div(lay.M, 8));
      finalize_warp_kernel<T><<<blocks, 256, 0, stream>>>(a.ws, a.P, lay.M, a.tgt);
    } else {
      const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>(ceil_div(lay.M, 256), sms * 8));
      finalize_kernel<T><<<blocks, 256, 0, stream>>>(a.ws, a.P, lay.M, a.tgt);
    }
    check_cuda(cudaGetLastError(), "finalize kernel launch");
  }
}

// out = lerp(x, y, w). w null: scalar weight w_scalar (ws ignored).
template <typename T>
void lerp_forward(const T* x, const T* y, const T* w, double w_scalar, T* out, const Shape& xs, const Shape& ys,
                  const Shape& ws_in, cudaStream_t stream) {
  const Shape ws = w ? ws_in : Shape{};
  const Shape os = broadcast_shapes({xs, ys, ws});
  const int64_t n = numel_of(os);
  if (n == 0) return;
  const int64_t nw = numel_of(ws);
  if (numel_of(xs) == n && numel_of(ys) == n && (!w || nw == 1 || nw == n)) {
    const int wmode = !w ? 0 : (nw == 1 && n != 1 ? 1 : 2);
    launch_contig<T, true>(nullptr, x, y, w, wmode, w_scalar, out, nullptr, nullptr, n, stream);
    return;
  }
  GenArgs<T> a;
  a.x = x;
  a.y = y;
  a.w = w;
  a.wsc = w_scalar;
  a.out = out;
  launch_general<T, true>(make_layout(os, xs, ys, ws, -1), a, Alloc(), stream);
}

// Gradients; a null dx/dy/dw is not computed. Requested ones are always
// fully written (reduced to their input's shape).
template <typename T>
void lerp_backward(const T* g, const T* x, const T* y, const T* w, double w_scalar, T* dx, T* dy, T* dw,
                   const Shape& xs, const Shape& ys, const Shape& ws_in, const Alloc& alloc, cudaStream_t stream) {
  const Shape ws = w ? ws_in : Shape{};
  if (!w) dw = nullptr;
  const Shape os = broadcast_shapes({xs, ys, ws});
  const int64_t n = numel_of(os);
  T* outs[kNumT] = {nullptr, dx, dy, dw};
  const Shape* shp[kNumT] = {&os, &xs, &ys, &ws};
  if (n == 0) {
    for (int t = 1; t < kNumT; ++t) {
      if (outs[t] && numel_of(*shp[t]) > 0)
        check_cuda(cudaMemsetAsync(outs[t], 0, sizeof(T) * numel_of(*shp[t]), stream), "cudaMemsetAsync");
    }
    return;
  }
  bool full[kNumT] = {false, false, false, false};
  std::vector<int> reduced;
  for (int t = 1; t < kNumT; ++t) {
    if (!outs[t]) continue;
    if (numel_of(*shp[t]) == n) {
      full[t] = true;
    } else {
      reduced.push_back(t);
    }
  }
  const int64_t nw = numel_of(ws);
  if (reduced.empty() && numel_of(xs) == n && numel_of(ys) == n && (!w || nw == 1 || nw == n)) {
    const int wmode = !w ? 0 : (nw == 1 && n != 1 ? 1 : 2);
    launch_contig<T, false>(g, x, y, w, wmode, w_scalar, dx, dy, dw, n, stream);
    return;
  }
  GenArgs<T> base;
  base.g = g;
  base.x = x;
  base.y = y;
  base.w = w;
  base.wsc = w_scalar;
  base.dx = full[kX] ? dx : nullptr;
  base.dy = full[kY] ? dy : nullptr;
  base.dw = full[kW] ? dw : nullptr;
  if (reduced.empty()) {
    launch_general<T, false>(make_layout(os, xs, ys, ws, -1), base, alloc, stream);
    return;
  }
  bool first = true;
  for (int t : reduced) {
    GenArgs<T> a = base;
    if (!first) a.dx = a.dy = a.dw = nullptr;
    first = false;
    a.target = t;
    a.tgt = outs[t];
    launch_general<T, false>(make_layout(os, xs, ys, ws, t), a, alloc, stream);
  }
}

}  // namespace gpu
}  // namespace lerp_core
