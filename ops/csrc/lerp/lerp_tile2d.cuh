// lerp CUDA core, part: the tile2d backward (every gradient of a [rows, cols] view in one pass): view, kernels
// (tiles of rows through shared memory; short rows by lane groups), launch.
// Included in order by lerp.cuh; see its header for the paths and when each is chosen.
#pragma once

#include "lerp_launch_fwd.cuh"

namespace lerp_core {
namespace gpu {

// ---------------------------------------------------------------- tile2d --
// dout viewed as [M rows, L columns] row-major, where each of x, y and w is
// laid out in one of four ways: like dout (full), one value per row (row:
// [R, 1] against [R, 90]), one per column (col: [1, 13] against [6783, 13]),
// or one element (all). Each requested gradient has its input's layout: a
// full one is written on the way, a row one summed along each row, a col one
// down each column, an all one over everything.
constexpr int kT2Full = 0, kT2Row = 1, kT2Col = 2, kT2All = 3;
constexpr int kT2Bytes = 8192;    // shared bytes per reduced gradient per tile (2048 floats, 1024 doubles)
constexpr int kT2ColsPerThread = 4;  // col gradients: columns per thread when L > 256 (L <= 1024)
constexpr int64_t kT2TicketPartials = 16384;  // at most this many partials are summed by the last block
constexpr int kT2SeqPartials = 64;  // up to this many blocks: one thread per sum, else one warp per sum

template <typename T>
struct Tile2Args {
  using A = typename AccOf<T>::type;
  const T* g = nullptr;
  const T* op[3] = {nullptr, nullptr, nullptr};  // x, y, w (w null: the scalar wsc)
  double wsc = 0.0;
  T* grad[3] = {nullptr, nullptr, nullptr};      // dx, dy, dw (null: not requested)
  int kind[3] = {kT2Full, kT2Full, kT2All};      // layout of x, y, w (and of their gradients)
  int64_t M = 1, tiles = 1;
  int L = 1, R = 1;                              // columns, rows per tile
  int S = 1;                                     // lanes per row in the row sums (power of two <= 32)
  bool rc = false;                               // some operand read is a row or col one
  uint32_t magic = 0, shift = 0;                 // division by L
  A* ws = nullptr;                               // block partials of col and all gradients
  int64_t ws_off[3] = {0, 0, 0};                 // [gridDim.x, L] (col) or [gridDim.x] (all) at ws + ws_off
  unsigned* cnt = nullptr;                       // ticket counter (zero on entry), or null: finalize launch
};

// One operand's values for W positions starting at local index e of a tile
// (global offset ge, first row j0; rl/cl: local rows and columns).
template <typename T, int W>
__device__ __forceinline__ void t2_load(const T* __restrict__ p, int kind, int64_t ge, int64_t j0, const int (&rl)[W],
                                        const int (&cl)[W], typename AccOf<T>::type (&v)[W]) {
  if (kind == kT2Full) {
    Raw<T, W> r;
    load_raw<T, W>(p, ge, false, r);
#pragma unroll
    for (int k = 0; k < W; ++k) v[k] = raw_at<T, W>(r, k);
  } else if (kind == kT2All) {
    const auto s = cvt_in(p[0]);
#pragma unroll
    for (int k = 0; k < W; ++k) v[k] = s;
  } else if (kind == kT2Row) {
#pragma unroll
    for (int k = 0; k < W; ++k) v[k] = cvt_in(p[j0 + rl[k]]);
  } else {
#pragma unroll
    for (int k = 0; k < W; ++k) v[k] = cvt_in(p[cl[k]]);
  }
}

// One pack's operands at global offset ge (row j0 + rl[k], column cl[k]): dout, and x, y where the weight's
// gradient needs them (XY; kXYDiff: y holds y - x, x reads as zeros), the weight or the scalar wsc.
template <typename T, int W, int XY>
__device__ __forceinline__ void t2_operands(const Tile2Args<T>& a, int64_t ge, int64_t j0, const int (&rl)[W],
                                            const int (&cl)[W], typename AccOf<T>::type (&gv)[W],
                                            typename AccOf<T>::type (&xv)[W], typename AccOf<T>::type (&yv)[W],
                                            typename AccOf<T>::type (&wv)[W]) {
  using A = typename AccOf<T>::type;
  Raw<T, W> gr;
  load_raw<T, W>(a.g, ge, false, gr);
#pragma unroll
  for (int k = 0; k < W; ++k) gv[k] = raw_at<T, W>(gr, k);
  if (XY) {
    if constexpr (XY == kXYDiff) {  // no x: y holds y - x (load_x_raw)
#pragma unroll
      for (int k = 0; k < W; ++k) xv[k] = A(0);
    } else {
      t2_load<T, W>(a.op[0], a.kind[0], ge, j0, rl, cl, xv);
    }
    t2_load<T, W>(a.op[1], a.kind[1], ge, j0, rl, cl, yv);
  }
  if (a.op[2]) {
    t2_load<T, W>(a.op[2], a.kind[2], ge, j0, rl, cl, wv);
  } else {
#pragma unroll
    for (int k = 0; k < W; ++k) wv[k] = static_cast<A>(a.wsc);
  }
}

// Gradient t's values at W positions: dx = g (1 - w), dy = g w, dw = g (y - x).
template <typename A, int W>
__device__ __forceinline__ void t2_grad(int t, const A (&g)[W], const A (&x)[W], const A (&y)[W], const A (&w)[W],
                                        A (&r)[W]) {
#pragma unroll
  for (int k = 0; k < W; ++k) r[k] = t == 0 ? g[k] * (A(1) - w[k]) : t == 1 ? g[k] * w[k] : g[k] * (y[k] - x[k]);
}

// Phase 1 for U packs of W positions (pack q at local index (t + u * 256) * W,
// live below np packs): all loads first, then every gradient's values: full
// ones stored, row and col ones put in sh[target][local index], all ones
// added to the thread's sums.
template <typename T, int W, int U, int XY>
__device__ __forceinline__ void t2_packs(const Tile2Args<T>& a, int np, int64_t start, int64_t j0, int tbase,
                                         typename AccOf<T>::type (*sh)[kT2Bytes / sizeof(typename AccOf<T>::type)],
                                         typename AccOf<T>::type (&allacc)[3]) {
  using A = typename AccOf<T>::type;
  A gv[U][W], xv[U][W], yv[U][W], wv[U][W];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int q = tbase + u * kThreads;
    if (q < np) {
      const int e = q * W;
      int rl[W], cl[W];
#pragma unroll
      for (int k = 0; k < W; ++k) {
        rl[k] = a.rc ? static_cast<int>(fast_div(static_cast<uint32_t>(e + k), a.magic, a.shift)) : 0;
        cl[k] = e + k - rl[k] * a.L;
      }
      t2_operands<T, W, XY>(a, start + e, j0, rl, cl, gv[u], xv[u], yv[u], wv[u]);
    }
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int q = tbase + u * kThreads;
    if (q >= np) continue;
    const int e = q * W;
#pragma unroll
    for (int t = 0; t < 3; ++t) {
      if (!a.grad[t] || (t == 2 && !XY)) continue;
      A r[W];
      t2_grad<A, W>(t, gv[u], xv[u], yv[u], wv[u], r);
      if (a.kind[t] == kT2Full) {
        store_pack<T, W>(a.grad[t], start + e, r);
      } else if (a.kind[t] == kT2All) {
#pragma unroll
        for (int k = 0; k < W; ++k) allacc[t] += r[k];
      } else {
#pragma unroll
        for (int k = 0; k < W; ++k) sh[t][e + k] = r[k];
      }
    }
  }
}

// Blocks take tiles of R whole rows (R * L <= E positions) in turn. Per
// tile: phase 1 (t2_packs: VEC-wide packs, U per thread, then a scalar tail);
// phase 2 from shared memory: each row's sum by S adjacent lanes (fixed
// shuffle tree) written straight to the row gradient; column sums added to
// per-thread column accumulators (thread t: column t % L, rows t / L + k * G,
// G = 256 / L, when L <= 256; else columns t + 256 q, every row). After the
// last tile the block's column sums (its G groups added in fixed order) and
// all sums (block_sum) go to ws; with a ticket counter the last block to
// finish adds every block's partials in fixed order, as finalize_kernel does
// (a thread per sum in block order for up to 64 blocks, else a warp per sum,
// warp_sum_partials), and sets the counter back to zero.
template <typename T, int VEC, int XY>
__global__ void __launch_bounds__(kThreads) tile2d_kernel(Tile2Args<T> a) {
  using A = typename AccOf<T>::type;
  constexpr int E = kT2Bytes / sizeof(A);
  constexpr int U = E / (kThreads * VEC) > 0 ? E / (kThreads * VEC) : 1;
  __shared__ A sh[3][E];
  __shared__ bool last;
  const int t = static_cast<int>(threadIdx.x);
  const int L = a.L;
  const bool narrow = L <= kThreads;
  const int G = narrow ? kThreads / L : 1;
  const int cg = narrow ? t / L : 0;
  const int cc = narrow ? t - cg * L : t;
  A colacc[3][kT2ColsPerThread];
  A allacc[3] = {A(0), A(0), A(0)};
#pragma unroll
  for (int k = 0; k < 3; ++k) {
#pragma unroll
    for (int q = 0; q < kT2ColsPerThread; ++q) colacc[k][q] = A(0);
  }
  const int S = a.S, sub = t & (S - 1);
  for (int64_t tile = blockIdx.x; tile < a.tiles; tile += gridDim.x) {
    const int64_t j0 = tile * a.R;
    const int rows = static_cast<int>(a.M - j0 < a.R ? a.M - j0 : a.R);
    const int nt = rows * L;
    const int64_t start = j0 * L;
    const int np = nt / VEC;
    for (int b = 0; b < np; b += kThreads * U) t2_packs<T, VEC, U, XY>(a, np, start, j0, b + t, sh, allacc);
    if (VEC > 1 && np * VEC + t < nt) {  // scalar tail: fewer than VEC positions
      const int e = np * VEC + t;
      t2_packs<T, 1, 1, XY>(a, e + 1, start, j0, e, sh, allacc);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 3; ++k) {
      if (!a.grad[k] || (k == 2 && !XY)) continue;
      if (a.kind[k] == kT2Row) {
        for (int r0 = 0; r0 < rows; r0 += kThreads / S) {  // every lane takes part (uniform bounds)
          const int r = r0 + t / S;
          A s = A(0);
          if (r < rows) {
            for (int c = sub; c < L; c += S) s += sh[k][r * L + c];
          }
          for (int o = S / 2; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
          if (r < rows && sub == 0) a.grad[k][j0 + r] = cvt_out<T>(s);
        }
      } else if (a.kind[k] == kT2Col) {
        if (narrow) {
          if (cg < G) {
            for (int r = cg; r < rows; r += G) colacc[k][0] += sh[k][r * L + cc];
          }
        } else {
#pragma unroll
          for (int q = 0; q < kT2ColsPerThread; ++q) {
            const int c = t + q * kThreads;
            if (c < L) {
              for (int r = 0; r < rows; ++r) colacc[k][q] += sh[k][r * L + c];
            }
          }
        }
      }
    }
    __syncthreads();
  }
  // The block's partials.
  bool partials = false;
#pragma unroll
  for (int k = 0; k < 3; ++k) {
    if (!a.grad[k] || (k == 2 && !XY)) continue;
    if (a.kind[k] == kT2All) {
      partials = true;
      const A s = block_sum(allacc[k]);
      if (t == 0) a.ws[a.ws_off[k] + blockIdx.x] = s;
    } else if (a.kind[k] == kT2Col) {
      partials = true;
      A* out = a.ws + a.ws_off[k] + static_cast<int64_t>(blockIdx.x) * L;
      if (narrow) {
        if (cg < G) sh[k][cg * L + cc] = colacc[k][0];
        __syncthreads();
        if (t < L) {
          A s = A(0);
          for (int q = 0; q < G; ++q) s += sh[k][q * L + t];
          out[t] = s;
        }
      } else {
#pragma unroll
        for (int q = 0; q < kT2ColsPerThread; ++q)
          if (t + q * kThreads < L) out[t + q * kThreads] = colacc[k][q];
      }
    }
  }
  if (!partials || !a.cnt) return;
  __threadfence();  // this thread's partials are visible before the ticket is taken
  __syncthreads();
  if (t == 0) last = atomicAdd(a.cnt, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();  // every other block's partials are read after its ticket
  const int lane = t & 31, warp = t >> 5;
  const int P = static_cast<int>(gridDim.x);
#pragma unroll
  for (int k = 0; k < 3; ++k) {
    if (!a.grad[k] || (k == 2 && !XY)) continue;
    if (a.kind[k] != kT2All && a.kind[k] != kT2Col) continue;
    const int m = a.kind[k] == kT2All ? 1 : L;
    const A* ws = a.ws + a.ws_off[k];
    if (P <= kT2SeqPartials) {  // thread per output, partials in order (finalize's mode 1)
      for (int c = t; c < m; c += kThreads) a.grad[k][c] = cvt_out<T>(sum_partials_in_order<A, int>(ws + c, P, m));
    } else {  // warp per output (finalize's mode 2)
      for (int c = warp; c < m; c += kThreads / 32) {
        const A s = warp_sum_partials<A>(ws + c, P, m);
        if (lane == 0) a.grad[k][c] = cvt_out<T>(s);
      }
    }
  }
  if (t == 0) *a.cnt = 0u;  // ready for the stream's next launch
}

// Short rows of whole packs (at most kT2RowsMax positions) whose reduced gradients are all row ones: a group
// of S adjacent lanes a row (S a power of two up to 32), lane s taking the row's packs s, s + S, ...
// (t2_rows_per_lane of them at most), every load out before any use; full gradients written on the way, each
// row sum added by its lanes in pack order, then in a fixed shuffle tree, so the bits do not depend on timing.
// No shared memory, barrier or partials, where tile2d_kernel's tiles go through shared memory with two
// barriers a tile (H200, events, backward: x, y [200000,1] against w [200000,64] f16 75.5 -> 40.3 us; w
// [373993,1] against [373993,90] f64 318.2 -> 300.9). A warp's rows advance together, so every shuffle has the
// whole warp. Rows of no whole 16-byte packs run it at a narrower pack that divides them (8 or 4 bytes: w
// [200000,1] against [200000,54] f16 65.9 -> 46.7 us on the tiles -> here; launch_tile2d); rows of odd length
// stay on the tiles: this kernel over them one element a lane measured slower (w [373993,1] against
// [373993,90] f32 190.6 against 184.0; a build not kept). docs/ops/diagnostics/run.sh OUT t2rows (and
// t2rows_narrow) times these cases each way.
// 2-byte packs are held raw (t2_load_raw: 4 registers a 16-byte pack) until their values are used; converted at the
// load (t2_operands, as the wider types are) the f16 kernel took 60 registers against 74 raw, yet ran slower
// (H200, events, backward, us: x, y [200000,1] against w [200000,64] f16 38.6 -> 32.1, bf16 34.7 -> 28.5, w
// [200000,1] against [200000,64] f16 45.0 -> 38.4; figures in 17e54cb's message). S is a template
// parameter: each pack's offset from the lane's first is then an immediate, where a run-time S kept an
// address a pack and operand (sm_90 registers, kXYDiff double 107 -> 80: 2 -> 3 blocks an SM).
constexpr int64_t kT2RowsMax = 256;
// Packs a lane: one 16-byte pack of 2-byte types, 32 bytes of values for wider ones (fp16 packs of 8 held 4 a
// lane took 167 registers).
__host__ __device__ constexpr int t2_rows_per_lane(int vec) { return vec <= 2 ? 4 : 8 / vec; }

// The short-row kernel's operand layout: ROWS_XY, x and y one per row and w full, known at compile time, so
// that no load or store branches on a.kind (else a.kind is read). H200, events, backward, us, a.kind read ->
// fixed: x, y [200000,1] against w [200000,64] f16 31.9 -> 25.6 (74 -> 44 registers), against w [200000,62]
// f16 40.7 -> 32.8. Fixed as well, the layout of w one per row ran slower (w [200000,1] against [200000,54]
// f32 62.0 -> 69.6, [373993,90] f32 153.8 -> 165.5; ptxas 75 -> 52 registers), so it reads a.kind. Twice the
// packs a lane (2-byte types) was no faster on either layout (f16 rows of 54: 48.6 -> 76.8).
__host__ __device__ constexpr int t2_xy_rows_kind(int t) { return t == 2 ? kT2Full : kT2Row; }

// One operand of a short row's pack at global offset ge (row `row`, first column c), raw: a full one's pack,
// a row or all one's element in the pack's first word (raw_fill completes it once every load is out), a col
// one's elements one by one.
template <typename T, int VEC>
__device__ __forceinline__ void t2_load_raw(const T* __restrict__ p, int kind, int64_t ge, int64_t row, int c,
                                            Raw<T, VEC>& o) {
  if (kind == kT2Full) {
    load_raw<T, VEC>(p, ge, false, o);
  } else if (kind == kT2Col) {
#pragma unroll
    for (int k = 0; k < VEC; ++k) load_raw_at<T, VEC>(p, c + k, k, o);
  } else {
    load_raw_lazy<T, VEC>(p, kind == kT2Row ? row : 0, true, o);
  }
}

template <typename T, int VEC, int XY, int S, bool ROWS_XY>
__global__ void __launch_bounds__(kThreads) tile2d_rows_kernel(Tile2Args<T> a) {
  using A = typename AccOf<T>::type;
  if constexpr (ROWS_XY) {
#pragma unroll
    for (int t = 0; t < 3; ++t) a.kind[t] = t2_xy_rows_kind(t);
  }
  constexpr int P = t2_rows_per_lane(VEC);
  constexpr bool RAW = sizeof(T) == 2;
  const int lane = static_cast<int>(threadIdx.x) & 31, sub = lane & (S - 1);
  constexpr int64_t per_warp = 32 / S;
  const int64_t warp = (static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x) / 32;
  const int64_t step = static_cast<int64_t>(gridDim.x) * (kThreads / 32) * per_warp;
  for (int64_t base = warp * per_warp; base < a.M; base += step) {
    const int64_t row = base + lane / S;
    const bool live = row < a.M;
    Raw<T, VEC> gr[P], xr[P], yr[P], wr[P];
    A gf[RAW ? 1 : P][VEC], xf[RAW ? 1 : P][VEC], yf[RAW ? 1 : P][VEC], wf[RAW ? 1 : P][VEC];
#pragma unroll
    for (int u = 0; u < P; ++u) {
      const int c = (sub + u * S) * VEC;
      if (!live || c >= a.L) continue;
      const int64_t ge = row * a.L + c;
      if constexpr (RAW) {
        load_raw<T, VEC>(a.g, ge, false, gr[u]);
        if constexpr (XY == kXYRead) t2_load_raw<T, VEC>(a.op[0], a.kind[0], ge, row, c, xr[u]);
        if constexpr (XY != kNoXY) t2_load_raw<T, VEC>(a.op[1], a.kind[1], ge, row, c, yr[u]);
        if (a.op[2]) t2_load_raw<T, VEC>(a.op[2], a.kind[2], ge, row, c, wr[u]);
      } else {
        int rl[VEC], cl[VEC];
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
          rl[k] = 0;
          cl[k] = c + k;
        }
        t2_operands<T, VEC, XY>(a, ge, row, rl, cl, gf[u], xf[u], yf[u], wf[u]);
      }
    }
    A sum[3] = {A(0), A(0), A(0)};
#pragma unroll
    for (int u = 0; u < P; ++u) {
      const int c = (sub + u * S) * VEC;
      if (!live || c >= a.L) continue;
      A gv[VEC], xv[VEC], yv[VEC], wv[VEC];
      if constexpr (RAW) {
        if constexpr (XY == kXYRead) raw_fill<T, VEC>(a.kind[0] == kT2Row || a.kind[0] == kT2All, xr[u]);
        if constexpr (XY != kNoXY) raw_fill<T, VEC>(a.kind[1] == kT2Row || a.kind[1] == kT2All, yr[u]);
        if (a.op[2]) raw_fill<T, VEC>(a.kind[2] == kT2Row || a.kind[2] == kT2All, wr[u]);
      }
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        if constexpr (RAW) {
          gv[k] = raw_at<T, VEC>(gr[u], k);
          xv[k] = XY == kXYRead ? raw_at<T, VEC>(xr[u], k) : A(0);  // kXYDiff: y holds y - x
          yv[k] = XY != kNoXY ? raw_at<T, VEC>(yr[u], k) : A(0);
          wv[k] = a.op[2] ? raw_at<T, VEC>(wr[u], k) : static_cast<A>(a.wsc);
        } else {
          gv[k] = gf[u][k];
          xv[k] = xf[u][k];
          yv[k] = yf[u][k];
          wv[k] = wf[u][k];
        }
      }
#pragma unroll
      for (int t = 0; t < 3; ++t) {
        if (!a.grad[t] || (t == 2 && !XY)) continue;
        A r[VEC];
        t2_grad<A, VEC>(t, gv, xv, yv, wv, r);
        if (a.kind[t] == kT2Full) {
          store_pack<T, VEC>(a.grad[t], row * a.L + c, r);
        } else {
#pragma unroll
          for (int k = 0; k < VEC; ++k) sum[t] += r[k];
        }
      }
    }
#pragma unroll
    for (int t = 0; t < 3; ++t) {
      if (!a.grad[t] || (t == 2 && !XY) || a.kind[t] != kT2Row) continue;
      A s = sum[t];
#pragma unroll
      for (int o = S / 2; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
      if (live && sub == 0) a.grad[t][row] = cvt_out<T>(s);
    }
  }
}

// The [M, L] view of a backward problem, when one exists: out's dims (size-1
// ones dropped) split into outer (rows) and inner (columns) such that each of
// x, y, w varies along all or none of each group (a full-size one is full in
// any split). Among the valid splits, the one with the largest L within
// `max_l`; kinds of x, y, w in `kind`.
struct View2 {
  bool ok = false;
  int64_t M = 1, L = 1;
  int kind[3] = {kT2Full, kT2Full, kT2All};
};

inline View2 view2d(const Shape& os, const Shape* in[3], int64_t max_l) {
  View2 best;
  std::vector<int64_t> size;
  std::vector<int> var[3];
  for (size_t i = 0; i < os.size(); ++i) {
    if (os[i] == 1) continue;
    size.push_back(os[i]);
    for (int t = 0; t < 3; ++t) {
      int v = 0;
      if (in[t]) {
        const Shape& s = *in[t];
        const int j = static_cast<int>(i) - static_cast<int>(os.size() - s.size());
        v = j >= 0 && s[j] != 1;
      }
      var[t].push_back(v);
    }
  }
  const int d = static_cast<int>(size.size());
  for (int s = 0; s <= d; ++s) {
    View2 v;
    v.ok = true;
    for (int i = 0; i < s; ++i) v.M *= size[i];
    for (int i = s; i < d; ++i) v.L *= size[i];
    for (int t = 0; t < 3 && v.ok; ++t) {
      int no = 0, ni = 0;
      for (int i = 0; i < s; ++i) no += var[t][i];
      for (int i = s; i < d; ++i) ni += var[t][i];
      if ((no != 0 && no != s) || (ni != 0 && ni != d - s)) v.ok = false;
      const bool rv = no > 0, cv = ni > 0;
      v.kind[t] = no + ni == d ? kT2Full : rv ? kT2Row : cv ? kT2Col : kT2All;  // full size: full
    }
    if (v.ok && v.L <= max_l && (!best.ok || v.L > best.L)) best = v;
  }
  return best;
}

// Rows per tile for VEC-wide packs: R * L within E positions and a multiple of
// VEC (so every tile starts on a pack); 0 when no such R >= 1.
inline int t2_rows(int64_t L, int64_t M, int E, int vec) {
  int64_t r = E / L;
  int64_t step = 1;
  while ((step * L) % vec != 0) ++step;
  r = r / step * step;
  if (r < 1) return 0;
  return static_cast<int>(std::min<int64_t>(r, ((M + step - 1) / step) * step));
}

template <typename T, int VEC, int XY>
void t2_launch_v(Tile2Args<T> a, const std::function<unsigned*()>& counter, const Alloc& alloc,
                 cudaStream_t stream) {
  using A = typename AccOf<T>::type;
  constexpr int E = kT2Bytes / sizeof(A);
  a.R = t2_rows(a.L, a.M, E, VEC);
  a.tiles = ceil_div(a.M, a.R);
  const void* k = reinterpret_cast<const void*>(&tile2d_kernel<T, VEC, XY>);
  const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>(a.tiles, wave_of(k)));
  int64_t need = 0;
  for (int t = 0; t < 3; ++t) {
    if (!a.grad[t] || (t == 2 && !XY)) continue;
    if (a.kind[t] == kT2Col || a.kind[t] == kT2All) {
      a.ws_off[t] = need;
      need += blocks * (a.kind[t] == kT2Col ? a.L : 1);
    }
  }
  if (need > 0) a.ws = static_cast<A*>(alloc(sizeof(A) * need));
  // The last block sums the partials when they are few; else (or under capture: no counter) a
  // finalize launch.
  a.cnt = need > 0 && need <= kT2TicketPartials ? counter() : nullptr;
  tile2d_kernel<T, VEC, XY><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a);
  check_cuda(cudaGetLastError(), "tile2d kernel launch");
  if (need == 0 || a.cnt) return;
  FinJob<T> f[3];
  int nf = 0;
  for (int t = 0; t < 3; ++t) {
    if (!a.grad[t] || (t == 2 && !XY) || (a.kind[t] != kT2Col && a.kind[t] != kT2All)) continue;
    FinJob<T>& j = f[nf++];
    j.ws = a.ws + a.ws_off[t];
    j.P = blocks;
    j.M = a.kind[t] == kT2Col ? a.L : 1;
    j.tgt = a.grad[t];
    j.mode = blocks <= kT2SeqPartials ? 1 : 2;  // the last block's order, so the same bits
    j.blocks = std::max<int64_t>(1, ceil_div(j.M, j.mode == 1 ? kThreads : kThreads / 32));
  }
  for (int i = 0; i < nf; i += 2) {
    FinJob<T> none;
    const FinJob<T>& f1 = i + 1 < nf ? f[i + 1] : none;
    check_cuda(opcore::launch_after(finalize_kernel<T>, dim3(static_cast<unsigned>(f[i].blocks + f1.blocks)),
                                    dim3(kThreads), 0, stream, 1, f[i], f1),
               "finalize kernel launch");
  }
}

// f(std::integral_constant<int, S>) for s, a power of two from 1 to 32.
template <typename F>
void with_pow2_32(int s, F&& f) {
  switch (s) {
    case 1: return f(std::integral_constant<int, 1>{});
    case 2: return f(std::integral_constant<int, 2>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 8: return f(std::integral_constant<int, 8>{});
    case 16: return f(std::integral_constant<int, 16>{});
    default: return f(std::integral_constant<int, 32>{});
  }
}

// tile2d_rows_kernel over a's rows: S lanes a row, the fewest that hold a row at t2_rows_per_lane packs a
// lane; a block for every 256 / S rows, up to LERP_T2ROWS_WAVES waves of blocks (default 1, read once; the
// blocks loop over the rows past them). One wave against 4 and 16 (H200, us, the two cases above, S read at
// run time, c9ffe09): 40.3 / 40.6 / 44.3 and 300.9 / 307.3 / 310.5. x, y one per row with w full take the
// kernel of that fixed layout (ROWS_XY; LERP_T2ROWS_XY=0: the one reading a.kind; read once, for experiments).
template <typename T, int VEC, int XY>
void t2_rows_launch(Tile2Args<T> a, cudaStream_t stream) {
  static const int waves = std::max(1, env_int("LERP_T2ROWS_WAVES", 1));
  static const int fixed_on = env_int("LERP_T2ROWS_XY", 1);
  const int packs = a.L / VEC;
  int s = 1;
  while (s < 32 && s * t2_rows_per_lane(VEC) < packs) s *= 2;
  bool rows_xy = fixed_on && a.op[2] != nullptr;
  for (int t = 0; t < 3; ++t) rows_xy = rows_xy && a.kind[t] == t2_xy_rows_kind(t);
  with_pow2_32(s, [&](auto sc) {
    constexpr int S = decltype(sc)::value;
    const auto run = [&](auto kernel) {
      const void* k = reinterpret_cast<const void*>(kernel);
      const int64_t blocks =
          std::max<int64_t>(1, std::min<int64_t>(ceil_div(a.M, int64_t(kThreads / S)), waves * wave_of(k)));
      kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a);
    };
    rows_xy ? run(&tile2d_rows_kernel<T, VEC, XY, S, true>) : run(&tile2d_rows_kernel<T, VEC, XY, S, false>);
  });
  check_cuda(cudaGetLastError(), "tile2d rows kernel launch");
}

// The tile2d pass over view v: every requested gradient (dx, dy, dw; null:
// not) in one launch (plus a finalize launch when the ticket is not used).
template <typename T>
void launch_tile2d(const View2& v, const T* g, const T* x, const T* y, const T* w, double wsc, T* dx, T* dy, T* dw,
                   const std::function<unsigned*()>& counter, const Alloc& alloc, cudaStream_t stream) {
  using A = typename AccOf<T>::type;
  constexpr int V = vec_of<T>();
  constexpr int E = kT2Bytes / sizeof(A);
  Tile2Args<T> a;
  a.g = g;
  a.op[0] = x;
  a.op[1] = y;
  a.op[2] = w;
  a.wsc = wsc;
  a.grad[0] = dx;
  a.grad[1] = dy;
  a.grad[2] = w ? dw : nullptr;
  a.M = v.M;
  a.L = static_cast<int>(v.L);
  for (int t = 0; t < 3; ++t) a.kind[t] = v.kind[t];
  if (!w) a.kind[2] = kT2All;
  const bool xy = a.grad[2] != nullptr;
  a.rc = false;
  for (int t = 0; t < 3; ++t) {
    const bool read = t == 2 ? w != nullptr : xy;
    a.rc = a.rc || (read && (a.kind[t] == kT2Row || a.kind[t] == kT2Col));
  }
  make_divider(a.L, a.magic, a.shift);
  int s = 1;
  while (s < 32 && int64_t(s) * 8 < a.L) s *= 2;  // each lane of a row sum adds at most 8 values
  a.S = s;
  // Whether dout and every full-size operand read and gradient written start on a multiple of `bytes`.
  const auto full = [&](const void* p, int t, bool read) { return read && a.kind[t] == kT2Full ? p : nullptr; };
  const std::initializer_list<const void*> fulls = {g, full(a.op[0], 0, xy), full(a.op[1], 1, xy),
                                                    full(a.op[2], 2, w != nullptr), full(a.grad[0], 0, true),
                                                    full(a.grad[1], 1, true), full(a.grad[2], 2, true)};
  const auto aligned_to = [&](uintptr_t bytes) { return all_aligned(fulls, bytes); };
  const bool vec = aligned_to(16) && t2_rows(a.L, a.M, E, V) > 0;
  // Short rows whose reduced gradients are all row ones: tile2d_rows_kernel (LERP_T2ROWS=0: tile2d_kernel;
  // read once, for experiments), in 16-byte packs, or where those do not divide a row, in the widest
  // narrower pack of 2 elements or more that does, every full pointer aligned to it (LERP_T2ROWS_NARROW=0:
  // those rows on tile2d_kernel; read once, for experiments).
  static const int rows_on = env_int("LERP_T2ROWS", 1);
  static const int narrow_on = env_int("LERP_T2ROWS_NARROW", 1);
  bool rows_only = true;
  for (int t = 0; t < 3; ++t)
    if (a.grad[t] && a.kind[t] != kT2Full && a.kind[t] != kT2Row) rows_only = false;
  int rows_v = 0;
  if (rows_on && rows_only && a.L <= kT2RowsMax) {
    if (vec && a.L % V == 0) {
      rows_v = V;
    } else if (narrow_on) {
      rows_v = widest_narrow<T>([&](int v) { return a.L % v == 0 && aligned_to(v * sizeof(T)); });
    }
  }
  with_xy<T>(xy_mode<T>(xy, x), [&](auto m) {
    constexpr int XY = decltype(m)::value;
    if (rows_v == V) {
      t2_rows_launch<T, V, XY>(a, stream);
    } else if (rows_v > 0) {
      with_narrow<T>(rows_v, [&](auto c) { t2_rows_launch<T, decltype(c)::value, XY>(a, stream); });
    } else {
      vec ? t2_launch_v<T, V, XY>(a, counter, alloc, stream) : t2_launch_v<T, 1, XY>(a, counter, alloc, stream);
    }
  });
}

}  // namespace gpu
}  // namespace lerp_core
