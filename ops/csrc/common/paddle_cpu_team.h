// Included by each Paddle binding's CPU file: the kernels' threads run on Paddle's own OpenMP team
// (the binding is linked to Paddle's libiomp5, ops/build.py), as many as Paddle's OpenMP setting
// (OMP_NUM_THREADS, which Paddle sets to 1 on import unless given, or paddle.base.core.set_num_threads).
#pragma once

#include "common/cpu_parallel.h"

namespace oppaddle {

#ifdef _OPENMP
inline const bool kOnPaddleTeam = [] {
  opcore::set_framework_pool({opcore::openmp_run, opcore::openmp_threads});
  return true;
}();
#endif

}  // namespace oppaddle
