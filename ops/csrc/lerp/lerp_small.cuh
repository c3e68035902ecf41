// lerp CUDA core, part: the small backward: every gradient of a small problem with reduced gradients in one launch.
// Included in order by lerp.cuh; see its header for the paths and when each is chosen.
#pragma once

#include "lerp_tile2d.cuh"

namespace lerp_core {
namespace gpu {

// ----------------------------------------------------------------- small --
// Backward of a problem of at most kSmallMaxN positions whose reduced
// gradients each sum at most kSmallMaxL positions per element: one launch, no
// workspace, no ticket. Each element j of reduced gradient i belongs to a
// group of subs[i] threads (a power of two up to 32, adjacent lanes; or the
// whole block), thread s of it taking the gradient's positions s, s + subs,
// ... of j (index math over the gradient's own layout), kSmallBatch at a
// time with every load issued first; the group's sums
// meet in a fixed shuffle tree (or block_sum), so the bits do not depend on
// timing. The groups of the first reduced gradient (the one with the most
// threads) also write the full-size gradients at the positions they visit,
// each position once.
constexpr int64_t kSmallMaxN = int64_t(1) << 19;
constexpr int64_t kSmallMaxL = 4096;
constexpr int kSmallBatch = 4;  // positions a thread loads before using any

template <typename T>
struct SmallArgs {
  const T* g = nullptr;
  const T* x = nullptr;
  const T* y = nullptr;
  const T* w = nullptr;  // null: scalar wsc
  double wsc = 0.0;
  T* full[3] = {nullptr, nullptr, nullptr};  // dx, dy, dw written full size (null: not)
  int nt = 0;                                 // reduced gradients (1-3)
  int target[3] = {0, 0, 0};                  // kX, kY or kW
  T* tgt[3] = {nullptr, nullptr, nullptr};
  int subs[3] = {1, 1, 1};          // threads per element (kThreads: the whole block)
  unsigned block_end[3] = {0, 0, 0};  // blocks of gradients 0..i
  unsigned mask = 0;                  // tensors whose offsets are read (bits kOut, kX, kY, kW)
  Layout lay[3];
};

// Gradient i's share of the grid: block b0 is its first block.
template <typename T, int XY>
__device__ __forceinline__ void small_target(const SmallArgs<T>& a, int i, const Layout& lay, unsigned b0) {
  using A = typename AccOf<T>::type;
  const int S = a.subs[i];
  const int t = static_cast<int>(threadIdx.x);
  const int sub = t & (S - 1);
  const int32_t j = static_cast<int32_t>(((blockIdx.x - b0) * kThreads + t) / S);
  const int tg = a.target[i];
  const A wsc = static_cast<A>(a.wsc);
  const bool xy = tg == kW || (i == 0 && a.full[2]);
  A acc = A(0);
  if (j < lay.M) {
    int32_t ok[kNumT];
    decompose_dev<int32_t>(lay, 0, lay.nk, j, a.mask, ok);
    const int32_t L = static_cast<int32_t>(lay.L);
    for (int32_t r0 = sub; r0 < L; r0 += S * kSmallBatch) {
      // Every load of a batch before any use, raw: the full-size stores below
      // would otherwise hold the next position's loads back (aliasing), and a
      // value used (converted, subtracted) where it is loaded makes the
      // thread wait for it before the next position's index math (a loop)
      // and loads: a round trip to memory a position (SASS, sm_90).
      int32_t e[kSmallBatch];
      T gr[kSmallBatch], wr[kSmallBatch], xr[kSmallBatch], yr[kSmallBatch];
#pragma unroll
      for (int b = 0; b < kSmallBatch; ++b) {
        const int32_t r = r0 + b * S;
        if (r < L) {
          int32_t o[kNumT];
          decompose_dev<int32_t>(lay, lay.nk, lay.nk + lay.nr, r, a.mask, o);
          e[b] = o[kOut] + ok[kOut];
          gr[b] = a.g[e[b]];
          if (a.w) wr[b] = a.w[o[kW] + ok[kW]];
          if (xy) {
            yr[b] = a.y[o[kY] + ok[kY]];
            xr[b] = XY == kXYDiff ? T{} : a.x[o[kX] + ok[kX]];
          }
        }
      }
#pragma unroll
      for (int b = 0; b < kSmallBatch; ++b) {
        if (r0 + b * S < L) {
          const A g = cvt_in(gr[b]), w = a.w ? cvt_in(wr[b]) : wsc;
          const A d = xy ? cvt_in(yr[b]) - cvt_in(xr[b]) : A(0);
          acc += tg == kX ? g * (A(1) - w) : tg == kY ? g * w : g * d;
          if (i == 0) {
            if (a.full[0]) a.full[0][e[b]] = cvt_out<T>(g * (A(1) - w));
            if (a.full[1]) a.full[1][e[b]] = cvt_out<T>(g * w);
            if (a.full[2]) a.full[2][e[b]] = cvt_out<T>(g * d);
          }
        }
      }
    }
  }
  if (S == kThreads) {
    acc = block_sum(acc);
  } else {
    for (int o = S / 2; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);  // S is uniform in a block
  }
  if (j < lay.M && sub == 0) a.tgt[i][j] = cvt_out<T>(acc);
}

template <typename T, int XY>  // XY: kXYRead, or kXYDiff (no x: y holds y - x)
__global__ void __launch_bounds__(kThreads) small_bwd_kernel(SmallArgs<T> a) {
  // Layouts by constant index: kernel parameters indexed at run time would be copied to local memory.
  if (blockIdx.x < a.block_end[0]) {
    small_target<T, XY>(a, 0, a.lay[0], 0);
  } else if (blockIdx.x < a.block_end[1]) {
    small_target<T, XY>(a, 1, a.lay[1], a.block_end[0]);
  } else {
    small_target<T, XY>(a, 2, a.lay[2], a.block_end[1]);
  }
}

// Batches a lane of a 32-lane group takes before an element gets the whole
// block (a block for 129-256 positions leaves half its threads idle), where
// the gradient's 32-lane groups still make kSmallMinThreads threads.
constexpr int kSmallWarpBatches = 2;
constexpr int64_t kSmallMinThreads = 1024;

// Positions a lane of a group of s threads takes at most: kSmallWarpBatches
// batches in 32-lane groups, one batch otherwise.
inline int64_t small_per_lane(int s) { return int64_t(kSmallBatch) * (s == 32 ? kSmallWarpBatches : 1); }

// Threads per element of a reduced gradient of M elements summing L
// positions each: the smallest power of two that leaves a thread one batch
// of them; 32 for up to kSmallWarpBatches batches a lane (see above); the
// whole block beyond.
inline int small_subs(int64_t L, int64_t M) {
  int s = 1;
  while (s < 32 && int64_t(s) * kSmallBatch < L) s *= 2;
  if (L <= int64_t(s) * kSmallBatch) return s;
  return L <= 32 * small_per_lane(32) && M * 32 >= kSmallMinThreads ? 32 : kThreads;
}
inline int small_subs(const Layout& lay) { return small_subs(lay.L, lay.M); }

// The reduced gradient whose groups write the full-size gradients: the one
// with the most threads.
inline size_t small_first(const std::vector<Layout>& lays) {
  size_t f = 0;
  for (size_t i = 1; i < lays.size(); ++i)
    if (lays[i].M * small_subs(lays[i]) > lays[f].M * small_subs(lays[f])) f = i;
  return f;
}

// Does this backward run as small_bwd_kernel? At most kSmallMaxN positions,
// each reduced gradient at most kSmallMaxL positions per element, and with
// full-size gradients to write, a first gradient that leaves its threads one
// batch each (kSmallWarpBatches in 32-lane groups) over at least
// kSmallMinThreads threads (a few blocks writing everything were slower than
// the general paths). LERP_SMALL=0 sends these to the paths below (read
// once; for experiments).
inline bool small_apply(int64_t n, const std::vector<Layout>& lays, bool full_grads) {
  static const int on = env_int("LERP_SMALL", 1);
  if (!on || n > kSmallMaxN || lays.empty() || lays.size() > 3) return false;
  for (const Layout& lay : lays)
    if (lay.L > kSmallMaxL) return false;
  if (!full_grads) return true;
  const Layout& f = lays[small_first(lays)];
  const int s = small_subs(f);
  return f.L <= int64_t(s) * small_per_lane(s) && f.M * s >= kSmallMinThreads;
}

// The small pass: the reduced gradients `reduced` (their layouts `lays`) and
// the full-size ones (`full`: dx, dy, dw or null) in one launch.
template <typename T>
void launch_small(const std::vector<int>& reduced, const std::vector<Layout>& lays, const T* g, const T* x,
                  const T* y, const T* w, double wsc, T* const (&outs)[kNumT], const bool (&full)[kNumT],
                  cudaStream_t stream) {
  SmallArgs<T> a;
  set_inputs(a, g, x, y, w, wsc);
  bool xy = false;
  for (int t = kX; t <= kW; ++t) {
    a.full[t - kX] = full[t] ? outs[t] : nullptr;
    xy = xy || (full[t] && t == kW);
  }
  a.nt = static_cast<int>(reduced.size());
  std::vector<size_t> order(reduced.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::swap(order[0], order[small_first(lays)]);
  unsigned blocks = 0;
  for (int i = 0; i < a.nt; ++i) {
    const size_t k = order[i];
    a.target[i] = reduced[k];
    a.tgt[i] = outs[reduced[k]];
    a.lay[i] = lays[k];
    a.subs[i] = small_subs(lays[k]);
    blocks += static_cast<unsigned>(ceil_div(lays[k].M * a.subs[i], kThreads));
    a.block_end[i] = blocks;
    xy = xy || reduced[k] == kW;
  }
  for (int i = a.nt; i < 3; ++i) a.block_end[i] = blocks;
  a.mask = (1u << kOut) | (w ? 1u << kW : 0u) | (xy ? (1u << kX) | (1u << kY) : 0u);
  // kXYDiff where x is null (y holds y - x), else kXYRead (whether a target reads x, y is the kernel's).
  if (xy_mode<T>(true, x) == kXYDiff) {
    small_bwd_kernel<T, (sizeof(T) >= 4 ? kXYDiff : kXYRead)><<<blocks, kThreads, 0, stream>>>(a);
  } else {
    small_bwd_kernel<T, kXYRead><<<blocks, kThreads, 0, stream>>>(a);
  }
  check_cuda(cudaGetLastError(), "small backward kernel launch");
}

}  // namespace gpu
}  // namespace lerp_core
