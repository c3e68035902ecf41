// lerp's GPU entry points (lerp_gpu.h) for __half: every kernel of that element type.
#include "lerp.cuh"

LERP_INSTANTIATE(__half)
