// Host side of the norm ops' CUDA core, the shape tables: the block shapes (threads a row, packs a thread,
// blocks a row) of the forward and the backward, the grids each is for, and the fit that picks one for a call
// (pick), with the device facts it reads, few long rows' clusters (Spread) and the cluster size fitted to a
// row (row_cluster). norm_launch.cuh launches what they pick.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "common/env_knob.h"

namespace norm_core {
namespace gpu {

// The grids a table row is for: any; few rows (at most a quarter of the SMs' count); many rows (from one an SM
// to kManyRowsPerSM an SM) that fill more than half the row's pack slots; many waves (at least kWavesRowsPerSM
// rows an SM); a wave of three blocks an SM (more than two rows an SM, at most three); none (only
// NORM_BWD_TPR/NORM_BWD_VECS select it, for timing: diagnose.py bwd-shapes).
enum class Grid { kAny, kFew, kMany, kWaves, kWave3, kForced };
constexpr int64_t kManyRowsPerSM = 128;
constexpr int64_t kWavesRowsPerSM = 8;
struct RegConfig {
  int tpr, vecs, cs;   // threads per row in a block, packs per thread, blocks per row (a cluster when > 1)
  int smem = 0;  // backward: 0: dw/db sums in registers; n > 0: in shared memory, n blocks an SM at least
  Grid grid = Grid::kAny;
  int v = 0;     // the elements a pack (16 / sizeof(T)) of the only rows it takes; 0: rows of any type
  // Whether rows of packs of V elements may take it.
  constexpr bool for_v(int pack) const { return v == 0 || v == pack; }
};
// Tried in order: the first that covers the row's packs and is for the grid (grid_takes). Past 4 packs a
// thread a warp row takes 128 threads at 2 (a warp at 8 held 64 values a thread: 96 registers, a third of the
// warps resident; up to 30% slower on the sweeps' many-row 2-byte rows of 1,400-2,048). The last
// kSmallGridShapes rows only pick_fwd takes: the first fits end before them.
constexpr int kRowCS = 8;  // blocks of the tables' cluster rows (fewer where row_cluster fits them to the row)
// Two rungs between the power-of-two blocks are for grids of many waves (Grid::kWaves): 160 x 4 (513-640
// packs: rows of 5,120 2-byte elements) and 384 x 4 (1,025-1,536: 12,288 2-byte, 6,144 fp32), where 256 x 4
// and 512 x 4 leave up to half of their pack slots empty, threads that hold registers and take part in every
// sum but carry no data. H200, events, L2 flushed, NORM_FINE=0 -> on, both orders: rms_norm [14087,4433]
// f16 87.4 -> 77.2 us, [7865,12288] f16 102.9 -> 98.7, layer_norm [6945,5120] bf16 45.4 -> 39.8, [4243,5495]
// f32 59.9 -> 56.6; taken in grids of under 8 rows an SM they ran slower (rms_norm [323,5120] f16 6.1 -> 6.3
// us, layer_norm [364,6144] f32 8.9 -> 9.3): there every row is in flight at once and the wider block puts
// more of its loads in flight. Rungs of 192 x 2, 192 x 4, 320 x 4 and warps at 3 packs left every call they took
// within noise or slower, and 384 x 8 was mixed (layer_norm [14452,9287] f32 322.7 -> 295.8, [6700,20031] bf16
// 262.0 -> 298.6); docs/ops/norms-design.md.
// fp32 rows of 2,049-3,072 packs (8,193-12,288 elements) in grids of more than two rows an SM and at most three
// take 384 x 8 at three blocks an SM (fwd_min_blocks: 56 registers, ptxas sm_90) where 512 x 8 holds two (61),
// so that no rows are left to a second wave: [272,12288] ran 264 rows at once and 8 after them.
// NORM_FWD_WAVE3=0 never takes it (read once; for experiments).
constexpr RegConfig kFwdConfigs[] = {{32, 1, 1},
                                     {32, 2, 1},
                                     {32, 4, 1},
                                     {128, 2, 1},
                                     {128, 4, 1},
                                     {160, 4, 1, 0, Grid::kWaves},
                                     {256, 4, 1},
                                     {384, 4, 1, 0, Grid::kWaves},
                                     {512, 4, 1},
                                     {384, 8, 1, 0, Grid::kWave3, 4},
                                     {512, 8, 1},
                                     {256, 1, kRowCS},
                                     {256, 2, kRowCS},
                                     {256, 4, kRowCS},
                                     {512, 4, kRowCS},
                                     {512, 8, kRowCS},
                                     {128, 1, 1},
                                     {256, 1, 1},
                                     {512, 1, 1},
                                     {512, 2, 1}};
// The backward keeps x and dy in registers, 4 packs a thread at most. Its dw/db sums live in registers for
// warps and small clusters; for blocks and the larger clusters they live in shared memory (smem > 0), which
// frees the registers a row's sums would take (up to 64 a thread) for more resident blocks, so that one
// block's loads overlap another's sums and syncs (figures in docs/ops/norms-design.md). The tables differ for
// 4-byte rows, whose register sums already fit 2-block clusters. Rows past a 512-thread block take clusters.
// 2-byte 256 x 2 clusters run 4 blocks an SM (at most 64 registers, no spills): held to 3 they took 72-79
// registers, a block an SM fewer than they had had at 56-66 (rms_norm f16 [1549,28967] 193 -> 238 us).
// Blocks at 2 packs a thread (shared-memory sums) come first for grids of few rows, and for many rows past 256
// packs (2-byte rows to 512, 4-byte to 1,024): the first fit, 4 packs a thread, leaves half of each thread's
// registers idle there. H100, the norm sweeps' and named backwards, against NORM_BWD_GRID=0: few rows 0.92-1.01x,
// many 0.84-1.00x (2-byte layer_norm [1369, 2560] 26.9 -> 22.5 us, rms_norm [7157, 4096] 84.1 -> 77.4). Left
// out where they measured slower: many rows of 129-256 packs (2-byte rms_norm [1810, 2048] and layer_norm
// [1278, 1897] 1.07x), past 128 rows an SM (2-byte layer_norm [22475, 3072] 1.05x), and 2-byte rows past 512
// packs (2-byte layer_norm at 512 x 2 spills; 1.02-1.04x). Figures in docs/ops/norms-design.md.
// Held to 64 registers, or for 2-byte rows at 128 and 256 threads to 72 and 80, where 2-byte layer_norm spilled
// 4-12 bytes at 64 (ptxas sm_90; odd 2-byte layer_norm rows at 128 x 2 still spill 4-12). NORM_BWD_GRID=0
// leaves the few- and many-row rows out (read once; for experiments).
// Both tables hold the forward's rungs for many waves (Grid::kWaves) too, 2-byte rows at 160 x 4 and 384 x 4,
// 4-byte ones at 384 x 4 (their rows of 513-640 packs keep the many-row 512 x 2). ptxas (sm_90, f16 rms_norm,
// rows of whole packs) gives every block shape here 80 registers, so 160 x 4 holds 5 blocks an SM where 256 x 4
// holds 3, and 384 x 4 2 where 512 x 4 holds 1. H200, events, L2 flushed, NORM_FINE=0 -> on, both orders:
// rms_norm [10922,12288] bf16 249.7 -> 212.9 us, [7865,12288] f16 184.4 -> 158.9, [4325,5120] f32 89.5 -> 79.1,
// [14087,4433] f16 155.5 -> 140.8, layer_norm [4096,6144] f32 99.5 -> 92.1, [6945,5120] bf16 92.3 -> 85.7;
// slower: rms_norm [6000,5120] bf16 62.4 -> 64.9.
constexpr RegConfig kBwdConfigs2[] = {{32, 1, 1},
                                      {32, 2, 1},
                                      {128, 2, 1, 7, Grid::kFew},
                                      {256, 2, 1, 3, Grid::kFew},
                                      {32, 4, 1},
                                      {256, 2, 1, 3, Grid::kMany},
                                      {128, 4, 1, 4},
                                      {160, 4, 1, 3, Grid::kWaves},
                                      {256, 4, 1, 2},
                                      {384, 4, 1, 1, Grid::kWaves},
                                      {512, 4, 1, 1},
                                      {256, 1, kRowCS},
                                      {256, 2, kRowCS, 4},
                                      {256, 4, kRowCS, 3},
                                      {512, 4, kRowCS, 1},
                                      {512, 2, 1, 2, Grid::kForced}};
constexpr RegConfig kBwdConfigs4[] = {{32, 1, 1},
                                      {32, 2, 1},
                                      {128, 2, 1, 8, Grid::kFew},
                                      {256, 2, 1, 4, Grid::kFew},
                                      {32, 4, 1},
                                      {256, 2, 1, 4, Grid::kMany},
                                      {512, 2, 1, 2, Grid::kMany},
                                      {128, 4, 1, 4},
                                      {256, 4, 1, 2},
                                      {384, 4, 1, 1, Grid::kWaves},
                                      {512, 4, 1, 1},
                                      {256, 1, kRowCS},
                                      {256, 2, kRowCS},
                                      {256, 4, kRowCS, 3},
                                      {512, 4, kRowCS, 1}};
// The dx pass (dx alone, norm_launch.cuh's launch_dx_pass) takes the first of these that holds the row: 2
// packs a thread, up to a 512-thread block, and where no col_pass follows, warps at 4 packs for rows of 65-128
// (kDxWarp4). Without the dw/db sums a thread holds x and dy alone (40-64 registers, ptxas sm_90; 124 for odd
// 2-byte rows with 2-byte weights at 32 x 4), so more rows are in flight at once than in the table's shapes.
// 512 threads at 4 packs ran slower than the table's kernels (H200: fp32 rms_norm [272,8192] 20.4 -> 22.7 us,
// layer_norm [364,6144] 20.6 -> 22.0), and 32 x 4 before col_pass slower than 128 x 2 (layer_norm [164,957]
// f16 9.7 -> 12.3, rms_norm [772,801] bf16 11.0 -> 12.0), but faster alone (layer_norm without weights
// [65536,768] bf16 89.0 -> 78.4, [4096,1024] f16 11.6 -> 11.1); docs/ops/norms-design.md.
constexpr RegConfig kDxShapes[] = {{32, 2, 1}, {32, 4, 1}, {128, 2, 1}, {256, 2, 1}, {512, 2, 1}};
constexpr size_t kDxWarp4 = 1;  // kDxShapes' warps at 4 packs (NORM_DX_WARP4=0 skips them; for experiments)
static_assert(kDxShapes[kDxWarp4].tpr == 32 && kDxShapes[kDxWarp4].vecs == 4, "kDxWarp4 is the 32 x 4 row");
// Rows of at least `packs` packs take a cluster each where there are fewer than rows + rows_per_sm * SMs
// of them: the forward's few long rows, and the backward's rows past a 256-thread block while they are
// under two waves of 512-thread blocks.
struct Spread {
  int64_t packs, rows, rows_per_sm;
  // Whether `rows` rows of `row_packs` packs on a device of `sms` SMs are such rows.
  constexpr bool takes(int64_t row_packs, int64_t n_rows, int64_t sms) const {
    return row_packs >= packs && n_rows < rows + rows_per_sm * sms;
  }
};
// The forward's few long rows take a cluster only past the largest block that holds the parameters, 512 threads
// at 32 values (16,384 elements): such a block reads the row and the parameters at once (fwd_reg's kEarly) and
// measured faster than a cluster of 8 (H100, 3-16 rows of 8,192-16,384: layer_norm f32 [16,8192] 7.7 -> 5.9 us,
// bf16 [16,16384] 8.0 -> 5.9, rms_norm bf16 [3,16384] 5.9 -> 5.4; figures in docs/ops/norms-design.md).
constexpr int kFwdSpreadCols = 512 * 32;
template <int V>
constexpr Spread fwd_spread() {
  return {kFwdSpreadCols / V + 1, 32, 0};
}
constexpr Spread kBwdSpread{1025, 0, 2};
constexpr int kMaxDevices = 64;         // devices whose facts and backward grid sizes are remembered

struct DeviceInfo {
  int index = 0;  // the current device
  int sms = 0;
  bool clusters = false;  // thread-block clusters (sm_90+)
  int64_t l2 = 0;         // L2 cache bytes
};
// The current device's SM count, cluster support and L2 size, asked of the driver once per device (a benign race:
// every writer writes the same).
inline DeviceInfo device_info() {
  static DeviceInfo known[kMaxDevices];
  int dev = 0;
  cudaGetDevice(&dev);
  if (dev < kMaxDevices && known[dev].sms > 0) return known[dev];
  int sms = 0, major = 0, l2 = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
  const DeviceInfo info{dev, std::max(sms, 1), major >= 9, l2};
  if (dev < kMaxDevices) known[dev] = info;
  return info;
}

// Whether table row `r` takes a grid of `rows` rows of `packs` packs (NORM_BWD_GRID=0: only rows for any grid of
// the backward's table; NORM_FINE=0: none of the rungs for many waves; NORM_FWD_WAVE3=0: not the forward's wave of
// three blocks an SM; all read once, for experiments).
inline bool grid_takes(const RegConfig& r, int64_t rows, int64_t packs, const DeviceInfo& dev) {
  static const bool on = opcore::env_int("NORM_BWD_GRID", 1) != 0;
  static const bool fine = opcore::env_int("NORM_FINE", 1) != 0;
  static const bool wave3 = opcore::env_int("NORM_FWD_WAVE3", 1) != 0;
  switch (r.grid) {
    case Grid::kAny: return true;
    case Grid::kFew: return on && rows * 4 <= dev.sms;
    case Grid::kMany:
      return on && rows >= dev.sms && rows < kManyRowsPerSM * dev.sms && 2 * packs > int64_t{r.tpr} * r.vecs;
    case Grid::kWaves: return fine && rows >= kWavesRowsPerSM * dev.sms;
    case Grid::kWave3: return wave3 && rows > 2 * dev.sms && rows <= 3 * dev.sms;
    default: return false;
  }
}

// Index into the config table for rows of `cols` elements on device `dev`, or -1 when none takes them.
template <int V, size_t N>
int pick(const RegConfig (&table)[N], int64_t rows, int64_t cols, const Spread& sp, const DeviceInfo& dev) {
  const int64_t packs = (cols + V - 1) / V;
  const bool clusters = dev.clusters;
  const bool spread = clusters && sp.takes(packs, rows, dev.sms);
  for (size_t i = 0; i < N; ++i) {
    const RegConfig& r = table[i];
    if (!r.for_v(V) || (r.cs > 1 && !clusters) || (spread && r.cs == 1) || !grid_takes(r, rows, packs, dev))
      continue;
    if (static_cast<int64_t>(r.tpr) * r.vecs * r.cs >= packs) return static_cast<int>(i);
  }
  return -1;
}

// Blocks a row of `packs` packs takes where the table gives it a cluster of cs_max blocks of tpr threads at
// vecs packs a thread (1 where cs_max is 1), on a grid of `rows` rows. Where the grid at cs_max blocks a row
// would hold more than kFitBlocksPerSM blocks an SM: the fewest blocks that hold the row, so that fewer
// threads hold nothing and more rows are in flight at once (8 blocks of 256 threads at 2 packs filled 61% of
// their pack slots with a row of 2,504 packs; 5 blocks hold it). Smaller grids keep cs_max: their rows are all in
// flight anyway, and more blocks a row put its loads on more SMs (figures in docs/ops/norms-design.md). At
// least cs_max / 2 + 1: a table row takes rows the row before it cannot hold, so the bound only matters
// outside the table, and it keeps the kernels compiled to cs_max - cs_max / 2 sizes (with_cluster_size).
// NORM_ROW_CLUSTER=0 always takes cs_max (read once; for experiments).
constexpr int64_t kFitBlocksPerSM = 2;
inline int row_cluster(int tpr, int vecs, int cs_max, int64_t packs, int64_t rows, const DeviceInfo& dev) {
  static const bool fit = opcore::env_int("NORM_ROW_CLUSTER", 1) != 0;
  if (cs_max == 1 || !fit || rows * cs_max <= kFitBlocksPerSM * dev.sms) return cs_max;
  const int64_t per = static_cast<int64_t>(tpr) * vecs, need = (packs + per - 1) / per;
  return static_cast<int>(std::min<int64_t>(cs_max, std::max<int64_t>(cs_max / 2 + 1, need)));
}

// The index of the table's row {tpr, vecs, 1} for packs of V elements where it holds rows of `packs` packs, else
// -1 (tpr 0: none asked).
template <int V, size_t N>
int forced_row(const RegConfig (&table)[N], int64_t packs, int tpr, int vecs) {
  for (size_t i = 0; tpr > 0 && i < N; ++i) {
    const RegConfig& s = table[i];
    if (s.for_v(V) && s.cs == 1 && s.tpr == tpr && s.vecs == vecs && static_cast<int64_t>(s.tpr) * s.vecs >= packs)
      return static_cast<int>(i);
  }
  return -1;
}

}  // namespace gpu
}  // namespace norm_core
