// lerp's GPU entry points (lerp_gpu.h) for float: every kernel of that element type.
#include "lerp.cuh"

LERP_INSTANTIATE(float)
