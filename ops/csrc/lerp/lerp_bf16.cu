// lerp's GPU entry points (lerp_gpu.h) for __nv_bfloat16: every kernel of that element type.
#include "lerp.cuh"

LERP_INSTANTIATE(__nv_bfloat16)
