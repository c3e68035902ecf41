// rms_norm's GPU backward kernels for __half (norm_common's engine with kCenter = false),
// parameters in __half or float; the forward is rms_norm_f16_fwd.cu's, compiled beside it.
#include "norm_common/norm_launch.cuh"

NORM_INSTANTIATE_BWD(__half, __half, false)
NORM_INSTANTIATE_BWD(__half, float, false)
