#!/usr/bin/env bash
# Registers and stack frame of every lerp CUDA kernel, from ptxas (needs nvcc; no GPU):
#   bash docs/ops/diagnostics/registers.sh [ARCH] [GREP-PATTERN]   (defaults: sm_90, all kernels)
# The translation unit below instantiates the host entry points for the four dtypes, hence every kernel.
set -euo pipefail
arch=${1:-sm_90}
pat=${2:-.}
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/instantiate.cu" <<'CU'
#include "lerp.cuh"
using namespace lerp_core;
template <typename T> void inst() {
  gpu::lerp_forward<T>(nullptr, nullptr, nullptr, 0.5, nullptr, {2}, {2}, {}, 0);
  gpu::lerp_backward<T>(nullptr, nullptr, nullptr, nullptr, 0.5, nullptr, nullptr, nullptr, {2}, {2}, {}, gpu::Alloc(), 0);
  gpu::lerp_forward_save_diff<T>(nullptr, nullptr, nullptr, nullptr, nullptr, 0, 0);
  gpu::lerp_backward_from_diff<T>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0, 0);
}
template void inst<float>(); template void inst<double>(); template void inst<__half>(); template void inst<__nv_bfloat16>();
CU
nvcc -std=c++17 -O3 -arch="$arch" -I "$here/../../../ops/csrc/lerp" -I "$here/../../../ops/csrc" -cubin -Xptxas -v \
  "$tmp/instantiate.cu" -o "$tmp/k.cubin" 2>"$tmp/ptxas.log"
awk '/Compiling entry function/ { match($0, /_ZN9lerp_core3gpu[0-9]+[^'"'"']*/); name = substr($0, RSTART, RLENGTH)
                                  sub(/^_ZN9lerp_core3gpu[0-9]+/, "", name) }
     /bytes stack frame/ { stack = $5 }
     /Used [0-9]+ registers/ { print $5, "regs", stack, "stack", name }' "$tmp/ptxas.log" | grep -E "$pat" | sort -k5
