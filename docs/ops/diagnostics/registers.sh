#!/usr/bin/env bash
# Registers and stack frame of every lerp CUDA kernel, from ptxas (needs nvcc; no GPU):
#   bash docs/ops/diagnostics/registers.sh [ARCH] [GREP-PATTERN]   (defaults: sm_90, all kernels)
# instantiate.cu instantiates the host entry points for the four dtypes, hence every kernel.
set -euo pipefail
arch=${1:-sm_90}
pat=${2:-.}
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nvcc -std=c++17 -O3 -arch="$arch" -I "$here/../../../ops/csrc/lerp" -cubin -Xptxas -v \
  "$here/instantiate.cu" -o "$tmp/k.cubin" 2>"$tmp/ptxas.log"
awk '/Compiling entry function/ { match($0, /_ZN9lerp_core3gpu[0-9]+[^'"'"']*/); name = substr($0, RSTART, RLENGTH)
                                  sub(/^_ZN9lerp_core3gpu[0-9]+/, "", name) }
     /bytes stack frame/ { stack = $5 }
     /Used [0-9]+ registers/ { print $5, "regs", stack, "stack", name }' "$tmp/ptxas.log" | grep -E "$pat" | sort -k5
