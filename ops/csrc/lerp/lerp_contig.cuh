// lerp CUDA core, part: contig path kernels: x, y (and a full weight) of the output's shape, one fused pass.
// Included in order by lerp.cuh; see its header for the paths and when each is chosen.
#pragma once

#include "lerp_device_common.cuh"

namespace lerp_core {
namespace gpu {

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

// What a backward kernel reads for the weight's gradient g*(y-x): nothing (kNoXY), x and y (kXYRead), or
// y alone, holding y - x saved by the training forward (kXYDiff: lerp_backward_from_diff; 4- and 8-byte
// types, where y - x is exact). A template parameter, so the kXYRead kernels are what they were.
constexpr int kNoXY = 0, kXYRead = 1, kXYDiff = 2;

// load_raw of x for a weight's gradient: zeros under kXYDiff (y - 0 is y exactly), no load.
template <typename T, int VEC, int XY, typename I>
__device__ __forceinline__ void load_x_raw(const T* __restrict__ p, I off, bool bcast, Raw<T, VEC>& o) {
  if constexpr (XY == kXYDiff) {
#pragma unroll
    for (int k = 0; k < VEC; ++k) o.v[k] = T(0);
  } else {
    load_raw<T, VEC>(p, off, bcast, o);
  }
}

// load_raw for a step whose loads all go out before any is used: a broadcast
// operand's element is only loaded here (into the pack's first word), its
// copies across the pack left to raw_fill, which the caller runs once the
// step's loads are out. Copying at once (load_raw) uses the element, which
// makes the thread wait for it before issuing the next load (SASS, sm_90).
template <typename T, int VEC, typename I>
__device__ __forceinline__ void load_raw_lazy(const T* __restrict__ p, I off, bool bcast, Raw<T, VEC>& o) {
  if (!bcast) {
    load_raw<T, VEC>(p, off, false, o);
  } else if constexpr (sizeof(T) == 2 && VEC >= 2) {
    o.v[0] = *reinterpret_cast<const unsigned short*>(p + off);
  } else {
    o.v[0] = p[off];
  }
}

// Completes a broadcast pack of load_raw_lazy (nothing when !bcast); running
// it again leaves the pack as it is.
template <typename T, int VEC>
__device__ __forceinline__ void raw_fill(bool bcast, Raw<T, VEC>& o) {
  if (!bcast) return;
  if constexpr (sizeof(T) == 2 && VEC >= 2) {
    const uint32_t word = (o.v[0] & 0xffffu) | (o.v[0] << 16);
#pragma unroll
    for (int k = 0; k < VEC / 2; ++k) o.v[k] = word;
  } else {
#pragma unroll
    for (int k = 1; k < VEC; ++k) o.v[k] = o.v[0];
  }
}

// Element k of a raw pack set from the one element at p[off] (a gathered
// element, or one of a partial pack at a tensor's end).
template <typename T, int VEC, typename I>
__device__ __forceinline__ void load_raw_at(const T* __restrict__ p, I off, int k, Raw<T, VEC>& o) {
  if constexpr (sizeof(T) == 2 && VEC >= 2) {
    const uint32_t h = *reinterpret_cast<const unsigned short*>(p + off);
    o.v[k / 2] = k % 2 ? (o.v[k / 2] & 0xffffu) | (h << 16) : (o.v[k / 2] & 0xffff0000u) | h;
  } else {
    o.v[k] = p[off];
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
// read once (unused when the weight is a full tensor). The element is loaded
// raw at the kernel's start (scalar_weight_raw) and converted where a step's
// loads are out (scalar_weight): converted at once, a 2-byte weight made
// every thread wait for it before issuing them (SASS, sm_90).
template <typename T, bool WFULL>
__device__ __forceinline__ T scalar_weight_raw(const T* __restrict__ w, int wmode) {
  return !WFULL && wmode == 1 ? w[0] : T{};
}
template <typename T, bool WFULL>
__device__ __forceinline__ typename AccOf<T>::type scalar_weight(T raw, int wmode, typename AccOf<T>::type wsc) {
  return !WFULL && wmode == 1 ? cvt_in(raw) : wsc;
}

template <typename T, int VEC, int U, bool WFULL, bool DIFF, typename I>
__global__ void __launch_bounds__(kThreads)
    fwd_contig_kernel(const T* __restrict__ x, const T* __restrict__ y, const T* __restrict__ w, int wmode,
                      typename AccOf<T>::type wsc, T* __restrict__ out, T* __restrict__ diff, I n) {
  using A = typename AccOf<T>::type;
  const T wraw = scalar_weight_raw<T, WFULL>(w, wmode);
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
    const A wr = scalar_weight<T, WFULL>(wraw, wmode, wsc);
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
  const A wr = scalar_weight<T, WFULL>(wraw, wmode, wsc);
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
  // Converted at once, unlike the forward: kept raw, the weight cost the 2-byte U = 2 instantiations 8 more
  // registers (ptxas, sm_90: 32 -> 40, 8 -> 6 blocks an SM).
  const A wr = scalar_weight<T, WFULL>(scalar_weight_raw<T, WFULL>(w, wmode), wmode, wsc);
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

}  // namespace gpu
}  // namespace lerp_core
