// The norm engine's GPU entry points as the ops' headers and bindings see them: declarations only, so a
// binding compiles no kernel. The definitions are norm_launch.cuh's; each op's <op>_<dtype>_fwd.cu and
// _bwd.cu instantiate them for one element type and direction (NORM_INSTANTIATE_FWD/_BWD), so a build compiles
// them in parallel.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>

namespace norm_core {
namespace gpu {

// The caller's scratch allocator (a framework's caching allocator): bytes -> device pointer, valid until
// the caller's stream has run the launches that use it.
using Alloc = std::function<void*(size_t bytes)>;

// Normalizes rows of `cols` over the last dimension: kCenter (layer_norm) subtracts the mean and adds b;
// mean (kCenter) and rstd are saved in fp32 for the backward. w, b may be null.
template <typename T, typename W, bool kCenter>
void norm_forward(const T* x, const W* w, const W* b, T* y, float* mean, float* rstd, int64_t rows, int64_t cols,
                  float eps, cudaStream_t stream);

// dx, and dw/db (summed over rows in a fixed order) when not null.
template <typename T, typename W, bool kCenter>
void norm_backward(const T* dy, const T* x, const W* w, const float* mean, const float* rstd, T* dx, W* dw, W* db,
                   int64_t rows, int64_t cols, const Alloc& alloc, cudaStream_t stream);

}  // namespace gpu
}  // namespace norm_core
