// Backward kernels of the norm ops (kCenter: layer_norm, else rms_norm); see norm_launch.cuh for when
// each runs. With xhat = (x - mean) * rstd and g = dy * w:
//   dx = rstd * (g - mean(g) - xhat * mean(g * xhat))   (no mean(g) term for rms_norm)
//   dw = sum over rows of dy * xhat,  db = sum over rows of dy.
//   bwd_reg     : the row in registers (kTPR threads a row in each of kCS blocks, kVecs packs of V and,
//                 kOdd, one loose element a thread, as fwd_reg); a fixed grid of row groups (warps, blocks or
//                 clusters) loops over rows, each group adding its rows' dw/db terms per column: in registers,
//                 or (kSmem, a block or cluster per row) in shared memory, where each thread keeps the sums
//                 of its own columns (no syncs, no sharing) and the registers stay free for x and dy, so
//                 several blocks fit an SM and one's row reductions overlap another's loads. The groups of
//                 a block add theirs in shared memory, in order, and the block (the row's cluster) writes one
//                 fp32 partial row; blocks of a row each, launched as clusters of up to 8, add their rows
//                 in the cluster first (write_partial). A grid that leaves one row writes dw/db themselves.
//                 Small grids of few rows (kEarly, col_from) leave dw/db to blocks of their own (col_sums):
//                 no partial rows, no finalize launch.
//   bwd_one_row : one row of whole aligned packs, at most 2,048: one block reads x, dy and
//                 the weight once, kVecs packs a thread, and writes dx, and dw = dy * xhat, db = dy itself
//                 (one row: nothing to add across rows), in one launch.
//   bwd_reg<kSums = false>: the dx pass: row groups write dx alone (no dw/db terms: fewer registers, more
//                 rows in flight), for calls without dw/db and, followed by
//   col_pass    : dw/db by columns, from x and dy found in L2, for mid-size grids (the two-pass backward).
//   bwd_loop    : any row length or alignment: a block per row, dx only, scalar accesses.
//   cols_partial: dw/db for bwd_loop: (32 columns x a slice of rows) a block, one fp32 partial row
//                 per slice.
//   finalize    : dw/db = the partial rows added in row order (fixed: the same bits every run).
#pragma once

#include "common/dependent_launch.cuh"
#include "norm_device.cuh"

namespace norm_core {
namespace gpu {

// Floats of shared memory for each of bwd_reg<kSmem>'s dw and db sums, kept in slots: (i * tpr + thread) * v
// for the thread's pack i. A cluster a row: the slots of the packs this block holds, `vecs` a thread at most.
// One block a row (cs == 1): the row's columns, rounded up to 16 bytes, for the sums end in column order.
__host__ __device__ constexpr int acc_floats(int tpr, int vecs, int cs, int v, int cols) {
  const int packs = cols / v, per_thread = (packs + cs * tpr - 1) / (cs * tpr);
  return cs == 1 ? (cols + 3) / 4 * 4 : tpr * (per_thread < vecs ? per_thread : vecs) * v;
}

// dst[0..V) += d[0..V) in shared memory, 16 bytes at a time (dst 16-byte aligned).
template <int V>
__device__ __forceinline__ void add_sums(float* dst, const float (&d)[V]) {
  static_assert(V % 4 == 0, "whole float4s");
#pragma unroll
  for (int k = 0; k < V; k += 4) {
    float4 a = *reinterpret_cast<float4*>(dst + k);
    a.x += d[k];
    a.y += d[k + 1];
    a.z += d[k + 2];
    a.w += d[k + 3];
    *reinterpret_cast<float4*>(dst + k) = a;
  }
}

// Writes one column's sum: to `out` (dw or db) where given, else to row `prow` of the partial rows `part`.
template <typename W>
__device__ __forceinline__ void put_sum(float* part, W* out, int64_t prow, int cols, int c, float v) {
  if (out != nullptr) {
    out[c] = from_f32<W>(v);
  } else {
    part[prow * cols + c] = v;
  }
}

// Blocks in this block's thread-block cluster (1 where the launch has none, or before sm_90).
__device__ __forceinline__ int cluster_blocks() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  return static_cast<int>(cooperative_groups::this_cluster().num_blocks());
#else
  return 1;
#endif
}

// Writes a block's partial row `col` (shared memory, column order) out: to row `prow` of `part`, or to `out`
// (dw or db) where the grid leaves one row. Where the launch groups the blocks in clusters of n (n > 1,
// kCS == 1 kernels), the cluster's n rows are first added through distributed shared memory in rank order,
// each block adding a 1/n slice of the columns, and the cluster writes one row. Every thread of the grid
// calls it (it syncs the block, and the cluster).
template <typename W>
__device__ __forceinline__ void write_partial(float* col, int cols, int block, float* part, W* out) {
  const int n = cluster_blocks();
  const int64_t prow = blockIdx.x / n;
  if (n == 1) {
    __syncthreads();
    for (int c = threadIdx.x; c < cols; c += block) put_sum(part, out, prow, cols, c, col[c]);
    __syncthreads();
    return;
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  const int rank = static_cast<int>(cluster.block_rank()), chunk = (cols + n - 1) / n;
  const int end = min(cols, (rank + 1) * chunk);
  for (int c = rank * chunk + static_cast<int>(threadIdx.x); c < end; c += block) {
    float t = 0.f;
    for (int q = 0; q < n; ++q) t += cluster.map_shared_rank(col, q)[c];
    put_sum(part, out, prow, cols, c, t);
  }
  cluster.sync();  // every block's row stays alive until the cluster has read it
#else
  __trap();  // the host launches clusters on sm_90+ only
#endif
}

constexpr int kColRows = 128;  // the most rows col_sums takes: two batches a lane

// Columns of a col_sums thread: a pack (rows of whole packs), else one (rows start at different alignments).
template <typename T, bool kOdd>
__host__ __device__ constexpr int col_elems() {
  return kOdd ? 1 : 16 / static_cast<int>(sizeof(T));
}
// Row lanes of col_sums, and the rows a lane loads at once (a round trip to memory each batch): lanes x batch
// x 2 == kColRows. A lane's batch of whole packs is 2 x batch packs of registers, and col_sums' registers are
// its kernel's (the early bwd_reg kernels'): at 4 packs a batch the 256 x 1 cluster kernels take 74-95
// registers (2-3 blocks an SM), where 8 took 145 (fp16 rms_norm: 1 an SM).
template <bool kOdd>
__host__ __device__ constexpr int col_lanes() {
  return kOdd ? 8 : 16;
}
template <bool kOdd>
__host__ __device__ constexpr int col_batch() {
  return kColRows / 2 / col_lanes<kOdd>();
}

// Blocks of kBlock threads that col_sums needs for rows of `cols` elements.
template <typename T, bool kOdd, int kBlock>
__host__ __device__ constexpr int64_t col_blocks(int cols) {
  constexpr int kPer = kBlock / col_lanes<kOdd>() * col_elems<T, kOdd>();
  return (cols + kPer - 1) / kPer;
}

// dw/db of at most kColRows rows by columns, read from x and dy again (bwd_reg's column role, beside the
// blocks that write dx): block b takes kBlock / col_lanes groups of col_elems columns; lane l of a group adds
// rows l, l + col_lanes, ..., col_batch of them loaded before any is used, and the lanes' sums are added in
// lane order (the same bits every run). For a grid of a few blocks this costs a round trip to memory or two
// where partial rows cost a finalize launch. Not inlined, so the row groups' code is compiled without it; the
// kernel still launches with the larger register count of the two (col_lanes).
template <typename T, typename W, bool kCenter, bool kOdd, int kBlock>
__device__ __noinline__ void col_sums(const T* __restrict__ dy, const T* __restrict__ x,
                                      const float* __restrict__ mean, const float* __restrict__ rstd,
                                      W* __restrict__ dw, W* __restrict__ db, int64_t rows, int cols, int64_t b) {
  constexpr int E = col_elems<T, kOdd>(), kColLanes = col_lanes<kOdd>(), kColBatch = col_batch<kOdd>();
  constexpr int kGroups = kBlock / kColLanes;
  __shared__ float red[kCenter ? 2 : 1][kColLanes][kGroups * E];
  const int tx = static_cast<int>(threadIdx.x) % kGroups, ly = static_cast<int>(threadIdx.x) / kGroups;
  const int64_t c0 = (b * kGroups + tx) * E;  // whole-pack rows: cols is a multiple of E
  float aw[E], ab[E];
#pragma unroll
  for (int k = 0; k < E; ++k) aw[k] = ab[k] = 0.f;
  for (int64_t r0 = ly; r0 < rows; r0 += kColLanes * kColBatch) {
    Pack<T, E> xp[kColBatch], gp[kColBatch];
    float mu[kColBatch], rs[kColBatch];
#pragma unroll
    for (int i = 0; i < kColBatch; ++i) {
      const int64_t r = r0 + i * kColLanes;
      if (c0 < cols && r < rows) {
        xp[i] = load_pack<T, E>(x + r * cols + c0);
        gp[i] = load_pack<T, E>(dy + r * cols + c0);
        mu[i] = kCenter ? mean[r] : 0.f;
        rs[i] = rstd[r];
      }
    }
#pragma unroll
    for (int i = 0; i < kColBatch; ++i) {
      if (c0 >= cols || r0 + i * kColLanes >= rows) continue;
#pragma unroll
      for (int k = 0; k < E; ++k) {
        const float g = gp[i].get(k);
        aw[k] += g * ((xp[i].get(k) - mu[i]) * rs[i]);
        ab[k] += g;
      }
    }
  }
#pragma unroll
  for (int k = 0; k < E; ++k) {
    red[0][ly][tx * E + k] = aw[k];
    if constexpr (kCenter) red[1][ly][tx * E + k] = ab[k];
  }
  __syncthreads();
  for (int j = threadIdx.x; j < kGroups * E; j += kBlock) {
    const int64_t c = b * kGroups * E + j;
    if (c >= cols) break;
    put_lane_sums<kCenter>(red, j, c, dw, db);
  }
}

// kSmemBlocks > 0: the dw/db sums in shared memory, registers held to what kSmemBlocks blocks an SM allow.
// kCS == 1 grids may be launched as clusters (of any size up to 8): their blocks' partial rows are then
// added in the cluster (write_partial). kEarly: the weight's packs are read once, before the first row,
// and held in registers (else read beside each row's sums, and again for dx), and x and dy are always read
// first (kLoadsFirst): for grids of at most a block an SM (no register limit), where the reads' round trips
// to memory are most of the time. kEarly grids may also carry col_sums blocks: blocks from `col_from` on make
// dw/db by columns, and the row groups before them write dx alone (col_from == gridDim.x: none). kSums ==
// false: dx alone, no dw/db terms held or written (the dx pass; col_pass may make dw/db after it).
template <typename T, typename W, bool kCenter, int kTPR, int kVecs, int kCS, bool kOdd, int kSmemBlocks,
          bool kEarly, bool kSums = true>
__global__ void __launch_bounds__(kTPR < 128 ? 128 : kTPR, kEarly ? 0 : kSmemBlocks)
    bwd_reg(const T* __restrict__ dy, const T* __restrict__ x, const W* __restrict__ w,
            const float* __restrict__ mean, const float* __restrict__ rstd, T* __restrict__ dx,
            float* __restrict__ part_w, float* __restrict__ part_b, W* __restrict__ dw, W* __restrict__ db,
            int64_t rows, int cols, int off0, unsigned col_from) {
  constexpr int V = 16 / sizeof(T), kBlock = kTPR < 128 ? 128 : kTPR, kRPB = kBlock / kTPR, kSpan = kCS * kTPR;
  static_assert(kCS == 1 || kRPB == 1, "a cluster shares one row");
  constexpr bool kSmem = kSmemBlocks > 0 && kSums;
  static_assert(!kSmem || kRPB == 1, "shared-memory sums: one row group a block");
  static_assert(kSums || (!kEarly && kCS == 1), "dx alone: no early reads, no clusters");
  // Every pack's x and dy loads go out before any is used (loaded pack by pack beside the sums, each pack's
  // loads wait for the previous pack's sums: a round trip to memory a pack). Except in 2-byte clusters with
  // register-capped shared-memory sums that loop over rows, where pack by pack measured faster.
  constexpr bool kLoadsFirst = kEarly || !(kCS > 1 && sizeof(T) == 2 && kSmemBlocks >= 3);
  if constexpr (kEarly) {
    if (blockIdx.x >= col_from) {
      col_sums<T, W, kCenter, kOdd, kBlock>(dy, x, mean, rstd, dw, db, rows, cols, blockIdx.x - col_from);
      return;
    }
  }
  [[maybe_unused]] const bool sums = col_from >= gridDim.x;  // the row groups make dw/db (no col_sums blocks)
  __shared__ float smem[2 * 32];
  __shared__ float slot[2];
  extern __shared__ float4 acc_smem[];  // kSmem: dw sums, then db sums, acc_floats(...) floats each
  const int lane = threadIdx.x % kTPR;
  const int gi = (kCS > 1 ? static_cast<int>(blockIdx.x % kCS) * kTPR : 0) + lane;
  const int64_t group = kCS > 1 ? blockIdx.x / kCS : static_cast<int64_t>(blockIdx.x) * kRPB + threadIdx.x / kTPR;
  const int64_t stride = kCS > 1 ? gridDim.x / kCS : static_cast<int64_t>(gridDim.x) * kRPB;
  // All rows of a group split alike: where a group takes several odd rows, the host makes `stride` a
  // multiple of V, so they all start at the same offset from alignment and a thread keeps its columns.
  const RowSplit<V, kOdd> sp(group, cols, off0, gi);
  const float inv_n = 1.f / static_cast<float>(cols);
  const float we = sp.has_loose() && w != nullptr ? to_f32(w[sp.loose]) : 1.f;
  // kEarly's packs of odd rows of 2-byte weights come as WordParam's words, shifted at each use. The row loops'
  // reads stay load_param's (load_shifted): through WordParam (4-5 loads a pack, twice a row) the large backwards
  // of odd rows ran 3-9% slower (H200; docs/ops/norms-design.md, Parameters off alignment).
  constexpr bool kWordW = kEarly && kWordParams<W, V, kOdd>;
  [[maybe_unused]] const auto wq = word_param<kWordW>(w, sp.head + gi * V);
  HeldParam<W, V, kWordW> wp[kEarly ? kVecs : 1] = {};
  if constexpr (kEarly) {
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      const int p = gi + i * kSpan;
      if constexpr (kWordW) {
        if (p < sp.packs && w != nullptr) wp[i] = wq.raw(i * kSpan);
      } else {
        if (p < sp.packs) wp[i] = load_param_raw<W, V, kOdd>(w, sp.head + p * V);
      }
    }
  }
  // The weight of pack i as floats (ones where there is none).
  auto weights = [&](int i, float (&wv)[V]) {
    if constexpr (kWordW) {
      param_floats<W, V>(w, wq.pack(wp[i]), 1.f, wv);
    } else if constexpr (kEarly) {
      param_floats<W, V>(w, wp[i], 1.f, wv);
    } else {
      load_param<W, V, kOdd>(w, sp.head + (gi + i * kSpan) * V, 1.f, wv);
    }
  };
  // Register sums (unused where kSmem: the compiler drops them), or shared-memory ones: pack i's sums at
  // sw + at(i) (dw) and sb + at(i) (db).
  constexpr int kRegs = kSmem ? 1 : kVecs;
  float aw[kRegs][V], ab[kCenter ? kRegs : 1][V], ew = 0.f, eb = 0.f;
  const int nacc = acc_floats(kTPR, kVecs, kCS, V, cols);
  float* const sw = reinterpret_cast<float*>(acc_smem);
  float* const sb = sw + nacc;
  // Slot of pack i's sums: each thread's V sums are 16-byte aligned and a warp's are contiguous (no bank
  // conflicts); with one block a row (kCS == 1) that is column head + i's pack * V, less the head.
  auto at = [&](int i) { return (i * kTPR + lane) * V; };
  if constexpr (kSmem) {
    for (int c = threadIdx.x; c < (kCenter ? 2 : 1) * nacc; c += kBlock) sw[c] = 0.f;
    __syncthreads();
  } else {
#pragma unroll
    for (int i = 0; i < kVecs; ++i)
#pragma unroll
      for (int k = 0; k < V; ++k) {
        aw[i][k] = 0.f;
        if constexpr (kCenter) ab[i][k] = 0.f;
      }
  }
  // Every group of a block runs the same number of iterations when kTPR > 32 (one group a block), and
  // every block of a cluster the same (one group a cluster).
  for (int64_t row = group; row < rows; row += stride) {
    const float mu = kCenter ? mean[row] : 0.f, rs = rstd[row];
    const T *xr = x + row * cols + sp.head, *gr = dy + row * cols + sp.head;
    Pack<T, V> xp[kVecs], gp[kVecs];
    if constexpr (kLoadsFirst) {
#pragma unroll
      for (int i = 0; i < kVecs; ++i) {
        const int p = gi + i * kSpan;
        if (p < sp.packs) {
          xp[i] = load_pack<T, V>(xr + p * V);
          gp[i] = load_pack<T, V>(gr + p * V);
        }
      }
    }
    const float xe = sp.has_loose() ? to_f32(xr[sp.loose - sp.head]) : 0.f;
    const float ge = sp.has_loose() ? to_f32(gr[sp.loose - sp.head]) : 0.f;
    const float xhe = (xe - mu) * rs;
    float s[2] = {kOdd ? ge * we * xhe : 0.f, kOdd ? ge * we : 0.f};
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      const int p = gi + i * kSpan;
      if (p < sp.packs) {
        if constexpr (!kLoadsFirst) {
          xp[i] = load_pack<T, V>(xr + p * V);
          gp[i] = load_pack<T, V>(gr + p * V);
        }
        float wv[V], dw_[V], db_[V];
        weights(i, wv);
#pragma unroll
        for (int k = 0; k < V; ++k) {
          const float xh = (xp[i].get(k) - mu) * rs, g = gp[i].get(k);
          const float wg = g * wv[k];
          s[0] += wg * xh;
          if constexpr (kCenter) s[1] += wg;
          if constexpr (kSmem) {
            dw_[k] = g * xh;
            db_[k] = g;
          } else if constexpr (kSums) {
            aw[i][k] += g * xh;
            if constexpr (kCenter) ab[i][k] += g;
          }
        }
        if constexpr (kSmem) {
          add_sums<V>(sw + at(i), dw_);
          if constexpr (kCenter) add_sums<V>(sb + at(i), db_);
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
      weights(i, wv);
      float o[V];
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const float xh = (xp[i].get(k) - mu) * rs;
        o[k] = rs * (gp[i].get(k) * wv[k] - c2 - xh * c1);
      }
      store_pack<T, V, kOdd>(dxr + p * V, pack_of<T, V>(o));
    }
    if (sp.has_loose()) dxr[sp.loose - sp.head] = from_f32<T>(rs * (ge * we - c2 - xhe * c1));
    if constexpr (kOdd && kSums) {
      ew += ge * xhe;
      eb += ge;
    }
  }
  if constexpr (kSums) {
    // One partial row per block or row cluster, or dw/db themselves where the grid leaves one row.
    // Per thread: a row cluster's blocks (disjoint columns), and shared-memory sums of a block outside a
    // cluster, write their own columns from their slots.
    const int64_t prow = blockIdx.x / kCS;
    auto store = [&](float (&acc)[kRegs][V], float* sm, float eacc, float* part, W* out) {
      auto val = [&](int i, int k) -> float {
        if constexpr (kSmem) {
          return sm[at(i) + k];
        } else {
          return acc[i][k];
        }
      };
  #pragma unroll
      for (int i = 0; i < kVecs; ++i) {
        const int p = gi + i * kSpan;
        if (p >= sp.packs) continue;
        const int c = sp.head + p * V;
        if (!kOdd && out == nullptr) {  // 16-byte stores: a quarter of the store instructions of scalar ones
          float* dst = part + prow * cols + c;
  #pragma unroll
          for (int k = 0; k < V; k += 4) {
            *reinterpret_cast<float4*>(dst + k) = make_float4(val(i, k), val(i, k + 1), val(i, k + 2), val(i, k + 3));
          }
        } else {
  #pragma unroll
          for (int k = 0; k < V; ++k) put_sum(part, out, prow, cols, c + k, val(i, k));
        }
      }
      if (sp.has_loose()) put_sum(part, out, prow, cols, sp.loose, eacc);
    };
    if (!sums) return;
    if (kCS > 1 || (kSmem && cluster_blocks() == 1)) {
      if (part_w != nullptr || dw != nullptr) store(aw, sw, ew, part_w, dw);
      if constexpr (kCenter) {
        if (part_b != nullptr || db != nullptr) store(ab, sb, eb, part_b, db);
      }
      return;
    }
    if constexpr (kCS == 1) {
      // The block's row in column order (write_partial writes it, adding a cluster's rows first): the
      // shared-memory sums (and the loose elements'), or the row groups' register sums added in shared
      // memory in group order.
      constexpr int kCols = kSmem ? 1 : kTPR * kVecs * V;  // the longest row this configuration takes
      __shared__ float red[kSmem ? 1 : kRPB][kCols];
      auto block_row = [&](float (&acc)[kRegs][V], float* sm, float eacc) -> float* {
        if constexpr (kSmem) {
          if constexpr (kOdd) {
            // Slots to columns: the pack sums move right by the head (the same for all the block's rows),
            // through registers; the loose elements' sums fill the columns of no pack.
            float v[kVecs][V];
            __syncthreads();
  #pragma unroll
            for (int i = 0; i < kVecs; ++i)
  #pragma unroll
              for (int k = 0; k < V; ++k) v[i][k] = gi + i * kSpan < sp.packs ? sm[at(i) + k] : 0.f;
            __syncthreads();
  #pragma unroll
            for (int i = 0; i < kVecs; ++i)
  #pragma unroll
              for (int k = 0; k < V; ++k) {
                if (gi + i * kSpan < sp.packs) sm[sp.head + at(i) + k] = v[i][k];
              }
            if (sp.has_loose()) sm[sp.loose] = eacc;
          }
          return sm;
        } else {
          const int g = threadIdx.x / kTPR;
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
            red[0][c] = t;  // column c is this thread's alone
          }
          return red[0];
        }
      };
      if (part_w != nullptr || dw != nullptr) write_partial<W>(block_row(aw, sw, ew), cols, kBlock, part_w, dw);
      if constexpr (kCenter) {
        if (part_b != nullptr || db != nullptr) write_partial<W>(block_row(ab, sb, eb), cols, kBlock, part_b, db);
      }
    }
  }
}

template <typename T, typename W, bool kCenter, int kThreads, int kVecs>
__global__ void __launch_bounds__(kThreads)
    bwd_one_row(const T* __restrict__ dy, const T* __restrict__ x, const W* __restrict__ w,
                const float* __restrict__ mean, const float* __restrict__ rstd, T* __restrict__ dx,
                W* __restrict__ dw, W* __restrict__ db, int cols) {
  constexpr int V = 16 / sizeof(T);
  __shared__ float smem[2 * 32];
  const int packs = cols / V;
  const float mu = kCenter ? mean[0] : 0.f, rs = rstd[0], inv_n = 1.f / static_cast<float>(cols);
  float xh[kVecs][V], g[kVecs][V];
  float s[2] = {0.f, 0.f};
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    const int p = threadIdx.x + i * kThreads;
    if (p >= packs) continue;
    const Pack<T, V> xp = load_pack<T, V>(x + p * V), gp = load_pack<T, V>(dy + p * V);
    float wv[V], dwv[V], dbv[V];
    load_param<W, V>(w, p * V, 1.f, wv);
#pragma unroll
    for (int k = 0; k < V; ++k) {
      xh[i][k] = (xp.get(k) - mu) * rs;
      dbv[k] = gp.get(k);
      dwv[k] = dbv[k] * xh[i][k];
      g[i][k] = dbv[k] * wv[k];
      s[0] += g[i][k] * xh[i][k];
      s[1] += g[i][k];
    }
    if (dw != nullptr) store_pack<W, V>(dw + p * V, pack_of<W, V>(dwv));
    if (db != nullptr) store_pack<W, V>(db + p * V, pack_of<W, V>(dbv));
  }
  group_sum<kThreads, 2>(s, smem);
  const float c1 = s[0] * inv_n, c2 = kCenter ? s[1] * inv_n : 0.f;
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    const int p = threadIdx.x + i * kThreads;
    if (p >= packs) continue;
    float o[V];
#pragma unroll
    for (int k = 0; k < V; ++k) o[k] = rs * (g[i][k] - c2 - xh[i][k] * c1);
    store_pack<T, V>(dx + p * V, pack_of<T, V>(o));
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

// col_pass: a block of kPassThreads threads takes kPassCols groups of kE columns (a warp's lanes, consecutive
// groups) in kPassLanes row lanes (the warps); a cluster of kPassCS blocks takes one block's columns, each
// block a slice of the rows. kE: elements a thread reads at once (any divisor of 16 / sizeof(T) where rows are
// whole 16-byte packs at 16-byte alignment; else 1).
constexpr int kPassThreads = 256;
constexpr int kPassCols = 32;
constexpr int kPassLanes = kPassThreads / kPassCols;
constexpr int kPassCS = 8;
template <int kE>
__host__ __device__ constexpr int pass_batch() {  // rows a lane loads before it uses any: 8 scalars or 4 loads
  return kE == 1 ? 8 : 4;
}

// dw/db of rows [0, rows) by columns, from x and dy (found in L2 after the dx pass): block rank q of its
// cluster adds the rows of slice q, each lane its rows in order, the lanes in order; then the cluster adds
// its blocks' sums in rank order through distributed shared memory, each block writing a kPassCS-th of the
// columns. The same bits every run, no partial rows, no finalize launch. Launched on sm_90+ only.
template <typename T, typename W, bool kCenter, int kE>
__global__ void __launch_bounds__(kPassThreads)
    col_pass(const T* __restrict__ dy, const T* __restrict__ x, const float* __restrict__ mean,
             const float* __restrict__ rstd, W* __restrict__ dw, W* __restrict__ db, int64_t rows, int cols) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kN = kPassCols * kE, kB = pass_batch<kE>();
  __shared__ float red[kCenter ? 2 : 1][kPassLanes][kN];
  opcore::gpu::grid_dep_wait();  // launched after the dx pass (launch_after): its end, before x and dy are read
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const int64_t cb = blockIdx.x / kPassCS;
  const int64_t per = (rows + kPassCS - 1) / kPassCS, r_end = min(rows, (rank + 1) * per);
  const int tx = threadIdx.x % kPassCols, ly = threadIdx.x / kPassCols;
  const int64_t c = cb * kN + tx * kE;
  const bool in = c < cols;  // kE > 1: cols is a multiple of kE
  float aw[kE], ab[kE];
#pragma unroll
  for (int k = 0; k < kE; ++k) aw[k] = ab[k] = 0.f;
  for (int64_t r0 = rank * per + ly; r0 < r_end; r0 += kPassLanes * kB) {
    Pack<T, kE> xv[kB], gv[kB];
    float mu[kB], rs[kB];
#pragma unroll
    for (int i = 0; i < kB; ++i) {
      const int64_t r = r0 + i * kPassLanes;
      if (in && r < r_end) {
        xv[i] = load_pack<T, kE>(x + r * cols + c);
        gv[i] = load_pack<T, kE>(dy + r * cols + c);
        mu[i] = kCenter ? mean[r] : 0.f;
        rs[i] = rstd[r];
      }
    }
#pragma unroll
    for (int i = 0; i < kB; ++i) {
      if (!in || r0 + i * kPassLanes >= r_end) continue;
#pragma unroll
      for (int k = 0; k < kE; ++k) {
        const float g = gv[i].get(k);
        aw[k] += g * ((xv[i].get(k) - mu[i]) * rs[i]);
        ab[k] += g;
      }
    }
  }
#pragma unroll
  for (int k = 0; k < kE; ++k) {
    red[0][ly][tx * kE + k] = aw[k];
    if constexpr (kCenter) red[1][ly][tx * kE + k] = ab[k];
  }
  __syncthreads();
  for (int j = threadIdx.x; j < kN; j += kPassThreads) {  // the block's lanes, in order, into lane 0's slot
#pragma unroll
    for (int d = 0; d < (kCenter ? 2 : 1); ++d) {
      float t = 0.f;
#pragma unroll
      for (int l = 0; l < kPassLanes; ++l) t += red[d][l][j];
      red[d][0][j] = t;
    }
  }
  cluster.sync();
  constexpr int kSlice = (kN + kPassCS - 1) / kPassCS;  // the block's share of the columns to write
  for (int j = rank * kSlice + static_cast<int>(threadIdx.x); j < min(kN, (rank + 1) * kSlice); j += kPassThreads) {
    const int64_t cj = cb * kN + j;
    if (cj >= cols) break;
#pragma unroll
    for (int d = 0; d < (kCenter ? 2 : 1); ++d) {
      W* out = d == 0 ? dw : db;
      if (out == nullptr) continue;
      float t = 0.f;
      for (int q = 0; q < kPassCS; ++q) t += cluster.map_shared_rank(&red[d][0][0], q)[j];
      out[cj] = from_f32<W>(t);
    }
  }
  cluster.sync();  // every block's sums stay alive until the cluster has read them
#else
  __trap();
#endif
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

constexpr int kFinalizeCols = 128;  // columns a finalize block sums: 4 a thread, 32 threads wide
constexpr int kFinalizeLanes = 32;  // threads a column group's partial rows are spread over

// Block (32, kFinalizeLanes): 128 columns, 4 a thread (one 16-byte load a partial row where cols is a
// multiple of 4); lane y adds partial rows y, y + kFinalizeLanes, ..., then the lanes' sums are added in
// lane order. blockIdx.y: dw (0), then db, of those asked for. A wave of row groups leaves up to a few
// thousand partial rows, hence 32 lanes (more loads in flight); a lane's columns are 16 bytes so that short
// rows still make 16-byte loads.
template <typename W>
__global__ void __launch_bounds__(32 * kFinalizeLanes)
    finalize(const float* __restrict__ part_w, const float* __restrict__ part_b, W* __restrict__ dw,
             W* __restrict__ db, int64_t parts, int cols) {
  __shared__ float s[4][kFinalizeLanes][33];
  opcore::gpu::grid_dep_wait();  // launched after the row kernel (launch_after): its partial rows
  const bool first = blockIdx.y == 0 && dw != nullptr;
  const float* part = first ? part_w : part_b;
  W* out = first ? dw : db;
  const int c0 = (blockIdx.x * 32 + threadIdx.x) * 4;
  float a[4] = {0.f, 0.f, 0.f, 0.f};
  if (c0 < cols) {
    const bool vec = cols % 4 == 0;  // then every row's c0 is 16-byte aligned and c0 + 3 < cols
    for (int64_t p = threadIdx.y; p < parts; p += kFinalizeLanes) {
      const float* r = part + p * cols + c0;
      if (vec) {
        const float4 v = *reinterpret_cast<const float4*>(r);
        a[0] += v.x;
        a[1] += v.y;
        a[2] += v.z;
        a[3] += v.w;
      } else {
#pragma unroll
        for (int k = 0; k < 4; ++k) a[k] += c0 + k < cols ? r[k] : 0.f;
      }
    }
  }
#pragma unroll
  for (int k = 0; k < 4; ++k) s[k][threadIdx.y][threadIdx.x] = a[k];
  __syncthreads();
  if (threadIdx.y >= 4) return;
  // Warp y < 4 finishes column c0 + y of each thread group: a sum over the lanes, in lane order.
  const int k = threadIdx.y;
  float t = 0.f;
#pragma unroll
  for (int y = 0; y < kFinalizeLanes; ++y) t += s[k][y][threadIdx.x];
  if (c0 + k < cols) out[c0 + k] = from_f32<W>(t);
}

}  // namespace gpu
}  // namespace norm_core
