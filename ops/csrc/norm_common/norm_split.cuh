// The split backward of the norm ops (kCenter: layer_norm, else rms_norm), for few long rows whose x and dy fit
// in L2 together (norm_launch.cuh's split_takes). Two launches, no finalize, no atomics:
//   split_sums: a block per (chunk of kSplitThreads * kPer columns, row): the chunk's sums of g * xhat and g
//               (g = dy * w), added over the block in a fixed order, to partials [rows, chunks, 2]. Every SM
//               works on every row: a row is no longer one cluster's, waiting on its barriers.
//   split_dx:   a block per kSplitCols columns (a dependent launch: common/dependent_launch.cuh): first each
//               row's two sums from its chunks' partials (split_group lanes a row, in a fixed order, the same
//               in every block), then, by columns, dx for every row and dw/db, the column's terms added in a
//               fixed order (row lanes, then lanes in order), written directly. Its reads of x and dy find them
//               in L2, where split_sums has just left them: memory moves x and dy once, and dx.
// kV: elements a thread reads at once. 1 (scalar accesses: any length, any alignment; a warp reads 32
// consecutive elements of a row), or V = 16 / sizeof(T) where every row is whole 16-byte packs and the weight
// is 16-byte aligned: 16-byte loads and stores, and a split_dx block takes 32 packs of columns.
#pragma once

#include "common/dependent_launch.cuh"
#include "norm_device.cuh"

namespace norm_core {
namespace gpu {

constexpr int kSplitThreads = 256;                           // threads of a split_sums and of a split_dx block
constexpr int kSplitCols = 32;                               // columns of a split_dx block: one a lane of a warp
constexpr int kSplitLanes = kSplitThreads / kSplitCols;      // row lanes of a split_dx block (a warp each)
// Rows a split_dx lane loads before it uses any: 8 scalars, or 4 packs (8 held 124-162 registers, one
// 256-thread block an SM; 4 fit two).
template <int kV>
__host__ __device__ constexpr int split_batch() {
  return kV == 1 ? 8 : 4;
}
constexpr int kSplitMaxRows = 1024;                          // split_dx holds two floats a row in shared memory

// Lanes of a split_dx block that add one row's chunk sums: a power of two, at most a warp, at least 4 chunks
// a lane, rows of fewer than kSplitGroupMinChunks chunks one lane, and no more lanes than give every thread a
// row (one lane a row from 129 rows on). With one lane a row, `[21,48983]` f16 rms_norm's 48 chunks were
// added one after another and split_dx took 13.3 us of the backward (docs/ops/norms-design.md); 8 lanes a row
// took it from 21.9 to 18.4 us, and 4 lanes of 16 chunks [64,65536] f32 layer_norm from 40.2 to 37.6 (H100,
// both orders). Fewer chunks a lane ran slower: 4 lanes of 12 chunks ([39,12288] f32 layer_norm 11.3 ->
// 11.8 us), 8 of 22 ([27,44219] bf16 layer_norm 17.3 -> 18.2); 4 of 22, which this rule gives, still 5-7%
// slower there. Figures: commits 3ce8d57, 1cb21aa and eb95a6b.
constexpr int kSplitGroupMinChunks = 16;
__host__ __device__ inline int split_group(int rows, int chunks) {
  int g = 1;
  while (g < 32 && chunks >= kSplitGroupMinChunks && 8 * g <= chunks && 2 * g * rows <= kSplitThreads) g *= 2;
  return g;
}

// Columns of a split_dx block: 32 lanes of kV columns.
template <int kV>
__host__ __device__ constexpr int split_cols() {
  return kSplitCols * kV;
}

// Columns a split_sums block takes with kPer values a thread.
template <int kPer>
__host__ __device__ constexpr int split_chunk() {
  return kSplitThreads * kPer;
}

// Block (chunk blockIdx.x, row blockIdx.y): thread t takes the kV columns from chunk * split_chunk + (t + i *
// kSplitThreads) * kV, i < kPer / kV, every load (x, dy, w) issued before any is used; the block's two sums go
// to part[(row * chunks + chunk) * 2].
template <typename T, typename W, bool kCenter, int kPer, int kV>
__global__ void __launch_bounds__(kSplitThreads)
    split_sums(const T* __restrict__ dy, const T* __restrict__ x, const W* __restrict__ w,
               const float* __restrict__ mean, const float* __restrict__ rstd, float* __restrict__ part, int cols) {
  static_assert(kPer % kV == 0, "whole loads a thread");
  constexpr int kN = kPer / kV;
  __shared__ float smem[2 * 32];
  const int64_t row = blockIdx.y;
  const int c0 = static_cast<int>(blockIdx.x) * split_chunk<kPer>() + static_cast<int>(threadIdx.x) * kV;
  const T *xr = x + row * cols, *gr = dy + row * cols;
  Pack<T, kV> xv[kN], gv[kN];
  Pack<W, kV> wv[kN];
#pragma unroll
  for (int i = 0; i < kN; ++i) {
    const int c = c0 + i * kSplitThreads * kV;
    if (c < cols) {
      xv[i] = load_pack<T, kV>(xr + c);
      gv[i] = load_pack<T, kV>(gr + c);
      if (w != nullptr) wv[i] = load_pack<W, kV>(w + c);
    }
  }
  const float mu = kCenter ? mean[row] : 0.f, rs = rstd[row];
  float s[2] = {0.f, 0.f};
#pragma unroll
  for (int i = 0; i < kN; ++i) {
    const int c = c0 + i * kSplitThreads * kV;
    if (c < cols) {
#pragma unroll
      for (int k = 0; k < kV; ++k) {
        const float g = gv[i].get(k) * (w != nullptr ? wv[i].get(k) : 1.f);
        s[0] += g * ((xv[i].get(k) - mu) * rs);
        s[1] += g;
      }
    }
  }
  block_sum<2>(s, smem);
  if (threadIdx.x == 0) {
    float* p = part + (row * gridDim.x + blockIdx.x) * 2;
    p[0] = s[0];
    p[1] = s[1];
  }
}

// Each row's c1 and c2 (its two sums over the row's chunks, over the row's length) into coef: a thread a
// row, adding the chunks in order.
template <bool kCenter>
__device__ __forceinline__ void split_coefs(const float* __restrict__ part, int rows, int chunks, float inv_n,
                                            float* coef) {
  for (int r = threadIdx.x; r < rows; r += kSplitThreads) {
    const float* p = part + static_cast<int64_t>(r) * chunks * 2;
    float s0 = 0.f, s1 = 0.f;
    for (int k = 0; k < chunks; ++k) {
      s0 += p[2 * k];
      s1 += p[2 * k + 1];
    }
    coef[r] = s0 * inv_n;
    coef[rows + r] = kCenter ? s1 * inv_n : 0.f;
  }
}

// The same by split_group lanes a row: lane i adds chunks i, i + g, ... in order, then the group's lanes add
// theirs in a butterfly (every lane ends with the same bits); the same order in every block.
template <bool kCenter>
__device__ __forceinline__ void split_coefs_grouped(const float* __restrict__ part, int rows, int chunks,
                                                    float inv_n, float* coef) {
  // The host has worked g out already, to pick this kernel; it is a few integer steps, and as a kernel
  // argument it would be code other than the one timed (figures: split_group).
  const int g = split_group(rows, chunks);
  const int lane = threadIdx.x % g, per_round = kSplitThreads / g;
  for (int r0 = 0; r0 < rows; r0 += per_round) {  // as many rounds for every thread: the shuffles see all lanes
    const int r = r0 + static_cast<int>(threadIdx.x) / g;
    float2 s = make_float2(0.f, 0.f);
    if (r < rows) {
      const auto* p = reinterpret_cast<const float2*>(part) + static_cast<int64_t>(r) * chunks;
#pragma unroll 4
      for (int k = lane; k < chunks; k += g) {
        const float2 v = p[k];
        s.x += v.x;
        s.y += v.y;
      }
    }
    for (int o = g / 2; o > 0; o /= 2) {
      s.x += __shfl_xor_sync(0xffffffffu, s.x, o);
      s.y += __shfl_xor_sync(0xffffffffu, s.y, o);
    }
    if (r < rows && lane == 0) {
      coef[r] = s.x * inv_n;
      coef[rows + r] = kCenter ? s.y * inv_n : 0.f;
    }
  }
}

// Block of split_cols<kV> columns x kSplitLanes row lanes: lane l (a warp) takes rows l, l + kSplitLanes, ...,
// split_batch of them loaded at once, kV columns a thread. Dynamic shared memory: 2 * rows floats (each row's
// c1, c2), added by split_coefs_grouped where split_group gives a row more than one lane (kGrouped), else by
// split_coefs: a kernel of its own, so the calls of one lane a row keep the code they had before groups.
template <typename T, typename W, bool kCenter, int kV, bool kGrouped>
__global__ void __launch_bounds__(kSplitThreads, kV == 1 ? 0 : 2)
    split_dx(const T* __restrict__ dy, const T* __restrict__ x, const W* __restrict__ w,
             const float* __restrict__ mean, const float* __restrict__ rstd, const float* __restrict__ part,
             T* __restrict__ dx, W* __restrict__ dw, W* __restrict__ db, int rows, int cols, int chunks) {
  extern __shared__ float coef[];  // c1 of row r at coef[r], c2 at coef[rows + r]
  __shared__ float red[kCenter ? 2 : 1][kSplitLanes][split_cols<kV>()];
  const float inv_n = 1.f / static_cast<float>(cols);
  const int tx = threadIdx.x % kSplitCols, ly = threadIdx.x / kSplitCols;
  const int c = static_cast<int>(blockIdx.x) * split_cols<kV>() + tx * kV;
  const bool in = c < cols;  // kV > 1: cols is a multiple of kV
  constexpr int kBatch = split_batch<kV>();
  Pack<T, kV> xv[kBatch], gv[kBatch];
  float mu[kBatch], rs[kBatch];
  const auto load_batch = [&](int r0) {
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      const int64_t r = r0 + i * kSplitLanes;
      if (in && r < rows) {
        xv[i] = load_pack<T, kV>(x + r * cols + c);
        gv[i] = load_pack<T, kV>(dy + r * cols + c);
        mu[i] = kCenter ? mean[r] : 0.f;
        rs[i] = rstd[r];
      }
    }
  };
  // The weight and the first batch of rows are the backward's inputs: read before split_sums' partials are
  // waited for (a dependent launch, common/dependent_launch.cuh), so their round trip overlaps the gap after
  // split_sums and the partials' own.
  float wv[kV];
  load_param<W, kV>(in ? w : nullptr, c, 1.f, wv);
  load_batch(ly);
  opcore::gpu::grid_dep_wait();
  if constexpr (kGrouped) {
    split_coefs_grouped<kCenter>(part, rows, chunks, inv_n, coef);
  } else {
    split_coefs<kCenter>(part, rows, chunks, inv_n, coef);
  }
  __syncthreads();
  float aw[kV], ab[kV];
#pragma unroll
  for (int k = 0; k < kV; ++k) aw[k] = ab[k] = 0.f;
  for (int r0 = ly; r0 < rows; r0 += kSplitLanes * kBatch) {
    if (r0 != ly) load_batch(r0);
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      const int r = r0 + i * kSplitLanes;
      if (!in || r >= rows) continue;
      float o[kV];
#pragma unroll
      for (int k = 0; k < kV; ++k) {
        const float xh = (xv[i].get(k) - mu[i]) * rs[i], g = gv[i].get(k);
        o[k] = rs[i] * (g * wv[k] - coef[rows + r] - xh * coef[r]);
        aw[k] += g * xh;
        ab[k] += g;
      }
      store_pack<T, kV>(dx + static_cast<int64_t>(r) * cols + c, pack_of<T, kV>(o));
    }
  }
#pragma unroll
  for (int k = 0; k < kV; ++k) {
    red[0][ly][tx * kV + k] = aw[k];
    if constexpr (kCenter) red[1][ly][tx * kV + k] = ab[k];
  }
  __syncthreads();
  // Thread j adds the lanes' sums of the block's column j (kV == 1: warp 0's lanes, column c).
  for (int j = threadIdx.x; j < split_cols<kV>(); j += kSplitThreads) {
    const int64_t cj = static_cast<int64_t>(blockIdx.x) * split_cols<kV>() + j;
    if (cj < cols) put_lane_sums<kCenter>(red, j, cj, dw, db);
  }
}

}  // namespace gpu
}  // namespace norm_core
