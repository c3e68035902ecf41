// CPU core of lerp, forward and backward (framework-free): multi-threaded (std::thread, see
// common/cpu_parallel.h), vectorized by the compiler on tiles of float (double for double) values;
// with AVX2 and F16C, fp16/bf16 are converted eight at a time (F16C; integer rounding for bf16) and
// their contiguous runs are computed in registers, without the tile buffers.
//
// The same algorithms as the CUDA core: the stable lerp form, fp16/bf16 computed in float, each
// gradient term computed in float (double for double) and reduced to its input's shape in double.
// Pointers are raw, tensors contiguous; a null weight pointer means "the scalar weight w_scalar".
//
// Paths, and where each lives:
//   lerp_cpu_types.h   fp16/bf16 storage types and conversions
//   lerp_cpu_tiles.h   runs along the innermost dim, tile loads and stores, the fused fp16/bf16 forward
//   lerp_cpu_fwd.h     forward with any broadcast (threads split the output);
//                      the training forward that saves y - x (x, y of the output's shape)
//   lerp_cpu_bwd.h     backward: full-shape gradients in one fused pass over dout; each broadcast
//                      input's gradient by rows (innermost dim reduced) or by columns (innermost dim
//                      kept), in fixed chunks so the bits do not depend on the thread count;
//                      the saved-diff backward (x, y of the output's shape)
#pragma once

#include "lerp_cpu_types.h"
#include "lerp_cpu_tiles.h"
#include "lerp_cpu_fwd.h"
#include "lerp_cpu_bwd.h"
