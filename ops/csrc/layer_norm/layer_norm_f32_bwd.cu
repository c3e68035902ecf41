// layer_norm's GPU backward kernels for float (norm_common's engine with kCenter = true),
// parameters in float; the forward is layer_norm_f32_fwd.cu's, compiled beside it.
#include "norm_common/norm_launch.cuh"

NORM_INSTANTIATE_BWD(float, float, true)
