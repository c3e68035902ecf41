// CUDA core of lerp forward and backward (framework-free, header-only).
//
// Element types: float, double, __half, __nv_bfloat16 (the last two computed
// in float). Accumulation in float (double for double). Tensors contiguous,
// raw pointers, every launch on the caller's stream, 256-thread blocks.
// Paths, chosen on the host from the shapes (docs/ops/lerp-design.md):
//   contig    : x, y (and a full weight) have the output's shape; the weight
//               is an attribute or a one-element tensor read once. One fused
//               pass, 128-bit loads/stores when aligned, scalar tail; 1, 2 or
//               4 packs per thread (one wave for small tensors).
//   bcast fwd : forward with broadcasting. Up to 4 collapsed dims and 32-bit
//               offsets (nd): the dims count compiled in, one unrolled index
//               decomposition per pack, 1-4 packs per thread; otherwise one
//               pack per thread with a runtime-dims decomposition.
//   rows      : backward, one gradient summed over contiguous rows of dout
//               (x [16,1,1,1] vs y [16,3,224,224]; a one-element weight's
//               gradient), the weight constant along a row: one pass, the
//               last block of a row sums the row's partials (no second
//               launch).
//   cols      : backward, one gradient summed down at most 64 rows of
//               contiguous columns (x [3,224,224] vs y [16,3,224,224]):
//               lanes per column pack, shuffle sums, one pass.
//   gen_r     : backward, any other layout whose reduced dims are innermost.
//               One block per (kept index, slice of the reduced range) reduces
//               in registers + shared memory; full-size outputs written on the
//               way.
//   gen_k     : backward, any other layout whose kept dims are innermost.
//               One thread per (kept pack, slice of the reduced range), or
//               several per kept pack when there are few or the reduced range
//               is short (then no slices); may also sum a second reduced
//               gradient that is constant per block (fusion).
// A reduction that needs more than one block per output element writes
// per-slice partials to a small workspace, summed in fixed order by one
// second tiny launch (finalize, both gradients at once) or, in rows, by the
// row's last block (integer ticket counters). No float atomics.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "broadcast.h"

namespace lerp_core {
namespace gpu {


__device__ __forceinline__ float cvt_in(float v) { return v; }
__device__ __forceinline__ double cvt_in(double v) { return v; }
__device__ __forceinline__ float cvt_in(__half v) { return __half2float(v); }
__device__ __forceinline__ float cvt_in(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__device__ __forceinline__ T cvt_out(typename AccOf<T>::type v);
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

// ------------------------------------------------------------------ flat --
// Every kernel runs 256-thread blocks.
constexpr int kThreads = 256;

// Raw 16-byte (VEC-element) loads kept unconverted until use (4 registers
// per pack for every dtype). 2-byte types are held as 32-bit words of two
// elements: a broadcast operand (one element) is then copied into the pack
// word by word, and both load paths leave the same registers (element-wise
// 16-bit copies made the compiler split every pack into halves and merge
// them with ~40 byte permutes per pack).
template <typename T, int VEC>
using Raw = std::conditional_t<sizeof(T) == 2 && VEC >= 2, Pack<uint32_t, VEC / 2>, Pack<T, VEC>>;

template <typename T, int VEC, typename I>
__device__ __forceinline__ void load_raw(const T* __restrict__ p, I off, bool bcast, Raw<T, VEC>& o) {
  if constexpr (sizeof(T) == 2 && VEC >= 2) {
    if (bcast) {
      const uint32_t h = *reinterpret_cast<const unsigned short*>(p + off);
      const uint32_t word = h | (h << 16);
#pragma unroll
      for (int k = 0; k < VEC / 2; ++k) o.v[k] = word;
    } else {
      o = *reinterpret_cast<const Raw<T, VEC>*>(p + off);
    }
  } else if (VEC == 1 || bcast) {
    o.v[0] = p[off];
#pragma unroll
    for (int k = 1; k < VEC; ++k) o.v[k] = o.v[0];
  } else {
    o = *reinterpret_cast<const Raw<T, VEC>*>(p + off);
  }
}

// Element k of a raw pack in the accumulation type.
template <typename T, int VEC>
__device__ __forceinline__ typename AccOf<T>::type raw_at(const Raw<T, VEC>& o, int k) {
  if constexpr (sizeof(T) == 2 && VEC >= 2) {
    const uint32_t word = o.v[k / 2];
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {  // bf16 is the top half of a float
      return __uint_as_float(k % 2 ? word & 0xffff0000u : word << 16);
    } else {
      const __half2 h = *reinterpret_cast<const __half2*>(&word);  // free: a 16-bit half of a register
      return k % 2 ? __high2float(h) : __low2float(h);
    }
  } else {
    return cvt_in(o.v[k]);
  }
}

// out[k] = lerp(x[k], y[k], w[k]) for one pack; !has_w: the scalar ws for
// every element, its |w| < 0.5 branch taken once per pack (a tensor weight
// selects per element). Same values as lerp_value either way. (Packs by
// reference: a pointer to one would put it in local memory.)
template <typename T, int VEC>
__device__ __forceinline__ void lerp_pack(const Raw<T, VEC>& x, const Raw<T, VEC>& y, const Raw<T, VEC>& w,
                                          bool has_w, typename AccOf<T>::type ws,
                                          typename AccOf<T>::type (&out)[VEC]) {
  using A = typename AccOf<T>::type;
  if (has_w) {
#pragma unroll
    for (int k = 0; k < VEC; ++k) out[k] = lerp_value<A>(raw_at<T, VEC>(x, k), raw_at<T, VEC>(y, k), raw_at<T, VEC>(w, k));
  } else if (fabs(ws) < A(0.5)) {
#pragma unroll
    for (int k = 0; k < VEC; ++k) out[k] = raw_at<T, VEC>(x, k) + ws * (raw_at<T, VEC>(y, k) - raw_at<T, VEC>(x, k));
  } else {
    const A w1 = ws - A(1);
#pragma unroll
    for (int k = 0; k < VEC; ++k) out[k] = raw_at<T, VEC>(y, k) + w1 * (raw_at<T, VEC>(y, k) - raw_at<T, VEC>(x, k));
  }
}

// contig: x, y (and a full weight) have the output's shape. wmode: 0
// attribute scalar, 1 one-element tensor (read once), 2 full tensor; WFULL
// (wmode 2) is also a template parameter, so that the scalar-weight kernels
// hold no weight packs (fewer registers, more blocks per SM). DIFF: also
// writes diff = y - x (what a training forward saves when the weight needs a
// gradient: the backward then reads dout, w, diff). I: int32_t indices for
// tensors below kContig32 elements, else int64_t.
// Block b owns packs [b*256*U, (b+1)*256*U) (thread t: packs t, t+256, ...),
// grid-stride beyond that; all U packs' loads are issued before any store.
// U > 1 only for tensors of 1-4 waves of one-pack-per-thread blocks, so that
// the grid is a single wave with more bytes in flight per thread (see
// packs_per_thread()); scalar tail.
// The contig kernels' scalar weight: the attribute, or a one-element tensor
// read once (unused when the weight is a full tensor).
template <typename T, bool WFULL>
__device__ __forceinline__ typename AccOf<T>::type scalar_weight(const T* __restrict__ w, int wmode,
                                                                 typename AccOf<T>::type wsc) {
  return !WFULL && wmode == 1 ? cvt_in(w[0]) : wsc;
}

template <typename T, int VEC, int U, bool WFULL, bool DIFF, typename I>
__global__ void __launch_bounds__(kThreads)
    fwd_contig_kernel(const T* __restrict__ x, const T* __restrict__ y, const T* __restrict__ w, int wmode,
                      typename AccOf<T>::type wsc, T* __restrict__ out, T* __restrict__ diff, I n) {
  using A = typename AccOf<T>::type;
  const A wr = scalar_weight<T, WFULL>(w, wmode, wsc);
  const I nv = n / VEC;
  constexpr I nt = kThreads;
  const I step = static_cast<I>(gridDim.x) * (nt * U);
  for (I base = static_cast<I>(blockIdx.x) * (nt * U) + static_cast<I>(threadIdx.x); base < nv; base += step) {
    Raw<T, VEC> xp[U], yp[U], wp[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const I i = base + u * nt;
      if (i < nv) {
        load_raw<T, VEC>(x, i * VEC, false, xp[u]);
        load_raw<T, VEC>(y, i * VEC, false, yp[u]);
        if (WFULL) load_raw<T, VEC>(w, i * VEC, false, wp[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const I i = base + u * nt;
      if (i < nv) {
        A o[VEC];
        lerp_pack<T, VEC>(xp[u], yp[u], wp[u], WFULL, wr, o);
        store_pack<T, VEC>(out, i * VEC, o);
        if (DIFF) {
#pragma unroll
          for (int k = 0; k < VEC; ++k) o[k] = raw_at<T, VEC>(yp[u], k) - raw_at<T, VEC>(xp[u], k);
          store_pack<T, VEC>(diff, i * VEC, o);
        }
      }
    }
  }
  const I tstride = static_cast<I>(gridDim.x) * nt;
  for (I i = nv * VEC + static_cast<I>(blockIdx.x) * nt + static_cast<I>(threadIdx.x); i < n; i += tstride) {
    A wv = WFULL ? cvt_in(w[i]) : wr;
    out[i] = cvt_out<T>(lerp_value<A>(cvt_in(x[i]), cvt_in(y[i]), wv));
    if (DIFF) diff[i] = cvt_out<T>(cvt_in(y[i]) - cvt_in(x[i]));
  }
}

// Full-size weight gradient of bwd_contig_kernel: none, dw = dout * (y - x)
// (reads x and y), or dw = dout * y where y holds y - x saved by the forward.
constexpr int kDwNone = 0;
constexpr int kDwXY = 1;
constexpr int kDwDiff = 2;

template <typename T, int VEC, int U, bool WFULL, int DW, typename I>
__global__ void __launch_bounds__(kThreads)
    bwd_contig_kernel(const T* __restrict__ g, const T* __restrict__ x, const T* __restrict__ y,
                      const T* __restrict__ w, int wmode, typename AccOf<T>::type wsc, T* __restrict__ dx,
                      T* __restrict__ dy, T* __restrict__ dw, I n) {
  using A = typename AccOf<T>::type;
  const A wr = scalar_weight<T, WFULL>(w, wmode, wsc);
  const I nv = n / VEC;
  constexpr I nt = kThreads;
  const I step = static_cast<I>(gridDim.x) * (nt * U);
  for (I base = static_cast<I>(blockIdx.x) * (nt * U) + static_cast<I>(threadIdx.x); base < nv; base += step) {
    Raw<T, VEC> gp[U], wp[U], xp[DW ? U : 1], yp[DW ? U : 1];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const I i = base + u * nt;
      if (i < nv) {
        load_raw<T, VEC>(g, i * VEC, false, gp[u]);
        if (WFULL) load_raw<T, VEC>(w, i * VEC, false, wp[u]);
        if (DW == kDwXY) load_raw<T, VEC>(x, i * VEC, false, xp[DW ? u : 0]);
        if (DW) load_raw<T, VEC>(y, i * VEC, false, yp[DW ? u : 0]);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const I i = base + u * nt;
      if (i >= nv) continue;
      A gv[VEC], wv[VEC], o[VEC];
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        gv[k] = raw_at<T, VEC>(gp[u], k);
        wv[k] = WFULL ? raw_at<T, VEC>(wp[u], k) : wr;
      }
      if (dx) {
#pragma unroll
        for (int k = 0; k < VEC; ++k) o[k] = gv[k] * (A(1) - wv[k]);
        store_pack<T, VEC>(dx, i * VEC, o);
      }
      if (dy) {
#pragma unroll
        for (int k = 0; k < VEC; ++k) o[k] = gv[k] * wv[k];
        store_pack<T, VEC>(dy, i * VEC, o);
      }
      if (DW) {
#pragma unroll
        for (int k = 0; k < VEC; ++k)
          o[k] = gv[k] * (DW == kDwXY ? raw_at<T, VEC>(yp[DW ? u : 0], k) - raw_at<T, VEC>(xp[DW ? u : 0], k)
                                      : raw_at<T, VEC>(yp[DW ? u : 0], k));
        store_pack<T, VEC>(dw, i * VEC, o);
      }
    }
  }
  const I tstride = static_cast<I>(gridDim.x) * nt;
  for (I i = nv * VEC + static_cast<I>(blockIdx.x) * nt + static_cast<I>(threadIdx.x); i < n; i += tstride) {
    A gv = cvt_in(g[i]);
    A wv = WFULL ? cvt_in(w[i]) : wr;
    if (dx) dx[i] = cvt_out<T>(gv * (A(1) - wv));
    if (dy) dy[i] = cvt_out<T>(gv * wv);
    if (DW) dw[i] = cvt_out<T>(gv * (DW == kDwXY ? cvt_in(y[i]) - cvt_in(x[i]) : cvt_in(y[i])));
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
  typename AccOf<T>::type* ws = nullptr;       // partials [P, M] (when P > 1)
  int target = -1;                           // kX, kY, kW or -1
  // gen_k only: a second reduced gradient that is constant over the kept dims
  // and over each slice of the reduced range: one partial per block.
  int target2 = -1;
  typename AccOf<T>::type* ws2 = nullptr;      // [P, gridDim.x] block partials
  int64_t* key2 = nullptr;                   // [P] target2 index of each slice
  T* tgt2 = nullptr;                         // target2's gradient
  int P = 1;
  int64_t chunk = 0;
  int subs = 1;          // gen_k: threads per kept group (> 1: few groups, or a short reduced range)
  unsigned mask = 0xfu;  // tensors whose offsets are needed (bit kOut, kX, kY, kW)
};

// The inputs every general pass reads: dout (null in the forward), x, y and the weight (null: scalar wsc).
template <typename T>
GenArgs<T> gen_inputs(const T* g, const T* x, const T* y, const T* w, double wsc) {
  GenArgs<T> a;
  a.g = g;
  a.x = x;
  a.y = y;
  a.w = w;
  a.wsc = wsc;
  return a;
}

// forward with broadcasting: out is contiguous (offset = position); the
// offsets of x, y, w (bits of a.mask: the broadcast ones that are not a
// single element) come from one index decomposition per pack over the
// collapsed dims (32-bit magic-number divisions when I = int32_t). One pack
// per thread, grid-stride.
template <typename T, int VEC, typename I>
__global__ void __launch_bounds__(kThreads) fwd_bcast_kernel(Layout lay, GenArgs<T> a, int64_t nv) {
  using A = typename AccOf<T>::type;
  const int nd = lay.nk + lay.nr;
  const int inner = nd - 1;
  const bool bx = lay.stride[kX][inner] == 0, by = lay.stride[kY][inner] == 0;
  const bool bw = a.w != nullptr && lay.stride[kW][inner] == 0;
  const A wsc = static_cast<A>(a.wsc);
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; p < nv; p += step) {
    const I e = static_cast<I>(p * VEC);
    I off[kNumT];
    decompose_dev<I>(lay, 0, nd, e, a.mask, off);
    const I ox = (a.mask & (1u << kX)) ? off[kX] : (bx ? I(0) : e);
    const I oy = (a.mask & (1u << kY)) ? off[kY] : (by ? I(0) : e);
    Raw<T, VEC> xp, yp, wp;
    load_raw<T, VEC>(a.x, ox, bx, xp);
    load_raw<T, VEC>(a.y, oy, by, yp);
    if (a.w) {
      const I ow = (a.mask & (1u << kW)) ? off[kW] : (bw ? I(0) : e);
      load_raw<T, VEC>(a.w, ow, bw, wp);
    }
    A o[VEC];
    lerp_pack<T, VEC>(xp, yp, wp, a.w != nullptr, wsc, o);
    store_pack<T, VEC>(a.out, e, o);
  }
}

// Layout of a forward with broadcasting in at most 4 collapsed dims and
// 32-bit offsets, for fwd_nd_kernel: the dims count is a template parameter,
// so the index math unrolls and every size, magic number and stride is an
// immediate kernel-parameter operand (no indexed parameter loads).
template <int ND>
struct NdLayout {
  int32_t size[ND];
  uint32_t magic[ND], shift[ND];
  int32_t stride[3][ND];  // x, y, w (0 where broadcast)
  bool vec[3];            // read VEC-wide (else one element per pack: broadcast along the innermost dim)
};

// Offsets of x, y, w at output position e (branch-free: every operand's
// strides are applied, 0 where it is broadcast).
template <int ND>
__device__ __forceinline__ void nd_offsets(const NdLayout<ND>& L, int32_t e, int32_t (&o)[3]) {
  o[0] = o[1] = o[2] = 0;
#pragma unroll
  for (int i = ND - 1; i > 0; --i) {
    const int32_t q = static_cast<int32_t>(fast_div(static_cast<uint32_t>(e), L.magic[i], L.shift[i]));
    const int32_t c = e - q * L.size[i];
#pragma unroll
    for (int t = 0; t < 3; ++t) o[t] += c * L.stride[t][i];
    e = q;
  }
#pragma unroll
  for (int t = 0; t < 3; ++t) o[t] += e * L.stride[t][0];
}

// Forward with broadcasting, ND <= 4 collapsed dims, 32-bit offsets: U
// packs per thread (block b owns packs [b*256*U, (b+1)*256*U)), every load
// issued before any store, no grid-stride loop (the grid covers the packs).
// A pack's offsets come from one unrolled index decomposition (about 7
// instructions per dim); w null: the scalar wsc.
template <typename T, int VEC, int ND, int U>
__global__ void __launch_bounds__(kThreads)
    fwd_nd_kernel(NdLayout<ND> L, const T* __restrict__ x, const T* __restrict__ y, const T* __restrict__ w,
                  typename AccOf<T>::type wsc, T* __restrict__ out, int32_t nv) {
  using A = typename AccOf<T>::type;
  const int32_t base = static_cast<int32_t>(blockIdx.x) * (kThreads * U) + static_cast<int32_t>(threadIdx.x);
  Raw<T, VEC> xp[U], yp[U], wp[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int32_t p = base + u * kThreads;
    if (p < nv) {
      int32_t o[3];
      nd_offsets<ND>(L, p * VEC, o);
      load_raw<T, VEC>(x, o[0], !L.vec[0], xp[u]);
      load_raw<T, VEC>(y, o[1], !L.vec[1], yp[u]);
      if (w) load_raw<T, VEC>(w, o[2], !L.vec[2], wp[u]);
    }
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int32_t p = base + u * kThreads;
    if (p < nv) {
      A r[VEC];
      lerp_pack<T, VEC>(xp[u], yp[u], wp[u], w != nullptr, wsc, r);
      store_pack<T, VEC>(out, p * VEC, r);
    }
  }
}

// Raw values loaded for one position (VEC consecutive along the innermost
// dim): dout, the weight, and x, y when a weight gradient is needed.
template <typename T, int VEC>
struct Vals {
  Raw<T, VEC> g, w, x, y;
};

template <typename T, int VEC, bool XY, typename I>
__device__ __forceinline__ void load_vals(const Layout& lay, const GenArgs<T>& a, int inner, const I (&o)[kNumT],
                                          Vals<T, VEC>& v) {
  if (a.w) load_raw<T, VEC>(a.w, o[kW], lay.stride[kW][inner] == 0, v.w);
  load_raw<T, VEC>(a.g, o[kOut], false, v.g);
  if (XY) {
    load_raw<T, VEC>(a.x, o[kX], lay.stride[kX][inner] == 0, v.x);
    load_raw<T, VEC>(a.y, o[kY], lay.stride[kY][inner] == 0, v.y);
  }
}

// One gradient's values for a position: store the full-size one, add to the
// reduced target's accumulators (per lane), or to target2's (one sum).
template <typename T, int VEC, typename I>
__device__ __forceinline__ void emit(const GenArgs<T>& a, int t, T* full, I off, const typename AccOf<T>::type (&r)[VEC],
                                     typename AccOf<T>::type (&contrib)[VEC], typename AccOf<T>::type& acc2) {
  if (full) store_pack<T, VEC>(full, off, r);
  if (a.target == t) {
#pragma unroll
    for (int k = 0; k < VEC; ++k) contrib[k] += r[k];
  }
  if (a.target2 == t) {
#pragma unroll
    for (int k = 0; k < VEC; ++k) acc2 += r[k];
  }
}

template <typename T, int VEC, bool XY, typename I>
__device__ __forceinline__ void use_vals(const Layout& lay, const GenArgs<T>& a, int inner, const I (&o)[kNumT],
                                         const Vals<T, VEC>& v, typename AccOf<T>::type (&contrib)[VEC],
                                         typename AccOf<T>::type& acc2) {
  using A = typename AccOf<T>::type;
  A r[VEC], g[VEC], w[VEC];
#pragma unroll
  for (int k = 0; k < VEC; ++k) {
    g[k] = raw_at<T, VEC>(v.g, k);
    w[k] = a.w ? raw_at<T, VEC>(v.w, k) : static_cast<A>(a.wsc);
  }
  if (a.dx || a.target == kX || a.target2 == kX) {
#pragma unroll
    for (int k = 0; k < VEC; ++k) r[k] = g[k] * (A(1) - w[k]);
    emit<T, VEC, I>(a, kX, a.dx, o[kOut], r, contrib, acc2);
  }
  if (a.dy || a.target == kY || a.target2 == kY) {
#pragma unroll
    for (int k = 0; k < VEC; ++k) r[k] = g[k] * w[k];
    emit<T, VEC, I>(a, kY, a.dy, o[kOut], r, contrib, acc2);
  }
  if (XY) {
#pragma unroll
    for (int k = 0; k < VEC; ++k) r[k] = g[k] * (raw_at<T, VEC>(v.y, k) - raw_at<T, VEC>(v.x, k));
    emit<T, VEC, I>(a, kW, a.dw, o[kOut], r, contrib, acc2);
  }
}

// Positions r = start, start + step, ... < end over the reduced dims, offset
// by the kept-dims offsets `ok`; B positions per batch, all loads of a batch
// issued before any use.
template <typename T, int VEC, int B, bool XY, typename I>
__device__ __forceinline__ void run_range(const Layout& lay, const GenArgs<T>& a, int inner, const I (&ok)[kNumT],
                                          I start, I end, I step, typename AccOf<T>::type (&acc)[VEC],
                                          typename AccOf<T>::type& acc2) {
  const int rlo = lay.nk, rhi = lay.nk + lay.nr;
  for (I r = start; r < end; r += step * B) {
    I o[B][kNumT];
    Vals<T, VEC> v[B];
#pragma unroll
    for (int u = 0; u < B; ++u) {
      const I ru = r + u * step;
      if (ru < end) {
        decompose_dev<I>(lay, rlo, rhi, ru, a.mask, o[u]);
#pragma unroll
        for (int t = 0; t < kNumT; ++t) o[u][t] += ok[t];
        load_vals<T, VEC, XY, I>(lay, a, inner, o[u], v[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < B; ++u) {
      if (r + u * step < end) use_vals<T, VEC, XY, I>(lay, a, inner, o[u], v[u], acc, acc2);
    }
  }
}

// Backward, reduced dims innermost: grid (P slices of L, kept indices j).
template <typename T, int VEC, int B, bool XY, typename I>
__global__ void __launch_bounds__(kThreads) gen_r_kernel(Layout lay, GenArgs<T> a) {
  using A = typename AccOf<T>::type;
  const int inner = lay.nk + lay.nr - 1;
  for (int64_t j = blockIdx.y; j < lay.M; j += gridDim.y) {
    I ok[kNumT];
    decompose_dev<I>(lay, 0, lay.nk, static_cast<I>(j), a.mask, ok);
    const int64_t r0 = static_cast<int64_t>(blockIdx.x) * a.chunk;
    const int64_t r1 = (r0 + a.chunk < lay.L) ? r0 + a.chunk : lay.L;
    A acc[VEC];
#pragma unroll
    for (int k = 0; k < VEC; ++k) acc[k] = A(0);
    A acc2 = A(0);
    run_range<T, VEC, B, XY, I>(lay, a, inner, ok, static_cast<I>(r0 + static_cast<int64_t>(threadIdx.x) * VEC),
                            static_cast<I>(r1), static_cast<I>(kThreads * VEC), acc, acc2);
    if (a.target >= 0) {
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

// Backward, kept dims innermost: thread per VEC kept indices, grid.y = P
// slices of L. a.subs > 1 (few kept indices, or a short reduced range): a
// block covers tiles of G = kThreads / subs groups, each thread taking
// positions r0 + sub + k * subs of its slice. subs a power of two <= 32
// (32-bit indices, float sums): a group's subs threads are adjacent lanes
// (group t / subs, sub t % subs) and their sums meet in a fixed shuffle
// tree; otherwise thread t handles group t % G, sub t / G, and the sums are
// added in fixed order through shared memory. With a.target2: that
// gradient's per-block sum goes to ws2[blockIdx.y * gridDim.x + blockIdx.x]
// and the slice's target2 index to key2[blockIdx.y].
template <typename T, int VEC, int B, bool XY, typename I>
__global__ void __launch_bounds__(kThreads) gen_k_kernel(Layout lay, GenArgs<T> a) {
  using A = typename AccOf<T>::type;
  const int inner = lay.nk - 1;
  const int64_t ngroups = lay.M / VEC;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * a.chunk;
  const int64_t r1 = (r0 + a.chunk < lay.L) ? r0 + a.chunk : lay.L;
  A acc2 = A(0);
  if (a.subs > 1) {
    // shfl: a group's subs threads are adjacent lanes (sub = t % subs); else they are kThreads / subs
    // apart (sub = t / ng, which keeps the loads of a warp on consecutive packs) and meet in part[].
    const bool shfl = sizeof(I) == 4 && sizeof(A) == 4 && a.subs <= 32 && (a.subs & (a.subs - 1)) == 0;
    __shared__ A part[kThreads * VEC];
    const int ng = kThreads / a.subs;  // groups per tile
    const int t = static_cast<int>(threadIdx.x);
    const int sub = shfl ? t & (a.subs - 1) : t / ng;
    const int gl = shfl ? t / a.subs : t - sub * ng;
    for (int64_t t0 = static_cast<int64_t>(blockIdx.x) * ng; t0 < ngroups; t0 += static_cast<int64_t>(gridDim.x) * ng) {
      const int64_t j = (t0 + gl) * VEC;
      const bool live = t0 + gl < ngroups;
      A acc[VEC];
#pragma unroll
      for (int k = 0; k < VEC; ++k) acc[k] = A(0);
      if (live && sub < a.subs) {
        I ok[kNumT];
        decompose_dev<I>(lay, 0, lay.nk, static_cast<I>(j), a.mask, ok);
        run_range<T, VEC, B, XY, I>(lay, a, inner, ok, static_cast<I>(r0 + sub), static_cast<I>(r1),
                                    static_cast<I>(a.subs), acc, acc2);
      }
      if (shfl) {  // every lane takes part (the loop bounds are block-uniform)
        for (int o = a.subs / 2; o > 0; o >>= 1) {
#pragma unroll
          for (int k = 0; k < VEC; ++k) acc[k] += __shfl_xor_sync(0xffffffffu, acc[k], o);
        }
      } else {
#pragma unroll
        for (int k = 0; k < VEC; ++k) part[t * VEC + k] = acc[k];
        __syncthreads();
        if (live && sub == 0) {
#pragma unroll
          for (int k = 0; k < VEC; ++k) acc[k] = A(0);
          for (int q = 0; q < a.subs; ++q) {
#pragma unroll
            for (int k = 0; k < VEC; ++k) acc[k] += part[(q * ng + gl) * VEC + k];
          }
        }
      }
      if (live && sub == 0) {
        if (a.P == 1) {
          store_pack<T, VEC>(a.tgt, j, acc);
        } else {
#pragma unroll
          for (int k = 0; k < VEC; ++k) a.ws[static_cast<int64_t>(blockIdx.y) * lay.M + j + k] = acc[k];
        }
      }
      if (!shfl) __syncthreads();  // part[] is reused by the next tile
    }
  } else {
    for (int64_t jg = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; jg < ngroups;
         jg += static_cast<int64_t>(gridDim.x) * kThreads) {
      const int64_t j = jg * VEC;
      I ok[kNumT];
      decompose_dev<I>(lay, 0, lay.nk, static_cast<I>(j), a.mask, ok);
      A acc[VEC];
#pragma unroll
      for (int k = 0; k < VEC; ++k) acc[k] = A(0);
      run_range<T, VEC, B, XY, I>(lay, a, inner, ok, static_cast<I>(r0), static_cast<I>(r1), I(1), acc, acc2);
      if (a.P == 1) {
        store_pack<T, VEC>(a.tgt, j, acc);
      } else {
#pragma unroll
        for (int k = 0; k < VEC; ++k) a.ws[static_cast<int64_t>(blockIdx.y) * lay.M + j + k] = acc[k];
      }
    }
  }
  if (a.target2 >= 0) {
    const A s = block_sum(acc2);
    if (threadIdx.x == 0) {
      a.ws2[static_cast<int64_t>(blockIdx.y) * gridDim.x + blockIdx.x] = s;
      if (blockIdx.x == 0) {
        int64_t off[kNumT];
        decompose_dev<int64_t>(lay, lay.nk, lay.nk + lay.nr, r0, 1u << a.target2, off);
        a.key2[blockIdx.y] = off[a.target2];
      }
    }
  }
}

// Fixed-order sums of partials into a reduced gradient. mode 1: thread per
// target, ws [P, M]; 2: warp per target (lanes split P), ws [P, M]; 3: warp
// per target over ws [P, G] where slice p belongs to target keys[p].
template <typename T>
struct FinJob {
  const typename AccOf<T>::type* ws = nullptr;
  const int64_t* keys = nullptr;
  int64_t P = 0, M = 0, G = 1;
  T* tgt = nullptr;
  int mode = 0;
  int64_t blocks = 0;
};

// One target's P partials (stride apart) summed by a warp in fixed order:
// lane l adds partials l, l + 32, ..., then a fixed shuffle tree; lane 0
// holds the sum. Shared by finalize_kernel and rows_kernel's last block, so
// both give the same bits.
template <typename A>
__device__ __forceinline__ A warp_sum_partials(const A* ws, int64_t P, int64_t stride) {
  const int lane = threadIdx.x & 31;
  A s = A(0);
  for (int64_t p = lane; p < P; p += 32) s += __ldcg(ws + p * stride);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  return s;
}

template <typename T>
__device__ __forceinline__ void fin_run(const FinJob<T>& j, int64_t bid) {
  using A = typename AccOf<T>::type;
  if (j.mode == 1) {
    for (int64_t m = bid * kThreads + threadIdx.x; m < j.M; m += j.blocks * kThreads) {
      A s = A(0);
      for (int64_t p = 0; p < j.P; ++p) s += j.ws[p * j.M + m];
      j.tgt[m] = cvt_out<T>(s);
    }
    return;
  }
  const int lane = threadIdx.x & 31;
  const int64_t warps = j.blocks * (kThreads / 32);
  for (int64_t m = bid * (kThreads / 32) + (threadIdx.x >> 5); m < j.M; m += warps) {
    A s = A(0);
    if (j.mode == 2) {
      s = warp_sum_partials<A>(j.ws + m, j.P, j.M);
    } else {
      for (int64_t p = lane; p < j.P; p += 32) {
        if (j.keys[p] != m) continue;
        for (int64_t q = 0; q < j.G; ++q) s += j.ws[p * j.G + q];
      }
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    }
    if (lane == 0) j.tgt[m] = cvt_out<T>(s);
  }
}

// Up to two finalize jobs in one launch: blocks [0, a.blocks) run a, the rest b.
template <typename T>
__global__ void __launch_bounds__(kThreads) finalize_kernel(FinJob<T> a, FinJob<T> b) {
  if (static_cast<int64_t>(blockIdx.x) < a.blocks) {
    fin_run<T>(a, blockIdx.x);
  } else {
    fin_run<T>(b, static_cast<int64_t>(blockIdx.x) - a.blocks);
  }
}

// ------------------------------------------------------- rows and cols --
// What the rows and cols kernels share: one reduced gradient (tgt) summed
// along dout's rows or down its columns, full-size dx, dy written on the way
// (null: not), the weight a scalar wsc or w[i * w_step] for row or column i.
template <typename T>
struct SumArgs {
  const T* g = nullptr;
  const T* x = nullptr;  // XY only
  const T* y = nullptr;
  const T* w = nullptr;
  int64_t w_step = 0;
  double wsc = 0.0;
  bool sum_lo = true;  // !XY: summed product g*(1-w) (x's gradient), else g*w
  T* dx = nullptr;
  T* dy = nullptr;
  T* tgt = nullptr;  // the reduced gradient, [M]
  int64_t M = 1, L = 1;
};

// The raw packs of one position (dout; x and y when XY) at offset e.
template <typename T, int VEC, bool XY, typename I>
__device__ __forceinline__ void load_sum_pack(const T* g, const T* x, const T* y, I e, Raw<T, VEC>& gp,
                                              Raw<T, VEC>& xp, Raw<T, VEC>& yp) {
  load_raw<T, VEC>(g, e, false, gp);
  if (XY) {
    load_raw<T, VEC>(x, e, false, xp);
    load_raw<T, VEC>(y, e, false, yp);
  }
}

// The weights of a pack and the coefficients of the summed product (!XY:
// 1 - w for x's gradient, else w).
template <typename A, int VEC>
struct PackWeights {
  A w[VEC], cs[VEC];
  __device__ __forceinline__ void set(int k, A wk, bool sum_lo) {
    w[k] = wk;
    cs[k] = sum_lo ? A(1) - wk : wk;
  }
};

// One position of the rows and cols kernels: adds the summed product (XY:
// g*(y-x); else g*cs) to acc and writes dx, dy (when not null) at e.
template <typename T, int VEC, bool XY, typename I>
__device__ __forceinline__ void use_sum_pack(const Raw<T, VEC>& gp, const Raw<T, VEC>& xp, const Raw<T, VEC>& yp,
                                             const PackWeights<typename AccOf<T>::type, VEC>& pw,
                                             typename AccOf<T>::type (&acc)[VEC], T* dx, T* dy, I e) {
  using A = typename AccOf<T>::type;
  const A(&w)[VEC] = pw.w;
  A gv[VEC], o[VEC];
#pragma unroll
  for (int k = 0; k < VEC; ++k) {
    gv[k] = raw_at<T, VEC>(gp, k);
    acc[k] += XY ? gv[k] * (raw_at<T, VEC>(yp, k) - raw_at<T, VEC>(xp, k)) : gv[k] * pw.cs[k];
  }
  if (dx) {
#pragma unroll
    for (int k = 0; k < VEC; ++k) o[k] = gv[k] * (A(1) - w[k]);
    store_pack<T, VEC>(dx, e, o);
  }
  if (dy) {
#pragma unroll
    for (int k = 0; k < VEC; ++k) o[k] = gv[k] * w[k];
    store_pack<T, VEC>(dy, e, o);
  }
}

// ------------------------------------------------------------------ rows --
// Backward with one reduced gradient summed over dout viewed as [M rows, L]
// (contiguous rows: x [16,1,1,1] vs y [16,3,224,224] gives 16 rows of
// 150528; x, y [16,102400] with w [1] one row of 1.6 M), the weight constant
// along each row (a scalar, or w[j * w_step]). The summed product is x's
// g*(1-w), y's g*w, or with XY the weight's g*(y-x) (x, y laid out like
// dout); dx, dy, when not null, are written full size on the way. Block
// (p, j) covers packs [p*chunk, (p+1)*chunk) of row j, U packs per thread
// per step with all loads issued first; no index math beyond a row offset.
// P == 1: the block writes tgt[j]. P > 1: its block sum goes to
// ws[p * M + j]; with `cnt` (per-row ticket counters, zero on entry) the
// last block of a row to finish adds the row's partials in fixed order
// (warp_sum_partials) and sets the counter back to zero, so no second launch
// is needed; without (stream capture), finalize_kernel does the same sums.
template <typename T>
struct RowArgs : SumArgs<T> {
  typename AccOf<T>::type* ws = nullptr;  // [P, M] partials when P > 1
  unsigned* cnt = nullptr;                // [M] ticket counters (P > 1), or null: finalize
  int64_t chunk = 1;                      // slice length (elements)
  int P = 1;
};

template <typename T, int VEC, int U, bool XY, typename I>
__global__ void __launch_bounds__(kThreads) rows_kernel(RowArgs<T> a) {
  using A = typename AccOf<T>::type;
  const I lv = static_cast<I>(a.L / VEC), cv = static_cast<I>(a.chunk / VEC);
  const I p0 = static_cast<I>(blockIdx.x) * cv;
  const I p1 = p0 + cv < lv ? p0 + cv : lv;
  __shared__ bool last;
  for (int64_t j = blockIdx.y; j < a.M; j += gridDim.y) {
    const A wj = a.w ? cvt_in(a.w[j * a.w_step]) : static_cast<A>(a.wsc);
    PackWeights<A, VEC> pw;
    A acc[VEC];
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
      pw.set(k, wj, a.sum_lo);
      acc[k] = A(0);
    }
    const int64_t row = j * a.L;
    const T *g = a.g + row, *x = XY ? a.x + row : nullptr, *y = XY ? a.y + row : nullptr;
    T *dx = a.dx ? a.dx + row : nullptr, *dy = a.dy ? a.dy + row : nullptr;
#pragma unroll 1
    for (I q = p0 + static_cast<I>(threadIdx.x); q < p1; q += kThreads * U) {
      Raw<T, VEC> gp[U], xp[XY ? U : 1], yp[XY ? U : 1];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (q + u * kThreads < p1)
          load_sum_pack<T, VEC, XY, I>(g, x, y, (q + u * kThreads) * VEC, gp[u], xp[XY ? u : 0], yp[XY ? u : 0]);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (q + u * kThreads < p1)
          use_sum_pack<T, VEC, XY, I>(gp[u], xp[XY ? u : 0], yp[XY ? u : 0], pw, acc, dx, dy, (q + u * kThreads) * VEC);
      }
    }
    A s = A(0);
#pragma unroll
    for (int k = 0; k < VEC; ++k) s += acc[k];
    s = block_sum(s);
    if (a.P == 1) {
      if (threadIdx.x == 0) a.tgt[j] = cvt_out<T>(s);
      continue;
    }
    if (threadIdx.x == 0) {
      a.ws[static_cast<int64_t>(blockIdx.x) * a.M + j] = s;
      if (a.cnt) {
        __threadfence();  // the partial is visible before the ticket is taken
        last = atomicAdd(a.cnt + j, 1u) == static_cast<unsigned>(a.P - 1);
      }
    }
    if (!a.cnt) continue;
    __syncthreads();
    if (last && threadIdx.x < 32) {
      __threadfence();  // every other block's partial is read after its ticket
      const A t = warp_sum_partials<A>(a.ws + j, a.P, a.M);
      if (threadIdx.x == 0) {
        a.tgt[j] = cvt_out<T>(t);
        a.cnt[j] = 0u;  // ready for the stream's next launch
      }
    }
  }
}

// ------------------------------------------------------------------ cols --
// Backward with one reduced gradient summed down the columns of dout viewed
// as [L rows, M columns] row-major (x [3,224,224] vs y [16,3,224,224]: 16
// rows of 150528), the weight constant down each column (a scalar, or
// w[c * w_step]), for the weight's gradient x and y laid out like dout. A
// column pack (VEC columns) belongs to `subs` adjacent lanes (a power of two
// <= 32), lane `sub` taking rows sub, sub + subs, ..., U rows per step with
// all loads issued first; the lanes' sums meet in a fixed shuffle tree and
// the first lane writes tgt. One pass, no slices, no index math beyond
// row * M + column; dx, dy (when not null) written full size on the way.
template <typename T>
struct ColArgs : SumArgs<T> {
  int subs = 1;
};

template <typename T, int VEC, int U, bool XY, typename I>
__global__ void __launch_bounds__(kThreads) cols_kernel(ColArgs<T> a) {
  using A = typename AccOf<T>::type;
  const int sub = static_cast<int>(threadIdx.x) & (a.subs - 1);
  const I grp = static_cast<I>((static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x) / a.subs);
  const bool live = grp < static_cast<I>(a.M / VEC);
  const I c = grp * VEC, m = static_cast<I>(a.M), nr = static_cast<I>(a.L);
  A acc[VEC];
#pragma unroll
  for (int k = 0; k < VEC; ++k) acc[k] = A(0);
  if (live) {
    Raw<T, VEC> wp;
    if (a.w) load_raw<T, VEC>(a.w, c * static_cast<I>(a.w_step), a.w_step == 0, wp);
    PackWeights<A, VEC> pw;
#pragma unroll
    for (int k = 0; k < VEC; ++k) pw.set(k, a.w ? raw_at<T, VEC>(wp, k) : static_cast<A>(a.wsc), a.sum_lo);
    const I step = static_cast<I>(a.subs);
#pragma unroll 1
    for (I r = sub; r < nr; r += step * U) {
      Raw<T, VEC> gp[U], xp[XY ? U : 1], yp[XY ? U : 1];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (r + u * step < nr)
          load_sum_pack<T, VEC, XY, I>(a.g, a.x, a.y, (r + u * step) * m + c, gp[u], xp[XY ? u : 0], yp[XY ? u : 0]);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (r + u * step < nr)
          use_sum_pack<T, VEC, XY, I>(gp[u], xp[XY ? u : 0], yp[XY ? u : 0], pw, acc, a.dx, a.dy, (r + u * step) * m + c);
      }
    }
  }
  for (int o = a.subs / 2; o > 0; o >>= 1) {  // every lane takes part (subs is uniform)
#pragma unroll
    for (int k = 0; k < VEC; ++k) acc[k] += __shfl_xor_sync(0xffffffffu, acc[k], o);
  }
  if (live && sub == 0) store_pack<T, VEC>(a.tgt, c, acc);
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

// Resident 256-thread blocks per SM for a kernel (cached per kernel).
inline int blocks_per_sm(const void* kernel) {
  static std::mutex mu;
  static std::map<const void*, int> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(kernel);
  if (it != cache.end()) return it->second;
  int nb = 0;
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, kernel, kThreads, 0), "cudaOccupancy");
  nb = nb > 0 ? nb : 1;
  cache[kernel] = nb;
  return nb;
}

// Blocks in one wave of a kernel.
inline int64_t wave_of(const void* kernel) { return int64_t(sm_count()) * blocks_per_sm(kernel); }

inline int env_int(const char* name, int dflt) {
  const char* e = std::getenv(name);
  return e ? std::atoi(e) : dflt;
}

// Block cap for the grid-stride flat kernels: SMs x LERP_BLOCKS_PER_SM
// (default 0 = no cap). Read once.
inline int64_t grid_cap() {
  static const int per_sm = env_int("LERP_BLOCKS_PER_SM", 0);
  return per_sm > 0 ? int64_t(sm_count()) * per_sm : (int64_t(1) << 30);
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Contig tensors below this many elements index in 32 bits (every index,
// plus one grid stride, stays below 2^31).
constexpr int64_t kContig32 = int64_t(1) << 29;

// Packs per thread U of the flat kernels (contig, nd): 1 while one pack
// per thread fits in one wave (wave[0] blocks); `large` for tensors of more
// than 4 such waves (contig: 1, measured best there; nd: 2, which halves its
// per-thread set-up: 38.4 vs 43.1 us for the f16 middle-dims forward on an
// H200); otherwise the smallest U in {2, 4} whose grid fits in one wave of
// that kernel (wave[1], wave[2]), so that all of a thread's loads are in
// flight at once and no block waits for a second wave; `none` (1 or 2) if
// none fits. LERP_PACKS=1, 2 or 4 forces U (read once).
inline int packs_per_thread(int64_t packs, const int64_t (&wave)[3], int large, int none = 1) {
  static const int forced = env_int("LERP_PACKS", 0);
  if (forced == 1 || forced == 2 || forced == 4) return forced;
  const int64_t b1 = ceil_div(packs, kThreads);
  if (b1 <= wave[0]) return 1;
  if (b1 > 4 * wave[0]) return large;
  if (ceil_div(packs, int64_t(kThreads) * 2) <= wave[1]) return 2;
  if (ceil_div(packs, int64_t(kThreads) * 4) <= wave[2]) return 4;
  return none;
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

// Largest offset tensor t reaches over the layout.
inline int64_t max_offset(const Layout& lay, int t) {
  int64_t m = 0;
  for (int i = 0; i < lay.nk + lay.nr; ++i) m += (lay.size[i] - 1) * lay.stride[t][i];
  return m;
}

// Every index and offset of the layout below 2^31 (with headroom for steps)?
inline bool small_layout(const Layout& lay) {
  const int64_t lim = (int64_t(1) << 31) - (int64_t(1) << 20);
  bool small = lay.M < lim && lay.L < lim && lay.M * lay.L < lim;
  for (int i = 0; i < lay.nk + lay.nr; ++i) small = small && lay.size[i] < (int64_t(1) << 31);
  for (int t = 0; t < kNumT; ++t) small = small && max_offset(lay, t) < (int64_t(1) << 31) - 16;
  return small;
}

template <typename T>
__host__ __device__ constexpr int vec_of() {
  return static_cast<int>(16 / sizeof(T));
}

template <typename T, bool FWD, int VEC, int U, typename I>
void contig_launch(int64_t blocks, const T* a0, const T* x, const T* y, const T* w, int wmode, double wsc,
                   T* o0, T* o1, T* o2, int64_t n64, cudaStream_t stream) {
  using A = typename AccOf<T>::type;
  const A ws = static_cast<A>(wsc);
  const I n = static_cast<I>(n64);
  const unsigned g = static_cast<unsigned>(blocks);
  if (FWD && o1) {  // training forward, weight needing a gradient: full weight
    fwd_contig_kernel<T, VEC, 1, true, true, I><<<g, kThreads, 0, stream>>>(x, y, w, wmode, ws, o0, o1, n);
  } else if (FWD && wmode == 2) {
    fwd_contig_kernel<T, VEC, U, true, false, I><<<g, kThreads, 0, stream>>>(x, y, w, wmode, ws, o0, nullptr, n);
  } else if (FWD) {
    fwd_contig_kernel<T, VEC, U, false, false, I><<<g, kThreads, 0, stream>>>(x, y, w, wmode, ws, o0, nullptr, n);
  } else if (o2 && x) {  // weight gradient: full weight
    bwd_contig_kernel<T, VEC, 1, true, kDwXY, I><<<g, kThreads, 0, stream>>>(a0, x, y, w, wmode, ws, o0, o1, o2, n);
  } else if (o2) {
    bwd_contig_kernel<T, VEC, 1, true, kDwDiff, I><<<g, kThreads, 0, stream>>>(a0, x, y, w, wmode, ws, o0, o1, o2, n);
  } else if (wmode == 2) {
    bwd_contig_kernel<T, VEC, U, true, kDwNone, I><<<g, kThreads, 0, stream>>>(a0, x, y, w, wmode, ws, o0, o1, o2, n);
  } else {
    bwd_contig_kernel<T, VEC, U, false, kDwNone, I><<<g, kThreads, 0, stream>>>(a0, x, y, w, wmode, ws, o0, o1, o2, n);
  }
}

// The int32_t contig kernel for U packs per thread, as a pointer (for occupancy).
template <typename T, bool FWD, int V, int U>
const void* contig_kernel_ptr(bool wfull) {
  if (FWD) {
    return wfull ? reinterpret_cast<const void*>(&fwd_contig_kernel<T, V, U, true, false, int32_t>)
                 : reinterpret_cast<const void*>(&fwd_contig_kernel<T, V, U, false, false, int32_t>);
  }
  return wfull ? reinterpret_cast<const void*>(&bwd_contig_kernel<T, V, U, true, kDwNone, int32_t>)
               : reinterpret_cast<const void*>(&bwd_contig_kernel<T, V, U, false, kDwNone, int32_t>);
}

// Aligned contig launch with V-element packs; I = int32_t for tensors of
// fewer than kContig32 elements (fewer registers: U > 1 fits in one wave
// more often), int64_t (one pack per thread) beyond.
template <typename T, bool FWD, int V, typename I>
void launch_contig_packs(const T* a0, const T* x, const T* y, const T* w, int wmode, double wsc, T* o0, T* o1,
                         T* o2, int64_t n, cudaStream_t stream) {
  const int64_t packs = std::max<int64_t>(1, n / V);
  int u = 1;
  if constexpr (std::is_same_v<I, int32_t>) {
    const bool wf = wmode == 2;
    const int64_t wave[3] = {wave_of(contig_kernel_ptr<T, FWD, V, 1>(wf)),
                             wave_of(contig_kernel_ptr<T, FWD, V, 2>(wf)),
                             wave_of(contig_kernel_ptr<T, FWD, V, 4>(wf))};
    // The dw and diff variants (tensor weight needing a gradient) run one pack per thread.
    u = (FWD ? o1 != nullptr : o2 != nullptr) ? 1 : packs_per_thread(packs, wave, 1);
  }
  const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>(ceil_div(packs, int64_t(kThreads) * u), grid_cap()));
  if constexpr (std::is_same_v<I, int32_t>) {
    if (u == 4) return contig_launch<T, FWD, V, 4, I>(blocks, a0, x, y, w, wmode, wsc, o0, o1, o2, n, stream);
    if (u == 2) return contig_launch<T, FWD, V, 2, I>(blocks, a0, x, y, w, wmode, wsc, o0, o1, o2, n, stream);
  }
  contig_launch<T, FWD, V, 1, I>(blocks, a0, x, y, w, wmode, wsc, o0, o1, o2, n, stream);
}

// Contig pass: forward reads x, y (w), writes o0 = out and, when o1 is not
// null, o1 = y - x; backward reads a0 = dout (w; x, y for dw) and writes
// o0 = dx, o1 = dy, o2 = dw (each may be null).
template <typename T, bool FWD>
void launch_contig(const T* a0, const T* x, const T* y, const T* w, int wmode, double wsc, T* o0, T* o1, T* o2,
                   int64_t n, cudaStream_t stream) {
  constexpr int V = vec_of<T>();
  bool al = aligned16(a0) && aligned16(o0) && aligned16(o1) && aligned16(o2) && (wmode != 2 || aligned16(w));
  if (FWD) al = al && aligned16(x) && aligned16(y);
  if (!FWD && o2) al = al && aligned16(x) && aligned16(y);
  const bool small = n < kContig32;
  if (!al) {  // rare: scalar loads, one element per thread
    const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>(ceil_div(n, kThreads), grid_cap()));
    contig_launch<T, FWD, 1, 1, int64_t>(blocks, a0, x, y, w, wmode, wsc, o0, o1, o2, n, stream);
  } else if (!small) {
    launch_contig_packs<T, FWD, V, int64_t>(a0, x, y, w, wmode, wsc, o0, o1, o2, n, stream);
  } else {
    launch_contig_packs<T, FWD, V, int32_t>(a0, x, y, w, wmode, wsc, o0, o1, o2, n, stream);
  }
  check_cuda(cudaGetLastError(), "contig kernel launch");
}

// fwd_nd_kernel launch for a layout of ND dims with 32-bit offsets; U packs
// per thread from packs_per_thread (2 for large tensors; for small ones more
// than one where that makes the grid a single wave, and 2 with a tensor
// weight).
template <typename T, int VEC, int ND>
void nd_launch(const Layout& lay, const GenArgs<T>& a, int64_t n, cudaStream_t stream) {
  using A = typename AccOf<T>::type;
  NdLayout<ND> L;
  const T* ptr[3] = {a.x, a.y, a.w};
  for (int i = 0; i < ND; ++i) {
    L.size[i] = static_cast<int32_t>(lay.size[i]);
    L.magic[i] = lay.magic[i];
    L.shift[i] = lay.shift[i];
    for (int t = 0; t < 3; ++t) L.stride[t][i] = ptr[t] ? static_cast<int32_t>(lay.stride[kX + t][i]) : 0;
  }
  for (int t = 0; t < 3; ++t) L.vec[t] = VEC > 1 && L.stride[t][ND - 1] != 0;
  const int64_t nv = n / VEC;
  const unsigned b1 = static_cast<unsigned>(std::max<int64_t>(1, ceil_div(nv, kThreads)));
  const A wsc = static_cast<A>(a.wsc);
  const int32_t nv32 = static_cast<int32_t>(nv);
  if constexpr (VEC > 1) {
    const int64_t wave[3] = {wave_of(reinterpret_cast<const void*>(&fwd_nd_kernel<T, VEC, ND, 1>)),
                             wave_of(reinterpret_cast<const void*>(&fwd_nd_kernel<T, VEC, ND, 2>)),
                             wave_of(reinterpret_cast<const void*>(&fwd_nd_kernel<T, VEC, ND, 4>))};
    // A gathered tensor weight (a third load per pack) runs 2 packs per
    // thread when no U fits in one wave: x [16,1,1,1], y [16,3,224,224],
    // w [3,1,224] 6.2-6.4 vs 6.6-6.8 us kernel time with 1 on an H200
    // (a scalar weight's x [16,1,1,1] case is 0.3 us slower with 2).
    const int u = packs_per_thread(nv, wave, 2, a.w ? 2 : 1);
    const unsigned blocks = static_cast<unsigned>(std::max<int64_t>(1, ceil_div(nv, int64_t(kThreads) * u)));
    if (u == 4) {
      fwd_nd_kernel<T, VEC, ND, 4><<<blocks, kThreads, 0, stream>>>(L, a.x, a.y, a.w, wsc, a.out, nv32);
      return;
    }
    if (u == 2) {
      fwd_nd_kernel<T, VEC, ND, 2><<<blocks, kThreads, 0, stream>>>(L, a.x, a.y, a.w, wsc, a.out, nv32);
      return;
    }
  }
  fwd_nd_kernel<T, VEC, ND, 1><<<b1, kThreads, 0, stream>>>(L, a.x, a.y, a.w, wsc, a.out, nv32);
}

template <typename T, int VEC>
void nd_pick(const Layout& lay, const GenArgs<T>& a, int64_t n, cudaStream_t stream) {
  switch (lay.nk + lay.nr) {
    case 1:
      return nd_launch<T, VEC, 1>(lay, a, n, stream);
    case 2:
      return nd_launch<T, VEC, 2>(lay, a, n, stream);
    case 3:
      return nd_launch<T, VEC, 3>(lay, a, n, stream);
    default:
      return nd_launch<T, VEC, 4>(lay, a, n, stream);
  }
}

// Forward with broadcasting (layout with nothing reduced: all dims in R):
// fwd_nd_kernel for layouts of up to 4 collapsed dims with 32-bit offsets
// (nearly all), else fwd_bcast_kernel. LERP_FWD_ND=0 sends every layout to
// fwd_bcast_kernel (read once; for experiments).
template <typename T>
void launch_bcast_fwd(const Layout& lay, GenArgs<T> a, int64_t n, cudaStream_t stream) {
  constexpr int V = vec_of<T>();
  const int nd = lay.nk + lay.nr;
  const int inner = nd - 1;
  const bool used[kNumT] = {true, true, true, a.w != nullptr};
  const bool al = aligned16(a.x) && aligned16(a.y) && aligned16(a.w) && aligned16(a.out);
  const bool vec = al && vec_ok(lay, inner, V, used);
  const bool small = small_layout(lay);
  static const int nd_on = env_int("LERP_FWD_ND", 1);
  if (nd_on && small && nd <= 4) {
    if (vec) {
      nd_pick<T, V>(lay, a, n, stream);
    } else {
      nd_pick<T, 1>(lay, a, n, stream);
    }
    check_cuda(cudaGetLastError(), "bcast forward (nd) kernel launch");
    return;
  }
  // Decompose only for tensors that are neither laid out like out nor a single element.
  a.mask = 0;
  for (int t = kX; t < kNumT; ++t) {
    if (!used[t]) continue;
    bool full = true, zero = true;
    for (int i = 0; i < nd; ++i) {
      full = full && lay.stride[t][i] == lay.stride[kOut][i];
      zero = zero && lay.stride[t][i] == 0;
    }
    if (!full && !zero) a.mask |= 1u << t;
  }
  const int v = vec ? V : 1;
  const int64_t nv = n / v;
  const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>(ceil_div(nv, kThreads), grid_cap()));
  if (vec && small) {
    fwd_bcast_kernel<T, V, int32_t><<<blocks, kThreads, 0, stream>>>(lay, a, nv);
  } else if (vec) {
    fwd_bcast_kernel<T, V, int64_t><<<blocks, kThreads, 0, stream>>>(lay, a, nv);
  } else if (small) {
    fwd_bcast_kernel<T, 1, int32_t><<<blocks, kThreads, 0, stream>>>(lay, a, nv);
  } else {
    fwd_bcast_kernel<T, 1, int64_t><<<blocks, kThreads, 0, stream>>>(lay, a, nv);
  }
  check_cuda(cudaGetLastError(), "bcast forward kernel launch");
}

// Does the reduction of `target` over this layout run as gen_r (its reduced
// dims innermost, or nothing kept)? Else gen_k.
inline bool reduced_inner(const Layout& lay, int target) {
  const int nd = lay.nk + lay.nr;
  return target < 0 || (lay.nr > 0 && lay.stride[kOut][nd - 1] == 1 && lay.L >= 256) || lay.nk == 0;
}

template <typename T, int VEC, int B, bool XY, typename I>
struct GenKernels {
  static const void* ptr(bool kept_inner) {
    return kept_inner ? reinterpret_cast<const void*>(&gen_k_kernel<T, VEC, B, XY, I>)
                      : reinterpret_cast<const void*>(&gen_r_kernel<T, VEC, B, XY, I>);
  }
  static void launch(bool kept_inner, dim3 grid, const Layout& lay, const GenArgs<T>& a, cudaStream_t stream) {
    if (kept_inner) {
      gen_k_kernel<T, VEC, B, XY, I><<<grid, kThreads, 0, stream>>>(lay, a);
    } else {
      gen_r_kernel<T, VEC, B, XY, I><<<grid, kThreads, 0, stream>>>(lay, a);
    }
  }
};

// The gen kernel instantiation: vectorized or not, 32- or 64-bit indices,
// and whether x and y are read (a weight gradient). Positions per batch: 4
// for 32-bit vectorized passes without x, y (measured on an H200: 13.0 vs
// 15.4 us for the [16,1,1,1] x [16,3,224,224] backward); 1 otherwise (with
// x, y the batch's registers cost more than it gained: 16.9 vs 18.1 us for
// [16,102400] with w [1]).
template <typename T>
struct GenPick {
  bool kept_inner, vec, small, xy;
  template <bool XY>
  const void* ptr_xy() const {
    constexpr int V = vec_of<T>();
    if (!small) return vec ? GenKernels<T, V, 1, XY, int64_t>::ptr(kept_inner) : GenKernels<T, 1, 1, XY, int64_t>::ptr(kept_inner);
    if (!vec) return GenKernels<T, 1, 1, XY, int32_t>::ptr(kept_inner);
    return GenKernels<T, V, XY ? 1 : 4, XY, int32_t>::ptr(kept_inner);
  }
  template <bool XY>
  void launch_xy(dim3 grid, const Layout& lay, const GenArgs<T>& a, cudaStream_t stream) const {
    constexpr int V = vec_of<T>();
    if (!small) {
      if (vec) {
        GenKernels<T, V, 1, XY, int64_t>::launch(kept_inner, grid, lay, a, stream);
      } else {
        GenKernels<T, 1, 1, XY, int64_t>::launch(kept_inner, grid, lay, a, stream);
      }
    } else if (!vec) {
      GenKernels<T, 1, 1, XY, int32_t>::launch(kept_inner, grid, lay, a, stream);
    } else {
      GenKernels<T, V, XY ? 1 : 4, XY, int32_t>::launch(kept_inner, grid, lay, a, stream);
    }
  }
  const void* kernel() const { return xy ? ptr_xy<true>() : ptr_xy<false>(); }
  void launch(dim3 grid, const Layout& lay, const GenArgs<T>& a, cudaStream_t stream) const {
    if (xy) {
      launch_xy<true>(grid, lay, a, stream);
    } else {
      launch_xy<false>(grid, lay, a, stream);
    }
  }
};

// Smallest divisor of e that is >= c (e itself when c > e).
inline int64_t divisor_at_least(int64_t e, int64_t c) {
  if (c >= e) return e;
  for (int64_t d = std::max<int64_t>(c, 1); d < e; ++d)
    if (e % d == 0) return d;
  return e;
}

// Per-(device, stream) ticket counters of rows_kernel: kRowCounters zeroed
// once on the stream when first asked for, and left at zero by every launch
// that uses them, so the stream's launches (which run one after another)
// share them. Null, so that the caller falls back to a finalize launch, when
// more rows are needed or the stream is being captured into a graph (a graph
// may be replayed on another stream, concurrently with this one's work).
// LERP_ROW_COUNTERS=0 always returns null (read once; for experiments).
constexpr int64_t kRowCounters = 8192;

inline unsigned* row_counters(cudaStream_t stream, int64_t rows) {
  static const int on = env_int("LERP_ROW_COUNTERS", 1);
  if (!on || rows > kRowCounters) return nullptr;
  cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &cap) != cudaSuccess) {
    (void)cudaGetLastError();  // e.g. the legacy stream while another one captures: treat as capturing
    return nullptr;
  }
  if (cap != cudaStreamCaptureStatusNone) return nullptr;
  int dev = 0;
  check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
  static std::mutex mu;
  static std::map<std::pair<int, cudaStream_t>, unsigned*> pool;  // kept for the process's life
  std::lock_guard<std::mutex> lock(mu);
  auto it = pool.find({dev, stream});
  if (it != pool.end()) return it->second;
  // Relaxed capture mode: allocating here must not invalidate another thread's graph capture.
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  check_cuda(cudaThreadExchangeStreamCaptureMode(&mode), "cudaThreadExchangeStreamCaptureMode");
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, sizeof(unsigned) * kRowCounters);
  check_cuda(cudaThreadExchangeStreamCaptureMode(&mode), "cudaThreadExchangeStreamCaptureMode");
  check_cuda(e, "cudaMalloc (row counters)");
  check_cuda(cudaMemsetAsync(p, 0, sizeof(unsigned) * kRowCounters, stream), "cudaMemsetAsync (row counters)");
  pool[{dev, stream}] = static_cast<unsigned*>(p);
  return static_cast<unsigned*>(p);
}

// Can this backward pass run as rows_kernel? One reduced gradient (nothing
// fused) whose reduced positions are the innermost, contiguous ones of dout
// (dout is [M, L] row-major), a weight constant along each row, and for the
// weight's gradient x and y laid out like dout. LERP_ROWS=0 sends these to
// gen_r (read once; for experiments).
template <typename T>
bool rows_apply(const Layout& lay, const GenArgs<T>& a) {
  static const int on = env_int("LERP_ROWS", 1);
  if (!on || a.target < 0 || a.target2 >= 0 || (a.target != kW && a.dw != nullptr)) return false;
  const int nd = lay.nk + lay.nr;
  if (lay.nr != 1 || lay.nk > 1 || lay.stride[kOut][nd - 1] != 1 || !reduced_inner(lay, a.target)) return false;
  if (lay.nk == 1 && lay.stride[kOut][0] != lay.L) return false;
  if (a.w && lay.stride[kW][nd - 1] != 0) return false;
  if (a.target == kW) {
    for (int i = 0; i < nd; ++i)
      if (lay.stride[kX][i] != lay.stride[kOut][i] || lay.stride[kY][i] != lay.stride[kOut][i]) return false;
  }
  return true;
}

template <typename T, int VEC, bool XY>
struct RowKernels {
  template <int U>
  static const void* ptr(bool i64) {
    return i64 ? reinterpret_cast<const void*>(&rows_kernel<T, VEC, U, XY, int64_t>)
               : reinterpret_cast<const void*>(&rows_kernel<T, VEC, U, XY, int32_t>);
  }
  template <int U>
  static void launch(bool i64, dim3 grid, const RowArgs<T>& r, cudaStream_t stream) {
    if (i64) {
      rows_kernel<T, VEC, U, XY, int64_t><<<grid, kThreads, 0, stream>>>(r);
    } else {
      rows_kernel<T, VEC, U, XY, int32_t><<<grid, kThreads, 0, stream>>>(r);
    }
  }
};

// rows_kernel's packs per thread per step U and slices per row P: the
// smallest U in {1, 2, 4} whose grid of one step per thread (P = packs per
// row / (256 U)) fits in one wave of that kernel (H200, x [16,1,1,1] w 0.5:
// U = 4, 7.5 us kernel time, against 10.3 with 2 and 11.4 with 1 on 66cbc9d,
// docs/ops/diagnostics/h200/rows/rows_LERP_ROWS_PACKS*); otherwise
// U = 4 and P equal slices such that the grid is about one wave (P = 1 when
// the rows alone fill it). LERP_ROWS_PACKS=1, 2 or 4 forces U (read once).
template <typename T, int VEC, bool XY>
void rows_launch(RowArgs<T> r, const Alloc& alloc, cudaStream_t stream) {
  using K = RowKernels<T, VEC, XY>;
  static const int forced = env_int("LERP_ROWS_PACKS", 0);
  const bool i64 = r.L >= (int64_t(1) << 30);
  const int64_t lv = r.L / VEC;
  const int64_t gy = std::min<int64_t>(r.M, 65535);
  const int us[3] = {1, 2, 4};
  const int64_t wave[3] = {wave_of(K::template ptr<1>(i64)), wave_of(K::template ptr<2>(i64)),
                           wave_of(K::template ptr<4>(i64))};
  int k = -1;
  for (int i = 0; i < 3 && k < 0; ++i) {
    const int64_t s1 = ceil_div(lv, int64_t(kThreads) * us[i]);  // one-step slices per row
    if ((forced == 0 && s1 * gy <= wave[i]) || forced == us[i]) k = i;
  }
  int64_t cp = int64_t(kThreads) * us[k < 0 ? 2 : k];  // packs per slice: one step
  if (k < 0) {  // big rows: U = 4 and P slices (of one or more steps), about one wave in all
    k = 2;
    cp = ceil_div(lv, std::max<int64_t>(1, std::min<int64_t>(ceil_div(lv, cp), ceil_div(wave[k], gy))));
  }
  r.chunk = std::max<int64_t>(1, cp) * VEC;
  r.P = static_cast<int>(std::max<int64_t>(1, ceil_div(lv, cp)));
  if (r.P > 1) {
    r.ws = static_cast<typename AccOf<T>::type*>(alloc(sizeof(typename AccOf<T>::type) * r.P * r.M));
    r.cnt = row_counters(stream, r.M);
  }
  const dim3 grid(static_cast<unsigned>(r.P), static_cast<unsigned>(gy));
  if (us[k] == 1) {
    K::template launch<1>(i64, grid, r, stream);
  } else if (us[k] == 2) {
    K::template launch<2>(i64, grid, r, stream);
  } else {
    K::template launch<4>(i64, grid, r, stream);
  }
  check_cuda(cudaGetLastError(), "rows kernel launch");
  if (r.P > 1 && !r.cnt) {  // fixed-order sums of the partials by a second launch, as gen_r's
    FinJob<T> f, none;
    f.ws = r.ws;
    f.P = r.P;
    f.M = r.M;
    f.tgt = r.tgt;
    f.mode = 2;
    f.blocks = std::max<int64_t>(1, std::min<int64_t>(ceil_div(r.M, kThreads / 32), int64_t(sm_count()) * 8));
    finalize_kernel<T><<<static_cast<unsigned>(f.blocks), kThreads, 0, stream>>>(f, none);
    check_cuda(cudaGetLastError(), "finalize kernel launch");
  }
}

// The rows or cols kernels' arguments for a pass over `lay` (one reduced
// target, its kept dims in lay's dim 0 when it has any), and whether every
// pointer it reads or writes full size is 16-byte aligned.
template <typename T>
bool fill_sum_args(const Layout& lay, const GenArgs<T>& a, SumArgs<T>& r) {
  r.g = a.g;
  r.x = a.x;
  r.y = a.y;
  r.w = a.w;
  r.w_step = a.w && lay.nk == 1 ? lay.stride[kW][0] : 0;
  r.wsc = a.wsc;
  r.sum_lo = a.target == kX;
  r.dx = a.target == kX ? nullptr : a.dx;
  r.dy = a.target == kY ? nullptr : a.dy;
  r.tgt = a.tgt;
  r.M = lay.M;
  r.L = lay.L;
  return aligned16(r.g) && aligned16(r.dx) && aligned16(r.dy) && (a.target != kW || (aligned16(r.x) && aligned16(r.y)));
}

// The rows pass for a layout that rows_apply() accepts.
template <typename T>
void launch_rows(const Layout& lay, const GenArgs<T>& a, const Alloc& alloc, cudaStream_t stream) {
  constexpr int V = vec_of<T>();
  RowArgs<T> r;
  const bool al = fill_sum_args<T>(lay, a, r);
  const bool xy = a.target == kW;
  if (al && r.L % V == 0) {
    xy ? rows_launch<T, V, true>(r, alloc, stream) : rows_launch<T, V, false>(r, alloc, stream);
  } else {
    xy ? rows_launch<T, 1, true>(r, alloc, stream) : rows_launch<T, 1, false>(r, alloc, stream);
  }
}

// Can this backward pass run as cols_kernel? One reduced gradient (nothing
// fused) whose kept positions are the innermost, contiguous ones of dout
// (dout is [L, M] row-major), at most kColsMaxRows rows (a lane's loop stays
// short even with one lane per pack: longer column sums are sliced by
// gen_k), enough columns to fill a wave of the GPU with at most 32 lanes per
// column pack, a weight constant down each column, and for the weight's
// gradient x and y laid out like dout. LERP_COLS=0 sends these to gen_k
// (read once; for experiments).
constexpr int64_t kColsMaxRows = 64;

template <typename T>
bool cols_apply(const Layout& lay, const GenArgs<T>& a) {
  static const int on = env_int("LERP_COLS", 1);
  if (!on || a.target < 0 || a.target2 >= 0 || (a.target != kW && a.dw != nullptr)) return false;
  if (lay.nk != 1 || lay.nr != 1 || lay.stride[kOut][0] != 1 || lay.stride[kOut][1] != lay.M) return false;
  if (reduced_inner(lay, a.target) || (a.w && lay.stride[kW][1] != 0)) return false;
  if (a.target == kW) {
    for (int i = 0; i < 2; ++i)
      if (lay.stride[kX][i] != lay.stride[kOut][i] || lay.stride[kY][i] != lay.stride[kOut][i]) return false;
  }
  const int64_t wave_threads = int64_t(sm_count()) * 2048;  // an upper bound of one wave's threads
  return lay.L <= kColsMaxRows && lay.M / vec_of<T>() * 32 >= wave_threads && small_layout(lay);
}

// cols_kernel launch with VEC-element packs, U = 4 rows per step: lanes
// per column pack `subs`, the largest power of two (<= 32, <= rows) whose grid still
// fits in one wave (H200, x [3,224,224] vs y [16,3,224,224]: 4 lanes, 588
// blocks, 6.5 us kernel time, against 6.8 with 2 lanes, 9.5 with 8 (1.8
// waves), 11.8 with 16, and gen_k's 10.9); LERP_COLS_SUBS=1..32 forces it
// (read once; for experiments).
template <typename T, int VEC, bool XY>
void cols_launch_v(ColArgs<T> c, cudaStream_t stream) {
  constexpr int U = 4;
  const int64_t groups = c.M / VEC;
  const int64_t wave = wave_of(reinterpret_cast<const void*>(&cols_kernel<T, VEC, U, XY, int32_t>));
  static const int forced = env_int("LERP_COLS_SUBS", 0);
  int s = 1;
  while (s < 32 && 2 * s <= c.L && ceil_div(groups * 2 * s, kThreads) <= wave) s *= 2;
  if (forced == 1 || forced == 2 || forced == 4 || forced == 8 || forced == 16 || forced == 32) s = forced;
  c.subs = s;
  const unsigned blocks = static_cast<unsigned>(std::max<int64_t>(1, ceil_div(groups * s, kThreads)));
  cols_kernel<T, VEC, U, XY, int32_t><<<blocks, kThreads, 0, stream>>>(c);
  check_cuda(cudaGetLastError(), "cols kernel launch");
}

// The cols pass for a layout that cols_apply() accepts.
template <typename T>
void launch_cols(const Layout& lay, const GenArgs<T>& a, cudaStream_t stream) {
  constexpr int V = vec_of<T>();
  ColArgs<T> c;
  const bool al = fill_sum_args<T>(lay, a, c) && aligned16(c.tgt) && (!c.w || c.w_step == 0 || aligned16(c.w));
  const bool xy = a.target == kW;
  if (al && c.M % V == 0) {
    xy ? cols_launch_v<T, V, true>(c, stream) : cols_launch_v<T, V, false>(c, stream);
  } else {
    xy ? cols_launch_v<T, 1, true>(c, stream) : cols_launch_v<T, 1, false>(c, stream);
  }
}

// One backward pass over the output positions with one reduced target
// (a.target) plus any full-size gradients, and optionally (gen_k only) a
// second reduced target a.target2. Returns false, launching nothing, when
// a.target2 is set but cannot be fused into this pass.
template <typename T>
bool launch_general(const Layout& lay, GenArgs<T> a, const Alloc& alloc, cudaStream_t stream) {
  using A = typename AccOf<T>::type;
  constexpr int V = vec_of<T>();
  const int sms = sm_count();
  const int nd = lay.nk + lay.nr;
  const bool need_xy = a.target == kW || a.target2 == kW || a.dw != nullptr;
  bool used[kNumT] = {true, need_xy, need_xy, a.w != nullptr};
  a.mask = 0;
  for (int t = 0; t < kNumT; ++t) a.mask |= used[t] ? (1u << t) : 0u;
  if (a.target >= 0) a.mask |= 1u << a.target;
  const bool small = small_layout(lay);
  const bool al = aligned16(a.g) && aligned16(a.x) && aligned16(a.y) && aligned16(a.w) && aligned16(a.out) &&
                  aligned16(a.dx) && aligned16(a.dy) && aligned16(a.dw) && aligned16(a.tgt);
  if (rows_apply<T>(lay, a)) {
    launch_rows<T>(lay, a, alloc, stream);
    return true;
  }
  if (cols_apply<T>(lay, a)) {
    launch_cols<T>(lay, a, stream);
    return true;
  }
  const bool inner_r = reduced_inner(lay, a.target);
  GenPick<T> pick{!inner_r, false, small, need_xy};
  int64_t P = 1, gx = 1, gy = 1;
  if (inner_r) {
    if (a.target2 >= 0) return false;
    const int inner = nd - 1;
    pick.vec = al && lay.nr > 0 && vec_ok(lay, inner, V, used);
    const int v = pick.vec ? V : 1;
    gy = std::min<int64_t>(lay.M, 65535);
    // Enough blocks for one wave, at least one position (pack) per thread.
    const int64_t want = wave_of(pick.kernel());
    const int64_t max_p = std::max<int64_t>(1, ceil_div(lay.L, int64_t(kThreads) * v));
    P = std::min<int64_t>(max_p, std::max<int64_t>(1, ceil_div(want, gy)));
    P = std::min<int64_t>(P, (int64_t(1) << 31) - 1);
    const int64_t chunk = ceil_div(ceil_div(lay.L, P), v) * v;
    P = std::max<int64_t>(1, ceil_div(lay.L, chunk));
    a.chunk = chunk;
    gx = P;
  } else {
    const int inner = lay.nk - 1;
    pick.vec = al && vec_ok(lay, inner, V, used);
    const int v = pick.vec ? V : 1;
    const int64_t groups = lay.M / v;
    const int64_t want = wave_of(pick.kernel());
    if (groups <= kThreads / 2) {  // few groups: kThreads / groups threads per group, one tile
      a.subs = static_cast<int>(kThreads / groups);
    } else {
      // Many groups over a short reduced range: 2-32 threads per group when that
      // fills LERP_SUBS_WAVES waves (default 2; 0: never), so that no slices (and
      // no finalize launch) are needed.
      // Measured on an H200 for x [3,224,224] vs y [16,3,224,224]: see lerp-design.md.
      static const int waves = env_int("LERP_SUBS_WAVES", 2);
      const int64_t target = want * waves;
      int s2 = 1;
      while (target > 0 && s2 < 32 && 2 * s2 <= lay.L && ceil_div(groups * s2, kThreads) < target) s2 *= 2;
      a.subs = target > 0 && ceil_div(groups * s2, kThreads) >= target ? s2 : 1;
    }
    gx = std::min<int64_t>(ceil_div(groups, kThreads / a.subs), int64_t(sms) * 16);
    P = std::max<int64_t>(1, ceil_div(want, gx));
    P = std::min<int64_t>(P, std::max<int64_t>(1, ceil_div(lay.L, std::max(8, a.subs))));
    P = std::min<int64_t>(P, 65535);
    int64_t chunk = ceil_div(lay.L, P);
    if (a.target2 >= 0) {
      // target2 must not vary over the kept dims, and be constant over each
      // slice: chunk divides the extent E of the reduced dims inside its
      // innermost varying one.
      for (int i = 0; i < lay.nk; ++i)
        if (lay.stride[a.target2][i] != 0) return false;
      int64_t e = 1;
      for (int i = nd - 1; i >= lay.nk && lay.stride[a.target2][i] == 0; --i) e *= lay.size[i];
      chunk = divisor_at_least(e, chunk);
      const int64_t p2 = ceil_div(lay.L, chunk);
      int64_t m2 = 1;
      for (int i = lay.nk; i < nd; ++i) m2 += (lay.size[i] - 1) * lay.stride[a.target2][i];
      if (p2 > 4096 || p2 * gx > 65536 || p2 * m2 > (int64_t(1) << 22)) return false;
    }
    P = ceil_div(lay.L, chunk);
    a.chunk = chunk;
    gy = P;
  }
  a.P = static_cast<int>(P);
  if (a.target >= 0 && P > 1) a.ws = static_cast<A*>(alloc(sizeof(A) * P * lay.M));
  int64_t m2 = 0;
  if (a.target2 >= 0) {
    m2 = 1;
    for (int i = lay.nk; i < nd; ++i) m2 += (lay.size[i] - 1) * lay.stride[a.target2][i];
    a.ws2 = static_cast<A*>(alloc(sizeof(A) * P * gx));
    a.key2 = static_cast<int64_t*>(alloc(sizeof(int64_t) * P));
  }
  pick.launch(dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy)), lay, a, stream);
  check_cuda(cudaGetLastError(), "gen kernel launch");
  // Fixed-order sums of the partials (one launch for both targets).
  FinJob<T> f0, f1;
  if (a.target >= 0 && a.P > 1) {
    f0.ws = a.ws;
    f0.P = a.P;
    f0.M = lay.M;
    f0.tgt = a.tgt;
    if (a.P >= 16 && lay.M <= int64_t(sms) * 64) {
      f0.mode = 2;
      f0.blocks = std::max<int64_t>(1, ceil_div(lay.M, kThreads / 32));
    } else {
      f0.mode = 1;
      f0.blocks = std::max<int64_t>(1, std::min<int64_t>(ceil_div(lay.M, kThreads), int64_t(sms) * 8));
    }
  }
  if (a.target2 >= 0) {
    f1.ws = a.ws2;
    f1.keys = a.key2;
    f1.P = a.P;
    f1.G = gx;
    f1.M = m2;
    f1.tgt = a.tgt2;
    f1.mode = 3;
    f1.blocks = std::max<int64_t>(1, std::min<int64_t>(ceil_div(m2, kThreads / 32), int64_t(sms) * 8));
  }
  if (f0.blocks + f1.blocks > 0) {
    if (f0.blocks == 0) std::swap(f0, f1);
    finalize_kernel<T><<<static_cast<unsigned>(f0.blocks + f1.blocks), kThreads, 0, stream>>>(f0, f1);
    check_cuda(cudaGetLastError(), "finalize kernel launch");
  }
  return true;
}

// out = lerp(x, y, w). w null: scalar weight w_scalar (ws ignored).
// The contiguous path applies when x and y have the output's size and the weight is absent, one
// element or full size. Returns its weight mode (0 attribute, 1 one-element tensor read once into a
// register, 2 full tensor), or -1 when the path does not apply.
inline int contig_weight_mode(int64_t n, const Shape& xs, const Shape& ys, bool has_w, int64_t nw) {
  if (numel_of(xs) != n || numel_of(ys) != n || (has_w && nw != 1 && nw != n)) return -1;
  return !has_w ? 0 : (nw == 1 && n != 1 ? 1 : 2);
}

template <typename T>
void lerp_forward(const T* x, const T* y, const T* w, double w_scalar, T* out, const Shape& xs, const Shape& ys,
                  const Shape& ws_in, cudaStream_t stream) {
  const Shape ws = w ? ws_in : Shape{};
  const Shape os = broadcast_shapes({xs, ys, ws});
  const int64_t n = numel_of(os);
  if (n == 0) return;
  const int wmode = contig_weight_mode(n, xs, ys, w != nullptr, numel_of(ws));
  if (wmode >= 0) {
    launch_contig<T, true>(nullptr, x, y, w, wmode, w_scalar, out, nullptr, nullptr, n, stream);
    return;
  }
  GenArgs<T> a = gen_inputs<T>(nullptr, x, y, w, w_scalar);
  a.out = out;
  launch_bcast_fwd<T>(make_layout(os, xs, ys, ws, -1), a, n, stream);
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
  const int wmode = contig_weight_mode(n, xs, ys, w != nullptr, numel_of(ws));
  if (reduced.empty() && wmode >= 0) {
    launch_contig<T, false>(g, x, y, w, wmode, w_scalar, dx, dy, dw, n, stream);
    return;
  }
  GenArgs<T> base = gen_inputs<T>(g, x, y, w, w_scalar);
  base.dx = full[kX] ? dx : nullptr;
  base.dy = full[kY] ? dy : nullptr;
  base.dw = full[kW] ? dw : nullptr;
  if (reduced.empty()) {
    launch_general<T>(make_layout(os, xs, ys, ws, -1), base, alloc, stream);
    return;
  }
  bool first = true;
  // Two reduced gradients in one pass where possible: a kept-innermost (gen_k)
  // one whose pass also sums a second one that is constant per block.
  if (reduced.size() >= 2) {
    bool fused = false;
    for (size_t i = 0; i < reduced.size() && !fused; ++i) {
      const int t = reduced[i];
      const Layout lay = make_layout(os, xs, ys, ws, t);
      if (reduced_inner(lay, t)) continue;
      for (size_t k = 0; k < reduced.size() && !fused; ++k) {
        if (k == i) continue;
        GenArgs<T> a = base;
        a.target = t;
        a.tgt = outs[t];
        a.target2 = reduced[k];
        a.tgt2 = outs[reduced[k]];
        if (launch_general<T>(lay, a, alloc, stream)) {
          fused = true;
          first = false;
          const int s = reduced[k];
          reduced.erase(std::remove_if(reduced.begin(), reduced.end(), [&](int r) { return r == t || r == s; }),
                        reduced.end());
        }
      }
    }
  }
  for (int t : reduced) {
    GenArgs<T> a = base;
    if (!first) a.dx = a.dy = a.dw = nullptr;
    first = false;
    a.target = t;
    a.tgt = outs[t];
    launch_general<T>(make_layout(os, xs, ys, ws, t), a, alloc, stream);
  }
}

// Training forward for same-shape x, y, w (n elements each) when w needs a
// gradient: out = lerp(x, y, w) and diff = y - x in one pass. The backward
// (lerp_backward_from_diff) then reads dout, w and diff instead of dout, w, x
// and y, as torch.compile's generated code does.
template <typename T>
void lerp_forward_save_diff(const T* x, const T* y, const T* w, T* out, T* diff, int64_t n, cudaStream_t stream) {
  if (n > 0) launch_contig<T, true>(nullptr, x, y, w, 2, 0.0, out, diff, nullptr, n, stream);
}

// Gradients of same-shape x, y, w from diff = y - x: dx = g*(1-w), dy = g*w,
// dw = g*diff; a null output is not computed.
template <typename T>
void lerp_backward_from_diff(const T* g, const T* diff, const T* w, T* dx, T* dy, T* dw, int64_t n,
                             cudaStream_t stream) {
  if (n > 0) launch_contig<T, false>(g, nullptr, diff, w, 2, 0.0, dx, dy, dw, n, stream);
}

}  // namespace gpu
}  // namespace lerp_core
