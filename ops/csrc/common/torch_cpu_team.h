// Included by each PyTorch binding's CPU file: the kernels' threads run on PyTorch's own OpenMP team (the
// binding is built with -fopenmp and linked to the libgomp in PyTorch's wheel, ops/build.py), as many as
// torch.get_num_threads(). A build without OpenMP keeps the core's own pool with that thread count.
#pragma once

#include <ATen/Parallel.h>

#include "common/cpu_parallel.h"

namespace opbench_torch_team {

inline const bool kOnTorchTeam = [] {
#ifdef _OPENMP
  opcore::set_framework_pool({opcore::openmp_run, [] { return at::get_num_threads(); }});
#else
  opcore::set_framework_pool({nullptr, [] { return at::get_num_threads(); }});
#endif
  return true;
}();

}  // namespace opbench_torch_team
