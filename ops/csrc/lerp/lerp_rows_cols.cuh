// lerp CUDA core, part: rows and cols backward kernels: one gradient summed along rows or down columns in one pass.
// Included in order by lerp.cuh; see its header for the paths and when each is chosen.
#pragma once

#include "lerp_general.cuh"

namespace lerp_core {
namespace gpu {

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

// The raw packs of one position (dout; x and y when XY, zeros for x under kXYDiff) at offset e.
template <typename T, int VEC, int XY, typename I>
__device__ __forceinline__ void load_sum_pack(const T* g, const T* x, const T* y, I e, Raw<T, VEC>& gp,
                                              Raw<T, VEC>& xp, Raw<T, VEC>& yp) {
  load_raw<T, VEC>(g, e, false, gp);
  if (XY) {
    load_x_raw<T, VEC, XY>(x, e, false, xp);
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
template <typename T, int VEC, int XY, typename I>
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
// (p, j) covers packs [p*chunk, (p+1)*chunk) of row j's whole VEC-aligned
// packs, U packs per thread per step with all loads issued first; no index
// math beyond a row offset. A row length that is not a multiple of VEC
// (ENDS) leaves fewer than VEC positions at each end of a row outside those
// packs: block 0 of the row takes them one a thread.
// P == 1: the block writes tgt[j]. P > 1: its block sum goes to
// ws[p * M + j]; with `cnt` (per-row ticket counters, zero on entry) the
// last block of a row to finish adds the row's partials in fixed order
// (warp_sum_partials) and sets the counter back to zero, so no second launch
// is needed; without (stream capture), finalize_kernel does the same sums.
template <typename T>
struct SlicedSumArgs : SumArgs<T> {
  typename AccOf<T>::type* ws = nullptr;  // [P, M] partials when P > 1
  unsigned* cnt = nullptr;                // ticket counters (P > 1), or null: finalize
  int64_t chunk = 1;                      // slice length (rows: elements of a row; cols: rows)
  int P = 1;
};

template <typename T>
using RowArgs = SlicedSumArgs<T>;

// rows_kernel's summed product at one position outside a row's whole packs
// (thread t < VEC - 1: start + t if before the first whole pack `row`; else
// tail + t - (VEC - 1) if before the row's end), dx and dy written there.
template <typename T, int VEC, int XY>
__device__ __forceinline__ typename AccOf<T>::type rows_end(const RowArgs<T>& a, typename AccOf<T>::type wj,
                                                         int64_t start, int64_t row, int64_t tail, int64_t end) {
  using A = typename AccOf<T>::type;
  const int t = static_cast<int>(threadIdx.x);
  const int64_t e = t < VEC - 1 ? start + t : tail + (t - (VEC - 1));
  if (e >= (t < VEC - 1 ? row : end)) return A(0);
  Raw<T, 1> gp, xp, yp;
  load_sum_pack<T, 1, XY, int64_t>(a.g, a.x, a.y, e, gp, xp, yp);
  PackWeights<A, 1> pw;
  pw.set(0, wj, a.sum_lo);
  A acc[1] = {A(0)};
  use_sum_pack<T, 1, XY, int64_t>(gp, xp, yp, pw, acc, a.dx, a.dy, e);
  return acc[0];
}

template <typename T, int VEC, int U, int XY, typename I, bool ENDS>
__global__ void __launch_bounds__(kThreads) rows_kernel(RowArgs<T> a) {
  using A = typename AccOf<T>::type;
  const I lv_all = static_cast<I>(a.L / VEC), cv = static_cast<I>(a.chunk / VEC);
  const I p0 = static_cast<I>(blockIdx.x) * cv;
  __shared__ bool last;
  for (int64_t j = blockIdx.y; j < a.M; j += gridDim.y) {
    // The row's weight raw, converted where a step's loads are out: used here, it would make the thread wait
    // for it before issuing them (SASS, sm_90: a round trip to memory more a row).
    const T wr = a.w ? a.w[j * a.w_step] : T{};
    PackWeights<A, VEC> pw;
    A acc[VEC];
#pragma unroll
    for (int k = 0; k < VEC; ++k) acc[k] = A(0);
    // ENDS (rows whose length is not a multiple of VEC): the row's whole
    // packs start at its first VEC-aligned position `row`; the fewer than
    // VEC positions before it and after its last whole pack are block 0's,
    // one a thread (rows_end).
    int64_t row = j * a.L;
    I lv = lv_all;
    if constexpr (ENDS) {
      const int64_t aligned = (row + VEC - 1) / VEC * VEC, end = row + a.L;
      row = aligned < end ? aligned : end;
      lv = static_cast<I>((end - row) / VEC);
    }
    const I p1 = p0 + cv < lv ? p0 + cv : lv;
    const T *g = a.g + row, *x = XY == kXYRead ? a.x + row : nullptr, *y = XY ? a.y + row : nullptr;
    T *dx = a.dx ? a.dx + row : nullptr, *dy = a.dy ? a.dy + row : nullptr;
#pragma unroll 1
    for (I q = p0 + static_cast<I>(threadIdx.x); q < p1; q += kThreads * U) {
      Raw<T, VEC> gp[U], xp[XY ? U : 1], yp[XY ? U : 1];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (q + u * kThreads < p1)
          load_sum_pack<T, VEC, XY, I>(g, x, y, (q + u * kThreads) * VEC, gp[u], xp[XY ? u : 0], yp[XY ? u : 0]);
      }
      const A wq = a.w ? cvt_in(wr) : static_cast<A>(a.wsc);
#pragma unroll
      for (int k = 0; k < VEC; ++k) pw.set(k, wq, a.sum_lo);
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (q + u * kThreads < p1)
          use_sum_pack<T, VEC, XY, I>(gp[u], xp[XY ? u : 0], yp[XY ? u : 0], pw, acc, dx, dy, (q + u * kThreads) * VEC);
      }
    }
    A s = A(0);
#pragma unroll
    for (int k = 0; k < VEC; ++k) s += acc[k];
    if constexpr (ENDS) {
      if (blockIdx.x == 0 && threadIdx.x < 2 * (VEC - 1))
        s += rows_end<T, VEC, XY>(a, a.w ? cvt_in(wr) : static_cast<A>(a.wsc), j * a.L, row, row + int64_t(lv) * VEC,
                                  (j + 1) * a.L);
    }
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
// w[c * w_step]), for the weight's gradient x and y laid out like dout; dx,
// dy (when not null) written full size on the way. Two kernels: cols_kernel
// takes every row in one pass (at most kColsMaxRows), cols_sliced_kernel row
// slices whose column sums finalize_kernel adds. cols_sliced_kernel also
// takes targets of `grp` adjacent columns each: dout [O, K, G] with the
// gradient kept along K and summed over O and G (w [1,1,5246,1] against
// [9,2,5246,31]: 18 rows of 5246 x 31 columns), the weight then one a
// target (w_grp: w[(c / grp) * w_step]) or one a column. Both kernels also
// take a full-size weight (kColsWFull) for x's or y's gradient, with dw and
// the other of dx, dy written on the way (y [1,4,173] against
// [94866,4,173] with w full size; x [1,91,1,1] against [11039,2,91,14,2]).
template <typename T>
struct ColArgs : SlicedSumArgs<T> {
  int subs = 1;        // cols_kernel: lanes a column pack
  int qt = 1;          // cols_sliced_kernel: column packs a tile
  int grp = 1;         // columns a target (cols_sliced_kernel): tgt and ws have M / grp targets
  bool w_grp = false;  // the weight one a target, not one a column
  T* dw = nullptr;     // kColsWFull: the weight's gradient, full size (null: not)
};

// What a cols kernel sums and reads: g*(1-w) or g*w with the weight a scalar or constant down each column
// (kColsG); the weight's gradient g*(y-x), x and y laid out like dout (kColsXY); g*(1-w) or g*w with the
// weight laid out like dout (kColsWFull).
enum ColsKind { kColsG = 0, kColsXY = 1, kColsWFull = 2, kColsDiff = 3 };

// cols_pack_sum with a full-size weight (kColsWFull): the summed product g*(1-w) (x's gradient: sum_lo) or
// g*w, and on the way the other of dx, dy and dw = g*(y-x) (when not null). dw reads the input of x, y that
// is laid out like dout and the target's own input, one value a column (a target of grp columns: GROUPED).
template <typename T, int VEC, int U, typename I, bool GROUPED>
__device__ __forceinline__ void cols_pack_sum_wfull(const ColArgs<T>& a, I c, I r, I nr, I step,
                                                    typename AccOf<T>::type (&acc)[VEC]) {
  using A = typename AccOf<T>::type;
  const I m = static_cast<I>(a.M);
  const bool lo = a.sum_lo;
  const T* full_in = lo ? a.y : a.x;
  T* d_other = lo ? a.dy : a.dx;
  // The target's input for dw, y - x = sign * (full - own): own is x (lo) or y.
  const A sign = lo ? A(1) : A(-1);
  A own[VEC];
  if (a.dw) {
    const T* own_in = lo ? a.x : a.y;
    Raw<T, VEC> op;
    const bool one = GROUPED && a.grp > 1;
    load_raw<T, VEC>(own_in, one ? c / static_cast<I>(a.grp) : c, one, op);
#pragma unroll
    for (int k = 0; k < VEC; ++k) own[k] = raw_at<T, VEC>(op, k);
  }
#pragma unroll 1
  for (; r < nr; r += step * U) {
    Raw<T, VEC> gp[U], wp[U], fp[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const I e = (r + u * step) * m + c;
      if (r + u * step < nr) {
        load_raw<T, VEC>(a.g, e, false, gp[u]);
        load_raw<T, VEC>(a.w, e, false, wp[u]);
        if (a.dw) load_raw<T, VEC>(full_in, e, false, fp[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const I e = (r + u * step) * m + c;
      if (r + u * step >= nr) continue;
      A gv[VEC], wv[VEC], o[VEC];
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        gv[k] = raw_at<T, VEC>(gp[u], k);
        wv[k] = raw_at<T, VEC>(wp[u], k);
        acc[k] += gv[k] * (lo ? A(1) - wv[k] : wv[k]);
      }
      if (d_other) {
#pragma unroll
        for (int k = 0; k < VEC; ++k) o[k] = gv[k] * (lo ? wv[k] : A(1) - wv[k]);
        store_pack<T, VEC>(d_other, e, o);
      }
      if (a.dw) {
#pragma unroll
        for (int k = 0; k < VEC; ++k) o[k] = gv[k] * (sign * (raw_at<T, VEC>(fp[u], k) - own[k]));
        store_pack<T, VEC>(a.dw, e, o);
      }
    }
  }
}

// The column pack at c summed over rows r, r + step, ... below nr into acc (U rows a step, all loads issued
// first; no index math beyond row * M + column), dx and dy written on the way (KIND: ColsKind). GW: the weight
// may be one a target of a.grp columns (a.w_grp), or (kColsWFull) the target's input one a target.
template <typename T, int VEC, int U, int KIND, typename I, bool GW>
__device__ __forceinline__ void cols_pack_sum(const ColArgs<T>& a, I c, I r, I nr, I step,
                                              typename AccOf<T>::type (&acc)[VEC]) {
  using A = typename AccOf<T>::type;
  if constexpr (KIND == kColsWFull) {
    cols_pack_sum_wfull<T, VEC, U, I, GW>(a, c, r, nr, step, acc);
    return;
  }
  constexpr int XY = KIND == kColsXY ? kXYRead : KIND == kColsDiff ? kXYDiff : kNoXY;
  const I m = static_cast<I>(a.M);
  // The column's weights raw, converted where a step's loads are out (as rows_kernel's); one value for the
  // pack where the weight is one a target (a pack never spans two: VEC divides grp).
  Raw<T, VEC> wp;
  const bool w_one = (GW && a.w_grp) || a.w_step == 0;
  const I wi = (GW && a.w_grp ? c / static_cast<I>(a.grp) : c) * static_cast<I>(a.w_step);
  if (a.w) load_raw_lazy<T, VEC>(a.w, wi, w_one, wp);
  PackWeights<A, VEC> pw;
#pragma unroll 1
  for (; r < nr; r += step * U) {
    Raw<T, VEC> gp[U], xp[XY ? U : 1], yp[XY ? U : 1];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (r + u * step < nr)
        load_sum_pack<T, VEC, XY, I>(a.g, a.x, a.y, (r + u * step) * m + c, gp[u], xp[XY ? u : 0], yp[XY ? u : 0]);
    }
    if (a.w) raw_fill<T, VEC>(w_one, wp);
#pragma unroll
    for (int k = 0; k < VEC; ++k) pw.set(k, a.w ? raw_at<T, VEC>(wp, k) : static_cast<A>(a.wsc), a.sum_lo);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (r + u * step < nr)
        use_sum_pack<T, VEC, XY, I>(gp[u], xp[XY ? u : 0], yp[XY ? u : 0], pw, acc, a.dx, a.dy, (r + u * step) * m + c);
    }
  }
}

// One pass: a column pack (VEC columns) belongs to `subs` adjacent lanes (a
// power of two <= 32), lane `sub` taking rows sub, sub + subs, ...; the
// lanes' sums meet in a fixed shuffle tree and the first lane writes tgt.
// Block t takes the column tile t (kThreads / subs packs).
template <typename T, int VEC, int U, int KIND, typename I>
__global__ void __launch_bounds__(kThreads) cols_kernel(ColArgs<T> a) {
  using A = typename AccOf<T>::type;
  const int sub = static_cast<int>(threadIdx.x) & (a.subs - 1);
  const I grp = static_cast<I>((static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x) / a.subs);
  const bool live = grp < static_cast<I>(a.M / VEC);
  const I c = grp * VEC;
  A acc[VEC];
#pragma unroll
  for (int k = 0; k < VEC; ++k) acc[k] = A(0);
  if (live)
    cols_pack_sum<T, VEC, U, KIND, I, false>(a, c, static_cast<I>(sub), static_cast<I>(a.L), static_cast<I>(a.subs), acc);
  for (int o = a.subs / 2; o > 0; o >>= 1) {  // every lane takes part (subs is uniform)
#pragma unroll
    for (int k = 0; k < VEC; ++k) acc[k] += __shfl_xor_sync(0xffffffffu, acc[k], o);
  }
  if (live && sub == 0) store_pack<T, VEC>(a.tgt, c, acc);
}

// cols_sliced_kernel's targets of grp adjacent columns: the tile's column sums (acc of the threads `own`,
// pack pk) meet in shared memory, and thread j adds target j's columns in column order, then writes it
// (P == 1: tgt) or its slice partial (ws[p * targets + target]). Called by every thread of the block.
template <typename T, int VEC>
__device__ __forceinline__ void cols_group_sums(const ColArgs<T>& a, typename AccOf<T>::type (&sums)[VEC][kThreads],
                                                const typename AccOf<T>::type (&acc)[VEC], bool own, int pk) {
  using A = typename AccOf<T>::type;
  __syncthreads();  // the lanes' sums are read
  if (own) {
#pragma unroll
    for (int k = 0; k < VEC; ++k) sums[k][pk] = acc[k];
  }
  __syncthreads();
  const int per = a.qt * VEC / a.grp;  // targets a tile
  const int64_t targets = a.M / a.grp, j = static_cast<int64_t>(blockIdx.x) * per + threadIdx.x;
  if (static_cast<int>(threadIdx.x) >= per || j >= targets) return;
  A s = A(0);
  for (int i = 0, col = static_cast<int>(threadIdx.x) * a.grp; i < a.grp; ++i, ++col) s += sums[col % VEC][col / VEC];
  if (a.P == 1) {
    a.tgt[j] = cvt_out<T>(s);
  } else {
    a.ws[static_cast<int64_t>(blockIdx.y) * targets + j] = s;
  }
}

// Row slices: block (t, p) takes column tile t (a.qt column packs) over rows
// [p * chunk, (p + 1) * chunk), with blockDim.x / qt row lanes: thread i
// takes pack i % qt on rows lane, lane + lanes, ... (lane = i / qt), so a
// warp's loads are consecutive packs of a row and no thread idles for want
// of a power of two. The lanes' sums meet in shared memory in lane order.
// P == 1: lane 0 writes tgt; else the slice's column sums go to
// ws[p * M + column] and finalize_kernel's mode 4 adds them (fin_chunked),
// the same launch with or without graph capture. GROUPED (targets of a.grp
// columns, or a weight one a target): tiles hold whole targets (qt * VEC a
// multiple of grp) and each target's columns are added in column order
// (cols_group_sums) before the same writes, per target.
template <typename T, int VEC, int U, int KIND, bool GROUPED>
__global__ void __launch_bounds__(kThreads) cols_sliced_kernel(ColArgs<T> a) {
  using A = typename AccOf<T>::type;
  __shared__ A lane_sums[VEC][kThreads];
  const int qt = a.qt, lanes = static_cast<int>(blockDim.x) / qt;
  const int pk = static_cast<int>(threadIdx.x) % qt, lane = static_cast<int>(threadIdx.x) / qt;
  const int32_t grp = static_cast<int32_t>(blockIdx.x) * qt + pk;
  const bool live = grp < static_cast<int32_t>(a.M / VEC);
  const int32_t c = grp * VEC;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * a.chunk, r1 = r0 + a.chunk < a.L ? r0 + a.chunk : a.L;
  A acc[VEC];
#pragma unroll
  for (int k = 0; k < VEC; ++k) acc[k] = A(0);
  if (live)
    cols_pack_sum<T, VEC, U, KIND, int32_t, GROUPED>(a, c, static_cast<int32_t>(r0) + lane, static_cast<int32_t>(r1),
                                                     lanes, acc);
  if (lanes > 1) {
#pragma unroll
    for (int k = 0; k < VEC; ++k) lane_sums[k][threadIdx.x] = acc[k];
    __syncthreads();
    if (lane == 0) {
      for (int l = 1; l < lanes; ++l) {
#pragma unroll
        for (int k = 0; k < VEC; ++k) acc[k] += lane_sums[k][l * qt + pk];
      }
    }
  }
  if constexpr (GROUPED) {
    if (a.grp > 1) {
      cols_group_sums<T, VEC>(a, lane_sums, acc, live && lane == 0, pk);
      return;
    }
  }
  if (!live || lane != 0) return;
  if (a.P == 1) {
    store_pack<T, VEC>(a.tgt, c, acc);
    return;
  }
  A* part = a.ws + static_cast<int64_t>(blockIdx.y) * a.M + c;
#pragma unroll
  for (int k = 0; k < VEC; ++k) part[k] = acc[k];
}

}  // namespace gpu
}  // namespace lerp_core
