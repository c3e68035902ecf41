// Host side of the norm ops' CUDA core: path choice and launches (every launch on the caller's stream). This file
// holds the backward's; the forward's are norm_launch_fwd.cuh's, the helpers both use norm_launch_common.cuh's, and
// the shape tables and their fit norm_tables.cuh's.
//
// Path choice, from the row length `cols` in packs of V = 16 / sizeof(T) elements (rounded up), where all
// the row tensors of the call (x, y / dy, x, dx) lie at the same offset from 16-byte alignment:
//   up to 32 * 4 packs: fwd_reg/bwd_reg with a warp per row
//   up to 512 * 8 packs (fwd) or 512 * 4 (bwd): a block of 128-512 threads per row
//   longer rows, up to 512 * 8 * 8 packs (fwd) or 512 * 4 * 8 (bwd), and long rows when they are few
//   (Spread; the forward's past 16,384 elements): a cluster of blocks per row (sm_90+), 8 or, in grids that
//   fill the GPU, the fewest of 5-8 that hold the row (row_cluster)
//   anything else (longer rows, row tensors at different offsets, clusters unavailable): fwd_loop/bwd_loop
//   + cols_partial
// A forward of no more rows than SMs, or of warp rows at more than two packs a thread and at most
// kOnePackRowsPerSM rows an SM, takes a block a row at one pack a thread, or two for 2-byte rows past 512
// packs (pick_fwd).
// Odd lengths and offsets take the same kernels: a row's unaligned head and tail are loose elements.
// The backward's dw/db partial rows live in a workspace from the caller's allocator (fp32,
// [grid's clusters, cols]); finalize adds them in a fixed order. On sm_90+ the blocks of a one-block-a-row
// backward run in clusters that add their partial rows first, and a grid of one cluster writes dw/db itself.
// Small grids of at most kColRows rows make dw/db in blocks of their own instead, by columns (col_sums).
// A backward of few long rows whose x and dy fit in L2 takes neither: the split backward (split_takes,
// norm_split.cuh) spreads each row over many blocks and makes dx and dw/db by columns, any alignment.
// A backward of one row of whole aligned packs, up to 2,048, runs in one block that writes dx, dw and db
// (bwd_one_row). Past a small grid, a backward of rows a kDxShapes shape holds takes the dx pass (row groups
// holding no dw/db sums) where no dw/db is asked for, and where x and dy fit in half of L2 and the rows are
// few enough (col_pass_fits), the dx pass and then col_pass for dw/db.
// The second kernel of a backward (finalize, split_dx, col_pass) is a dependent launch (launch_after,
// common/dependent_launch.cuh): on sm_90+ it starts as the first kernel's blocks exit.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "common/dependent_launch.cuh"
#include "common/env_knob.h"
#include "norm_bwd.cuh"
#include "norm_gpu.h"
#include "norm_launch_common.cuh"
#include "norm_launch_fwd.cuh"
#include "norm_split.cuh"
#include "norm_tables.cuh"

namespace norm_core {
namespace gpu {

constexpr int kReduceCS = 8;         // blocks of a one-block-a-row backward whose partial rows a cluster adds
constexpr int64_t kSmallGrid = 128;  // grids of up to this many blocks leave their partial rows to finalize
constexpr int kShortRow = 2048;      // rows up to this long, in grids looping over rows, are added in clusters
constexpr int kSmemBuckets = 64;     // shared-memory sizes, in 4 KB steps, whose wave sizes are remembered
constexpr double kPartShare = 0.25;  // partial rows past this share of a call's row bytes are added in clusters
// NORM_BWD_PART_CLUSTERS=0 leaves such grids without clusters (read once; for experiments).
inline bool part_clusters_on() {
  static const bool on = opcore::env_int("NORM_BWD_PART_CLUSTERS", 1) != 0;
  return on;
}

// The dx pass (bwd_reg<kSums = false> in a kDxShapes shape: dx alone, no dw/db sums held, so fewer registers
// and more rows in flight) takes the rows a kDxShapes shape holds in grids of more than a small grid: where no
// dw or db is asked for, alone; where they are, if x and dy together fit in kColPassL2Pct percent of L2 and
// there are at most kColPassRowsPerSum rows for each of dw and db asked for, followed by col_pass, which makes
// dw/db by columns from x and dy it finds in L2: the two-pass backward, no partial rows, no finalize launch.
// col_pass's lanes take a round trip to L2 for every few rows they add, where the table's kernels write a
// partial row of each sum a block: rms_norm rows of 1,561-1,810 ran 10-15% slower on it (H200, 2-byte, 2,048
// and 2,560 long), layer_norm ones of 1,278-1,649 (dw and db) 4-16% faster (docs/ops/norms-design.md).
// NORM_BWD_DX_PASS=0 never takes it; NORM_COL_PASS_L2_PCT sets the share (both read once; for experiments).
constexpr int kColPassL2Pct = 50;
constexpr int64_t kColPassRowsPerSum = 1024;
inline bool dx_pass_on() {
  static const bool on = opcore::env_int("NORM_BWD_DX_PASS", 1) != 0;
  return on;
}
template <typename T>
bool col_pass_fits(int64_t rows, int64_t cols, int sums, const DeviceInfo& dev) {
  static const double share = opcore::env_int("NORM_COL_PASS_L2_PCT", kColPassL2Pct) / 100.0;
  const double bytes = 2.0 * static_cast<double>(rows) * static_cast<double>(cols) * sizeof(T);
  return dev.clusters && rows <= kColPassRowsPerSum * sums && bytes <= share * static_cast<double>(dev.l2);
}

// col_pass with kE elements a load: the widest of 16 / sizeof(T), its halves, ..., 1 whose grid still gives
// every SM a block (rows of whole aligned packs; else 1).
template <typename T, typename W, bool kCenter, int kE>
void launch_col_pass(const T* dy, const T* x, const float* mean, const float* rstd, W* dw, W* db, int64_t rows,
                     int cols, bool whole, const DeviceInfo& dev, cudaStream_t stream) {
  const int64_t blocks = (cols + kPassCols * kE - 1) / (kPassCols * kE) * kPassCS;
  if constexpr (kE > 1) {
    if (!whole || blocks < dev.sms) {
      launch_col_pass<T, W, kCenter, kE / 2>(dy, x, mean, rstd, dw, db, rows, cols, whole, dev, stream);
      return;
    }
  }
  check_launch_error(opcore::launch_after(col_pass<T, W, kCenter, kE>, dim3(static_cast<unsigned>(blocks)),
                                          dim3(kPassThreads), 0, stream, kPassCS, dy, x, mean, rstd, dw, db, rows,
                                          cols),
                     "col_pass launch");
}

// The dx pass, kKernel (bwd_reg<kSums = false>) on `needed` blocks of kBlock threads, or
// a wave of them looping over the rows (a multiple of `step`: groups of odd rows, a multiple of V, as below).
template <auto kKernel, int kBlock, typename T, typename W>
void run_dx_pass(const T* dy, const T* x, const W* w, const float* mean, const float* rstd, T* dx, int64_t rows,
                 int cols, int off0, int64_t needed, int64_t step, const DeviceInfo& dev, cudaStream_t stream) {
  const int64_t full = resident<kKernel>(kBlock, 1, dev);
  const auto blocks = static_cast<unsigned>(needed <= full ? needed : std::max(step, full / step * step));
  kKernel<<<blocks, kBlock, 0, stream>>>(dy, x, w, mean, rstd, dx, nullptr, nullptr, nullptr, nullptr, rows, cols,
                                         off0, blocks);
}

// Runs the dx pass where the first kDxShapes shape that holds the row (warps at 4 packs only `alone`: no
// col_pass after it) needs more than a small grid: dx by bwd_reg<kSums = false> on a grid of at most a wave;
// returns whether it did.
template <typename T, typename W, bool kCenter>
bool launch_dx_pass(const T* dy, const T* x, const W* w, const float* mean, const float* rstd, T* dx, int64_t rows,
                    int cols, int off0, bool odd, bool alone, const DeviceInfo& dev, cudaStream_t stream) {
  constexpr int V = 16 / sizeof(T);
  const int64_t packs = (cols + V - 1) / V;
  static const bool warp4 = opcore::env_int("NORM_DX_WARP4", 1) != 0;
  int shape = -1;
  for (size_t i = 0; i < std::size(kDxShapes) && shape < 0; ++i) {
    if (i == kDxWarp4 && !(warp4 && alone)) continue;
    if (static_cast<int64_t>(kDxShapes[i].tpr) * kDxShapes[i].vecs >= packs) shape = static_cast<int>(i);
  }
  if (shape < 0 || off0 < 0) return false;
  bool ran = false;
  with_config<std::size(kDxShapes)>(shape, [&](auto i) {
    constexpr RegConfig r = kDxShapes[decltype(i)::value];
    constexpr int kBlock = r.tpr < 128 ? 128 : r.tpr, kRPB = kBlock / r.tpr;
    const int64_t needed = (rows + kRPB - 1) / kRPB;
    if (small_grid(needed, dev)) return;
    if (odd) {
      run_dx_pass<bwd_reg<T, W, kCenter, r.tpr, r.vecs, 1, true, 0, false, false>, kBlock>(
          dy, x, w, mean, rstd, dx, rows, cols, off0, needed, V > kRPB ? V / kRPB : 1, dev, stream);
    } else {
      run_dx_pass<bwd_reg<T, W, kCenter, r.tpr, r.vecs, 1, false, 0, false, false>, kBlock>(
          dy, x, w, mean, rstd, dx, rows, cols, off0, needed, 1, dev, stream);
    }
    ran = true;
  });
  return ran;
}

// Runs bwd_reg (on clusters of exactly kCS blocks a row where kCS > 1) on a grid of at most one full wave of
// resident blocks (clusters); returns the partial rows written (0: the grid left one and wrote dw/db itself,
// or col_sums blocks of the grid made them). On sm_90+ a grid of one block a row (kCS == 1) may run as
// clusters of kReduceCS blocks that add their partial rows before writing them: where it has more than
// kSmallGrid blocks and either a block a row group (as many partial rows as row groups, more bytes than the
// rows themselves) or short rows (a wave of many small blocks), or long rows in a grid of a few rows a block
// whose partial rows would be more than kPartShare of the rows' bytes (H200: layer_norm [1649,2587] bf16
// 33.1 -> 30.4 us, 17 other such calls of the sweeps and suites the same; docs/ops/norms-design.md). Small
// grids (a cluster's syncs and remote reads cost more than a finalize launch) and long rows in a grid looping
// over many rows (few partial rows) measured slower in clusters.
template <typename T, typename W, bool kCenter, int kTPR, int kVecs, int kCS, bool kOdd, int kSmemBlocks>
int64_t launch_bwd_reg_at(const T* dy, const T* x, const W* w, const float* mean, const float* rstd, T* dx, W* dw,
                          W* db, const Alloc& alloc, float** pw, float** pb, int64_t rows, int cols, int off0,
                          const DeviceInfo& info, cudaStream_t stream) {
  constexpr int V = 16 / sizeof(T), kBlock = kTPR < 128 ? 128 : kTPR, kRPB = kBlock / kTPR;
  constexpr bool kSmem = kSmemBlocks > 0;
  auto kernel = bwd_reg<T, W, kCenter, kTPR, kVecs, kCS, kOdd, kSmemBlocks, false>;
  constexpr bool kHasEarly = kTPR <= kEarlyMaxThreads;  // see kEarlyBlocksPerSM
  auto const early = bwd_reg<T, W, kCenter, kTPR, kVecs, kCS, kOdd, kSmemBlocks, kHasEarly>;
  const int64_t needed = kCS > 1 ? rows : (rows + kRPB - 1) / kRPB;  // blocks (clusters) for a row per group
  const size_t smem = kSmem ? static_cast<size_t>(acc_floats(kTPR, kVecs, kCS, V, cols)) * sizeof(float) *
                                  (kCenter ? 2 : 1)
                            : 0;
  // Resident blocks (row clusters where kCS > 1) a wave, without and with kReduceCS-block clusters, per
  // device and shared-memory size rounded up to 4 KB, asked once (a benign race: every writer writes the
  // same).
  static int64_t waves[kMaxDevices][kSmemBuckets][2] = {};
  const int bucket = static_cast<int>(std::min<size_t>((smem + 4095) / 4096, kSmemBuckets - 1));
  const bool clusters = kCS == 1 && info.clusters;
  const int dev = info.index;
  int64_t wave[2] = {0, 0};
  if (dev < kMaxDevices) {
    wave[0] = waves[dev][bucket][0];
    wave[1] = waves[dev][bucket][1];
  }
  if (wave[0] == 0) {
    if constexpr (kSmem) {
      constexpr size_t kMax = static_cast<size_t>(kTPR) * kVecs * V * sizeof(float) * (kCenter ? 2 : 1);
      // Always: the static shared memory (col_sums' in the early kernel: 16 KB at 256 threads) counts
      // against the same 48 KB default (2-byte layer_norm [1, 4096] at 256 x 2: 32 KB + 16 KB).
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kMax));
      if constexpr (kHasEarly)
        cudaFuncSetAttribute(early, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kMax));
    }
    const size_t bytes = static_cast<size_t>(bucket) * 4096;
    wave[0] = wave_of(kernel, kBlock, kCS, bytes);
    wave[1] = clusters ? wave_of(kernel, kBlock, kReduceCS, bytes) * kReduceCS : wave[0];
    if (dev < kMaxDevices) {
      waves[dev][bucket][0] = wave[0];
      waves[dev][bucket][1] = wave[1];
    }
  }
  // Without clusters, a partial row of each of dw and db asked for a block: more than kPartShare of the bytes
  // the rows move (x, dy, dx) in grids of a few rows a block.
  const int64_t plain_parts = std::min(needed, wave[0]);
  const int sums = (dw != nullptr) + (db != nullptr);
  const double part_bytes = static_cast<double>(plain_parts) * cols * sizeof(float) * sums;
  const double row_bytes = 3.0 * static_cast<double>(rows) * cols * sizeof(T);
  const bool many_parts = part_clusters_on() && part_bytes > kPartShare * row_bytes;
  const bool reduce = clusters && needed > kSmallGrid && (needed <= wave[1] || cols <= kShortRow || many_parts);
  // Where groups of odd rows loop over rows, their number is a multiple of V (every row of a group splits
  // alike; V / kRPB divides kReduceCS); whole-pack rows all split alike anyway. A clustered grid with no
  // more groups than rows may have idle blocks, up to a cluster's.
  constexpr int64_t kStep = kOdd && V > kRPB ? V / kRPB : 1;
  static_assert(kReduceCS % kStep == 0, "clustered grids keep odd rows' groups a multiple of V");
  const int n = reduce ? kReduceCS : 1;  // blocks a cluster (kCS == 1)
  const int64_t full = wave[reduce ? 1 : 0];
  const int64_t units = reduce ? (needed <= full ? (needed + n - 1) / n * n : std::max<int64_t>(n, full / n * n))
                               : (needed <= full ? needed : std::max(kStep, full / kStep * kStep));
  const int64_t parts = units / n;
  const bool direct = parts == 1;
  const int64_t blocks = units * kCS;
  const bool is_early = kHasEarly && early_on() && small_grid(blocks, info);
  if (is_early) kernel = early;
  if (is_early && n == 1 && rows <= kColRows && (dw != nullptr || db != nullptr) && cols_on()) {
    // dw/db by col_sums blocks after the row groups' (a whole number of clusters: no cluster mixes the roles)
    const int64_t extra = (col_blocks<T, kOdd, kBlock>(cols) + kCS - 1) / kCS * kCS;
    launch(kernel, blocks + extra, kBlock, kCS, smem, stream, dy, x, w, mean, rstd, dx, nullptr, nullptr, dw, db,
           rows, cols, off0, static_cast<unsigned>(blocks));
    return 0;
  }
  const size_t bytes = static_cast<size_t>(parts) * cols * sizeof(float);
  *pw = dw != nullptr && !direct ? static_cast<float*>(alloc(bytes)) : nullptr;
  *pb = db != nullptr && !direct ? static_cast<float*>(alloc(bytes)) : nullptr;
  launch(kernel, blocks, kBlock, kCS > 1 ? kCS : n, smem, stream, dy, x, w, mean, rstd, dx, *pw, *pb,
         direct ? dw : nullptr, direct ? db : nullptr, rows, cols, off0, static_cast<unsigned>(blocks));
  return direct ? 0 : parts;
}

// The table row {kTPR, kVecs, kCS, kSmemBlocks} of the backward: on clusters of row_cluster's size where kCS > 1.
template <typename T, typename W, bool kCenter, int kTPR, int kVecs, int kCS, bool kOdd, int kSmemBlocks>
int64_t launch_bwd_reg(const T* dy, const T* x, const W* w, const float* mean, const float* rstd, T* dx, W* dw, W* db,
                       const Alloc& alloc, float** pw, float** pb, int64_t rows, int cols, int off0,
                       const DeviceInfo& info, cudaStream_t stream) {
  constexpr int V = 16 / sizeof(T);
  int64_t parts = 0;
  with_cluster_size<kCS>(row_cluster(kTPR, kVecs, kCS, (cols + V - 1) / V, rows, info), [&](auto cs) {
    parts = launch_bwd_reg_at<T, W, kCenter, kTPR, kVecs, decltype(cs)::value, kOdd, kSmemBlocks>(
        dy, x, w, mean, rstd, dx, dw, db, alloc, pw, pb, rows, cols, off0, info, stream);
  });
  return parts;
}

// The backward's config (index into kTable) for the call, or -1 (bwd_loop). NORM_BWD_TPR=t and NORM_BWD_VECS=v
// force the table's row {t, v, 1} wherever it holds the row (read once; for experiments).
template <int V, size_t N>
int pick_bwd(const RegConfig (&table)[N], int64_t rows, int64_t cols, const DeviceInfo& dev) {
  static const int ft = opcore::env_int("NORM_BWD_TPR", 0), fv = opcore::env_int("NORM_BWD_VECS", 0);
  const int forced = forced_row<V>(table, (cols + V - 1) / V, ft, fv);
  return forced >= 0 ? forced : pick<V>(table, rows, cols, kBwdSpread, dev);
}

// Picks a row of `table` for the call and runs it; returns the partial rows written, or -1 where no row
// takes the call.
template <typename T, typename W, bool kCenter, const auto& kTable>
int64_t run_bwd_table(const T* dy, const T* x, const W* w, const float* mean, const float* rstd, T* dx, W* dw, W* db,
                      const Alloc& alloc, float** pw, float** pb, int64_t rows, int cols, int off0, bool odd,
                      const DeviceInfo& dev, cudaStream_t stream) {
  constexpr int V = 16 / sizeof(T);
  const int config = off0 < 0 ? -1 : pick_bwd<V>(kTable, rows, cols, dev);
  int64_t parts = -1;
  if (config < 0) return parts;
  with_config<std::size(kTable)>(config, [&](auto i) {
    constexpr RegConfig r = kTable[decltype(i)::value];
    parts = odd ? launch_bwd_reg<T, W, kCenter, r.tpr, r.vecs, r.cs, true, r.smem>(dy, x, w, mean, rstd, dx, dw, db,
                                                                                   alloc, pw, pb, rows, cols, off0, dev,
                                                                                   stream)
                : launch_bwd_reg<T, W, kCenter, r.tpr, r.vecs, r.cs, false, r.smem>(
                      dy, x, w, mean, rstd, dx, dw, db, alloc, pw, pb, rows, cols, off0, dev, stream);
  });
  return parts;
}

// The split backward (norm_split.cuh) takes the few long rows the table would give a cluster each (kBwdSpread)
// where they are more than a small grid at kRowCS blocks a row (those make dw/db in column blocks of the same
// launch) and x and dy together fit in kSplitL2Pct percent of L2, so that split_dx finds most of them there.
// Of 17 calls of 32-50 MB that 100 rather than 60 moves here from clusters (H100, rows of whole packs taking
// 16-byte accesses; docs/ops/norms-design.md), 14 ran 6-36% faster, one the same and two fp32 rms_norm ones
// 4-6% slower. NORM_BWD_SPLIT=0 never takes it; NORM_SPLIT_L2_PCT sets the share (both read once; for
// experiments).
constexpr int kSplitL2Pct = 100;
inline double split_l2_share() {
  static const double share = opcore::env_int("NORM_SPLIT_L2_PCT", kSplitL2Pct) / 100.0;
  return share;
}
constexpr int64_t kSplitBlocksPerSM = 4;  // split_sums takes the largest kPer that leaves this many blocks an SM
inline bool split_on() {
  static const bool on = opcore::env_int("NORM_BWD_SPLIT", 1) != 0;
  return on;
}
template <typename T>
bool split_takes(int64_t rows, int64_t cols, const DeviceInfo& dev) {
  constexpr int V = 16 / sizeof(T);
  const bool spread = kBwdSpread.takes((cols + V - 1) / V, rows, dev.sms);
  const double bytes = 2.0 * static_cast<double>(rows) * static_cast<double>(cols) * sizeof(T);
  return split_on() && spread && !small_grid(rows * kRowCS, dev) && rows <= kSplitMaxRows &&
         bytes <= split_l2_share() * static_cast<double>(dev.l2);
}

// Runs split_sums with kPer values a thread (chunks of split_chunk<kPer> columns) and split_dx, kV elements a
// load.
template <typename T, typename W, bool kCenter, int kPer, int kV>
void launch_split(const T* dy, const T* x, const W* w, const float* mean, const float* rstd, T* dx, W* dw, W* db,
                  int64_t rows, int cols, const Alloc& alloc, cudaStream_t stream) {
  const int chunks = (cols + split_chunk<kPer>() - 1) / split_chunk<kPer>();
  float* part = static_cast<float*>(alloc(static_cast<size_t>(rows) * chunks * 2 * sizeof(float)));
  split_sums<T, W, kCenter, kPer, kV><<<dim3(chunks, static_cast<unsigned>(rows)), kSplitThreads, 0, stream>>>(
      dy, x, w, mean, rstd, part, cols);
  const size_t coef = static_cast<size_t>(rows) * 2 * sizeof(float);
  const auto blocks = static_cast<unsigned>((cols + split_cols<kV>() - 1) / split_cols<kV>());
  const auto kernel = split_group(static_cast<int>(rows), chunks) > 1 ? split_dx<T, W, kCenter, kV, true>
                                                                       : split_dx<T, W, kCenter, kV, false>;
  check_launch_error(opcore::launch_after(kernel, dim3(blocks), dim3(kSplitThreads), coef, stream, 1, dy, x, w, mean,
                                          rstd, part, dx, dw, db, static_cast<int>(rows), cols, chunks),
                     "split_dx launch");
}

// Rows of whole 16-byte packs (`whole`) take 16-byte accesses where a thread's kPer values hold a pack, but
// for fp32 rows, kSplitScalarRows rows or more whose 16-byte split_dx grid (128 columns a block) would have
// fewer than 3/4 as many blocks as SMs: their row lanes each loop over many rows, and scalar accesses' 4 times
// the blocks ran faster (H100: rms_norm [247,12288] 28.6 against 30.1 us, [137,6144] 14.1 against 15.0;
// layer_norm [39,12288], few rows, 11.5 against 12.0; commit b63a613's message). NORM_SPLIT_VEC=0 never take
// them (read once; for experiments).
constexpr int64_t kSplitScalarRows = 128;
inline bool split_vec_on() {
  static const bool on = opcore::env_int("NORM_SPLIT_VEC", 1) != 0;
  return on;
}
template <typename T>
bool split_vec_takes(int64_t rows, int cols, bool whole, const DeviceInfo& dev) {
  constexpr int V = 16 / sizeof(T);
  const int64_t blocks = (cols + split_cols<V>() - 1) / split_cols<V>();
  const bool few_blocks = sizeof(T) == 4 && rows >= kSplitScalarRows && 4 * blocks < 3 * dev.sms;
  return whole && split_vec_on() && !few_blocks;
}
template <typename T, typename W, bool kCenter, int kPer>
void launch_split_of(const T* dy, const T* x, const W* w, const float* mean, const float* rstd, T* dx, W* dw, W* db,
                     int64_t rows, int cols, bool whole, const Alloc& alloc, const DeviceInfo& dev,
                     cudaStream_t stream) {
  constexpr int V = 16 / sizeof(T);
  if constexpr (kPer % V == 0) {
    if (split_vec_takes<T>(rows, cols, whole, dev)) {
      launch_split<T, W, kCenter, kPer, V>(dy, x, w, mean, rstd, dx, dw, db, rows, cols, alloc, stream);
      return;
    }
  }
  launch_split<T, W, kCenter, kPer, 1>(dy, x, w, mean, rstd, dx, dw, db, rows, cols, alloc, stream);
}

template <typename T, typename W, bool kCenter>
void run_split(const T* dy, const T* x, const W* w, const float* mean, const float* rstd, T* dx, W* dw, W* db,
               int64_t rows, int cols, bool whole, const Alloc& alloc, const DeviceInfo& dev, cudaStream_t stream) {
  const int64_t want = kSplitBlocksPerSM * dev.sms;
  auto blocks = [&](int chunk) { return (cols + chunk - 1) / chunk * rows; };
  if (blocks(split_chunk<16>()) >= want) {
    launch_split_of<T, W, kCenter, 16>(dy, x, w, mean, rstd, dx, dw, db, rows, cols, whole, alloc, dev, stream);
  } else if (blocks(split_chunk<8>()) >= want) {
    launch_split_of<T, W, kCenter, 8>(dy, x, w, mean, rstd, dx, dw, db, rows, cols, whole, alloc, dev, stream);
  } else {
    launch_split_of<T, W, kCenter, 4>(dy, x, w, mean, rstd, dx, dw, db, rows, cols, whole, alloc, dev, stream);
  }
}

// A backward of one row of whole aligned packs, up to 2,048, takes bwd_one_row (one block: 128, 256 or 512 threads
// at a pack, 512 or 1,024 at two) in place of a row group beside col_sums blocks; returns whether it did.
// NORM_BWD_ONE_ROW=0 never does (read once; for experiments).
inline bool bwd_one_row_on() {
  static const bool on = opcore::env_int("NORM_BWD_ONE_ROW", 1) != 0;
  return on;
}
template <typename T, typename W, bool kCenter>
bool launch_bwd_one_row(const T* dy, const T* x, const W* w, const float* mean, const float* rstd, T* dx, W* dw,
                        W* db, int cols, cudaStream_t stream) {
  constexpr int V = 16 / sizeof(T);
  const int packs = cols / V;
  const auto go = [&](auto threads, auto vecs) {
    constexpr int kThreads = decltype(threads)::value, kVecs = decltype(vecs)::value;
    bwd_one_row<T, W, kCenter, kThreads, kVecs><<<1, kThreads, 0, stream>>>(dy, x, w, mean, rstd, dx, dw, db, cols);
    return true;
  };
  using std::integral_constant;
  if (packs <= 128) return go(integral_constant<int, 128>{}, integral_constant<int, 1>{});
  if (packs <= 256) return go(integral_constant<int, 256>{}, integral_constant<int, 1>{});
  if (packs <= 512) return go(integral_constant<int, 512>{}, integral_constant<int, 1>{});
  if (packs <= 1024) return go(integral_constant<int, 512>{}, integral_constant<int, 2>{});
  if (packs <= 2048) return go(integral_constant<int, 1024>{}, integral_constant<int, 2>{});
  return false;
}

// dx always; dw / db (sums over rows) when not null. Deterministic: no atomics, fixed summation order.
template <typename T, typename W, bool kCenter>
void norm_backward(const T* dy, const T* x, const W* w, const float* mean, const float* rstd, T* dx, W* dw, W* db,
                   int64_t rows, int64_t cols, const Alloc& alloc, cudaStream_t stream) {
  if (cols <= 0) return;
  if (cols > INT32_MAX) throw std::runtime_error("opbench norm: rows longer than 2^31 - 1 elements");
  if (!kCenter) db = nullptr;
  const int c = static_cast<int>(cols);
  float *pw = nullptr, *pb = nullptr;
  int64_t parts = 0;
  if (rows > 0) {
    constexpr int V = 16 / sizeof(T);
    const int off0 = common_offset<T>({dy, x, dx});
    const bool odd = off0 != 0 || cols % V != 0 || !aligned16(w);  // loose elements
    const int sums = (dw != nullptr) + (db != nullptr);
    const DeviceInfo dev = device_info();
    if (rows == 1 && !odd && aligned16(dw) && aligned16(db) && bwd_one_row_on() &&
        launch_bwd_one_row<T, W, kCenter>(dy, x, w, mean, rstd, dx, dw, db, c, stream)) {
      // dw and db written by the kernel: no partial rows
    } else if (split_takes<T>(rows, cols, dev)) {
      run_split<T, W, kCenter>(dy, x, w, mean, rstd, dx, dw, db, rows, c, !odd, alloc, dev, stream);
    } else if (dx_pass_on() && (sums == 0 || col_pass_fits<T>(rows, cols, sums, dev)) &&
               launch_dx_pass<T, W, kCenter>(dy, x, w, mean, rstd, dx, rows, c, off0, odd, sums == 0, dev, stream)) {
      if (sums > 0) launch_col_pass<T, W, kCenter, V>(dy, x, mean, rstd, dw, db, rows, c, off0 == 0 && c % V == 0, dev,
                                                  stream);
    } else if constexpr (sizeof(T) == 4) {
      parts = run_bwd_table<T, W, kCenter, kBwdConfigs4>(dy, x, w, mean, rstd, dx, dw, db, alloc, &pw, &pb, rows, c,
                                                         off0, odd, dev, stream);
    } else {
      parts = run_bwd_table<T, W, kCenter, kBwdConfigs2>(dy, x, w, mean, rstd, dx, dw, db, alloc, &pw, &pb, rows, c,
                                                         off0, odd, dev, stream);
    }
    if (parts < 0) {
      parts = 0;
      bwd_loop<T, W, kCenter><<<static_cast<unsigned>(rows), loop_threads(cols), 0, stream>>>(dy, x, w, mean, rstd, dx,
                                                                                             rows, c);
      if (dw != nullptr || db != nullptr) {
        parts = (rows + kColsRowsPerSlice - 1) / kColsRowsPerSlice;
        const size_t bytes = static_cast<size_t>(parts) * cols * sizeof(float);
        pw = dw != nullptr ? static_cast<float*>(alloc(bytes)) : nullptr;
        pb = db != nullptr ? static_cast<float*>(alloc(bytes)) : nullptr;
        const dim3 grid(static_cast<unsigned>((cols + 31) / 32), static_cast<unsigned>(parts));
        cols_partial<T, kCenter><<<grid, dim3(32, 8), 0, stream>>>(dy, x, mean, rstd, pw, pb, rows, c);
      }
    }
    check_launch("backward");
  }
  if ((dw != nullptr || db != nullptr) && (parts > 0 || rows <= 0)) {  // no rows: finalize writes zeros
    const dim3 grid(static_cast<unsigned>((cols + kFinalizeCols - 1) / kFinalizeCols), (dw != nullptr) + (db != nullptr));
    check_launch_error(opcore::launch_after(finalize<W>, grid, dim3(32, kFinalizeLanes), 0, stream, 1, pw, pb, dw, db,
                                            parts, c),
                       "backward (dw/db)");
  }
}

}  // namespace gpu
}  // namespace norm_core

// norm_gpu.h's entry points for element type T with parameters of type W, compiled where this is written:
// the forward (each op's <op>_<dtype>_fwd.cu) and the backward (<op>_<dtype>_bwd.cu) in files of their own, so
// that a GPU build compiles the halves in parallel (a 2-byte layer_norm file with both took twice as long).
#define NORM_INSTANTIATE_FWD(T, W, kCenter)                                                            \
  namespace norm_core {                                                                                \
  namespace gpu {                                                                                      \
  template void norm_forward<T, W, kCenter>(const T*, const W*, const W*, T*, float*, float*, int64_t, \
                                            int64_t, float, cudaStream_t);                             \
  }                                                                                                    \
  }
#define NORM_INSTANTIATE_BWD(T, W, kCenter)                                                                    \
  namespace norm_core {                                                                                        \
  namespace gpu {                                                                                              \
  template void norm_backward<T, W, kCenter>(const T*, const T*, const W*, const float*, const float*, T*, W*, \
                                             W*, int64_t, int64_t, const Alloc&, cudaStream_t);                \
  }                                                                                                            \
  }
