// Host side of the norm ops' CUDA core: path choice and launches (every launch on the caller's stream).
//
// Path choice, from the row length `cols` and alignment (all row tensors and the weight/bias 16-byte
// aligned and cols a multiple of the pack width V = 16 / sizeof(T)):
//   aligned, cols <= V * 32 * 8 (fwd) or V * 32 * 4 (bwd): fwd_reg/bwd_reg with a warp per row
//   aligned, longer rows up to V * 512 * 8 (fwd) or V * 256 * 8 (bwd): a block of 128-512 threads per row
//   odd lengths or unaligned views up to 8,192 (fwd) or 4,096 (bwd) elements: the same kernels with packs
//   of one element (the row still read once, into registers)
//   anything else (longer odd rows): fwd_loop/bwd_loop + cols_partial
// The backward's dw/db partial rows live in a workspace from the caller's allocator (fp32,
// [groups or row slices, cols]); finalize adds them in a fixed order.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include "norm_bwd.cuh"
#include "norm_fwd.cuh"

namespace norm_core {
namespace gpu {

using Alloc = std::function<void*(size_t bytes)>;

inline void check_launch(const char* what) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw std::runtime_error(std::string("opbench norm: ") + what + ": " + cudaGetErrorString(err));
}

inline bool aligned16(const void* p) { return p == nullptr || reinterpret_cast<uintptr_t>(p) % 16 == 0; }

struct RegConfig {
  int tpr, vecs;
};
// Tried in order: the first that covers the row's packs. 16-byte packs, then one-element packs.
constexpr RegConfig kFwdConfigs[] = {{32, 1}, {32, 2}, {32, 4}, {32, 8}, {128, 4}, {256, 4}, {512, 4}, {512, 8}};
constexpr RegConfig kBwdConfigs[] = {{32, 1}, {32, 2}, {32, 4}, {128, 4}, {256, 4}, {256, 8}};
constexpr RegConfig kFwdNarrow[] = {{32, 4}, {32, 8}, {128, 8}, {256, 8}, {512, 8}, {1024, 8}};
constexpr RegConfig kBwdNarrow[] = {{32, 4}, {32, 8}, {128, 8}, {256, 8}, {512, 8}};

// Index into the config table for packs of V elements, or -1 when none takes the row.
template <int V, size_t N>
int pick(const RegConfig (&table)[N], int64_t cols, bool aligned) {
  if (V > 1 && (!aligned || cols % V != 0)) return -1;
  const int64_t packs = cols / V;
  for (size_t i = 0; i < N; ++i) {
    if (static_cast<int64_t>(table[i].tpr) * table[i].vecs >= packs) return static_cast<int>(i);
  }
  return -1;
}

template <typename T, typename W, bool kCenter, int kTPR, int kVecs, int V = 16 / sizeof(T)>
void launch_fwd_reg(const T* x, const W* w, const W* b, T* y, float* mean, float* rstd, int64_t rows, int cols,
                    float eps, cudaStream_t stream) {
  constexpr int kBlock = kTPR < 128 ? 128 : kTPR, kRPB = kBlock / kTPR;
  const int64_t blocks = (rows + kRPB - 1) / kRPB;
  fwd_reg<T, W, kCenter, kTPR, kVecs, V><<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(
      x, w, b, y, mean, rstd, rows, cols, eps);
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
  const bool aligned = aligned16(x) && aligned16(y) && aligned16(w) && aligned16(b);
  const int c = static_cast<int>(cols);
  constexpr int V = 16 / sizeof(T);
  const int wide = cols == 0 ? -1 : pick<V>(kFwdConfigs, cols, aligned);
  const int narrow = wide >= 0 || cols == 0 ? -1 : pick<1>(kFwdNarrow, cols, aligned);
  switch (wide >= 0 ? wide : narrow >= 0 ? 100 + narrow : -1) {
    case 0: launch_fwd_reg<T, W, kCenter, 32, 1>(x, w, b, y, mean, rstd, rows, c, eps, stream); break;
    case 1: launch_fwd_reg<T, W, kCenter, 32, 2>(x, w, b, y, mean, rstd, rows, c, eps, stream); break;
    case 2: launch_fwd_reg<T, W, kCenter, 32, 4>(x, w, b, y, mean, rstd, rows, c, eps, stream); break;
    case 3: launch_fwd_reg<T, W, kCenter, 32, 8>(x, w, b, y, mean, rstd, rows, c, eps, stream); break;
    case 4: launch_fwd_reg<T, W, kCenter, 128, 4>(x, w, b, y, mean, rstd, rows, c, eps, stream); break;
    case 5: launch_fwd_reg<T, W, kCenter, 256, 4>(x, w, b, y, mean, rstd, rows, c, eps, stream); break;
    case 6: launch_fwd_reg<T, W, kCenter, 512, 4>(x, w, b, y, mean, rstd, rows, c, eps, stream); break;
    case 7: launch_fwd_reg<T, W, kCenter, 512, 8>(x, w, b, y, mean, rstd, rows, c, eps, stream); break;
    case 100: launch_fwd_reg<T, W, kCenter, 32, 4, 1>(x, w, b, y, mean, rstd, rows, c, eps, stream); break;
    case 101: launch_fwd_reg<T, W, kCenter, 32, 8, 1>(x, w, b, y, mean, rstd, rows, c, eps, stream); break;
    case 102: launch_fwd_reg<T, W, kCenter, 128, 8, 1>(x, w, b, y, mean, rstd, rows, c, eps, stream); break;
    case 103: launch_fwd_reg<T, W, kCenter, 256, 8, 1>(x, w, b, y, mean, rstd, rows, c, eps, stream); break;
    case 104: launch_fwd_reg<T, W, kCenter, 512, 8, 1>(x, w, b, y, mean, rstd, rows, c, eps, stream); break;
    case 105: launch_fwd_reg<T, W, kCenter, 1024, 8, 1>(x, w, b, y, mean, rstd, rows, c, eps, stream); break;
    default:
      fwd_loop<T, W, kCenter><<<static_cast<unsigned>(rows), loop_threads(cols), 0, stream>>>(x, w, b, y, mean, rstd,
                                                                                             rows, c, eps);
  }
  check_launch("forward");
}

inline int sm_count() {
  int dev = 0, sms = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  return std::max(sms, 1);
}

// Runs bwd_reg on a grid of at most one full wave of resident blocks; returns the partial rows written.
template <typename T, typename W, bool kCenter, int kTPR, int kVecs, int V = 16 / sizeof(T)>
int64_t launch_bwd_reg(const T* dy, const T* x, const W* w, const float* mean, const float* rstd, T* dx,
                       bool need_w, bool need_b, const Alloc& alloc, float** pw, float** pb, int64_t rows, int cols,
                       cudaStream_t stream) {
  constexpr int kBlock = kTPR < 128 ? 128 : kTPR, kRPB = kBlock / kTPR;
  auto kernel = bwd_reg<T, W, kCenter, kTPR, kVecs, V>;
  int per_sm = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kBlock, 0);
  const int64_t wave = static_cast<int64_t>(std::max(per_sm, 1)) * sm_count();
  const int64_t blocks = std::min<int64_t>((rows + kRPB - 1) / kRPB, wave);
  const int64_t parts = blocks;  // one partial row per block
  const size_t bytes = static_cast<size_t>(parts) * cols * sizeof(float);
  *pw = need_w ? static_cast<float*>(alloc(bytes)) : nullptr;
  *pb = need_b ? static_cast<float*>(alloc(bytes)) : nullptr;
  kernel<<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(dy, x, w, mean, rstd, dx, *pw, *pb, rows, cols);
  return parts;
}

// dx always; dw / db (sums over rows) when not null. Deterministic: no atomics, fixed summation order.
template <typename T, typename W, bool kCenter>
void norm_backward(const T* dy, const T* x, const W* w, const float* mean, const float* rstd, T* dx, W* dw, W* db,
                   int64_t rows, int64_t cols, const Alloc& alloc, cudaStream_t stream) {
  if (cols <= 0) return;
  if (cols > INT32_MAX) throw std::runtime_error("opbench norm: rows longer than 2^31 - 1 elements");
  const bool need_w = dw != nullptr, need_b = kCenter && db != nullptr;
  const bool aligned = aligned16(dy) && aligned16(x) && aligned16(dx) && aligned16(w);
  const int c = static_cast<int>(cols);
  float *pw = nullptr, *pb = nullptr;
  int64_t parts = 0;
  if (rows > 0) {
    constexpr int V = 16 / sizeof(T);
    const int wide = pick<V>(kBwdConfigs, cols, aligned);
    const int narrow = wide >= 0 ? -1 : pick<1>(kBwdNarrow, cols, aligned);
    switch (wide >= 0 ? wide : narrow >= 0 ? 100 + narrow : -1) {
#define NORM_BWD_REG(I, TPR, VECS, PACK)                                                                           \
  case I:                                                                                                          \
    parts = launch_bwd_reg<T, W, kCenter, TPR, VECS, PACK>(dy, x, w, mean, rstd, dx, need_w, need_b, alloc, &pw, &pb, \
                                                           rows, c, stream);                                       \
    break;
      NORM_BWD_REG(0, 32, 1, V)
      NORM_BWD_REG(1, 32, 2, V)
      NORM_BWD_REG(2, 32, 4, V)
      NORM_BWD_REG(3, 128, 4, V)
      NORM_BWD_REG(4, 256, 4, V)
      NORM_BWD_REG(5, 256, 8, V)
      NORM_BWD_REG(100, 32, 4, 1)
      NORM_BWD_REG(101, 32, 8, 1)
      NORM_BWD_REG(102, 128, 8, 1)
      NORM_BWD_REG(103, 256, 8, 1)
      NORM_BWD_REG(104, 512, 8, 1)
#undef NORM_BWD_REG
      default: {
        bwd_loop<T, W, kCenter><<<static_cast<unsigned>(rows), loop_threads(cols), 0, stream>>>(dy, x, w, mean, rstd,
                                                                                               dx, rows, c);
        if (need_w || need_b) {
          parts = (rows + kColsRowsPerSlice - 1) / kColsRowsPerSlice;
          const size_t bytes = static_cast<size_t>(parts) * cols * sizeof(float);
          pw = need_w ? static_cast<float*>(alloc(bytes)) : nullptr;
          pb = need_b ? static_cast<float*>(alloc(bytes)) : nullptr;
          const dim3 grid(static_cast<unsigned>((cols + 31) / 32), static_cast<unsigned>(parts));
          cols_partial<T, kCenter><<<grid, dim3(32, 8), 0, stream>>>(dy, x, mean, rstd, pw, pb, rows, c);
        }
      }
    }
    check_launch("backward");
  }
  if (need_w || need_b) {
    const dim3 grid(static_cast<unsigned>((cols + 31) / 32), 2);
    finalize<W><<<grid, dim3(32, 32), 0, stream>>>(pw, pb, dw, need_b ? db : nullptr, parts, c);
    check_launch("backward (dw/db)");
  }
}

}  // namespace gpu
}  // namespace norm_core
