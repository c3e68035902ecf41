// The split backward of the norm ops (kCenter: layer_norm, else rms_norm), for few long rows whose x and dy fit
// in L2 together (norm_launch.cuh's split_takes). Two launches, no finalize, no atomics:
//   split_sums: a block per (chunk of kSplitThreads * kPer columns, row): the chunk's sums of g * xhat and g
//               (g = dy * w), added over the block in a fixed order, to partials [rows, chunks, 2]. Every SM
//               works on every row: a row is no longer one cluster's, waiting on its barriers.
//   split_dx:   a block per kSplitCols columns: first each row's two sums, its chunks' partials added in chunk
//               order (the same in every block), then, by columns, dx for every row and dw/db, the column's
//               terms added in a fixed order (row lanes, then lanes in order), written directly. Its reads of x
//               and dy find them in L2, where split_sums has just left them: memory moves x and dy once, and dx.
// Scalar accesses throughout (any length, any alignment): a warp reads a row's 32 consecutive elements.
#pragma once

#include "norm_device.cuh"

namespace norm_core {
namespace gpu {

constexpr int kSplitThreads = 256;                           // threads of a split_sums and of a split_dx block
constexpr int kSplitCols = 32;                               // columns of a split_dx block: one a lane of a warp
constexpr int kSplitLanes = kSplitThreads / kSplitCols;      // row lanes of a split_dx block (a warp each)
constexpr int kSplitBatch = 8;                               // rows a split_dx lane loads before it uses any
constexpr int kSplitMaxRows = 1024;                          // split_dx holds two floats a row in shared memory

// Columns a split_sums block takes with kPer values a thread.
template <int kPer>
__host__ __device__ constexpr int split_chunk() {
  return kSplitThreads * kPer;
}

// Block (chunk blockIdx.x, row blockIdx.y): thread t takes columns chunk * split_chunk + t + i * kSplitThreads,
// i < kPer, every load (x, dy, w) issued before any is used; the block's two sums go to
// part[(row * chunks + chunk) * 2].
template <typename T, typename W, bool kCenter, int kPer>
__global__ void __launch_bounds__(kSplitThreads)
    split_sums(const T* __restrict__ dy, const T* __restrict__ x, const W* __restrict__ w,
               const float* __restrict__ mean, const float* __restrict__ rstd, float* __restrict__ part, int cols) {
  __shared__ float smem[2 * 32];
  const int64_t row = blockIdx.y;
  const int c0 = static_cast<int>(blockIdx.x) * split_chunk<kPer>() + static_cast<int>(threadIdx.x);
  const T *xr = x + row * cols, *gr = dy + row * cols;
  T xv[kPer], gv[kPer];
  W wv[kPer];
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int c = c0 + i * kSplitThreads;
    if (c < cols) {
      xv[i] = xr[c];
      gv[i] = gr[c];
      if (w != nullptr) wv[i] = w[c];
    }
  }
  const float mu = kCenter ? mean[row] : 0.f, rs = rstd[row];
  float s[2] = {0.f, 0.f};
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int c = c0 + i * kSplitThreads;
    if (c < cols) {
      const float g = to_f32(gv[i]) * (w != nullptr ? to_f32(wv[i]) : 1.f);
      s[0] += g * ((to_f32(xv[i]) - mu) * rs);
      s[1] += g;
    }
  }
  block_sum<2>(s, smem);
  if (threadIdx.x == 0) {
    float* p = part + (row * gridDim.x + blockIdx.x) * 2;
    p[0] = s[0];
    p[1] = s[1];
  }
}

// Block of kSplitCols columns x kSplitLanes row lanes: lane l (a warp) takes rows l, l + kSplitLanes, ...,
// kSplitBatch of them loaded at once. Dynamic shared memory: 2 * rows floats (each row's c1, c2).
template <typename T, typename W, bool kCenter>
__global__ void __launch_bounds__(kSplitThreads)
    split_dx(const T* __restrict__ dy, const T* __restrict__ x, const W* __restrict__ w,
             const float* __restrict__ mean, const float* __restrict__ rstd, const float* __restrict__ part,
             T* __restrict__ dx, W* __restrict__ dw, W* __restrict__ db, int rows, int cols, int chunks) {
  extern __shared__ float coef[];  // c1 of row r at coef[r], c2 at coef[rows + r]
  __shared__ float red[kCenter ? 2 : 1][kSplitLanes][kSplitCols];
  const float inv_n = 1.f / static_cast<float>(cols);
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
  __syncthreads();
  const int tx = threadIdx.x % kSplitCols, ly = threadIdx.x / kSplitCols;
  const int c = static_cast<int>(blockIdx.x) * kSplitCols + tx;
  const bool in = c < cols;
  const float wv = in && w != nullptr ? to_f32(w[c]) : 1.f;
  float aw = 0.f, ab = 0.f;
  for (int r0 = ly; r0 < rows; r0 += kSplitLanes * kSplitBatch) {
    T xv[kSplitBatch], gv[kSplitBatch];
    float mu[kSplitBatch], rs[kSplitBatch];
#pragma unroll
    for (int i = 0; i < kSplitBatch; ++i) {
      const int64_t r = r0 + i * kSplitLanes;
      if (in && r < rows) {
        xv[i] = x[r * cols + c];
        gv[i] = dy[r * cols + c];
        mu[i] = kCenter ? mean[r] : 0.f;
        rs[i] = rstd[r];
      }
    }
#pragma unroll
    for (int i = 0; i < kSplitBatch; ++i) {
      const int r = r0 + i * kSplitLanes;
      if (!in || r >= rows) continue;
      const float xh = (to_f32(xv[i]) - mu[i]) * rs[i], g = to_f32(gv[i]);
      dx[static_cast<int64_t>(r) * cols + c] = from_f32<T>(rs[i] * (g * wv - coef[rows + r] - xh * coef[r]));
      aw += g * xh;
      ab += g;
    }
  }
  red[0][ly][tx] = aw;
  if constexpr (kCenter) red[1][ly][tx] = ab;
  __syncthreads();
  if (ly == 0 && in) put_lane_sums<kCenter>(red, tx, c, dw, db);
}

}  // namespace gpu
}  // namespace norm_core
