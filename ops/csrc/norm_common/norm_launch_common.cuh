// Launch helpers the norm ops' forward and backward host sides share (norm_launch_fwd.cuh, norm_launch.cuh):
// launch checks, the row tensors' common alignment, kernels compiled per cluster size and per table row, cluster
// launches, waves and resident blocks, the early reads of small grids, and the loop kernels' block size.
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
#include "norm_gpu.h"
#include "norm_tables.cuh"

namespace norm_core {
namespace gpu {

inline void check_launch_error(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw std::runtime_error(std::string("opbench norm: ") + what + ": " + cudaGetErrorString(err));
}
inline void check_launch(const char* what) { check_launch_error(cudaGetLastError(), what); }

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

// Launches kernel on `blocks` blocks of `threads` with `smem` bytes of dynamic shared memory, as clusters of
// `cs` blocks when cs > 1.
template <typename... P, typename... A>
void launch(void (*kernel)(P...), int64_t blocks, int threads, int cs, size_t smem, cudaStream_t stream,
            A... args) {
  if (cs == 1) {
    kernel<<<static_cast<unsigned>(blocks), threads, smem, stream>>>(args...);
    return;
  }
  const opcore::LaunchConfig lc(dim3(static_cast<unsigned>(blocks)), dim3(threads), smem, stream, cs, false);
  check_launch_error(cudaLaunchKernelEx(&lc.cfg, kernel, args...), "cluster launch");
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
  const opcore::LaunchConfig lc(dim3(static_cast<unsigned>(cs)), dim3(threads), smem, nullptr, cs, false);
  int clusters = 0;
  cudaOccupancyMaxActiveClusters(&clusters, kernel, &lc.cfg);
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
// forward's (fwd_has_early, norm_launch_fwd.cuh) without clusters, in blocks of up to kEarlyMaxThreads threads
// or of at most 32 values a thread. Early reads in grids of 2-4 blocks an SM wholly resident measured slower
// (figures in docs/ops/norms-design.md). NORM_EARLY=0 never does (read once; for experiments).
constexpr int64_t kEarlyBlocksPerSM = 1;
constexpr int kEarlyMaxThreads = 256;  // blocks up to this size read early at any values a thread
inline bool early_on() {
  static const bool on = opcore::env_int("NORM_EARLY", 1) != 0;
  return on;
}
// A grid of at most kEarlyBlocksPerSM blocks an SM (occupancy no limit).
inline bool small_grid(int64_t blocks, const DeviceInfo& dev) { return blocks <= kEarlyBlocksPerSM * dev.sms; }
// Early backward grids of at most kColRows rows make dw/db in col_sums blocks of their own; NORM_COLS=0 never
// (read once; for experiments).
inline bool cols_on() {
  static const bool on = opcore::env_int("NORM_COLS", 1) != 0;
  return on;
}

// Threads of a loop kernel's block (fwd_loop, bwd_loop): 128, doubled to 1,024 while a thread would take more than
// 8 elements.
inline int loop_threads(int64_t cols) {
  int t = 128;
  while (t < 1024 && static_cast<int64_t>(t) * 8 < cols) t *= 2;
  return t;
}

}  // namespace gpu
}  // namespace norm_core
