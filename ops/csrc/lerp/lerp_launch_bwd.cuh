// lerp CUDA core, part: host: the backward path choice (rows, cols, gen_r, gen_k) and its launches; the public entry points.
// Included in order by lerp.cuh; see its header for the paths and when each is chosen.
#pragma once

#include <type_traits>

#include "lerp_small.cuh"

namespace lerp_core {
namespace gpu {

// Does the reduction of `target` over this layout run as gen_r (its reduced
// dims innermost, or nothing kept)? Else gen_k.
inline bool reduced_inner(const Layout& lay, int target) {
  const int nd = lay.nk + lay.nr;
  return target < 0 || (lay.nr > 0 && lay.stride[kOut][nd - 1] == 1 && lay.L >= 256) || lay.nk == 0;
}

// One gen instantiation's kernels: gen_k where the kept positions are innermost, else gen_r (R_ONLY: gen_r
// alone, for the pack widths only gen_r takes).
template <typename T, int VEC, int B, bool XY, typename I, bool R_ONLY = false>
struct GenKernels {
  static const void* ptr(bool kept_inner) {
    if constexpr (!R_ONLY) {
      if (kept_inner) return reinterpret_cast<const void*>(&gen_k_kernel<T, VEC, B, XY, I>);
    }
    return reinterpret_cast<const void*>(&gen_r_kernel<T, VEC, B, XY, I>);
  }
  static void launch(bool kept_inner, dim3 grid, const Layout& lay, const GenArgs<T>& a, cudaStream_t stream) {
    if constexpr (!R_ONLY) {
      if (kept_inner) {
        gen_k_kernel<T, VEC, B, XY, I><<<grid, kThreads, 0, stream>>>(lay, a);
        return;
      }
    }
    gen_r_kernel<T, VEC, B, XY, I><<<grid, kThreads, 0, stream>>>(lay, a);
  }
};

// The gen kernel instantiation: 16-byte packs (vec), 8-byte ones (half: gen_r only, where the reduced
// run or a pointer does not divide into 16 bytes: y [1,1] against [1847908,9] bf16, 16,631,172
// positions) or one element; 32- or 64-bit indices; and whether x and y are read (a weight gradient).
// Positions per batch: 4 for 32-bit vectorized passes without x, y (measured on an H200: 13.0 vs 15.4 us
// for the [16,1,1,1] x [16,3,224,224] backward); 1 otherwise (with x, y the batch's registers cost more
// than it gained: 16.9 vs 18.1 us for [16,102400] with w [1]).
template <typename T>
struct GenPick {
  bool kept_inner, vec, small, xy;
  bool half = false;
  // f(GenKernels<...>{}) for the picked instantiation.
  template <bool XY, typename F>
  void with_kernels(F&& f) const {
    constexpr int V = vec_of<T>();
    if constexpr (V > 2) {
      if (half) {
        if (small) {
          f(GenKernels<T, V / 2, XY ? 1 : 4, XY, int32_t, true>{});
        } else {
          f(GenKernels<T, V / 2, 1, XY, int64_t, true>{});
        }
        return;
      }
    }
    if (!small) {
      if (vec) {
        f(GenKernels<T, V, 1, XY, int64_t>{});
      } else {
        f(GenKernels<T, 1, 1, XY, int64_t>{});
      }
    } else if (!vec) {
      f(GenKernels<T, 1, 1, XY, int32_t>{});
    } else {
      f(GenKernels<T, V, XY ? 1 : 4, XY, int32_t>{});
    }
  }
  template <typename F>
  void with_any(F&& f) const {
    if (xy) {
      with_kernels<true>(f);
    } else {
      with_kernels<false>(f);
    }
  }
  // Pack width in elements.
  int width() const { return vec ? vec_of<T>() : half ? vec_of<T>() / 2 : 1; }
  const void* kernel() const {
    const void* k = nullptr;
    with_any([&](auto K) { k = decltype(K)::ptr(kept_inner); });
    return k;
  }
  void launch(dim3 grid, const Layout& lay, const GenArgs<T>& a, cudaStream_t stream) const {
    with_any([&](auto K) { decltype(K)::launch(kept_inner, grid, lay, a, stream); });
  }
};

// rows_kernel's slices a row where `rows` rows share a wave of `wave` blocks: as many as keep the grid within
// the wave, at least one. A grid just past a wave runs a second wave of a few blocks after the first (f32
// w [64,1] against [64,65536]: 7 slices a row, 448 blocks against a wave of 396). LERP_ROWS_OVER_WAVE=1 rounds
// up instead, to one wave or just past it (read once; for experiments). gen_r and gen_k keep rounding up:
// within the wave, three of the sweep's small backwards ran slower there (lerp-design.md, rows).
inline int64_t rows_slices_in_wave(int64_t wave, int64_t rows) {
  static const int over = env_int("LERP_ROWS_OVER_WAVE", 0);
  return std::max<int64_t>(1, over ? ceil_div(wave, rows) : wave / rows);
}

// Smallest divisor of e that is >= c (e itself when c > e).
inline int64_t divisor_at_least(int64_t e, int64_t c) {
  if (c >= e) return e;
  for (int64_t d = std::max<int64_t>(c, 1); d < e; ++d)
    if (e % d == 0) return d;
  return e;
}

// Per-(device, stream) ticket counters of rows_kernel and gen_r_kernel: kRowCounters zeroed
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

template <typename T, int VEC, bool XY, bool ENDS>
struct RowKernels {
  template <int U>
  static const void* ptr(bool i64) {
    return i64 ? reinterpret_cast<const void*>(&rows_kernel<T, VEC, U, XY, int64_t, ENDS>)
               : reinterpret_cast<const void*>(&rows_kernel<T, VEC, U, XY, int32_t, ENDS>);
  }
  template <int U>
  static void launch(bool i64, dim3 grid, const RowArgs<T>& r, cudaStream_t stream) {
    if (i64) {
      rows_kernel<T, VEC, U, XY, int64_t, ENDS><<<grid, kThreads, 0, stream>>>(r);
    } else {
      rows_kernel<T, VEC, U, XY, int32_t, ENDS><<<grid, kThreads, 0, stream>>>(r);
    }
  }
};

// The finalize job that adds [P, M] slice partials into tgt in fixed order (mode 1: a thread a target, in
// slice order; mode 2: a warp a target, warp_sum_partials; mode 4: a block per 32 targets, fin_chunked), at
// most 8 blocks an SM.
template <typename T>
FinJob<T> partials_job(const typename AccOf<T>::type* ws, int64_t P, int64_t M, T* tgt, int mode) {
  FinJob<T> f;
  f.ws = ws;
  f.P = P;
  f.M = M;
  f.tgt = tgt;
  f.mode = mode;
  f.blocks = std::max<int64_t>(1, std::min<int64_t>(ceil_div(M, mode == 1 ? kThreads : mode == 4 ? 32 : kThreads / 32),
                                                    int64_t(sm_count()) * 8));
  return f;
}

// partials_job as its own launch, where the slices' last block could not add them (rows, cols).
template <typename T>
void finalize_partials(const typename AccOf<T>::type* ws, int64_t P, int64_t M, T* tgt, int mode,
                       cudaStream_t stream) {
  const FinJob<T> f = partials_job<T>(ws, P, M, tgt, mode);
  finalize_kernel<T><<<static_cast<unsigned>(f.blocks), kThreads, 0, stream>>>(f, FinJob<T>{});
  check_cuda(cudaGetLastError(), "finalize kernel launch");
}

// rows_kernel's packs per thread per step U and slices per row P: the
// smallest U in {1, 2, 4} whose grid of one step per thread (P = packs per
// row / (256 U)) fits in one wave of that kernel (H200, x [16,1,1,1] w 0.5:
// U = 4, 7.5 us kernel time, against 10.3 with 2 and 11.4 with 1 on 66cbc9d,
// docs/ops/diagnostics/h200/rows/rows_LERP_ROWS_PACKS*); otherwise
// U = 4 and P equal slices, as many as keep the grid within one wave
// (rows_slices_in_wave; P = 1 when the rows alone fill it). Rows of at most
// 4 * 256 packs are not sliced: the smallest U that holds one in a step, so
// that no block waits on a ticket (small problems, where that wait is most of
// the time). LERP_ROWS_PACKS=1, 2 or 4 forces U, LERP_ROWS_WHOLE=0 slices
// short rows too (read once).
template <typename T, int VEC, bool XY, bool ENDS>
void rows_launch(RowArgs<T> r, const Alloc& alloc, cudaStream_t stream) {
  using K = RowKernels<T, VEC, XY, ENDS>;
  static const int forced = env_int("LERP_ROWS_PACKS", 0);
  static const int whole = env_int("LERP_ROWS_WHOLE", 1);
  const bool i64 = r.L >= (int64_t(1) << 30);
  const int64_t lv = r.L / VEC;
  const int64_t gy = std::min<int64_t>(r.M, 65535);
  const int us[3] = {1, 2, 4};
  const int64_t wave[3] = {wave_of(K::template ptr<1>(i64)), wave_of(K::template ptr<2>(i64)),
                           wave_of(K::template ptr<4>(i64))};
  int k = -1;
  if (forced == 0 && whole && gy <= wave[2])  // a short row in one step of one block
    for (int i = 0; i < 3 && k < 0; ++i)
      if (lv <= int64_t(kThreads) * us[i]) k = i;
  for (int i = 0; i < 3 && k < 0; ++i) {
    const int64_t s1 = ceil_div(lv, int64_t(kThreads) * us[i]);  // one-step slices per row
    if ((forced == 0 && s1 * gy <= wave[i]) || forced == us[i]) k = i;
  }
  int64_t cp = int64_t(kThreads) * us[k < 0 ? 2 : k];  // packs per slice: one step
  if (k < 0) {  // big rows: U = 4 and P slices (of one or more steps), about one wave in all
    k = 2;
    cp = ceil_div(lv, std::min<int64_t>(ceil_div(lv, cp), rows_slices_in_wave(wave[k], gy)));
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
  if (r.P > 1 && !r.cnt) finalize_partials<T>(r.ws, r.P, r.M, r.tgt, 2, stream);  // as the last block's warp
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
    xy ? rows_launch<T, V, true, false>(r, alloc, stream) : rows_launch<T, V, false, false>(r, alloc, stream);
  } else if (al) {  // whole packs from each row's first aligned position, the ends one element a thread
    xy ? rows_launch<T, V, true, true>(r, alloc, stream) : rows_launch<T, V, false, true>(r, alloc, stream);
  } else {
    xy ? rows_launch<T, 1, true, false>(r, alloc, stream) : rows_launch<T, 1, false, false>(r, alloc, stream);
  }
}

// Can this backward pass run as a cols kernel? One reduced gradient (nothing
// fused) whose kept positions are the innermost, contiguous ones of dout
// (dout is [L, M] row-major), or dout [O, K, G] with the gradient kept along
// K and G at most kColsMaxGroup (G adjacent columns a target), a weight
// constant down each column or (x's or y's gradient; dw then written on the
// way, from the other input laid out like dout) laid out like dout, for the
// weight's gradient x and y laid out like dout, 32-bit offsets, and a plan
// (cols_plan): one pass (cols_kernel) over at most kColsMaxRows rows with
// enough columns to fill a wave with at most 32 lanes per column pack, or row
// slices (cols_sliced_kernel) with at least 64 live threads an SM in all.
// LERP_COLS=0 sends these to tile2d, gen_k or gen_r, LERP_COLS_SLICES=0 only
// the sliced ones, LERP_COLS_GROUPS=0 only the [O, K, G] ones,
// LERP_COLS_WFULL=0 only those with a full-size weight (read once; for
// experiments).
constexpr int64_t kColsMaxRows = 64;
constexpr int64_t kColsMaxGroup = 64;
// cols_sliced_kernel's row slices: at most kColsMaxSlices, or as many as keep the [P, M] partials within
// kColsPartials values or within one a kColsShare positions of dout (large problems: y [1,4,173] against
// [94866,4,173], a wave of slices where 128 would leave 128 blocks).
constexpr int64_t kColsMaxSlices = 128;
constexpr int64_t kColsPartials = int64_t(1) << 16;
constexpr int64_t kColsShare = 64;
constexpr int kColsU = 4;  // rows a lane loads per step

// dout as the cols kernels see it: [rows, cols] row-major, the gradient kept along the columns, grp
// adjacent columns a target (1: the kept positions innermost; G: dout [O, K, G]), and the weight's index
// (w[c * w_step], or w[(c / grp) * w_step] where it is one a target: w_grp).
struct ColsView {
  int64_t rows = 0, cols = 0, w_step = 0;
  int grp = 1;
  bool w_grp = false;
  int kind = kColsG;  // ColsKind; kColsWFull: the weight laid out like dout
};

// The cols kernels' configuration: the view, columns a pack; one pass: lanes a column pack (`subs`); sliced:
// column packs a tile (qt, whole targets) and threads a block (qt times the row lanes); row slices and their
// length, column tiles (blocks a slice). slices == 0: the layout takes no cols kernel; one_pass: cols_kernel.
struct ColsPlan {
  ColsView view;
  int vec = 1, subs = 1, qt = 1, threads = kThreads;
  bool one_pass = false;
  int64_t slices = 0, chunk = 0, tiles = 0;
};

// f(std::integral_constant<int, VEC>, std::integral_constant<int, KIND>) for the cols kernels' instantiation
// of pack width vec (vec_of<T>(), half of it, or 1) and kind (ColsKind): the kernel that cols_plan sizes is the
// one launch_cols runs.
template <typename T, typename F>
void with_cols_kernel(int vec, int kind, F&& f) {
  constexpr int V = vec_of<T>();
  const auto pick = [&](auto v) {
    if (kind == kColsXY) {
      f(v, std::integral_constant<int, kColsXY>{});
    } else if (kind == kColsWFull) {
      f(v, std::integral_constant<int, kColsWFull>{});
    } else {
      f(v, std::integral_constant<int, kColsG>{});
    }
  };
  if (vec == V) {
    pick(std::integral_constant<int, V>{});
  } else if (V > 2 && vec == V / 2) {
    pick(std::integral_constant<int, (V > 2 ? V / 2 : 1)>{});
  } else {
    pick(std::integral_constant<int, 1>{});
  }
}

// One pass: subs is the largest power of two (<= 32, <= rows) whose grid still fits in one wave (H200,
// x [3,224,224] vs y [16,3,224,224]: 4 lanes, 588 blocks, 6.5 us kernel time, against 6.8 with 2 lanes,
// 9.5 with 8 (1.8 waves), 11.8 with 16, and gen_k's 10.9); LERP_COLS_SUBS=1..32 forces it (read once; for
// experiments). Sliced: column tiles of at most kThreads packs, as even as the packs allow, and as many row
// lanes as fill a block (at most 32; [4096,768] bf16: 96 packs, 2 lanes, 192 threads; [10752,224] bf16: 28
// packs, 9 lanes; [O, K, G]: whole targets a tile, w [1,1,5246,1] against [9,2,5246,31] f16: 8 targets of
// 31 one-column packs, 248 threads); rows cut into slices of at least one step a lane, so that the grid is
// about one wave,
// at most kColsMaxSlices (LERP_COLS_MAX_SLICES, read once; for experiments) or as many as keep the partials
// within kColsPartials (under 512 targets) or one a kColsShare positions; 256 slices ran slower on the small
// problems of lerp-design.md, cols.
template <typename T>
ColsPlan cols_plan(const ColsView& view, const GenArgs<T>& a) {
  constexpr int V = vec_of<T>();
  static const int forced = env_int("LERP_COLS_SUBS", 0);
  static const int sliced_on = env_int("LERP_COLS_SLICES", 1);
  static const int64_t max_slices = env_int("LERP_COLS_MAX_SLICES", static_cast<int>(kColsMaxSlices));
  ColsPlan p;
  p.view = view;
  const bool xy = view.kind == kColsXY, wf = view.kind == kColsWFull;
  const int g = view.grp;
  // Packs of vec columns where the columns, a target's columns and every pointer allow them: 16 bytes, else
  // 8 (2-byte columns of a multiple of 4, f32 of 2), else one column.
  const auto fits = [&](int vec) {
    const uintptr_t m = uintptr_t(vec) * sizeof(T) - 1;
    const auto al = [m](const void* q) { return (reinterpret_cast<uintptr_t>(q) & m) == 0; };
    const bool cols_ok = view.cols % vec == 0 && (g == 1 || g % vec == 0) && al(a.g) && (g > 1 || al(a.tgt)) &&
                         (a.target == kX || al(a.dx)) && (a.target == kY || al(a.dy)) && (!xy || (al(a.x) && al(a.y)));
    if (wf)  // the weight, dw and x or y read full size; the target's own input a column at a time (g == 1)
      return cols_ok && al(a.w) && (!a.dw || (al(a.dw) && al(a.target == kX ? a.y : a.x))) &&
             (!a.dw || g > 1 || al(a.target == kX ? a.x : a.y));
    return cols_ok && (!a.w || view.w_grp || view.w_step == 0 || al(a.w));
  };
  p.vec = fits(V) ? V : (V > 2 && fits(V / 2)) ? V / 2 : 1;
  const int64_t groups = view.cols / p.vec, rows = view.rows;
  p.one_pass = g == 1 && rows <= kColsMaxRows && view.cols / V * 32 >= int64_t(sm_count()) * 2048;  // an SM's threads
  if (p.one_pass) {
    const void* k = nullptr;
    with_cols_kernel<T>(p.vec, view.kind, [&](auto v, auto x) {
      k = reinterpret_cast<const void*>(&cols_kernel<T, decltype(v)::value, kColsU, decltype(x)::value, int32_t>);
    });
    const int64_t wave = wave_of(k);
    while (p.subs < 32 && 2 * p.subs <= rows && ceil_div(groups * 2 * p.subs, kThreads) <= wave) p.subs *= 2;
    if (forced == 1 || forced == 2 || forced == 4 || forced == 8 || forced == 16 || forced == 32) p.subs = forced;
    p.tiles = std::max<int64_t>(1, ceil_div(groups * p.subs, kThreads));
    p.chunk = rows;
    p.slices = 1;
    return p;
  }
  if (!sliced_on) return p;
  const bool grouped = g > 1 || view.w_grp;
  // Tiles of whole units (a target's packs; a pack where targets are single columns).
  const int64_t unit = g > 1 ? g / p.vec : 1, units = groups / unit, targets = view.cols / g;
  p.tiles = ceil_div(units, kThreads / unit);
  p.qt = static_cast<int>(ceil_div(units, p.tiles) * unit);
  const int lanes = static_cast<int>(std::min<int64_t>({32, kThreads / p.qt, rows}));
  p.threads = p.qt * lanes;
  const void* k = nullptr;
  with_cols_kernel<T>(p.vec, view.kind, [&](auto v, auto x) {
    k = grouped ? reinterpret_cast<const void*>(&cols_sliced_kernel<T, decltype(v)::value, kColsU, decltype(x)::value, true>)
                : reinterpret_cast<const void*>(&cols_sliced_kernel<T, decltype(v)::value, kColsU, decltype(x)::value, false>);
  });
  const int64_t wave = int64_t(sm_count()) * blocks_per_sm(k, p.threads);
  const int64_t by_rows = std::max<int64_t>(1, rows / (int64_t(lanes) * kColsU));
  const int64_t cap = std::max<int64_t>({1, max_slices, kColsPartials / targets, rows * view.cols / kColsShare / targets});
  const int64_t want = std::min({cap, by_rows, std::max<int64_t>(1, wave / p.tiles)});
  p.chunk = ceil_div(rows, want);
  p.slices = ceil_div(rows, p.chunk);
  // Tiles whose rows are under 128 bytes (few columns: w [1,10] against [1141341,10] f32 ran slower here,
  // lerp-design.md) and grids with under 64 live threads an SM: tile2d or gen_k.
  if (p.qt * p.vec * int64_t(sizeof(T)) < 128 || groups * lanes * p.slices < int64_t(sm_count()) * 64) p.slices = 0;
  return p;
}

// The layout's cols plan (cols_plan), or none (slices == 0) where the pass cannot run as a cols kernel.
// Layout dims: [columns | rows] (kept innermost), or [K | O, G] for dout [O, K, G].
template <typename T>
ColsPlan cols_apply(const Layout& lay, const GenArgs<T>& a) {
  static const int on = env_int("LERP_COLS", 1);
  static const int groups_on = env_int("LERP_COLS_GROUPS", 1);
  static const int wfull_on = env_int("LERP_COLS_WFULL", 1);
  if (!on || a.target < 0 || a.target2 >= 0 || lay.nk != 1) return {};
  const int nd = lay.nk + lay.nr;
  const int64_t* so = lay.stride[kOut];
  ColsView v;
  if (lay.nr == 1) {
    if (so[0] != 1 || so[1] != lay.M || reduced_inner(lay, a.target)) return {};
    v.rows = lay.L;
  } else if (lay.nr == 2 && groups_on) {
    const int64_t G = lay.size[2];
    if (G > kColsMaxGroup || so[2] != 1 || so[0] != G || so[1] != lay.M * G) return {};
    v.grp = static_cast<int>(G);
    v.rows = lay.size[1];
  } else {
    return {};
  }
  v.cols = lay.M * v.grp;
  const auto like_out = [&](int t) {
    for (int i = 0; i < nd; ++i)
      if (lay.stride[t][i] != so[i]) return false;
    return true;
  };
  v.kind = a.target == kW ? kColsXY : kColsG;
  if (a.target == kW && (!like_out(kX) || !like_out(kY))) return {};
  if (a.w && like_out(kW) && wfull_on) {
    // The weight full size (kColsWFull): dw reads the other of x, y full size and the target's input a column
    // (a target) at a time.
    if (a.dw && (!like_out(a.target == kX ? kY : kX) || lay.stride[a.target][0] != 1)) return {};
    v.kind = kColsWFull;
  } else if (a.w) {  // constant down the rows; with targets of G columns one a target or one a column
    const int64_t* sw = lay.stride[kW];
    if (sw[1] != 0 || a.dw) return {};
    v.w_grp = v.grp > 1 && sw[2] == 0;
    if (v.grp > 1 && !v.w_grp && (sw[2] != 1 || sw[0] != v.grp)) return {};
    v.w_step = v.grp > 1 && !v.w_grp ? 1 : sw[0];
  }
  return small_layout(lay) ? cols_plan<T>(v, a) : ColsPlan{};
}

// The cols pass for a layout with the plan cols_apply() gave it: the sliced kernel's partials added by a
// finalize launch in a fixed order (mode 4).
template <typename T>
void launch_cols(const Layout& lay, const GenArgs<T>& a, const ColsPlan& p, const Alloc& alloc, cudaStream_t stream) {
  using A = typename AccOf<T>::type;
  ColArgs<T> c;
  fill_sum_args<T>(lay, a, c);
  c.M = p.view.cols;
  c.L = p.view.rows;
  c.w_step = p.view.w_step;
  c.w_grp = p.view.w_grp;
  c.grp = p.view.grp;
  c.dw = a.dw;
  c.subs = p.subs;
  c.qt = p.qt;
  c.P = static_cast<int>(p.slices);
  c.chunk = p.chunk;
  const int64_t targets = c.M / c.grp;
  if (c.P > 1) c.ws = static_cast<A*>(alloc(sizeof(A) * c.P * targets));
  const dim3 grid(static_cast<unsigned>(p.tiles), static_cast<unsigned>(c.P));
  with_cols_kernel<T>(p.vec, p.view.kind, [&](auto v, auto k) {
    constexpr int VEC = decltype(v)::value, KIND = decltype(k)::value;
    if (p.one_pass) {
      cols_kernel<T, VEC, kColsU, KIND, int32_t><<<grid, kThreads, 0, stream>>>(c);
    } else {
      const unsigned threads = static_cast<unsigned>(p.threads);
      if (c.grp > 1 || c.w_grp) {
        cols_sliced_kernel<T, VEC, kColsU, KIND, true><<<grid, threads, 0, stream>>>(c);
      } else {
        cols_sliced_kernel<T, VEC, kColsU, KIND, false><<<grid, threads, 0, stream>>>(c);
      }
    }
  });
  check_cuda(cudaGetLastError(), "cols kernel launch");
  if (c.P > 1) finalize_partials<T>(c.ws, c.P, targets, c.tgt, 4, stream);
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
  const auto aligned_all = [&](uintptr_t bytes) {
    for (const void* q : {static_cast<const void*>(a.g), static_cast<const void*>(a.x), static_cast<const void*>(a.y),
                          static_cast<const void*>(a.w), static_cast<const void*>(a.out), static_cast<const void*>(a.dx),
                          static_cast<const void*>(a.dy), static_cast<const void*>(a.dw), static_cast<const void*>(a.tgt)})
      if (reinterpret_cast<uintptr_t>(q) % bytes != 0) return false;
    return true;
  };
  const bool al = aligned_all(16), al8 = aligned_all(8);
  if (rows_apply<T>(lay, a)) {
    launch_rows<T>(lay, a, alloc, stream);
    return true;
  }
  if (const ColsPlan cp = cols_apply<T>(lay, a); cp.slices > 0) {
    launch_cols<T>(lay, a, cp, alloc, stream);
    return true;
  }
  const bool inner_r = reduced_inner(lay, a.target);
  GenPick<T> pick{!inner_r, false, small, need_xy};
  int64_t P = 1, gx = 1, gy = 1;
  if (inner_r) {
    if (a.target2 >= 0) return false;
    const int inner = nd - 1;
    pick.vec = al && lay.nr > 0 && vec_ok(lay, inner, V, used);
    pick.half = !pick.vec && V > 2 && lay.nr > 0 && al8 && vec_ok(lay, inner, V / 2, used);
    const int v = pick.width();
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
    const int v = pick.width();
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
  // How the partials are added (finalize_kernel's mode, or gen_r's last blocks in the same mode).
  const int fin_mode = P >= 16 && lay.M <= int64_t(sms) * 64 ? 2 : 1;
  if (inner_r && a.target >= 0 && P > 1) {  // gen_r: the last block of each target's slices adds them
    a.cnt = row_counters(stream, lay.M);
    a.fin_mode = fin_mode;
  }
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
  if (a.target >= 0 && a.P > 1 && !a.cnt) f0 = partials_job<T>(a.ws, a.P, lay.M, a.tgt, fin_mode);
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

// Does this backward run as tile2d? Its [M, L] view exists with L within a
// tile (and within 1024 for a gradient summed down the columns), some
// requested gradient is summed along rows or down columns, a single reduced
// gradient is not one that the one-pass rows or cols kernel takes, and column
// sums need no finalize launch unless the problem is large (2^24 positions
// or more: there the one pass pays for it; H100, bf16 w [768] against
// [32,128,768]: 30.3 us against gen_k's 25.0; y [1,4,173] against
// [94866,4,173] with LERP_COLS_WFULL=0: 365 against 485). LERP_TILE2D=0
// sends these to the paths above (read once; for experiments).
constexpr int64_t kT2LargeCols = int64_t(1) << 24;

template <typename T>
bool tile2d_apply(const Shape& os, const Shape& xs, const Shape& ys, const Shape& ws, bool has_w,
                  const std::vector<int>& reduced, const GenArgs<T>& base, View2& v) {
  static const int on = env_int("LERP_TILE2D", 1);
  const int64_t n = numel_of(os);
  if (!on || n >= (int64_t(1) << 31) - (int64_t(1) << 20)) return false;
  const Shape* in[3] = {&xs, &ys, has_w ? &ws : nullptr};
  v = view2d(os, in, kT2Bytes / sizeof(typename AccOf<T>::type));
  if (!v.ok) return false;
  bool col = false, rowcol = false;
  for (int t : reduced) {
    const int k = v.kind[t - 1];
    col = col || k == kT2Col;
    rowcol = rowcol || k == kT2Row || k == kT2Col;
  }
  if (!rowcol || (col && v.L > int64_t(kT2ColsPerThread) * kThreads)) return false;
  if (col && n < kT2LargeCols) {  // blocks: about one per SM at most (an estimate of the launch's grid)
    const int64_t rows = std::max<int64_t>(1, (kT2Bytes / int64_t(sizeof(typename AccOf<T>::type))) / v.L);
    if (std::min<int64_t>(ceil_div(v.M, rows), sm_count()) * v.L > kT2TicketPartials) return false;
  }
  if (reduced.size() == 1) {
    GenArgs<T> a = base;
    a.target = reduced[0];
    const Layout lay = make_layout(os, xs, ys, ws, a.target);
    if (rows_apply<T>(lay, a) || cols_apply<T>(lay, a).slices > 0) return false;
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
  Layout lay_of[kNumT];  // each reduced gradient's layout, made once for every path below
  std::vector<Layout> lays;
  for (int t : reduced) {
    lay_of[t] = make_layout(os, xs, ys, ws, t);
    lays.push_back(lay_of[t]);
  }
  if (small_apply(n, lays, full[kX] || full[kY] || full[kW])) {
    launch_small<T>(reduced, lays, g, x, y, w, w_scalar, outs, full, stream);
    return;
  }
  View2 v2;
  if (tile2d_apply<T>(os, xs, ys, ws, w != nullptr, reduced, base, v2)) {
    launch_tile2d<T>(v2, g, x, y, w, w_scalar, dx, dy, dw, [stream]() { return row_counters(stream, 1); }, alloc,
                     stream);
    return;
  }
  bool first = true;
  // Two reduced gradients in one pass where possible: a kept-innermost (gen_k)
  // one whose pass also sums a second one that is constant per block.
  if (reduced.size() >= 2) {
    bool fused = false;
    for (size_t i = 0; i < reduced.size() && !fused; ++i) {
      const int t = reduced[i];
      const Layout& lay = lay_of[t];
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
    launch_general<T>(lay_of[t], a, alloc, stream);
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
