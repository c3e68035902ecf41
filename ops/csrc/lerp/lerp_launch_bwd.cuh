// lerp CUDA core, part: host: the backward path choice (small, tile2d, rows, cols, gen_r, gen_k), the gen_r and gen_k
// launches, the public entry points.
// Included in order by lerp.cuh; see its header for the paths and when each is chosen.
#pragma once

#include "lerp_launch_rows_cols.cuh"

namespace lerp_core {
namespace gpu {

// One gen instantiation's kernels: gen_k where the kept positions are innermost, else gen_r (R_ONLY: gen_r
// alone, for the pack widths only gen_r takes).
template <typename T, int VEC, int B, int XY, typename I, bool R_ONLY = false>
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
  bool kept_inner, vec, small;
  int xy;  // XY mode (xy_mode)
  bool half = false;
  // f(GenKernels<...>{}) for the picked instantiation.
  template <int XY, typename F>
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
    with_xy<T>(xy, [&](auto m) { with_kernels<decltype(m)::value>(f); });
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

// Smallest divisor of e that is >= c (e itself when c > e).
inline int64_t divisor_at_least(int64_t e, int64_t c) {
  if (c >= e) return e;
  for (int64_t d = std::max<int64_t>(c, 1); d < e; ++d)
    if (e % d == 0) return d;
  return e;
}

// gen_r: a reduced run of at most this many packs a thread of one block is not sliced.
constexpr int64_t kGenWholePacks = 2;

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
  const std::initializer_list<const void*> ptrs = {a.g, a.x, a.y, a.w, a.out, a.dx, a.dy, a.dw, a.tgt};
  const bool al = all_aligned(ptrs, 16);
  if (rows_apply<T>(lay, a)) {
    launch_rows<T>(lay, a, alloc, stream);
    return true;
  }
  if (const ColsPlan cp = cols_apply<T>(lay, a); cp.slices > 0) {
    launch_cols<T>(lay, a, cp, alloc, stream);
    return true;
  }
  const bool inner_r = reduced_inner(lay, a.target);
  GenPick<T> pick{!inner_r, false, small, xy_mode<T>(need_xy, a.x)};
  int64_t P = 1, gx = 1, gy = 1;
  if (inner_r) {
    if (a.target2 >= 0) return false;
    const int inner = nd - 1;
    pick.vec = al && lay.nr > 0 && vec_ok(lay, inner, V, used);
    pick.half = !pick.vec && lay.nr > 0 &&
                narrow_vec<T>(lay, inner, used, ptrs) == V / 2;
    const int v = pick.width();
    gy = std::min<int64_t>(lay.M, 65535);
    // Enough blocks for one wave, at least one position (pack) per thread.
    const int64_t want = wave_of(pick.kernel());
    const int64_t max_p = std::max<int64_t>(1, ceil_div(lay.L, int64_t(kThreads) * v));
    P = std::min<int64_t>(max_p, std::max<int64_t>(1, ceil_div(want, gy)));
    P = std::min<int64_t>(P, (int64_t(1) << 31) - 1);
    // Short reduced runs (at most kGenWholePacks packs a thread of one block) run whole, one block a target:
    // no slices to meet through the ticket (LERP_GEN_WHOLE=0 slices them; read once, for experiments).
    static const int whole = env_int("LERP_GEN_WHOLE", 1);
    if (whole && lay.L <= int64_t(kThreads) * v * kGenWholePacks) P = 1;
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
    check_cuda(opcore::launch_after(finalize_kernel<T>, dim3(static_cast<unsigned>(f0.blocks + f1.blocks)),
                                    dim3(kThreads), 0, stream, 1, f0, f1),
               "finalize kernel launch");
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

// Training forward when the weight needs a gradient and saves_diff_layout(xs,
// xs, ws) holds (x, y of shape xs; 4- and 8-byte types): out = lerp(x, y, w)
// and diff = y - x in one pass, the contig kernel's or the nd kernel's (16-byte
// packs, narrow ones as the broadcast forward takes them, or one element). The
// backward (lerp_backward_from_diff) then reads dout, w and diff instead of
// dout, w, x and y, as torch.compile's generated code does.
template <typename T>
void lerp_forward_save_diff(const T* x, const T* y, const T* w, T* out, T* diff, const Shape& xs, const Shape& ws,
                            cudaStream_t stream) {
  if (sizeof(T) < 4 || !saves_diff_layout(xs, xs, ws)) {
    throw std::invalid_argument("lerp_forward_save_diff: no one-pass forward for x, y " + shape_str(xs) +
                                " and weight " + shape_str(ws));
  }
  const int64_t n = numel_of(xs);
  if (n == 0) return;
  const int wmode = contig_weight_mode(n, xs, xs, true, numel_of(ws));
  if (wmode >= 0) {
    launch_contig<T, true>(nullptr, x, y, w, wmode, 0.0, out, diff, nullptr, n, stream);
    return;
  }
  constexpr int V = vec_of<T>();
  const Layout lay = make_layout(xs, xs, xs, ws, -1);
  GenArgs<T> a = gen_inputs<T>(nullptr, x, y, w, 0.0);
  a.out = out;
  const bool used[kNumT] = {true, true, true, true};
  const std::initializer_list<const void*> ptrs = {x, y, w, out, diff};
  const int inner = lay.nk + lay.nr - 1;
  if (all_aligned(ptrs, 16) && vec_ok(lay, inner, V, used)) {
    nd_pick<T, V, false>(lay, a, n, stream, diff);
  } else if (const int nv = fwd_narrow_on() ? narrow_vec<T>(lay, inner, used, ptrs) : 0; nv > 0) {
    nd_pick_narrow<T>(nv, lay, a, n, stream, diff);
  } else {
    nd_pick<T, 1, false>(lay, a, n, stream, diff);
  }
  check_cuda(cudaGetLastError(), "saved-diff forward (nd) kernel launch");
}

// Gradients from diff = y - x saved by lerp_forward_save_diff (x, y of shape
// xs): dx = g*(1-w), dy = g*w full size, dw = g*diff summed to ws; a null
// output is not computed: lerp_backward's paths in their kXYDiff mode (y
// alone, zeros for x). dx and dy have the bits of the x, y backward; dw is the
// same sum, which a path may split otherwise (its grid follows the kXYDiff
// kernel's occupancy).
template <typename T>
void lerp_backward_from_diff(const T* g, const T* diff, const T* w, T* dx, T* dy, T* dw, const Shape& xs,
                             const Shape& ws, const Alloc& alloc, cudaStream_t stream) {
  if (sizeof(T) < 4) throw std::invalid_argument("lerp_backward_from_diff: 4- and 8-byte types only");
  lerp_backward<T>(g, nullptr, diff, w, 0.0, dx, dy, dw, xs, xs, ws, alloc, stream);
}

}  // namespace gpu
}  // namespace lerp_core
