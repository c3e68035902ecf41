// CUDA core of lerp forward and backward (framework-free, header-only).
//
// Element types: float, double, __half, __nv_bfloat16 (the last two computed
// in float). Accumulation in float (double for double). Tensors contiguous,
// raw pointers, every launch on the caller's stream, 256-thread blocks.
// Paths, chosen on the host from the shapes (docs/ops/lerp-design.md):
//   contig    : x, y (and a full weight) have the output's shape; the weight
//               is an attribute or a one-element tensor read once. One fused
//               pass, 128-bit loads/stores when aligned, scalar tail; 1, 2 or
//               4 packs per thread (one wave for small tensors).
//   bcast fwd : forward with broadcasting. Up to 4 collapsed dims and 32-bit
//               offsets (nd): the dims count compiled in, one unrolled index
//               decomposition per pack, 1-4 packs per thread; otherwise one
//               pack per thread with a runtime-dims decomposition.
//   rows      : backward, one gradient summed over contiguous rows of dout
//               (x [16,1,1,1] vs y [16,3,224,224]; a one-element weight's
//               gradient), the weight constant along a row: one pass, the
//               last block of a row sums the row's partials (no second
//               launch).
//   cols      : backward, one gradient summed down the rows of contiguous
//               columns (x [3,224,224] vs y [16,3,224,224]; w [768] vs
//               [2048,768]): lanes per column pack, shuffle sums; one pass
//               over at most 64 rows (cols_kernel), else row slices with
//               as many row lanes as fill a block, summed in shared memory,
//               whose column sums a chunked finalize launch adds
//               (cols_sliced_kernel); also dout [O, K, G] with a short
//               inner run G summed, G adjacent columns a target
//               (w [1,1,5246,1] vs [9,2,5246,31]); also a full-size weight
//               with dw written on the way (y [1,4,173] vs [94866,4,173]
//               with w full size).
//   small     : backward of at most 2^19 positions with reduced gradients of
//               at most 4096 positions an element: one launch; a group of
//               lanes (or a block) per reduced element sums its positions and
//               meets in a shuffle tree; the groups of the gradient with the
//               most threads write the full-size gradients on the way.
//   tile2d    : backward whose output splits into [M rows, L columns] with each
//               of x, y, w full, per row, per column or one element (the
//               weight [R, 1] against [R, 90]; x [R, 1], y [1, C], w [R, 1]),
//               L within a tile (<= 1024 with a per-column gradient) and some
//               gradient summed along rows or down columns (or a small
//               problem), unless one reduced gradient fits rows or cols. Every
//               gradient in one pass: blocks take tiles of whole rows, stage
//               the reduced products in shared memory, write row sums
//               directly and keep column/whole sums per block; the last block
//               adds the blocks' partials (ticket), else one finalize launch.
//               Short rows of whole packs whose reduced gradients are all row
//               sums: a group of lanes a row, shuffle sums, no shared memory.
//   gen_r     : backward, any other layout whose reduced dims are innermost.
//               One block per (kept index, slice of the reduced range) reduces
//               in registers + shared memory; full-size outputs written on the
//               way.
//   gen_k     : backward, any other layout whose kept dims are innermost.
//               One thread per (kept pack, slice of the reduced range), or
//               several per kept pack when there are few or the reduced range
//               is short (then no slices); may also sum a second reduced
//               gradient that is constant per block (fusion).
// A reduction that needs more than one block per output element writes
// per-slice partials to a small workspace, summed in fixed order by one
// second tiny launch (finalize, both gradients at once) or, in rows and
// tile2d, by the last block (integer ticket counters). No float atomics.
//
// Files, one part each, included in this order (each builds on the one before):
//   lerp_device_common.cuh  conversions, packs, the stable lerp value
//   lerp_contig.cuh         contig kernels
//   lerp_general.cuh        broadcast forward (nd, runtime dims), gen_r, gen_k, finalize
//   lerp_rows_cols.cuh      rows and cols kernels
//   lerp_launch_fwd.cuh     host helpers, contig and broadcast-forward launches
//   lerp_tile2d.cuh         tile2d: the [M, L] view, kernel and launch
//   lerp_small.cuh          small: every gradient of a small problem in one launch
//   lerp_launch_rows_cols.cuh  rows and cols: whether a pass takes them, their launches
//   lerp_launch_bwd.cuh     backward path choice, gen_r and gen_k launches, the public entry points
// The entry points are declared in lerp_gpu.h, which is all the bindings include; lerp_f32.cu,
// lerp_f64.cu, lerp_f16.cu and lerp_bf16.cu compile them, one element type each (LERP_INSTANTIATE
// below), so a build compiles the four in parallel and a binding compiles no kernel.
#pragma once

#include "lerp_launch_bwd.cuh"

// The entry points of lerp_gpu.h for element type T, compiled where this is written (lerp_<dtype>.cu).
#define LERP_INSTANTIATE(T)                                                                                    \
  namespace lerp_core {                                                                                        \
  namespace gpu {                                                                                              \
  template void lerp_forward<T>(const T*, const T*, const T*, double, T*, const Shape&, const Shape&,          \
                                const Shape&, cudaStream_t);                                                   \
  template void lerp_backward<T>(const T*, const T*, const T*, const T*, double, T*, T*, T*, const Shape&,     \
                                 const Shape&, const Shape&, const Alloc&, cudaStream_t);                      \
  template void lerp_forward_save_diff<T>(const T*, const T*, const T*, T*, T*, const Shape&, const Shape&,    \
                                          cudaStream_t);                                                       \
  template void lerp_backward_from_diff<T>(const T*, const T*, const T*, T*, T*, T*, const Shape&, const Shape&, \
                                           const Alloc&, cudaStream_t);                                        \
  }                                                                                                            \
  }
