// Host side of the norm ops' CUDA core: path choice and launches (every launch on the caller's stream); the
// shape tables and their fit are norm_tables.cuh's.
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

#include "common/env_knob.h"
#include "norm_bwd.cuh"
#include "norm_fwd.cuh"
#include "norm_gpu.h"
#include "norm_split.cuh"
#include "norm_tables.cuh"

namespace norm_core {
namespace gpu {

inline void check_launch(const char* what) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw std::runtime_error(std::string("opbench norm: ") + what + ": " + cudaGetErrorString(err));
}

// The row tensors' common offset from 16-byte alignment in elements, or -1 where they differ.
template <typename T>
int common_offset(std::initializer_list<const void*> ptrs) {
  int off = -1;
  for (const void* p : ptrs) {
    const int o = static_cast<int>(reinterpret_cast<uintptr_t>(p) % 16);
    if (o % sizeof(T) != 0 || (off >= 0 && o != off)) return -1;
    off = o;
  }
  return off / static_cast<int>(sizeof(T));
}

// Calls f(std::integral_constant<int, C>{}) for C == cs, one of kMax / 2 + 1 .. kMax (row_cluster's): each
// cluster size runs kernels compiled for it. Kernels that read the size at run time held more registers (a
// block an SM fewer in `[2048,32768]` f16 rms_norm's backward, 34% slower: docs/ops/norms-design.md).
template <int kMax, typename F, int... I>
void with_cluster_size_of(int cs, std::integer_sequence<int, I...>, F& f) {
  (void)((cs == kMax / 2 + 1 + I ? (f(std::integral_constant<int, kMax / 2 + 1 + I>{}), true) : false) || ...);
}
template <int kMax, typename F>
void with_cluster_size(int cs, F&& f) {
  with_cluster_size_of<kMax>(cs, std::make_integer_sequence<int, kMax - kMax / 2>{}, f);
}

// Calls f(std::integral_constant<size_t, I>{}) for I == index: the config tables alone decide which kernels
// are instantiated and launched, so a table row and its launch cannot drift apart.
template <size_t... I, typename F>
void with_config_of(int index, std::index_sequence<I...>, F& f) {
  (void)((index == static_cast<int>(I) ? (f(std::integral_constant<size_t, I>{}), true) : false) || ...);
}
template <size_t N, typename F>
void with_config(int index, F&& f) {
  with_config_of(index, std::make_index_sequence<N>{}, f);
}

// A launch of `blocks` blocks of `threads` as clusters of `cs` blocks (sm_90+). Not copyable: the
// config points at the attribute beside it.
struct ClusterLaunch {
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1];
  ClusterLaunch(int64_t blocks, int threads, int cs, size_t smem, cudaStream_t stream) {
    cfg.gridDim = dim3(static_cast<unsigned>(blocks));
    cfg.blockDim = dim3(threads);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = cs;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

// Launches kernel on `blocks` blocks of `threads` with `smem` bytes of dynamic shared memory, as clusters of
// `cs` blocks when cs > 1.
template <typename... P, typename... A>
void launch(void (*kernel)(P...), int64_t blocks, int threads, int cs, size_t smem, cudaStream_t stream,
            A... args) {
  if (cs == 1) {
    kernel<<<static_cast<unsigned>(blocks), threads, smem, stream>>>(args...);
    return;
  }
  const ClusterLaunch cl(blocks, threads, cs, smem, stream);
  const cudaError_t err = cudaLaunchKernelEx(&cl.cfg, kernel, args...);
  if (err != cudaSuccess) throw std::runtime_error(std::string("opbench norm: cluster launch: ") + cudaGetErrorString(err));
}

// Blocks (or clusters) of `kernel` resident at once on the device, each with `smem` bytes of dynamic shared
// memory.
template <typename... P>
int64_t wave_of(void (*kernel)(P...), int threads, int cs, size_t smem) {
  if (cs == 1) {
    int per_sm = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem);
    return static_cast<int64_t>(std::max(per_sm, 1)) * device_info().sms;
  }
  const ClusterLaunch cl(cs, threads, cs, smem, nullptr);
  int clusters = 0;
  cudaOccupancyMaxActiveClusters(&clusters, kernel, &cl.cfg);
  return std::max(clusters, 1);
}

// Blocks (clusters: their blocks) of kKernel resident at once on the current device, asked once per device.
// kBuckets > 1: kernels launched with up to (kBuckets - 1) * 4 KB of dynamic shared memory, `smem` bytes this time,
// asked once per device and size rounded up to 4 KB.
template <auto kKernel, int kBuckets = 1>
int64_t resident(int threads, int cs, const DeviceInfo& dev, size_t smem = 0) {
  static int64_t known[kMaxDevices][kBuckets] = {};  // 0: not asked yet (a benign race: every writer writes the same)
  const int bucket = static_cast<int>((smem + 4095) / 4096);
  if (dev.index < kMaxDevices && known[dev.index][bucket] > 0) return known[dev.index][bucket];
  const int64_t wave = wave_of(kKernel, threads, cs, static_cast<size_t>(bucket) * 4096) * cs;
  if (dev.index < kMaxDevices) known[dev.index][bucket] = wave;
  return wave;
}

// Grids of at most this many blocks an SM read the parameters early and hold them in registers (fwd_reg's and
// bwd_reg's kEarly): where occupancy is no limit. The backward's blocks of up to kEarlyMaxThreads threads; the
// forward's (fwd_has_early) without clusters, in blocks of up to kEarlyMaxThreads threads or of at most 32
// values a thread. Early reads in grids of 2-4 blocks an SM wholly resident measured slower (figures in
// docs/ops/norms-design.md). NORM_EARLY=0 never does (read once; for experiments).
constexpr int64_t kEarlyBlocksPerSM = 1;
constexpr int kEarlyMaxThreads = 256;  // blocks up to this size read early at any values a thread
inline bool early_on() {
  static const bool on = opcore::env_int("NORM_EARLY", 1) != 0;
  return on;
}
// A grid of at most kEarlyBlocksPerSM blocks an SM (occupancy no limit).
inline bool small_grid(int64_t blocks, const DeviceInfo& dev) { return blocks <= kEarlyBlocksPerSM * dev.sms; }
// Forward kernels of at most 32 values a thread: those that may hold the parameters (kEarly, kBatched) at any
// block size (2-byte rows at 8 packs a thread spill them).
template <typename T, int kVecs>
constexpr bool fwd_holds_params() {
  return kVecs * static_cast<int>(16 / sizeof(T)) <= 32;
}
// Forward kernels compiled with early reads.
template <typename T, int kTPR, int kVecs, int kCS>
constexpr bool fwd_has_early() {
  return kCS == 1 && (kTPR <= kEarlyMaxThreads || fwd_holds_params<T, kVecs>());
}
// Whether a small grid of a kernel with early reads takes them. Two knobs, read once and for experiments, turn
// off one kind of call each: NORM_FWD_EARLY_WIDE=0 blocks of more than kEarlyMaxThreads threads at more than a
// pack a thread; NORM_FWD_EARLY_LN2=0 2-byte layer_norm rows of whole packs (`ln2_whole`).
template <int kTPR, int kVecs>
bool fwd_takes_early(int64_t blocks, const DeviceInfo& dev, bool ln2_whole) {
  static const bool wide = opcore::env_int("NORM_FWD_EARLY_WIDE", 1) != 0;
  static const bool ln2 = opcore::env_int("NORM_FWD_EARLY_LN2", 1) != 0;
  return early_on() && small_grid(blocks, dev) && (kTPR <= kEarlyMaxThreads || kVecs == 1 || wide) &&
         (ln2 || !ln2_whole);
}
// Early backward grids of at most kColRows rows make dw/db in col_sums blocks of their own; NORM_COLS=0 never
// (read once; for experiments).
inline bool cols_on() {
  static const bool on = opcore::env_int("NORM_COLS", 1) != 0;
  return on;
}

// Forward grids of at most this many blocks an SM, all resident at once, that read the parameters late (no
// kEarly) prefetch them into L1 right after x's loads (fwd_reg's kPrefetch): with a block an SM no other
// block's work hides the parameter loads the epilogue makes one pack after another. With up to 4 (H100 sweeps,
// a8ea0b1 against a51df38) every forward that gained had at most a block an SM ([39,12288] f32 layer_norm 9.0
// -> 7.7 us), and those of 2-4 blocks an SM lost up to 12% ([452,1024] f32 rms_norm 5.6 -> 6.3); held to one
// (9a08f5d), those are back ([452,1024] 5.8 us) and the gains stay ([39,12288] 7.7).
// NORM_FWD_PREFETCH=0 never does (read once; for experiments).
constexpr int64_t kPrefetchBlocksPerSM = 1;
inline bool fwd_prefetch_on() {
  static const bool on = opcore::env_int("NORM_FWD_PREFETCH", 1) != 0;
  return on;
}

// Forward grids of at most this many blocks an SM, all resident at once, that neither read the parameters early
// nor prefetch them issue every load before using any (fwd_reg's kBatched: x's, then after the row sums the
// parameters'): with a few blocks an SM, other blocks' work does not hide the round trips to memory that kLate
// makes one pack after another. Under a block an SM the prefetch measured faster: its parameter lines arrive
// while the sums run. NORM_FWD_BATCH=0 never does (read once; for experiments).
constexpr int64_t kBatchBlocksPerSM = 4;
inline bool fwd_batch_on() {
  static const bool on = opcore::env_int("NORM_FWD_BATCH", 1) != 0;
  return on;
}

// 2-byte rms_norm rows at 512 x 8 (2,049-4,096 packs) in grids past a block an SM read late with x held as its
// words (fwd_reg's kWords): 64 registers, two blocks an SM, where the floats held 111-128 and one. H200, events,
// L2 flushed, NORM_FWD_WORDS=0 -> on, both orders: [4647,28877] f16 198.2 -> 141.6 us, [1549,28967] f16 72.6 ->
// 56.0, [1536,32768] f16 71.1 -> 56.3, [250,32768] bf16 17.3 -> 13.8. 2-byte layer_norm rows spill there (96-168
// bytes by ptxas) and ran up to 22% slower on them ([4295,31245] f16 249.7 -> 305.0), so keep the floats.
// NORM_FWD_WORDS=0 never does (read once; for experiments).
template <typename T, bool kCenter, int kTPR, int kVecs, int kCS>
constexpr bool fwd_has_words() {
  return !kCenter && sizeof(T) == 2 && kTPR == 512 && kVecs == 8 && kCS == 1;
}
inline bool fwd_words_on() {
  static const bool on = opcore::env_int("NORM_FWD_WORDS", 1) != 0;
  return on;
}

// Rows of whole aligned packs, up to 1,024 packs, whose block-a-row grid is more than the register kernel's
// wave take fwd_staged where its grid is all resident at once: shared memory, not registers, then sets the rows
// an SM holds (2-byte rows of 2,560 at 128 threads: 16 blocks an SM staged against 9 at 53 registers). The
// sweeps' calls it takes ran 4-11% faster (rms_norm [1561,2560] f16 11.3 -> 10.0 us, [1810,2048] bf16 10.3 ->
// 9.5, layer_norm [1369,2560] f16 10.9 -> 10.4; H100, docs/ops/norms-design.md). Longer rows, at 512 threads,
// ran the same or slower staged (rms_norm [406,16384] f16 15.0 -> 15.1, layer_norm [272,12288] f32 16.5 -> 17.1):
// every block of such a grid reads its row, then writes it, so the loads of one row do not overlap the stores of
// another as a second wave's do. NORM_FWD_STAGED=0 never stages (read once; for experiments).
inline bool fwd_staged_on() {
  static const bool on = opcore::env_int("NORM_FWD_STAGED", 1) != 0;
  return on;
}
constexpr int kStagedMaxPacks = 256 * 4;  // rows of up to 256 threads at 4 packs: 16 KB, no opt-in past 48 KB
static_assert(kStagedMaxPacks * 16 <= 48 * 1024, "staged rows past 48 KB need the shared-memory opt-in");
constexpr int kStagedBuckets = kStagedMaxPacks * 16 / 4096 + 1;
// Launches fwd_staged (blocks of 128 threads, or 256 past 512 packs: up to 4 packs a thread) where the row is
// at most kStagedMaxPacks packs and the grid of `rows` blocks is all resident at once; returns whether it did.
template <typename T, typename W, bool kCenter>
bool launch_fwd_staged(const T* x, const W* w, const W* b, T* y, float* mean, float* rstd, int64_t rows, int cols,
                       float eps, const DeviceInfo& dev, cudaStream_t stream) {
  constexpr int V = 16 / sizeof(T);
  const int packs = cols / V;
  if (packs > kStagedMaxPacks) return false;
  const size_t bytes = static_cast<size_t>(cols) * sizeof(T);
  const auto go = [&](auto threads) {
    constexpr int kThreads = decltype(threads)::value;
    constexpr auto kernel = fwd_staged<T, W, kCenter, kThreads>;
    if (rows > resident<kernel, kStagedBuckets>(kThreads, 1, dev, bytes)) return false;
    kernel<<<static_cast<unsigned>(rows), kThreads, bytes, stream>>>(x, w, b, y, mean, rstd, cols, eps);
    return true;
  };
  return packs <= 128 * 4 ? go(std::integral_constant<int, 128>{}) : go(std::integral_constant<int, 256>{});
}

// fwd_reg on clusters of exactly kCS blocks a row (1: none).
template <typename T, typename W, bool kCenter, int kTPR, int kVecs, int kCS, bool kOdd>
void launch_fwd_reg_at(const T* x, const W* w, const W* b, T* y, float* mean, float* rstd, int64_t rows, int cols,
                       float eps, int off0, const DeviceInfo& dev, cudaStream_t stream) {
  constexpr int kBlock = kTPR < 128 ? 128 : kTPR, kRPB = kBlock / kTPR;
  const int64_t blocks = kCS > 1 ? rows * kCS : (rows + kRPB - 1) / kRPB;
  const auto run = [&](auto kernel) {
    launch(kernel, blocks, kBlock, kCS, 0, stream, x, w, b, y, mean, rstd, rows, cols, eps, off0);
  };
  if constexpr (kCS == 1 && kRPB == 1 && !kOdd) {
    constexpr auto plain = fwd_reg<T, W, kCenter, kTPR, kVecs, 1, false, FwdRead::kLate>;
    if (fwd_staged_on() && dev.clusters && blocks > resident<plain>(kBlock, 1, dev) &&
        launch_fwd_staged<T, W, kCenter>(x, w, b, y, mean, rstd, rows, cols, eps, dev, stream))
      return;
  }
  if constexpr (fwd_has_early<T, kTPR, kVecs, kCS>()) {
    if (fwd_takes_early<kTPR, kVecs>(blocks, dev, kCenter && sizeof(T) == 2 && !kOdd))
      return run(fwd_reg<T, W, kCenter, kTPR, kVecs, kCS, kOdd, FwdRead::kEarly>);
  }
  if (fwd_prefetch_on() && blocks <= kPrefetchBlocksPerSM * dev.sms) {
    // Only where the whole grid is resident at once: the prefetching kernels' registers differ from the plain
    // ones' (either way), and a grid they would split into waves is no small grid.
    constexpr auto kernel = fwd_reg<T, W, kCenter, kTPR, kVecs, kCS, kOdd, FwdRead::kPrefetch>;
    if (blocks <= resident<kernel>(kBlock, kCS, dev)) return run(kernel);
  }
  if constexpr (fwd_holds_params<T, kVecs>()) {
    constexpr auto kernel = fwd_reg<T, W, kCenter, kTPR, kVecs, kCS, kOdd, FwdRead::kBatched>;
    if (fwd_batch_on() && blocks <= kBatchBlocksPerSM * dev.sms && blocks <= resident<kernel>(kBlock, kCS, dev))
      return run(kernel);
  }
  if constexpr (fwd_has_words<T, kCenter, kTPR, kVecs, kCS>()) {
    if (fwd_words_on()) return run(fwd_reg<T, W, kCenter, kTPR, kVecs, kCS, kOdd, FwdRead::kWords>);
  }
  run(fwd_reg<T, W, kCenter, kTPR, kVecs, kCS, kOdd, FwdRead::kLate>);
}

// The table row {kTPR, kVecs, kCS} of the forward: on clusters of row_cluster's size where kCS > 1.
template <typename T, typename W, bool kCenter, int kTPR, int kVecs, int kCS, bool kOdd>
void launch_fwd_reg(const T* x, const W* w, const W* b, T* y, float* mean, float* rstd, int64_t rows, int cols,
                    float eps, int off0, const DeviceInfo& dev, cudaStream_t stream) {
  constexpr int V = 16 / sizeof(T);
  with_cluster_size<kCS>(row_cluster(kTPR, kVecs, kCS, (cols + V - 1) / V, rows, dev), [&](auto cs) {
    launch_fwd_reg_at<T, W, kCenter, kTPR, kVecs, decltype(cs)::value, kOdd>(x, w, b, y, mean, rstd, rows, cols, eps,
                                                                           off0, dev, stream);
  });
}

// A forward of no more rows than SMs (small_grid), or of rows the table gives a warp at more than 2 packs a
// thread while there are at most kOnePackRowsPerSM rows an SM, takes a block a row at one pack a thread (128
// to 512 threads, the fewest that hold the row), and 2-byte rows of 513-1,024 packs 512 threads at two: more
// threads and SMs a row put more of its loads in flight at once, which is most of such a call's time, and one
// pack a thread keeps the registers low enough for the early parameter reads at any block size. 1,024 threads
// at one pack measured 0.2-0.6 us slower than 512 at two on 2-byte rows of 530-1,024 packs, early reads or
// not (commit 0ed182f's message). Rows past 1,024 packs keep the table's choice, and so do 4-byte rows past
// 512: their 1,024-thread blocks measured up to 25% slower than the table's 256 threads at 4 packs (fp32
// layer_norm rows of 2,560-3,913 in small grids). Figures in docs/ops/norms-design.md. NORM_FWD_SPREAD=0 never
// does (read once; for experiments).
constexpr int64_t kOnePackRowsPerSM = 64;
constexpr int kSmallGridMaxPacks4 = 512;  // the most packs a small grid's 4-byte rows take this way
constexpr size_t kSmallGridShapes = 4;      // kFwdConfigs' last rows: 128, 256, 512 x 1, then 512 x 2
// pick_fwd takes the first of them that holds the row: they must be blocks, in growing numbers of pack slots.
constexpr bool small_grid_shapes_ordered() {
  for (size_t i = std::size(kFwdConfigs) - kSmallGridShapes; i < std::size(kFwdConfigs); ++i) {
    const RegConfig &r = kFwdConfigs[i], &prev = kFwdConfigs[i - 1];
    if (r.cs != 1 || (i > std::size(kFwdConfigs) - kSmallGridShapes && r.tpr * r.vecs <= prev.tpr * prev.vecs))
      return false;
  }
  return true;
}
static_assert(small_grid_shapes_ordered(), "kFwdConfigs' small-grid shapes: blocks, in growing slots");
inline bool spread_on() {
  static const bool on = opcore::env_int("NORM_FWD_SPREAD", 1) != 0;
  return on;
}

// The forward's config (index into kFwdConfigs) for the call, or -1 (fwd_loop). NORM_FWD_TPR=t and
// NORM_FWD_VECS=v force the table's row {t, v, 1} wherever it holds the row (read once; for experiments).
template <int V>
int pick_fwd(int64_t rows, int64_t cols, const DeviceInfo& dev) {
  static const int ft = opcore::env_int("NORM_FWD_TPR", 0), fv = opcore::env_int("NORM_FWD_VECS", 0);
  const int64_t packs = (cols + V - 1) / V;
  const int forced = forced_row(kFwdConfigs, packs, ft, fv);
  if (forced >= 0) return forced;
  const int config = pick<V>(kFwdConfigs, rows, cols, fwd_spread<V>(), dev);
  if (config < 0 || !spread_on()) return config;
  const RegConfig& r = kFwdConfigs[config];
  const bool warp_rows = r.tpr == 32 && packs > 2 * r.tpr && rows <= kOnePackRowsPerSM * dev.sms;
  if (r.cs > 1 || !(small_grid(rows, dev) || warp_rows)) return config;
  for (size_t i = std::size(kFwdConfigs) - kSmallGridShapes; i < std::size(kFwdConfigs); ++i) {
    const int64_t slots = static_cast<int64_t>(kFwdConfigs[i].tpr) * kFwdConfigs[i].vecs;
    if (slots >= packs && (slots <= kSmallGridMaxPacks4 || V > 4)) return static_cast<int>(i);
  }
  return config;
}

inline int loop_threads(int64_t cols) {
  int t = 128;
  while (t < 1024 && static_cast<int64_t>(t) * 8 < cols) t *= 2;
  return t;
}

template <typename T, typename W, bool kCenter>
void norm_forward(const T* x, const W* w, const W* b, T* y, float* mean, float* rstd, int64_t rows, int64_t cols,
                  float eps, cudaStream_t stream) {
  if (rows <= 0) return;
  if (cols > INT32_MAX) throw std::runtime_error("opbench norm: rows longer than 2^31 - 1 elements");
  constexpr int V = 16 / sizeof(T);
  const int c = static_cast<int>(cols);
  const int off0 = common_offset<T>({x, y});
  const DeviceInfo dev = device_info();
  const bool odd = off0 != 0 || cols % V != 0 || !aligned16(w) || !aligned16(b);  // loose elements
  const int config = cols == 0 || off0 < 0 ? -1 : pick_fwd<V>(rows, cols, dev);
  if (config >= 0) {
    with_config<std::size(kFwdConfigs)>(config, [&](auto i) {
      constexpr RegConfig r = kFwdConfigs[decltype(i)::value];
      if (odd) {
        launch_fwd_reg<T, W, kCenter, r.tpr, r.vecs, r.cs, true>(x, w, b, y, mean, rstd, rows, c, eps, off0, dev,
                                                                 stream);
      } else {
        launch_fwd_reg<T, W, kCenter, r.tpr, r.vecs, r.cs, false>(x, w, b, y, mean, rstd, rows, c, eps, off0, dev,
                                                                  stream);
      }
    });
  } else {
    fwd_loop<T, W, kCenter><<<static_cast<unsigned>(rows), loop_threads(cols), 0, stream>>>(x, w, b, y, mean, rstd,
                                                                                           rows, c, eps);
  }
  check_launch("forward");
}

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
  launch(col_pass<T, W, kCenter, kE>, blocks, kPassThreads, kPassCS, 0, stream, dy, x, mean, rstd, dw, db, rows,
         cols);
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
  const int forced = forced_row(table, (cols + V - 1) / V, ft, fv);
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
  kernel<<<blocks, kSplitThreads, coef, stream>>>(dy, x, w, mean, rstd, part, dx, dw, db, static_cast<int>(rows),
                                                  cols, chunks);
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
    finalize<W><<<grid, dim3(32, kFinalizeLanes), 0, stream>>>(pw, pb, dw, db, parts, c);
    check_launch("backward (dw/db)");
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
