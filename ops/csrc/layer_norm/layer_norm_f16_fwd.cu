// layer_norm's GPU forward kernels for __half (norm_common's engine with kCenter = true),
// parameters in __half or float; the backward is layer_norm_f16_bwd.cu's, compiled beside it.
#include "norm_common/norm_launch.cuh"

NORM_INSTANTIATE_FWD(__half, __half, true)
NORM_INSTANTIATE_FWD(__half, float, true)
