// Host side of the norm ops' forward: when fwd_reg's loads go out (its read modes and their knobs), rows staged
// in shared memory, a table row's launch, pick_fwd's choice of row, and norm_forward. The path choice for both
// directions is norm_launch.cuh's header.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/env_knob.h"
#include "norm_fwd.cuh"
#include "norm_gpu.h"
#include "norm_launch_common.cuh"
#include "norm_tables.cuh"

namespace norm_core {
namespace gpu {

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
// 56.0, [1536,32768] f16 71.1 -> 56.3, [250,32768] bf16 17.3 -> 13.8 (docs/ops/diagnostics/run.sh OUT norm_words).
// 2-byte layer_norm rows take them too (this and the half-thread words below) now that its words kernels fit in 64
// registers without spills (renew_words, ptxas sm_90; they spilled 96-168 bytes before and ran up to 22% slower).
// H200, one build, NORM_FWD_WORDS_LN=0 -> 1, both orders, over the layer_norm sweep, its suite and long 2-byte
// rows: 10 of 80 forwards faster, none slower, e.g. [4295,31245] f16 250.9 -> 189.4 us, [1536,32768] f16 79.4 ->
// 59.1, [2048,20480] bf16 71.2 -> 54.3, [8192,5121] bf16 71.1 -> 65.2 (docs/ops/diagnostics/run.sh OUT
// norm_words_ln). NORM_FWD_WORDS_LN=0 keeps layer_norm's on the floats, NORM_FWD_WORDS=0 both ops' (read once; for
// experiments).
template <typename T, int kTPR, int kVecs, int kCS>
constexpr bool fwd_has_words() {
  return sizeof(T) == 2 && kTPR == 512 && kVecs == 8 && kCS == 1;
}
template <bool kCenter>
bool fwd_words_on() {
  static const bool on = opcore::env_int("NORM_FWD_WORDS", 1) != 0;
  static const bool ln = opcore::env_int("NORM_FWD_WORDS_LN", 1) != 0;
  return on && (!kCenter || ln);
}
// 2-byte rows the table gives 256 or 512 threads at 4 packs, in grids past that kernel's wave, take
// half the threads at 8 packs with x held as its words (fwd_reg's kWords: the same pack slots at 64 registers,
// twice the rows an SM) where the words kernel's wave holds the grid, and rows at 256 threads that are not whole
// aligned packs (kOdd) in grids of at least kHalfOddRowsPerSM rows an SM. rms_norm, H200, events, L2 flushed,
// one build, NORM_FWD_HALF=0 against the words, both orders, us: where the words' wave holds the grid, [500,12287]
// f16 12.7 -> 11.9, [406,16384] f16 13.0-13.3 -> 12.6, [300,16384] f16 11.8-12.0 -> 11.3-11.4, [800,8001] f16
// 13.8-14.0 -> 13.5; odd rows of many waves, [22035,6091] f16 151.4-151.9 -> 136.9-137.0, [8192,5121] bf16
// 56.6-56.9 -> 48.9-49.0. Other grids past the floats' wave ran the same or slower on the words: odd
// [3000,6143] f16 (23 rows an SM) 26.3-26.4 -> 26.4, [1100,8001] bf16 15.6-15.7 -> 19.7-19.8, whole packs
// [600,12288] bf16 13.5-13.6 -> 15.3, [11195,8192] f16 93.6-94.1 -> 94.5-94.7, [4096,8192] bf16 38.1-38.4 ->
// 38.8-38.9; odd grids between 23 and 62 rows an SM, and odd 512-thread rows past the words' wave, were not
// timed. docs/ops/diagnostics/run.sh OUT norm_half times these. NORM_FWD_HALF (read once; for experiments): 0
// never, 1 as above, 2 in any grid past the floats' wave; NORM_FWD_WORDS=0 never either, nor layer_norm's rows
// with NORM_FWD_WORDS_LN=0.
constexpr int64_t kHalfOddRowsPerSM = 48;
template <typename T, int kTPR, int kVecs, int kCS>
constexpr bool fwd_has_half_words() {
  return sizeof(T) == 2 && (kTPR == 256 || kTPR == 512) && kVecs == 4 && kCS == 1;
}
// 2-byte rms_norm rows of whole packs at 128 or 256 x 4 (257-1,024 packs), in grids past the floats' wave and
// fwd_staged's, take x held as its words at 40 registers (fwd_min_blocks: six blocks of 256 an SM, twelve of 128;
// ptxas sm_90, no spills) where the floats take 48-60 (four or five blocks of 256, eight or nine of 128). H200,
// events, L2 flushed, one build, NORM_FWD_WORDS4=0 -> 1, both orders, the 12 such rms_norm forwards of the norm
// sweeps, the named suites and many-row rows: geomean new/base 0.988, one faster in both orders ([2048,8192] bf16
// 22.0 -> 21.2 us), none slower in both (one in one order, [2507,3072] bf16 12.7 -> 13.0), e.g. [4096,8192] bf16
// 38.0 -> 37.2, [8192,4096] f16 37.9 -> 36.7. layer_norm's 9 (NORM_FWD_WORDS4=2) ran at geomean 1.003
// ([4096,8192] bf16 37.9 -> 38.7) and stay on the floats, as do rows of loose elements
// (docs/ops/diagnostics/run.sh OUT norm_words4). NORM_FWD_WORDS4 (read once; for experiments): 0 never, 1
// rms_norm's rows, 2 both ops'.
template <typename T, int kTPR, int kVecs, int kCS, bool kOdd>
constexpr bool fwd_has_words4() {
  return sizeof(T) == 2 && (kTPR == 128 || kTPR == 256) && kVecs == 4 && kCS == 1 && !kOdd;
}
template <bool kCenter>
bool fwd_words4_on() {
  static const int mode = opcore::env_int("NORM_FWD_WORDS4", 1);
  return mode > (kCenter ? 1 : 0) && fwd_words_on<kCenter>();
}
inline int fwd_half_mode() {
  static const int mode = opcore::env_int("NORM_FWD_HALF", 1);
  return mode;
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
  if constexpr (fwd_has_words<T, kTPR, kVecs, kCS>()) {
    if (fwd_words_on<kCenter>()) return run(fwd_reg<T, W, kCenter, kTPR, kVecs, kCS, kOdd, FwdRead::kWords>);
  }
  constexpr auto late = fwd_reg<T, W, kCenter, kTPR, kVecs, kCS, kOdd, FwdRead::kLate>;
  if constexpr (fwd_has_half_words<T, kTPR, kVecs, kCS>()) {
    constexpr auto half = fwd_reg<T, W, kCenter, kTPR / 2, 8, 1, kOdd, FwdRead::kWords>;
    const int mode = fwd_words_on<kCenter>() ? fwd_half_mode() : 0;
    if (mode > 0 && blocks > resident<late>(kBlock, 1, dev) &&
        (mode > 1 || blocks <= resident<half>(kBlock / 2, 1, dev) ||
         (kOdd && kTPR == 256 && blocks >= kHalfOddRowsPerSM * dev.sms)))
      return launch(half, blocks, kBlock / 2, 1, 0, stream, x, w, b, y, mean, rstd, rows, cols, eps, off0);
  }
  if constexpr (fwd_has_words4<T, kTPR, kVecs, kCS, kOdd>()) {
    constexpr auto words = fwd_reg<T, W, kCenter, kTPR, kVecs, 1, false, FwdRead::kWords>;
    if (fwd_words4_on<kCenter>() && blocks > resident<late>(kBlock, 1, dev)) return run(words);
  }
  run(late);
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
  const int forced = forced_row<V>(kFwdConfigs, packs, ft, fv);
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
      if constexpr (!r.for_v(V)) {
        throw std::logic_error("opbench norm: a forward table row for other types picked");  // pick skips them
      } else if (odd) {
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

}  // namespace gpu
}  // namespace norm_core
