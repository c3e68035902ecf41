// layer_norm's GPU kernels for __nv_bfloat16 (norm_common's engine with kCenter = true), parameters in __nv_bfloat16 or float.
#include "norm_common/norm_launch.cuh"

NORM_INSTANTIATE(__nv_bfloat16, __nv_bfloat16, true)
NORM_INSTANTIATE(__nv_bfloat16, float, true)
