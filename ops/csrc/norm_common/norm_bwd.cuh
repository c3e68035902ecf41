// Backward kernels of the norm ops (kCenter: layer_norm, else rms_norm); see norm_launch.cuh for when
// each runs. With xhat = (x - mean) * rstd and g = dy * w:
//   dx = rstd * (g - mean(g) - xhat * mean(g * xhat))   (no mean(g) term for rms_norm)
//   dw = sum over rows of dy * xhat,  db = sum over rows of dy.
//   bwd_reg     : the row in registers (kTPR threads a row in each of kCS blocks, kVecs packs of V and,
//                 kOdd, one loose element a thread, as fwd_reg); a fixed grid of row groups (warps, blocks or
//                 clusters) loops over rows, each group adding its rows' dw/db terms in registers; the
//                 groups of a block add theirs in shared memory, in order, and the block (the cluster)
//                 writes one fp32 partial row, or dw/db themselves when the grid is one block.
//   bwd_loop    : any row length or alignment: a block per row, dx only, scalar accesses.
//   cols_partial: dw/db for bwd_loop: (32 columns x a slice of rows) a block, one fp32 partial row
//                 per slice.
//   finalize    : dw/db = the partial rows added in row order (fixed: the same bits every run).
#pragma once

#include "norm_device.cuh"

namespace norm_core {
namespace gpu {

template <typename T, typename W, bool kCenter, int kTPR, int kVecs, int kCS, bool kOdd>
__global__ void __launch_bounds__(kTPR < 128 ? 128 : kTPR)
    bwd_reg(const T* __restrict__ dy, const T* __restrict__ x, const W* __restrict__ w,
            const float* __restrict__ mean, const float* __restrict__ rstd, T* __restrict__ dx,
            float* __restrict__ part_w, float* __restrict__ part_b, W* __restrict__ dw, W* __restrict__ db,
            int64_t rows, int cols, int off0) {
  constexpr int V = 16 / sizeof(T), kBlock = kTPR < 128 ? 128 : kTPR, kRPB = kBlock / kTPR, kSpan = kCS * kTPR;
  static_assert(kCS == 1 || kRPB == 1, "a cluster shares one row");
  __shared__ float smem[2 * 32];
  __shared__ float slot[2];
  const int lane = threadIdx.x % kTPR;
  const int gi = (kCS > 1 ? static_cast<int>(blockIdx.x % kCS) * kTPR : 0) + lane;
  const int64_t group = kCS > 1 ? blockIdx.x / kCS : static_cast<int64_t>(blockIdx.x) * kRPB + threadIdx.x / kTPR;
  const int64_t stride = kCS > 1 ? gridDim.x / kCS : static_cast<int64_t>(gridDim.x) * kRPB;
  // All rows of a group split alike: where a group takes several odd rows, the host makes `stride` a
  // multiple of V, so they all start at the same offset from alignment and a thread keeps its columns.
  const RowSplit<V, kOdd> sp(group, cols, off0, gi);
  const bool whole = !kOdd || (sp.head == 0 && aligned16(w));
  const float inv_n = 1.f / static_cast<float>(cols);
  const float we = sp.has_loose() && w != nullptr ? to_f32(w[sp.loose]) : 1.f;
  float aw[kVecs][V], ab[kCenter ? kVecs : 1][V], ew = 0.f, eb = 0.f;
#pragma unroll
  for (int i = 0; i < kVecs; ++i)
#pragma unroll
    for (int k = 0; k < V; ++k) {
      aw[i][k] = 0.f;
      if constexpr (kCenter) ab[i][k] = 0.f;
    }
  // Every group of a block runs the same number of iterations when kTPR > 32 (one group a block), and
  // every block of a cluster the same (one group a cluster).
  for (int64_t row = group; row < rows; row += stride) {
    const float mu = kCenter ? mean[row] : 0.f, rs = rstd[row];
    const T *xr = x + row * cols + sp.head, *gr = dy + row * cols + sp.head;
    Pack<T, V> xp[kVecs], gp[kVecs];
    const float xe = sp.has_loose() ? to_f32(xr[sp.loose - sp.head]) : 0.f;
    const float ge = sp.has_loose() ? to_f32(gr[sp.loose - sp.head]) : 0.f;
    const float xhe = (xe - mu) * rs;
    float s[2] = {kOdd ? ge * we * xhe : 0.f, kOdd ? ge * we : 0.f};
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      const int p = gi + i * kSpan;
      if (p < sp.packs) {
        xp[i] = load_pack<T, V>(xr + p * V);
        gp[i] = load_pack<T, V>(gr + p * V);
        float wv[V];
        load_param<W, V>(w, sp.head + p * V, 1.f, wv, whole);
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
    cluster_sum<kCS, 2>(s, slot);
    const float c1 = s[0] * inv_n, c2 = kCenter ? s[1] * inv_n : 0.f;
    T* dxr = dx + row * cols + sp.head;
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      const int p = gi + i * kSpan;
      if (p >= sp.packs) continue;
      float wv[V];
      load_param<W, V>(w, sp.head + p * V, 1.f, wv, whole);
      Pack<T, V> o;
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const float xh = (to_f32(xp[i].v[k]) - mu) * rs;
        o.v[k] = from_f32<T>(rs * (to_f32(gp[i].v[k]) * wv[k] - c2 - xh * c1));
      }
      store_pack<T, V>(dxr + p * V, o);
    }
    if (sp.has_loose()) dxr[sp.loose - sp.head] = from_f32<T>(rs * (ge * we - c2 - xhe * c1));
    if constexpr (kOdd) {
      ew += ge * xhe;
      eb += ge;
    }
  }
  // One partial row per block (per cluster: its blocks hold disjoint columns), or the result itself where
  // the grid is one block (dw/db given). The row groups of a block (warps) add theirs in shared memory,
  // in group order.
  constexpr int kCols = kTPR * kVecs * V;  // the longest row this configuration takes
  __shared__ float red[kRPB > 1 ? kRPB : 1][kRPB > 1 ? kCols : 1];
  const int g = threadIdx.x / kTPR;
  const int64_t prow = blockIdx.x / kCS;
  auto put = [&](float* part, W* out, int c, float val) {
    if (out != nullptr) {
      out[c] = from_f32<W>(val);
    } else {
      part[prow * cols + c] = val;
    }
  };
  auto store = [&](float (&acc)[kVecs][V], float eacc, float* part, W* out) {
    if constexpr (kRPB > 1) {
#pragma unroll
      for (int i = 0; i < kVecs; ++i) {
        const int p = gi + i * kSpan;
        if (p >= sp.packs) continue;
#pragma unroll
        for (int k = 0; k < V; ++k) red[g][sp.head + p * V + k] = acc[i][k];
      }
      if (sp.has_loose()) red[g][sp.loose] = eacc;
      __syncthreads();
      for (int c = threadIdx.x; c < cols; c += kBlock) {
        float t = 0.f;
#pragma unroll
        for (int r = 0; r < kRPB; ++r) t += red[r][c];
        put(part, out, c, t);
      }
      __syncthreads();
    } else {
#pragma unroll
      for (int i = 0; i < kVecs; ++i) {
        const int p = gi + i * kSpan;
        if (p >= sp.packs) continue;
        const int c = sp.head + p * V;
        if (!kOdd && out == nullptr) {  // 16-byte stores: a quarter of the store instructions of scalar ones
          float* dst = part + prow * cols + c;
#pragma unroll
          for (int k = 0; k < V; k += 4) {
            *reinterpret_cast<float4*>(dst + k) = make_float4(acc[i][k], acc[i][k + 1], acc[i][k + 2], acc[i][k + 3]);
          }
        } else {
#pragma unroll
          for (int k = 0; k < V; ++k) put(part, out, c + k, acc[i][k]);
        }
      }
      if (sp.has_loose()) put(part, out, sp.loose, eacc);
    }
  };
  if (part_w != nullptr || dw != nullptr) store(aw, ew, part_w, dw);
  if constexpr (kCenter) {
    if (part_b != nullptr || db != nullptr) store(ab, eb, part_b, db);
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
