// rms_norm's GPU forward kernels for float (norm_common's engine with kCenter = false),
// parameters in float; the backward is rms_norm_f32_bwd.cu's, compiled beside it.
#include "norm_common/norm_launch.cuh"

NORM_INSTANTIATE_FWD(float, float, false)
