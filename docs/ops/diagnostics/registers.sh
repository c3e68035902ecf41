#!/usr/bin/env bash
# Registers and stack frame (spills show there) of every CUDA kernel of an op family, from ptxas (needs nvcc;
# no GPU):
#   bash docs/ops/diagnostics/registers.sh [ARCH] [GREP-PATTERN] [OP]   (defaults: sm_90, all kernels, lerp)
# OP: lerp, or norms (rms_norm and layer_norm: norm_core's fwd_reg/bwd_reg<T, W, kCenter, threads per row,
# packs per thread, blocks per row, loose elements, then fwd: when the loads go out (FwdRead: 0 late, 1 prefetch,
# 2 batched, 3 early, 4 words); bwd: blocks an SM the shared-memory sums are held to (0: register sums), early parameter
# reads, dw/db sums (false: the dx pass)>, col_pass, the loop kernels and finalize). The translation unit below instantiates the host entry points
# (lerp.cuh's; norm_launch.cuh's engine) for every dtype, hence every kernel.
# SASS=DIR also writes the SASS of the kernels the pattern takes to DIR/<kernel>.sass with the number of live
# registers after each instruction (nvdisasm --print-life-ranges; nvdisasm from CUDA or the nvidia-cuda-nvdisasm
# wheel, NVDISASM=path where it is not on PATH), and DIR/summary.txt: each one's peak of live registers and its
# spill stores and loads (STL, LDL): where a kernel holds what it spills. (The norms take about 13 minutes on
# 2 CPU cores, most of it nvcc.)
set -euo pipefail
arch=${1:-sm_90}
pat=${2:-.}
op=${3:-lerp}
here=$(dirname "$0")
csrc="$here/../../../ops/csrc"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
case "$op" in
lerp)
  ns=9lerp_core
  cat >"$tmp/instantiate.cu" <<'CU'
#include "lerp.cuh"
using namespace lerp_core;
template <typename T> void inst() {
  gpu::lerp_forward<T>(nullptr, nullptr, nullptr, 0.5, nullptr, {2}, {2}, {}, 0);
  gpu::lerp_backward<T>(nullptr, nullptr, nullptr, nullptr, 0.5, nullptr, nullptr, nullptr, {2}, {2}, {}, gpu::Alloc(), 0);
  gpu::lerp_forward_save_diff<T>(nullptr, nullptr, nullptr, nullptr, nullptr, {2}, {2}, 0);
  gpu::lerp_backward_from_diff<T>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, {2}, {2}, gpu::Alloc(), 0);
}
template void inst<float>(); template void inst<double>(); template void inst<__half>(); template void inst<__nv_bfloat16>();
CU
  ;;
norms)
  ns=9norm_core
  cat >"$tmp/instantiate.cu" <<'CU'
#include "norm_common/norm_launch.cuh"
using namespace norm_core::gpu;
template <typename T, typename W> void inst() {
  norm_forward<T, W, false>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0, 0, 1e-6f, 0);
  norm_backward<T, W, false>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0, 0, Alloc(), 0);
  norm_forward<T, W, true>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0, 0, 1e-5f, 0);
  norm_backward<T, W, true>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0, 0, Alloc(), 0);
}
template void inst<float, float>(); template void inst<__half, __half>(); template void inst<__half, float>();
template void inst<__nv_bfloat16, __nv_bfloat16>(); template void inst<__nv_bfloat16, float>();
CU
  ;;
*)
  echo "registers.sh: unknown op '$op' (lerp or norms)" >&2
  exit 2
  ;;
esac
nvcc -std=c++17 -O3 -arch="$arch" -I "$csrc/lerp" -I "$csrc" -cubin -Xptxas -v "$tmp/instantiate.cu" -o "$tmp/k.cubin" \
  2>"$tmp/ptxas.log" || { tail -20 "$tmp/ptxas.log" >&2; exit 1; }
# lerp: names as mangled after the namespace (the patterns its design note quotes); norms: demangled where
# c++filt is present (their template arguments are the configuration).
demangle=cat
[ "$op" = norms ] && command -v c++filt >/dev/null && demangle=c++filt
# One line a kernel: registers, stack bytes, the name shown (see above), the full mangled symbol.
awk -v ns="$ns" -v op="$op" '/Compiling entry function/ { match($0, "_ZN" ns "3gpu[0-9]+[^'"'"']*"); full = substr($0, RSTART, RLENGTH)
                                  name = full; if (op == "lerp") sub("^_ZN" ns "3gpu[0-9]+", "", name) }
     /bytes stack frame/ { stack = $5 }
     /Used [0-9]+ registers/ { print $5, "regs", stack, "stack", name, full }' "$tmp/ptxas.log" >"$tmp/kernels.txt"
# The parameter list goes (the last parenthesis); casts in template arguments, as fwd_reg's
# (norm_core::gpu::FwdRead)4, stay.
cut -d' ' -f5 "$tmp/kernels.txt" | $demangle | sed -e 's/^void //' -e 's/([^()]*)$//' >"$tmp/shown.txt"
cut -d' ' -f6 "$tmp/kernels.txt" | paste -d'\t' "$tmp/shown.txt" - >"$tmp/named.tsv"
cut -d' ' -f1-4 "$tmp/kernels.txt" | paste -d' ' - "$tmp/shown.txt" | { grep -E -- "$pat" || true; } | sort -k5
[ -n "${SASS:-}" ] || exit 0
mkdir -p "$SASS"
"${NVDISASM:-nvdisasm}" -c -plr -lrm count "$tmp/k.cubin" >"$tmp/all.sass"
: >"$SASS/summary.txt"
# Each function's section of the disassembly, for the kernels whose shown name the pattern takes.
while IFS=$'\t' read -r name full; do
  echo "$name" | grep -qE -- "$pat" || continue
  awk -v f=".text.$full:" '$1 == f { on = 1; next } on && /^\.text\./ { exit } on' "$tmp/all.sass" >"$SASS/$full.sass"
  awk -v n="$name" '/\/\/ *\| *[0-9]+/ { match($0, /\/\/ *\| *[0-9]+/); c = substr($0, RSTART, RLENGTH); gsub(/[^0-9]/, "", c)
                       if (c + 0 > peak) peak = c + 0 }
                     / STL/ { stl++ } / LDL/ { ldl++ }
                     END { printf "%d live at most, %d STL, %d LDL: %s\n", peak, stl, ldl, n }' "$SASS/$full.sass" \
    >>"$SASS/summary.txt"
done <"$tmp/named.tsv"
cat "$SASS/summary.txt"
