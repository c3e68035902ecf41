// layer_norm's GPU kernels for __half (norm_common's engine with kCenter = true), parameters in __half or float.
#include "norm_common/norm_launch.cuh"

NORM_INSTANTIATE(__half, __half, true)
NORM_INSTANTIATE(__half, float, true)
