// lerp CUDA core, part: broadcast forward (nd, runtime-dims) and the general backward kernels (gen_r, gen_k, finalize).
// Included in order by lerp.cuh; see its header for the paths and when each is chosen.
#pragma once

#include "lerp_contig.cuh"

namespace lerp_core {
namespace gpu {

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
  // gen_r with P > 1: per-kept-index ticket counters (zero on entry; null: a finalize launch sums the
  // partials) and how the last block adds them (fin_mode, as finalize_kernel's modes 1 and 2)
  unsigned* cnt = nullptr;
  int fin_mode = 1;
  int subs = 1;          // gen_k: threads per kept group (> 1: few groups, or a short reduced range)
  unsigned mask = 0xfu;  // tensors whose offsets are needed (bit kOut, kX, kY, kW)
};

// Sets the inputs a backward pass reads in its kernel arguments `a` (GenArgs, SmallArgs): dout (null in the
// forward), x, y and the weight (null: scalar wsc).
template <typename Args, typename T>
void set_inputs(Args& a, const T* g, const T* x, const T* y, const T* w, double wsc) {
  a.g = g;
  a.x = x;
  a.y = y;
  a.w = w;
  a.wsc = wsc;
}

// The inputs every general pass reads (set_inputs).
template <typename T>
GenArgs<T> gen_inputs(const T* g, const T* x, const T* y, const T* w, double wsc) {
  GenArgs<T> a;
  set_inputs(a, g, x, y, w, wsc);
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
    load_raw_lazy<T, VEC>(a.x, ox, bx, xp);
    load_raw_lazy<T, VEC>(a.y, oy, by, yp);
    if (a.w) {
      const I ow = (a.mask & (1u << kW)) ? off[kW] : (bw ? I(0) : e);
      load_raw_lazy<T, VEC>(a.w, ow, bw, wp);
    }
    raw_fill<T, VEC>(bx, xp);
    raw_fill<T, VEC>(by, yp);
    if (a.w) raw_fill<T, VEC>(bw, wp);
    A o[VEC];
    lerp_pack<T, VEC>(xp, yp, wp, a.w != nullptr, wsc, o);
    store_pack<T, VEC>(a.out, e, o);
  }
}

// How the nd kernels read an operand's pack: VEC-wide at its offset; one
// element for the whole pack (broadcast along the innermost dim; in
// fwd_nd_gather_kernel only where the pack does not cross a row's end);
// element by element (fwd_nd_gather_kernel only).
enum NdRead : int8_t { kNdWide = 0, kNdOne = 1, kNdEach = 2 };

// Layout of a forward with broadcasting in at most 4 collapsed dims and
// 32-bit offsets, for the nd kernels: the dims count is a template parameter,
// so the index math unrolls and every size, magic number and stride is an
// immediate kernel-parameter operand (no indexed parameter loads).
template <int ND>
struct NdLayout {
  int32_t size[ND];
  uint32_t magic[ND], shift[ND];
  int32_t stride[3][ND];  // x, y, w (0 where broadcast)
  int8_t read[3];         // NdRead of x, y, w
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
// instructions per dim); w null: the scalar wsc. DIFF (x and y laid out like
// out, a weight needing a gradient): also writes diff = y - x, which the
// training forward saves for lerp_backward_from_diff.
template <typename T, int VEC, int ND, int U, bool DIFF = false>
__global__ void __launch_bounds__(kThreads)
    fwd_nd_kernel(NdLayout<ND> L, const T* __restrict__ x, const T* __restrict__ y, const T* __restrict__ w,
                  typename AccOf<T>::type wsc, T* __restrict__ out, T* __restrict__ diff, int32_t nv) {
  using A = typename AccOf<T>::type;
  const int32_t base = static_cast<int32_t>(blockIdx.x) * (kThreads * U) + static_cast<int32_t>(threadIdx.x);
  Raw<T, VEC> xp[U], yp[U], wp[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int32_t p = base + u * kThreads;
    if (p < nv) {
      int32_t o[3];
      nd_offsets<ND>(L, p * VEC, o);
      load_raw_lazy<T, VEC>(x, o[0], L.read[0] != kNdWide, xp[u]);
      load_raw_lazy<T, VEC>(y, o[1], L.read[1] != kNdWide, yp[u]);
      if (w) load_raw_lazy<T, VEC>(w, o[2], L.read[2] != kNdWide, wp[u]);
    }
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int32_t p = base + u * kThreads;
    if (p < nv) {
      raw_fill<T, VEC>(L.read[0] != kNdWide, xp[u]);
      raw_fill<T, VEC>(L.read[1] != kNdWide, yp[u]);
      if (w) raw_fill<T, VEC>(L.read[2] != kNdWide, wp[u]);
      A r[VEC];
      lerp_pack<T, VEC>(xp[u], yp[u], wp[u], w != nullptr, wsc, r);
      store_pack<T, VEC>(out, p * VEC, r);
      if constexpr (DIFF) {
#pragma unroll
        for (int k = 0; k < VEC; ++k) r[k] = raw_at<T, VEC>(yp[u], k) - raw_at<T, VEC>(xp[u], k);
        store_pack<T, VEC>(diff, p * VEC, r);
      }
    }
  }
}

// Operand t's pack at output position e (its offset there o) for
// fwd_nd_gather_kernel: VEC-wide when it is laid out like out and the pack is
// whole; one element when it is broadcast along the innermost dim and the
// pack does not cross a row's end (`cross`); else element by element: offset
// o + k * (innermost stride) within a row, one decomposition per element for
// a crossing pack. Elements at or past n are not read.
template <typename T, int VEC, int ND, int t>
__device__ __forceinline__ void gather_pack(const NdLayout<ND>& L, const T* __restrict__ p, int32_t e, int32_t o,
                                            bool cross, int32_t n, Raw<T, VEC>& r) {
  if (L.read[t] == kNdOne && !cross) {
    load_raw<T, VEC>(p, o, true, r);
  } else if (L.read[t] == kNdWide && e + VEC <= n) {
    load_raw<T, VEC>(p, e, false, r);
  } else {
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
      int32_t ok = o + k * L.stride[t][ND - 1];
      if (cross) {
        int32_t oo[3];
        nd_offsets<ND>(L, e + k, oo);
        ok = oo[t];
      }
      if (e + k < n) load_raw_at<T, VEC>(p, ok, k, r);
    }
  }
}

// Forward with broadcasting whose VEC-element packs may cross the end of a
// row of the innermost dim, or of the tensor (a size there that is not a
// multiple of VEC: x, w [94866, 692] bf16 against y [1, 692]; 16631172
// elements against a one-element y): operands laid out like out are read
// VEC-wide, one broadcast along the innermost dim as one element per pack
// (where the pack does not cross a row's end), the others element by element
// (gather_pack); the last pack may be partial. Otherwise as fwd_nd_kernel
// (U packs per thread, every load issued before any store).
template <typename T, int VEC, int ND, int U>
__global__ void __launch_bounds__(kThreads)
    fwd_nd_gather_kernel(NdLayout<ND> L, const T* __restrict__ x, const T* __restrict__ y, const T* __restrict__ w,
                         typename AccOf<T>::type wsc, T* __restrict__ out, int32_t n) {
  using A = typename AccOf<T>::type;
  const int32_t nv = (n + VEC - 1) / VEC;
  const int32_t base = static_cast<int32_t>(blockIdx.x) * (kThreads * U) + static_cast<int32_t>(threadIdx.x);
  Raw<T, VEC> xp[U] = {}, yp[U] = {}, wp[U] = {};
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int32_t p = base + u * kThreads;
    if (p < nv) {
      const int32_t e = p * VEC;
      int32_t o[3];
      nd_offsets<ND>(L, e, o);
      int32_t c0 = e;  // position along the innermost dim
      if (ND > 1) c0 = e - static_cast<int32_t>(fast_div(static_cast<uint32_t>(e), L.magic[ND - 1], L.shift[ND - 1])) *
                               L.size[ND - 1];
      const bool cross = c0 + VEC > L.size[ND - 1];
      gather_pack<T, VEC, ND, 0>(L, x, e, o[0], cross, n, xp[u]);
      gather_pack<T, VEC, ND, 1>(L, y, e, o[1], cross, n, yp[u]);
      if (w) gather_pack<T, VEC, ND, 2>(L, w, e, o[2], cross, n, wp[u]);
    }
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int32_t p = base + u * kThreads;
    if (p < nv) {
      const int32_t e = p * VEC;
      A r[VEC];
      lerp_pack<T, VEC>(xp[u], yp[u], wp[u], w != nullptr, wsc, r);
      if (e + VEC <= n) {
        store_pack<T, VEC>(out, e, r);
      } else {
#pragma unroll
        for (int k = 0; k < VEC; ++k)
          if (e + k < n) out[e + k] = cvt_out<T>(r[k]);
      }
    }
  }
}

// Raw values loaded for one position (VEC consecutive along the innermost
// dim): dout, the weight, and x, y when a weight gradient is needed.
template <typename T, int VEC>
struct Vals {
  Raw<T, VEC> g, w, x, y;
};

template <typename T, int VEC, int XY, typename I>
__device__ __forceinline__ void load_vals(const Layout& lay, const GenArgs<T>& a, int inner, const I (&o)[kNumT],
                                          Vals<T, VEC>& v) {
  if (a.w) load_raw<T, VEC>(a.w, o[kW], lay.stride[kW][inner] == 0, v.w);
  load_raw<T, VEC>(a.g, o[kOut], false, v.g);
  if (XY) {
    load_x_raw<T, VEC, XY>(a.x, o[kX], lay.stride[kX][inner] == 0, v.x);
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

template <typename T, int VEC, int XY, typename I>
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
template <typename T, int VEC, int B, int XY, typename I>
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

// One target's P partials (ws[p * stride]) added by one thread in slice order. finalize_kernel's mode 1
// and the last blocks that add in that order (gen_r's, tile2d's) all use it, so a finalize
// launch and a last block give the same bits.
// (I: the slice count's type, the caller's loop counter.)
template <typename A, typename I>
__device__ __forceinline__ A sum_partials_in_order(const A* ws, I P, int64_t stride) {
  A s = A(0);
  for (I p = 0; p < P; ++p) s += __ldcg(ws + p * stride);
  return s;
}

// One target's P partials (stride apart) summed by a warp in fixed order:
// lane l adds partials l, l + 32, ..., then a fixed shuffle tree; lane 0
// holds the sum. Shared by finalize_kernel and the last blocks of
// rows_kernel and gen_r_kernel, so all give the same bits.
template <typename A>
__device__ __forceinline__ A warp_sum_partials(const A* ws, int64_t P, int64_t stride) {
  const int lane = threadIdx.x & 31;
  A s = A(0);
  for (int64_t p = lane; p < P; p += 32) s += __ldcg(ws + p * stride);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  return s;
}

// One target's P partials (ws[p * stride]) added by the last block of its
// slices, as finalize_kernel would (mode 1: one thread in order; mode 2:
// warp_sum_partials), so either way gives the same bits; the result goes
// to tgt[0] and the ticket counter back to zero. Call with every thread of
// the block once `last` says whether this block took the last ticket.
template <typename T>
__device__ __forceinline__ void sum_partials_last(const typename AccOf<T>::type* ws, int64_t P, int64_t stride,
                                                  int mode, T* tgt, unsigned* cnt) {
  using A = typename AccOf<T>::type;
  __threadfence();  // every other block's partial is read after its ticket
  if (mode == 2) {
    if (threadIdx.x < 32) {
      const A s = warp_sum_partials<A>(ws, P, stride);
      if (threadIdx.x == 0) *tgt = cvt_out<T>(s);
    }
  } else if (threadIdx.x == 0) {
    *tgt = cvt_out<T>(sum_partials_in_order<A, int64_t>(ws, P, stride));
  }
  if (threadIdx.x == 0) *cnt = 0u;  // ready for the stream's next launch
}

// sum_partials_last as a call, for gen_r_kernel: inlined there, its code
// raised the registers of the loop before it (2-byte x, y-reading gen_r
// 64 -> 66: 3 blocks an SM instead of 4); as a call it costs a few stores
// to the stack in the last block of a slice set only.
template <typename T>
__device__ __noinline__ void sum_partials_last_call(const typename AccOf<T>::type* ws, int64_t P, int64_t stride,
                                                    int mode, T* tgt, unsigned* cnt) {
  sum_partials_last<T>(ws, P, stride, mode, tgt, cnt);
}

// Backward, reduced dims innermost: grid (P slices of L, kept indices j).
// P > 1: block p's sum goes to ws[p * M + j]; with a.cnt the last block of
// j's slices to finish adds them (sum_partials_last), else finalize_kernel.
template <typename T, int VEC, int B, int XY, typename I>
__global__ void __launch_bounds__(kThreads) gen_r_kernel(Layout lay, GenArgs<T> a) {
  using A = typename AccOf<T>::type;
  const int inner = lay.nk + lay.nr - 1;
  __shared__ bool last;
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
          if (a.cnt) {
            __threadfence();  // the partial is visible before the ticket is taken
            last = atomicAdd(a.cnt + j, 1u) == static_cast<unsigned>(a.P - 1);
          }
        }
      }
      if (a.P > 1 && a.cnt) {
        __syncthreads();
        if (last) sum_partials_last_call<T>(a.ws + j, a.P, lay.M, a.fin_mode, a.tgt + j, a.cnt + j);
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
template <typename T, int VEC, int B, int XY, typename I>
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
// per target over ws [P, G] where slice p belongs to target keys[p]; 4: a
// block per 32 targets, ws [P, M], the slices in kFinChunks chunks
// (fin_chunked).
template <typename T>
struct FinJob {
  const typename AccOf<T>::type* ws = nullptr;
  const int64_t* keys = nullptr;
  int64_t P = 0, M = 0, G = 1;
  T* tgt = nullptr;
  int mode = 0;
  int64_t blocks = 0;
};

constexpr int kFinChunks = kThreads / 32;

// Target m's P partials (ws[p * M + m]) as kFinChunks chunks of consecutive
// slices, each added in slice order by its own warp (16 loads in flight a
// lane), then the chunk sums in chunk order: a fixed order, so any launch gives
// the same bits, and the loads of a column of partials are spread over a
// block instead of one thread's chain (cols_sliced_kernel's slices).
// A block takes 32 consecutive targets, its lanes consecutive columns.
template <typename T>
__device__ __forceinline__ void fin_chunked(const FinJob<T>& j, int64_t bid) {
  using A = typename AccOf<T>::type;
  __shared__ A chunk_sums[kFinChunks][32];
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int64_t per = (j.P + kFinChunks - 1) / kFinChunks, p0 = w * per, p1 = p0 + per < j.P ? p0 + per : j.P;
  for (int64_t g = bid; g * 32 < j.M; g += j.blocks) {  // the same trip count for every thread of the block
    const int64_t m = g * 32 + lane;
    A s = A(0);
    if (m < j.M) {
      int64_t p = p0;
      for (; p + 16 <= p1; p += 16) {  // unpredicated, so the 16 loads are issued before the first add
        A v[16];
#pragma unroll
        for (int i = 0; i < 16; ++i) v[i] = __ldcg(j.ws + (p + i) * j.M + m);
#pragma unroll
        for (int i = 0; i < 16; ++i) s += v[i];
      }
      for (; p < p1; ++p) s += __ldcg(j.ws + p * j.M + m);
    }
    chunk_sums[w][lane] = s;
    __syncthreads();
    if (w == 0 && m < j.M) {
      A t = A(0);
      for (int i = 0; i < kFinChunks && i * per < j.P; ++i) t += chunk_sums[i][lane];
      j.tgt[m] = cvt_out<T>(t);
    }
    __syncthreads();
  }
}

template <typename T>
__device__ __forceinline__ void fin_run(const FinJob<T>& j, int64_t bid) {
  using A = typename AccOf<T>::type;
  if (j.mode == 4) {
    fin_chunked<T>(j, bid);
    return;
  }
  if (j.mode == 1) {
    for (int64_t m = bid * kThreads + threadIdx.x; m < j.M; m += j.blocks * kThreads)
      j.tgt[m] = cvt_out<T>(sum_partials_in_order<A, int64_t>(j.ws + m, j.P, j.M));
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
  opcore::gpu::grid_dep_wait();  // launched after the kernel of the partials (launch_after)
  if (static_cast<int64_t>(blockIdx.x) < a.blocks) {
    fin_run<T>(a, blockIdx.x);
  } else {
    fin_run<T>(b, static_cast<int64_t>(blockIdx.x) - a.blocks);
  }
}

}  // namespace gpu
}  // namespace lerp_core
