// rms_norm's GPU backward kernels for __nv_bfloat16 (norm_common's engine with kCenter = false),
// parameters in __nv_bfloat16 or float; the forward is rms_norm_bf16_fwd.cu's, compiled beside it.
#include "norm_common/norm_launch.cuh"

NORM_INSTANTIATE_BWD(__nv_bfloat16, __nv_bfloat16, false)
NORM_INSTANTIATE_BWD(__nv_bfloat16, float, false)
