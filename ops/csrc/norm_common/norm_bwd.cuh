// Backward kernels of the norm ops (kCenter: layer_norm, else rms_norm); see norm_launch.cuh for when
// each runs. With xhat = (x - mean) * rstd and g = dy * w:
//   dx = rstd * (g - mean(g) - xhat * mean(g * xhat))   (no mean(g) term for rms_norm)
//   dw = sum over rows of dy * xhat,  db = sum over rows of dy.
//   bwd_reg     : the row in registers (kTPR threads a row, kVecs packs of V a thread, as fwd_reg); a fixed
//                 grid of row groups loops over rows, each group adding its rows' dw/db terms in
//                 registers; the groups of a block add theirs in shared memory, in order, and the block
//                 writes one fp32 partial row.
//   bwd_loop    : any row length or alignment: a block per row, dx only, scalar accesses.
//   cols_partial: dw/db for bwd_loop: (32 columns x a slice of rows) a block, one fp32 partial row
//                 per slice.
//   finalize    : dw/db = the partial rows added in row order (fixed: the same bits every run).
#pragma once

#include "norm_device.cuh"

namespace norm_core {
namespace gpu {

template <typename T, typename W, bool kCenter, int kTPR, int kVecs, int V = 16 / sizeof(T)>
__global__ void __launch_bounds__(kTPR < 128 ? 128 : kTPR)
    bwd_reg(const T* __restrict__ dy, const T* __restrict__ x, const W* __restrict__ w,
            const float* __restrict__ mean, const float* __restrict__ rstd, T* __restrict__ dx,
            float* __restrict__ part_w, float* __restrict__ part_b, int64_t rows, int cols) {
  constexpr int kBlock = kTPR < 128 ? 128 : kTPR, kRPB = kBlock / kTPR;
  __shared__ float smem[2 * 32];
  const int lane = threadIdx.x % kTPR;
  const int64_t group = static_cast<int64_t>(blockIdx.x) * kRPB + threadIdx.x / kTPR;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kRPB;
  const float inv_n = 1.f / static_cast<float>(cols);
  float aw[kVecs][V], ab[kCenter ? kVecs : 1][V];
#pragma unroll
  for (int i = 0; i < kVecs; ++i)
#pragma unroll
    for (int k = 0; k < V; ++k) {
      aw[i][k] = 0.f;
      if constexpr (kCenter) ab[i][k] = 0.f;
    }
  // Every group of a block runs the same number of iterations when kTPR > 32 (one group a block).
  for (int64_t row = group; row < rows; row += stride) {
    const float mu = kCenter ? mean[row] : 0.f, rs = rstd[row];
    const T *xr = x + row * cols, *gr = dy + row * cols;
    Pack<T, V> xp[kVecs], gp[kVecs];
    float s[2] = {0.f, 0.f};
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      const int c = (lane + i * kTPR) * V;
      if (c < cols) {
        xp[i] = load_pack<T, V>(xr + c);
        gp[i] = load_pack<T, V>(gr + c);
        float wv[V];
        load_param<W, V>(w, c, 1.f, wv);
#pragma unroll
        for (int k = 0; k < V; ++k) {
          const float xh = (to_f32(xp[i].v[k]) - mu) * rs, g = to_f32(gp[i].v[k]);
          const float wg = g * wv[k];
          s[0] += wg * xh;
          if constexpr (kCenter) s[1] += wg;
          aw[i][k] += g * xh;
          if constexpr (kCenter) ab[i][k] += g;
        }
      }
    }
    group_sum<kTPR, 2>(s, smem);
    const float c1 = s[0] * inv_n, c2 = kCenter ? s[1] * inv_n : 0.f;
    T* dxr = dx + row * cols;
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      const int c = (lane + i * kTPR) * V;
      if (c >= cols) continue;
      float wv[V];
      load_param<W, V>(w, c, 1.f, wv);
      Pack<T, V> o;
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const float xh = (to_f32(xp[i].v[k]) - mu) * rs;
        o.v[k] = from_f32<T>(rs * (to_f32(gp[i].v[k]) * wv[k] - c2 - xh * c1));
      }
      store_pack<T, V>(dxr + c, o);
    }
  }
  // One partial row per block: the row groups of a block (warps) add theirs in shared memory, in group order.
  constexpr int kCols = kTPR * kVecs * V;  // the longest row this configuration takes
  __shared__ float red[kRPB > 1 ? kRPB : 1][kRPB > 1 ? kCols : 1];
  const int g = threadIdx.x / kTPR;
  auto store = [&](float (&acc)[kVecs][V], float* part) {
    if constexpr (kRPB > 1) {
#pragma unroll
      for (int i = 0; i < kVecs; ++i) {
        const int c = (lane + i * kTPR) * V;
        if (c >= cols) continue;
#pragma unroll
        for (int k = 0; k < V; ++k) red[g][c + k] = acc[i][k];
      }
      __syncthreads();
      for (int c = threadIdx.x; c < cols; c += kBlock) {
        float t = 0.f;
#pragma unroll
        for (int r = 0; r < kRPB; ++r) t += red[r][c];
        part[blockIdx.x * static_cast<int64_t>(cols) + c] = t;
      }
      __syncthreads();
    } else {
#pragma unroll
      for (int i = 0; i < kVecs; ++i) {
        const int c = (lane + i * kTPR) * V;
        if (c >= cols) continue;
        float* out = part + blockIdx.x * static_cast<int64_t>(cols) + c;
        if constexpr (V % 4 == 0) {  // 16-byte aligned: cols is a multiple of V
#pragma unroll
          for (int k = 0; k < V; k += 4) {
            *reinterpret_cast<float4*>(out + k) = make_float4(acc[i][k], acc[i][k + 1], acc[i][k + 2], acc[i][k + 3]);
          }
        } else {
#pragma unroll
          for (int k = 0; k < V; ++k) out[k] = acc[i][k];
        }
      }
    }
  };
  if (part_w != nullptr) store(aw, part_w);
  if constexpr (kCenter) {
    if (part_b != nullptr) store(ab, part_b);
  }
}

template <typename T, typename W, bool kCenter>
__global__ void __launch_bounds__(1024)
    bwd_loop(const T* __restrict__ dy, const T* __restrict__ x, const W* __restrict__ w,
             const float* __restrict__ mean, const float* __restrict__ rstd, T* __restrict__ dx, int64_t rows,
             int cols) {
  __shared__ float smem[2 * 32];
  const int64_t row = blockIdx.x;
  const float mu = kCenter ? mean[row] : 0.f, rs = rstd[row], inv_n = 1.f / static_cast<float>(cols);
  const T *xr = x + row * cols, *gr = dy + row * cols;
  float s[2] = {0.f, 0.f};
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float wg = to_f32(gr[c]) * (w != nullptr ? to_f32(w[c]) : 1.f);
    s[0] += wg * (to_f32(xr[c]) - mu) * rs;
    s[1] += wg;
  }
  block_sum<2>(s, smem);
  const float c1 = s[0] * inv_n, c2 = kCenter ? s[1] * inv_n : 0.f;
  T* dxr = dx + row * cols;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float wg = to_f32(gr[c]) * (w != nullptr ? to_f32(w[c]) : 1.f);
    dxr[c] = from_f32<T>(rs * (wg - c2 - (to_f32(xr[c]) - mu) * rs * c1));
  }
}

constexpr int kColsRowsPerSlice = 256;

// Block (32, 8): 32 columns; the 8 row lanes of a column take every 8th row of the slice, then add
// their sums in lane order.
template <typename T, bool kCenter>
__global__ void __launch_bounds__(256)
    cols_partial(const T* __restrict__ dy, const T* __restrict__ x, const float* __restrict__ mean,
                 const float* __restrict__ rstd, float* __restrict__ part_w, float* __restrict__ part_b,
                 int64_t rows, int cols) {
  __shared__ float sw[8][33], sb[8][33];
  const int c = blockIdx.x * 32 + threadIdx.x;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * kColsRowsPerSlice;
  const int64_t r1 = r0 + kColsRowsPerSlice < rows ? r0 + kColsRowsPerSlice : rows;
  float aw = 0.f, ab = 0.f;
  if (c < cols) {
    for (int64_t r = r0 + threadIdx.y; r < r1; r += 8) {
      const float g = to_f32(dy[r * cols + c]);
      aw += g * (to_f32(x[r * cols + c]) - (kCenter ? mean[r] : 0.f)) * rstd[r];
      ab += g;
    }
  }
  sw[threadIdx.y][threadIdx.x] = aw;
  sb[threadIdx.y][threadIdx.x] = ab;
  __syncthreads();
  if (threadIdx.y != 0 || c >= cols) return;
  float tw = 0.f, tb = 0.f;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    tw += sw[i][threadIdx.x];
    tb += sb[i][threadIdx.x];
  }
  if (part_w != nullptr) part_w[blockIdx.y * static_cast<int64_t>(cols) + c] = tw;
  if (part_b != nullptr) part_b[blockIdx.y * static_cast<int64_t>(cols) + c] = tb;
}

// Block (32, 32): 32 columns; lane y adds partial rows y, y + 32, ...; then the 32 sums in lane order.
// blockIdx.y picks dw (0) or db (1).
template <typename W>
__global__ void __launch_bounds__(1024)
    finalize(const float* __restrict__ part_w, const float* __restrict__ part_b, W* __restrict__ dw,
             W* __restrict__ db, int64_t parts, int cols) {
  __shared__ float s[32][33];
  const float* part = blockIdx.y == 0 ? part_w : part_b;
  W* out = blockIdx.y == 0 ? dw : db;
  if (out == nullptr) return;  // uniform over the block
  const int c = blockIdx.x * 32 + threadIdx.x;
  float a = 0.f;
  if (c < cols) {
    for (int64_t p = threadIdx.y; p < parts; p += 32) a += part[p * cols + c];
  }
  s[threadIdx.y][threadIdx.x] = a;
  __syncthreads();
  if (threadIdx.y != 0 || c >= cols) return;
  float t = 0.f;
#pragma unroll
  for (int i = 0; i < 32; ++i) t += s[i][threadIdx.x];
  out[c] = from_f32<W>(t);
}

}  // namespace gpu
}  // namespace norm_core
