// CPU forward paths: broadcast forward, and the training forward that also saves y - x.
#pragma once

#include <cstdint>

#include "common/cpu_parallel.h"
#include "lerp_cpu_tiles.h"

namespace lerp_core {

// out = lerp(x, y, w) with broadcasting; out has the broadcast shape. A null w means the scalar w_scalar.
// Threads split the output positions; each position is computed from its own inputs, so the result
// does not depend on the thread count.
template <typename T>
void lerp_forward_cpu(const T* x, const T* y, const T* w, double w_scalar, T* out, const Shape& xs,
                      const Shape& ys, const Shape& ws) {
  using A = typename AccOf<T>::type;
  const Shape os = broadcast_shapes({xs, ys, ws});
  const int64_t n = numel_of(os);
  if (n == 0) return;
  const Layout lay = make_layout(os, xs, ys, ws, -1);
  const int in = lay.nr - 1;
  const int64_t sx = lay.stride[kX][in], sy = lay.stride[kY][in], sw = lay.stride[kW][in];
  const cpu::Weight<T> wt{w, static_cast<A>(w_scalar)};
  const int64_t zero[kNumT] = {0, 0, 0, 0};
  opcore::parallel_for(n, 1, [&](int64_t begin, int64_t end) {
    A bx[cpu::kTile], by[cpu::kTile], bw[cpu::kTile], bo[cpu::kTile];
    cpu::for_each_run(lay, 0, lay.nr, begin, end, zero, [&](const int64_t* off, int64_t len) {
      // A weight constant along the run (a scalar, or broadcast along the innermost dim) is a scalar here:
      // the same arithmetic (lerp_tile_scalar's select is lerp_tile's, made once).
      const bool wrun = w != nullptr && sw != 0;
      const A ws = w == nullptr ? wt.scalar : (sw == 0 ? to_acc(w[off[kW]]) : A(0));
      int64_t j = 0;
      if (sx == 1 && sy == 1 && (!wrun || sw == 1))
        j = cpu::lerp_run_fused(x + off[kX], y + off[kY], wrun ? w + off[kW] : nullptr, ws, len, out + off[kOut]);
      for (; j < len; j += cpu::kTile) {
        const int64_t m = len - j < cpu::kTile ? len - j : cpu::kTile;
        A* o = cpu::out_tile(out + off[kOut] + j, bo);
        const A* vx = cpu::view(x + off[kX] + j * sx, sx, m, bx);
        const A* vy = cpu::view(y + off[kY] + j * sy, sy, m, by);
        if (wrun) {
          cpu::lerp_tile(vx, vy, cpu::view(w + off[kW] + j * sw, sw, m, bw), m, o);
        } else {
          cpu::lerp_tile_scalar(vx, vy, ws, m, o);
        }
        cpu::flush(out + off[kOut] + j, m, o);
      }
    });
  });
}

// Training forward when w needs a gradient (x, y of shape xs, w broadcast to it): out = lerp(x, y, w)
// and diff = y - x, so the backward reads diff instead of both x and y (see the CUDA core). One pass
// for a same-shape w; else the broadcast forward, then diff.
template <typename T>
void lerp_forward_save_diff_cpu(const T* x, const T* y, const T* w, T* out, T* diff, const Shape& xs,
                                const Shape& ws) {
  using A = typename AccOf<T>::type;
  const int64_t n = numel_of(xs);
  const bool same = numel_of(ws) == n;
  if (!same) lerp_forward_cpu(x, y, w, 0.0, out, xs, xs, ws);
  opcore::parallel_for(n, 1, [&](int64_t begin, int64_t end) {
    A bx[cpu::kTile], by[cpu::kTile], bw[cpu::kTile], bo[cpu::kTile];
    for (int64_t j = begin; j < end; j += cpu::kTile) {
      const int64_t m = end - j < cpu::kTile ? end - j : cpu::kTile;
      const A* vx = cpu::view(x + j, 1, m, bx);
      const A* vy = cpu::view(y + j, 1, m, by);
      if (same) {
        A* o = cpu::out_tile(out + j, bo);
        cpu::lerp_tile(vx, vy, cpu::view(w + j, 1, m, bw), m, o);
        cpu::flush(out + j, m, o);
      }
      A* d = cpu::out_tile(diff + j, bo);
      for (int64_t i = 0; i < m; ++i) d[i] = vy[i] - vx[i];
      cpu::flush(diff + j, m, d);
    }
  });
}

}  // namespace lerp_core
