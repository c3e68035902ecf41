// lerp CUDA core, part: host: the rows and cols backward paths: whether a pass takes them (rows_apply,
// cols_apply, cols_plan) and their launches, with the ticket counters and the finalize launch they share.
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

// rows_kernel's slices a row where `rows` rows share a wave of `wave` blocks: as many as keep the grid within
// the wave, at least one. A grid just past a wave runs a second wave of a few blocks after the first (f32
// w [64,1] against [64,65536]: 7 slices a row, 448 blocks against a wave of 396). LERP_ROWS_OVER_WAVE=1 rounds
// up instead, to one wave or just past it (read once; for experiments). gen_r and gen_k keep rounding up:
// within the wave, three of the sweep's small backwards ran slower there (lerp-design.md, rows).
inline int64_t rows_slices_in_wave(int64_t wave, int64_t rows) {
  static const int over = env_int("LERP_ROWS_OVER_WAVE", 0);
  return std::max<int64_t>(1, over ? ceil_div(wave, rows) : wave / rows);
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

template <typename T, int VEC, int XY, bool ENDS>
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
  check_cuda(opcore::launch_after(finalize_kernel<T>, dim3(static_cast<unsigned>(f.blocks)), dim3(kThreads), 0, stream,
                                  1, f, FinJob<T>{}),
             "finalize kernel launch");
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
template <typename T, int VEC, int XY, bool ENDS>
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
  with_xy<T>(xy_mode<T>(a.target == kW, a.x), [&](auto m) {
    constexpr int XY = decltype(m)::value;
    if (al && r.L % V == 0) {
      rows_launch<T, V, XY, false>(r, alloc, stream);
    } else if (al) {  // whole packs from each row's first aligned position, the ends one element a thread
      rows_launch<T, V, XY, true>(r, alloc, stream);
    } else {
      rows_launch<T, 1, XY, false>(r, alloc, stream);
    }
  });
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
    if constexpr (sizeof(T) >= 4) {  // the saved-diff kind exists for 4- and 8-byte types only
      if (kind == kColsDiff) return f(v, std::integral_constant<int, kColsDiff>{});
    }
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
  const bool xy = view.kind == kColsXY || view.kind == kColsDiff, wf = view.kind == kColsWFull;
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
  v.kind = a.target != kW ? kColsG : xy_mode<T>(true, a.x) == kXYDiff ? kColsDiff : kColsXY;
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

}  // namespace gpu
}  // namespace lerp_core
