// Instantiates the lerp core's host entry points for float, double, __half and __nv_bfloat16, and so every
// kernel, for registers.sh (ptxas register and stack figures without a GPU).
#include "lerp.cuh"
using namespace lerp_core;
template <typename T> void inst() {
  gpu::lerp_forward<T>(nullptr, nullptr, nullptr, 0.5, nullptr, {2}, {2}, {}, 0);
  gpu::lerp_backward<T>(nullptr, nullptr, nullptr, nullptr, 0.5, nullptr, nullptr, nullptr, {2}, {2}, {}, gpu::Alloc(), 0);
  gpu::lerp_forward_save_diff<T>(nullptr, nullptr, nullptr, nullptr, nullptr, 0, 0);
  gpu::lerp_backward_from_diff<T>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0, 0);
}
template void inst<float>(); template void inst<double>(); template void inst<__half>(); template void inst<__nv_bfloat16>();
