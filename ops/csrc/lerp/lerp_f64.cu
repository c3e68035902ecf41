// lerp's GPU entry points (lerp_gpu.h) for double: every kernel of that element type.
#include "lerp.cuh"

LERP_INSTANTIATE(double)
