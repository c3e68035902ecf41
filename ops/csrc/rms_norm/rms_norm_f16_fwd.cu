// rms_norm's GPU forward kernels for __half (norm_common's engine with kCenter = false),
// parameters in __half or float; the backward is rms_norm_f16_bwd.cu's, compiled beside it.
#include "norm_common/norm_launch.cuh"

NORM_INSTANTIATE_FWD(__half, __half, false)
NORM_INSTANTIATE_FWD(__half, float, false)
