// Programmatic dependent launch (sm_90+) for the ops' second kernels (a backward's finalize of partial sums, the
// split backward's dx pass, col_pass): such a kernel is launched so that the GPU may start it as the blocks of the
// stream's kernel before it exit, before that kernel's completion has been processed, and it waits for that
// kernel's memory at grid_dep_wait(): the launch, and what the kernel does before the wait (its reads of the
// op's inputs), overlap the gap between the two kernels instead of following it. The kernel before needs no
// change: its blocks let the next kernel in as they exit. Letting it in earlier, with
// griddepcontrol.launch_dependents first thing in every block of the kernel before, ran 10 of the 97 backwards
// the dependent launches moved slower, among them three layer_norm ones whose second grid is smaller than a wave
// by 13-18%, and 2 faster, by 3-4% (H200, figures in docs/ops/norms-design.md). grid_dep_wait is a no-op before
// sm_90 and where the kernel was launched plainly, so the kernels are the same code either way; OPS_PDL=0
// launches every kernel plainly (read once; for experiments). LaunchConfig, below, is the one configuration of
// the ops' cudaLaunchKernelEx launches, the norms' clusters too.
#pragma once

#include <cuda_runtime.h>

#include "common/env_knob.h"

namespace opcore {
namespace gpu {

// Waits until the stream's previous kernel has finished and its writes are visible. A kernel launched with
// launch_after calls it in every block, before it reads anything that kernel wrote and before it writes
// anything, so that nothing after it in the stream can pass the kernel before.
__device__ __forceinline__ void grid_dep_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

}  // namespace gpu

// Whether launch_after overlaps kernels on the current device: sm_90+, OPS_PDL not 0, and, before CUDA 12.3
// (which made programmatic dependencies graph edges), the stream not capturing a graph.
inline bool dependent_launch_on(cudaStream_t stream) {
  static const bool on = env_int("OPS_PDL", 1) != 0;
  if (!on) return false;
  constexpr int kDevices = 64;
  static int major[kDevices] = {};  // 0: not asked yet (a benign race: every writer writes the same)
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  int m = dev < kDevices ? major[dev] : 0;
  if (m == 0) {
    if (cudaDeviceGetAttribute(&m, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    if (dev < kDevices) major[dev] = m;
  }
  if (m < 9) return false;
#if CUDART_VERSION < 12030
  cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &cap) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  if (cap != cudaStreamCaptureStatusNone) return false;
#else
  (void)stream;
#endif
  return true;
}

// A launch configuration for cudaLaunchKernelEx: `grid` blocks of `block` threads with `smem` bytes of dynamic
// shared memory on `stream`, in clusters of `cs` blocks where cs > 1, and as a dependent launch where `dependent`
// (the kernel calls gpu::grid_dep_wait(), above). Not copyable: the config points at the attributes beside it.
struct LaunchConfig {
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[2] = {};
  LaunchConfig(dim3 grid, dim3 block, size_t smem, cudaStream_t stream, int cs, bool dependent) {
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    unsigned n = 0;
    if (cs > 1) {
      attr[n].id = cudaLaunchAttributeClusterDimension;
      attr[n].val.clusterDim.x = cs;
      attr[n].val.clusterDim.y = 1;
      attr[n].val.clusterDim.z = 1;
      ++n;
    }
    if (dependent) {
      attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attr[n].val.programmaticStreamSerializationAllowed = 1;
      ++n;
    }
    cfg.attrs = attr;
    cfg.numAttrs = n;
  }
  LaunchConfig(const LaunchConfig&) = delete;
  LaunchConfig& operator=(const LaunchConfig&) = delete;
};

// Launches kernel(args...) as LaunchConfig describes, a dependent launch where dependent_launch_on(stream).
// Returns the launch's error.
template <typename... P, typename... A>
cudaError_t launch_after(void (*kernel)(P...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream, int cs,
                         A... args) {
  const LaunchConfig lc(grid, block, smem, stream, cs, dependent_launch_on(stream));
  return cudaLaunchKernelEx(&lc.cfg, kernel, static_cast<P>(args)...);
}

}  // namespace opcore
