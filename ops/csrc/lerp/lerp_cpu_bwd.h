// CPU backward paths: elementwise gradients, gradients reduced over broadcast dims, and the saved-diff path.
//
// dx = sum_to_x(g * (1 - w)), dy = sum_to_y(g * w), dw = sum_to_w(g * (y - x)). Gradients of full-shape
// inputs are written in one fused pass over the output; each broadcast input's gradient is a reduction,
// its terms computed in float (double for double) and summed in double:
//   rows:    the innermost output dim is reduced (e.g. a per-row weight [R, 1], a one-element weight):
//            per target element, fixed chunks of kChunk reduced positions summed into eight lanes;
//   columns: the innermost output dim is kept (e.g. y [C, H, W] against [N, C, H, W]): per tile of
//            kTile target elements, a sum over the reduced positions, one lane per element; fixed chunks
//            of the reduced positions when the target is small, so that there is work for every thread.
// The chunking depends on the shapes only and the chunks' partial sums are added in chunk order, so
// the result has the same bits for any thread count, and no temporary is as large as the output.
#pragma once

#include <cstdint>
#include <vector>

#include "common/cpu_parallel.h"
#include "lerp_cpu_tiles.h"

namespace lerp_core {
namespace cpu {

constexpr int64_t kChunk = 65536;     // reduced positions per partial sum (rows)
constexpr int64_t kSmallTarget = 4096;  // below this many target elements, columns also chunk the reductions

// A backward's operands, and per-thread tile buffers for them.
template <typename T>
struct Operands {
  using A = typename AccOf<T>::type;
  const T *g, *x, *y;
  Weight<T> w;
  A bg[kTile], bx[kTile], by[kTile], bw[kTile];

  // Fills the weight buffer once when the weight is a scalar (call on each thread's copy).
  void prepare() {
    if (!w.p)
      for (int64_t i = 0; i < kTile; ++i) bw[i] = w.scalar;
  }

  // The operands of n positions starting at offsets off, each tensor moving by st[slot] per position, in
  // the accumulation type (see view()): dout always, x and y for dw's term (xy), the weight for dx's and
  // dy's (wt). A tile's gradients then share one load (and conversion) of each operand.
  const A *vg, *vx, *vy, *vw;
  void load_tile(const int64_t* off, const int64_t* st, int64_t n, bool xy, bool wt) {
    vg = view(g + off[kOut], st[kOut], n, bg);
    if (xy) {
      vx = view(x + off[kX], st[kX], n, bx);
      vy = view(y + off[kY], st[kY], n, by);
    }
    if (wt) vw = w.p ? view(w.p + off[kW], st[kW], n, bw) : bw;
  }

  // t[i] = the gradient term of input `Target` (kX, kY or kW) for the n positions of the last load_tile.
  template <int Target>
  void tile_term(int64_t n, A* __restrict__ t) const {
    const A* __restrict__ pg = vg;
    if constexpr (Target == kW) {
      const A *__restrict__ px = vx, *__restrict__ py = vy;
      for (int64_t i = 0; i < n; ++i) t[i] = pg[i] * (py[i] - px[i]);
    } else {
      const A* __restrict__ pw = vw;
      for (int64_t i = 0; i < n; ++i) t[i] = Target == kX ? pg[i] * (A(1) - pw[i]) : pg[i] * pw[i];
    }
  }

  // t[i] = the gradient term of input `Target` for n positions starting at offsets off (as load_tile).
  template <int Target>
  void term(const int64_t* off, const int64_t* st, int64_t n, A* __restrict__ t) {
    load_tile(off, st, n, Target == kW, Target != kW);
    tile_term<Target>(n, t);
  }
};

// The full-shape gradients (null: not written) of n contiguous positions for 2-byte types, eight at a time
// in registers (tile_term's arithmetic): dout, and for dw x and y, contiguous; the weight contiguous (w),
// or one value (w null: ws). Returns how many it did, a multiple of 8 (0 without AVX2 and F16C).
template <typename T, typename A>
inline int64_t grad_run_fused([[maybe_unused]] const T* g, [[maybe_unused]] const T* x,
                              [[maybe_unused]] const T* y, [[maybe_unused]] const T* w, [[maybe_unused]] A ws,
                              [[maybe_unused]] int64_t n, [[maybe_unused]] T* dx, [[maybe_unused]] T* dy,
                              [[maybe_unused]] T* dw) {
#if defined(__AVX2__) && defined(__F16C__)
  if constexpr (std::is_same_v<T, half_t> || std::is_same_v<T, bf16_t>) {
    const __m256 one = _mm256_set1_ps(1.f), cw = _mm256_set1_ps(ws), cx = _mm256_set1_ps(1.f - ws);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const __m256 vg = load8(g + i);
      if (dx || dy) {
        const __m256 vw = w ? load8(w + i) : cw;
        if (dx) store8(dx + i, _mm256_mul_ps(vg, w ? _mm256_sub_ps(one, vw) : cx));
        if (dy) store8(dy + i, _mm256_mul_ps(vg, vw));
      }
      if (dw) store8(dw + i, _mm256_mul_ps(vg, _mm256_sub_ps(load8(y + i), load8(x + i))));
    }
    return i;
  }
#endif
  return 0;
}

// Offsets advanced by j positions along strides st.
inline void advance(const int64_t* off, const int64_t* st, int64_t j, int64_t out[kNumT]) {
  for (int t = 0; t < kNumT; ++t) out[t] = off[t] + j * st[t];
}

// dst[m] = the sum of partial[c * cstride + m] over the chunks c < nch, in chunk order, for m in [begin, end).
// The target is contiguous and its elements are the kept positions in row-major order, so its offset at
// kept position m is m: no per-element index arithmetic, and the conversions go a tile at a time.
template <typename T>
void sum_chunks(const double* partial, int64_t nch, int64_t cstride, int64_t begin, int64_t end, T* dst) {
  using A = typename AccOf<T>::type;
  A buf[kTile];
  for (int64_t m0 = begin; m0 < end; m0 += kTile) {
    const int64_t n = end - m0 < kTile ? end - m0 : kTile;
    A* o = out_tile(dst + m0, buf);
    for (int64_t i = 0; i < n; ++i) {
      double s = 0;
      for (int64_t c = 0; c < nch; ++c) s += partial[c * cstride + m0 + i];
      o[i] = static_cast<A>(s);
    }
    flush(dst + m0, n, o);
  }
}

// acc[i] += the gradient term of input `Target` at n positions from offsets at (moving by st), for
// 2-byte types in registers (tile_term's arithmetic, then the same conversion to double) where dout and
// the term's operands are contiguous along st (the weight may also be one value). Returns how many it
// did, a multiple of 8 (0 where it does not apply).
template <int Target, typename T>
inline int64_t accum_fused([[maybe_unused]] const Operands<T>& o, [[maybe_unused]] const int64_t* at,
                           [[maybe_unused]] const int64_t* st, [[maybe_unused]] int64_t n,
                           [[maybe_unused]] double* acc) {
#if defined(__AVX2__) && defined(__F16C__)
  if constexpr (std::is_same_v<T, half_t> || std::is_same_v<T, bf16_t>) {
    if (st[kOut] != 1) return 0;
    if (Target == kW ? (st[kX] != 1 || st[kY] != 1) : (o.w.p && st[kW] != 1 && st[kW] != 0)) return 0;
    const T* g = o.g + at[kOut];
    const bool wrun = Target != kW && o.w.p && st[kW] == 1;
    const float ws = o.w.p ? (wrun ? 0.f : to_acc(o.w.p[at[kW]])) : o.w.scalar;
    const __m256 one = _mm256_set1_ps(1.f), cw = _mm256_set1_ps(Target == kX ? 1.f - ws : ws);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const __m256 vg = load8(g + i);
      __m256 t;
      if constexpr (Target == kW) {
        t = _mm256_mul_ps(vg, _mm256_sub_ps(load8(o.y + at[kY] + i), load8(o.x + at[kX] + i)));
      } else {
        const __m256 c = !wrun ? cw
                         : (Target == kX ? _mm256_sub_ps(one, load8(o.w.p + at[kW] + i)) : load8(o.w.p + at[kW] + i));
        t = _mm256_mul_ps(vg, c);
      }
      _mm256_storeu_pd(acc + i, _mm256_add_pd(_mm256_loadu_pd(acc + i), _mm256_cvtps_pd(_mm256_castps256_ps128(t))));
      _mm256_storeu_pd(acc + i + 4,
                       _mm256_add_pd(_mm256_loadu_pd(acc + i + 4), _mm256_cvtps_pd(_mm256_extractf128_ps(t, 1))));
    }
    return i;
  }
#endif
  return 0;
}

// Rows: dst[m] = sum over the reduced positions of the term, for every target element m.
template <int Target, typename T>
void reduce_rows(const Layout& lay, Operands<T> ops, T* dst) {
  using A = typename AccOf<T>::type;
  const int lo = lay.nk, hi = lay.nk + lay.nr;
  const int64_t nch = (lay.L + kChunk - 1) / kChunk;
  int64_t st[kNumT];
  for (int t = 0; t < kNumT; ++t) st[t] = lay.stride[t][hi - 1];
  std::vector<double> partial(static_cast<size_t>(lay.M * nch));
  opcore::parallel_for(lay.M * nch, lay.L < kChunk ? lay.L : kChunk, [&](int64_t begin, int64_t end) {
    Operands<T> o = ops;
    o.prepare();
    A tt[kTile];
    for (int64_t item = begin; item < end; ++item) {
      const int64_t m = item / nch, c = item % nch;
      int64_t base[kNumT];
      kept_offsets(lay, m, base);
      double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      const int64_t r1 = (c + 1) * kChunk < lay.L ? (c + 1) * kChunk : lay.L;
      for_each_run(lay, lo, hi, c * kChunk, r1, base, [&](const int64_t* off, int64_t len) {
        for (int64_t j = 0; j < len; j += kTile) {
          const int64_t n = len - j < kTile ? len - j : kTile;
          int64_t at[kNumT];
          advance(off, st, j, at);
          o.template term<Target>(at, st, n, tt);
          int64_t i = 0;
          for (; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; ++k) lane[k] += static_cast<double>(tt[i + k]);
          for (; i < n; ++i) lane[i & 7] += static_cast<double>(tt[i]);
        }
      });
      partial[static_cast<size_t>(item)] =
          ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
    }
  });
  opcore::parallel_for(lay.M, nch, [&](int64_t begin, int64_t end) {
    for (int64_t m0 = begin; m0 < end; m0 += kTile) {
      A buf[kTile];
      const int64_t n = end - m0 < kTile ? end - m0 : kTile;
      for (int64_t i = 0; i < n; ++i) {
        double s = 0;
        for (int64_t c = 0; c < nch; ++c) s += partial[static_cast<size_t>((m0 + i) * nch + c)];
        buf[i] = static_cast<A>(s);
      }
      store(dst + m0, n, buf);
    }
  });
}

// Columns: the innermost output dim is the last kept dim; a tile of target elements along it is summed
// over the reduced positions at once (one double per element).
template <int Target, typename T>
void reduce_columns(const Layout& lay, Operands<T> ops, T* dst) {
  using A = typename AccOf<T>::type;
  const int lo = lay.nk, hi = lay.nk + lay.nr;
  const int64_t kn = lay.size[lay.nk - 1];                       // the kept run along the innermost dim
  const int64_t per_run = (kn + kTile - 1) / kTile;               // tiles per run
  const int64_t tiles = lay.M / kn * per_run;
  const int64_t width = kn < kTile ? kn : kTile;
  const int64_t rchunk = lay.M >= kSmallTarget ? lay.L : (kChunk / width > 0 ? kChunk / width : 1);
  const int64_t nch = (lay.L + rchunk - 1) / rchunk;
  int64_t kst[kNumT];
  for (int t = 0; t < kNumT; ++t) kst[t] = lay.stride[t][lay.nk - 1];
  // One chunk (a large target): each tile's sums go straight to dst (0 + sum, as the chunk sum below).
  std::vector<double> partial(static_cast<size_t>(nch > 1 ? lay.M * nch : 0));
  opcore::parallel_for(tiles * nch, width * (lay.L < rchunk ? lay.L : rchunk), [&](int64_t begin, int64_t end) {
    Operands<T> o = ops;
    o.prepare();
    A tt[kTile];
    double acc[kTile];
    for (int64_t item = begin; item < end; ++item) {
      const int64_t tile = item / nch, c = item % nch;
      const int64_t j0 = (tile % per_run) * kTile, m0 = tile / per_run * kn + j0;
      const int64_t n = kn - j0 < kTile ? kn - j0 : kTile;
      int64_t base[kNumT];
      kept_offsets(lay, m0, base);
      for (int64_t i = 0; i < n; ++i) acc[i] = 0;
      const int64_t r1 = (c + 1) * rchunk < lay.L ? (c + 1) * rchunk : lay.L;
      for_each_run(lay, lo, hi, c * rchunk, r1, base, [&](const int64_t* off, int64_t len) {
        for (int64_t q = 0; q < len; ++q) {
          int64_t at[kNumT];
          for (int t = 0; t < kNumT; ++t) at[t] = off[t] + q * lay.stride[t][hi - 1];
          const int64_t i0 = accum_fused<Target>(o, at, kst, n, acc);
          if (i0 < n) {
            int64_t rest[kNumT];
            advance(at, kst, i0, rest);
            o.template term<Target>(rest, kst, n - i0, tt);
            for (int64_t i = i0; i < n; ++i) acc[i] += static_cast<double>(tt[i - i0]);
          }
        }
      });
      if (nch == 1) {
        sum_chunks(acc, 1, 0, 0, n, dst + m0);
      } else {
        for (int64_t i = 0; i < n; ++i) partial[static_cast<size_t>(c * lay.M + m0 + i)] = acc[i];
      }
    }
  });
  if (nch == 1) return;
  opcore::parallel_for(lay.M, nch, [&](int64_t begin, int64_t end) {
    sum_chunks(partial.data(), nch, lay.M, begin, end, dst);
  });
}

// The gradient of the broadcast input `Target` into dst (its own shape), by rows or by columns.
template <int Target, typename T>
void reduce_grad(const Shape& os, const Shape& xs, const Shape& ys, const Shape& ws, const Operands<T>& ops,
                 T* dst) {
  const Layout lay = make_layout(os, xs, ys, ws, Target);
  const bool columns = lay.nk > 0 && lay.stride[kOut][lay.nk - 1] == 1;
  if (columns) {
    reduce_columns<Target>(lay, ops, dst);
  } else {
    reduce_rows<Target>(lay, ops, dst);
  }
}

}  // namespace cpu

// Gradients of lerp; a null output pointer means "not needed". Every requested output is fully written
// (zeros when dout is empty).
template <typename T>
void lerp_backward_cpu(const T* g, const T* x, const T* y, const T* w, double w_scalar, T* dx, T* dy, T* dw,
                       const Shape& xs, const Shape& ys, const Shape& ws) {
  using A = typename AccOf<T>::type;
  const Shape os = broadcast_shapes({xs, ys, ws});
  const int64_t n = numel_of(os);
  T* dst[kNumT] = {nullptr, dx, dy, dw};
  const Shape* shp[kNumT] = {&os, &xs, &ys, &ws};
  if (n == 0) {
    for (int t = kX; t < kNumT; ++t)
      for (int64_t i = 0; dst[t] && i < numel_of(*shp[t]); ++i) dst[t][i] = from_acc<T>(A(0));
    return;
  }
  const cpu::Operands<T> ops{g, x, y, cpu::Weight<T>{w, static_cast<A>(w_scalar)}, {}, {}, {}, {},
                            nullptr, nullptr, nullptr, nullptr};
  bool full[kNumT] = {false, false, false, false};
  for (int t = kX; t < kNumT; ++t) full[t] = dst[t] && numel_of(*shp[t]) == n;
  if (full[kX] || full[kY] || full[kW]) {  // one pass writes every full-shape gradient
    const Layout lay = make_layout(os, xs, ys, ws, -1);
    int64_t st[kNumT];
    for (int t = 0; t < kNumT; ++t) st[t] = lay.stride[t][lay.nr - 1];
    const int64_t zero[kNumT] = {0, 0, 0, 0};
    opcore::parallel_for(n, 1, [&](int64_t begin, int64_t end) {
      cpu::Operands<T> o = ops;
      o.prepare();
      A tt[cpu::kTile];
      cpu::for_each_run(lay, 0, lay.nr, begin, end, zero, [&](const int64_t* off, int64_t len) {
        int64_t j = 0;
        const bool xy1 = !full[kW] || (st[kX] == 1 && st[kY] == 1);
        const bool w1 = !(full[kX] || full[kY]) || !w || st[kW] == 1 || st[kW] == 0;
        if (xy1 && w1) {
          const bool wrun = w && st[kW] == 1;
          const A ws = !w ? ops.w.scalar : (wrun ? A(0) : to_acc(w[off[kW]]));
          j = cpu::grad_run_fused(g + off[kOut], x + off[kX], y + off[kY], wrun ? w + off[kW] : nullptr, ws, len,
                                  full[kX] ? dx + off[kOut] : nullptr, full[kY] ? dy + off[kOut] : nullptr,
                                  full[kW] ? dw + off[kOut] : nullptr);
        }
        for (; j < len; j += cpu::kTile) {
          const int64_t m = len - j < cpu::kTile ? len - j : cpu::kTile;
          int64_t at[kNumT];
          cpu::advance(off, st, j, at);
          o.load_tile(at, st, m, full[kW], full[kX] || full[kY]);
          for (int t = kX; t < kNumT; ++t) {
            if (!full[t]) continue;
            A* res = cpu::out_tile(dst[t] + at[kOut], tt);
            if (t == kX) o.template tile_term<kX>(m, res);
            if (t == kY) o.template tile_term<kY>(m, res);
            if (t == kW) o.template tile_term<kW>(m, res);
            cpu::flush(dst[t] + at[kOut], m, res);
          }
        }
      });
    });
  }
  if (dx && !full[kX]) cpu::reduce_grad<kX>(os, xs, ys, ws, ops, dx);
  if (dy && !full[kY]) cpu::reduce_grad<kY>(os, xs, ys, ws, ops, dy);
  if (dw && !full[kW]) cpu::reduce_grad<kW>(os, xs, ys, ws, ops, dw);
}

// Gradients from diff = y - x (x, y of shape xs, w broadcast to it); a null output is not computed. A
// same-shape w in one pass; else lerp_backward_cpu with zeros for x (y - 0 is y exactly, so every
// gradient has the bits of the x, y backward).
template <typename T>
void lerp_backward_from_diff_cpu(const T* g, const T* diff, const T* w, T* dx, T* dy, T* dw, const Shape& xs,
                                 const Shape& ws) {
  using A = typename AccOf<T>::type;
  const int64_t n = numel_of(xs);
  if (numel_of(ws) != n) {
    const std::vector<T> zeros(static_cast<size_t>(n), from_acc<T>(A(0)));
    lerp_backward_cpu(g, zeros.data(), diff, w, 0.0, dx, dy, dw, xs, xs, ws);
    return;
  }
  opcore::parallel_for(n, 1, [&](int64_t begin, int64_t end) {
    A bg[cpu::kTile], bw[cpu::kTile], bd[cpu::kTile], bo[cpu::kTile];
    for (int64_t j = begin; j < end; j += cpu::kTile) {
      const int64_t m = end - j < cpu::kTile ? end - j : cpu::kTile;
      const A* vg = cpu::view(g + j, 1, m, bg);
      const A* vw = cpu::view(w + j, 1, m, bw);
      if (dx) {
        A* o = cpu::out_tile(dx + j, bo);
        for (int64_t i = 0; i < m; ++i) o[i] = vg[i] * (A(1) - vw[i]);
        cpu::flush(dx + j, m, o);
      }
      if (dy) {
        A* o = cpu::out_tile(dy + j, bo);
        for (int64_t i = 0; i < m; ++i) o[i] = vg[i] * vw[i];
        cpu::flush(dy + j, m, o);
      }
      if (dw) {
        const A* vd = cpu::view(diff + j, 1, m, bd);
        A* o = cpu::out_tile(dw + j, bo);
        for (int64_t i = 0; i < m; ++i) o[i] = vg[i] * vd[i];
        cpu::flush(dw + j, m, o);
      }
    }
  });
}

}  // namespace lerp_core
