// layer_norm's GPU kernels for float (norm_common's engine with kCenter = true), parameters in float.
#include "norm_common/norm_launch.cuh"

NORM_INSTANTIATE(float, float, true)
