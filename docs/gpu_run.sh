#!/usr/bin/env bash
# Runs the suite's GPU checks and benchmarks on a CUDA machine and leaves every output under OUTDIR.
#
#   bash docs/gpu_run.sh OUTDIR tests|lerp|lerp-host|validate|paddle-check ...
#
# tests:        the gpu-marked tests (builds the torch extension first), TEST_WORKERS processes at once (default 4);
#               TEST_PATHS, TEST_K (a pytest -k expression) and BUILD_EXT narrow them (TEST_PATHS=tests/ops/test_lerp_gpu.py
#               BUILD_EXT=lerp; TEST_K="off or same_bits" for the reruns in fresh processes with a knob off)
# main:         the README's main command timed from an empty extension cache and again warm (main_command.md;
#               MAIN_RUNS=warm for the warm run alone)
# lerp:         the lerp suite's table of record (torch, torch-compile, torch-ops; fwd, bwd, fwd+bwd) and its PR section
# norms:        the rms_norm and layer_norm suites against torch, torch.compile and Liger-Kernel, and their report; this
#               and sweep time a device copy of each case's bytes beside it (--copy-floor, the tables' copy ceilings);
#               both fill torch.compile's caches first (warm_compile)
# sweep:        the seeded sweeps (SWEEPS=lerp by default; SWEEPS="rms_norm layer_norm" for the norms) against torch, torch.compile (and
#               Liger for the norms), each with its report; SWEEP_BUDGET ms of sampling per case (default 100); torch.compile's
#               caches are filled first by 8 processes at once (warm_compile)
# lerp-host:    the same backward and fwd+bwd with --method host (launch latency and gaps included)
# core:         the perf-core suite (matmul, softmax, layer_norm, elementwise, reductions) on PyTorch
# validate:     op_benchmark, accuracy and tools validation scripts
# verdicts:     accuracy verdicts: false failures and planted defects on the GPU (docs/accuracy/verdicts.py)
# ray-scaling:  accuracy on Ray, 1 vs 2 GPU actors, >= 400 cases (docs/ray_scaling.py; needs 2 GPUs and the ray extra)
# compare-aa:   six consecutive lerp-suite runs of one build, paired: compare's false alarms and power, each pair alone
#               and with the next in the other order (compare --again) (AA_ARGS: extra bench options to validate, e.g.
#               AA_ARGS="--precision 0.5", or "--rounds 1" as the ab step times)
# tools:        each `opbench tools` command once, figures as JSON (clocks are only read)
# ab:           one build against another on this machine: the working tree's extensions against those of AB_BASE
#               (a `git archive` tarball, default .ab/base.tgz: mkdir -p .ab && git archive REV | gzip >.ab/base.tgz;
#               carry .ab to the GPU host), built side by side (BUILD_EXT narrows them), then AB_CASES (default:
#               the norm sweeps, suites and norm-paths; suite names or case files) with --providers torch-ops on
#               AB_DEVICE (default gpu) in AB_DIRECTIONS (default fwd,bwd), base first, and opbench compare base
#               new (ab_compare.md; a slowdown does not fail the step); AB_ORDERS=2 times them again new first
#               (ab_new2, ab_base2) and keeps only the verdicts both orders give (compare --again); AB_WORK
#               (default /tmp/opbench_ab) holds the base tree and both builds' caches
# paddle-check: compile-checks the Paddle CUDA bindings (lerp, rms_norm, layer_norm) against Paddle's headers in .paddle_include/inc.tgz
#               (the framework-free cores they call, <op>_<dtype>.cu and the norms' <op>_<dtype>_fwd/_bwd.cu, are the torch build's too), made
#               where Paddle is installed: tar czf .paddle_include/inc.tgz -C "$(python -c 'import paddle,os;print(os.path.dirname(paddle.__file__))')" include
# Each step logs to OUTDIR/<step>.log; a failing step does not stop the others; the exit status is the
# number of failed steps. PACK=1 packs OUTDIR into OUTDIR.tgz at the end and removes it (one file to copy back
# from a remote host). Clocks and device settings are only read, never changed.
set -uo pipefail
out=${1:?usage: gpu_run.sh OUTDIR STEP...}
shift
mkdir -p "$out"
export PYTHONPATH=. PYTHONUNBUFFERED=1
failed=0

# The gpu-marked tests in TEST_WORKERS processes at once (pytest-xdist, default 4; 0: one process), then the
# `serial` ones (they time kernels) alone; the log lists the 20 slowest. TEST_PATHS narrows the tests (default
# tests; e.g. tests/ops/test_lerp_gpu.py), TEST_K selects them by name (pytest -k) and BUILD_EXT names the
# extension built first (lerp or norm; default both).
step_tests() {
  local workers=${TEST_WORKERS:-4} paths
  read -ra paths <<<"${TEST_PATHS:-tests}"
  [ -n "${TEST_K:-}" ] && paths+=(-k "$TEST_K")
  [ "$workers" -gt 0 ] && ! with_wheels xdist pytest_xdist execnet && workers=0
  python -m opbench ops build --framework torch --device gpu ${BUILD_EXT:+--ext "$BUILD_EXT"} || return 1
  if [ "$workers" -gt 0 ]; then
    python -m pytest -q -m "gpu and not serial" -n "$workers" --durations=20 "${paths[@]}" -p no:cacheprovider &&
      { python -m pytest -q -m "gpu and serial" "${paths[@]}" -p no:cacheprovider || [ $? -eq 5 ]; }  # 5: none selected
  else
    python -m pytest -q -m gpu --durations=20 "${paths[@]}" -p no:cacheprovider
  fi
}

step_main() {
  cp docs/op_benchmark/main_command.md "$out/main_command.md" 2>/dev/null
  python docs/op_benchmark/main_command.py --runs "${MAIN_RUNS:-cold,warm}" --doc "$out/main_command.md"
}

step_lerp() {
  python -m opbench bench lerp --providers torch,torch-compile,torch-ops --directions fwd,bwd,fwd+bwd \
    --method events --json "$out/lerp.json" --markdown "$out/lerp.md" --no-progress &&
    python -m opbench report "$out/lerp.json" --markdown "$out/lerp_report.md" --png "$out/lerp_speedups.png"
}

# Packages the GPU host lacks travel as wheels in .whl/ (it has no network), made with
#   pip download liger-kernel==0.8.5 pytest-xdist==3.8.0 execnet==2.1.2 --no-deps -d .whl
# with_wheels MODULE NAME...: MODULE importable, installing the wheels NAME-*.whl under /tmp/site if it is not.
with_wheels() {
  local mod=$1 name wheels=()
  shift
  python -c "import $mod" 2>/dev/null && return 0
  for name in "$@"; do wheels+=(.whl/"$name"-*.whl); done
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    "${wheels[@]}" && export PYTHONPATH=$PYTHONPATH:/tmp/site && python -c "import $mod"
}

with_liger() { with_wheels liger_kernel liger_kernel; }

step_norms() {
  with_liger || return 1
  warm_compile rms_norm && warm_compile layer_norm
  python -m opbench bench rms_norm layer_norm --providers torch,torch-compile,liger,torch-ops --directions fwd,bwd \
      --method events --copy-floor --json "$out/norms.json" --no-progress >"$out/norms_table.md" &&
    python -m opbench report "$out/norms.json" --markdown "$out/norms.md"
}

# Fills torch.compile's on-disk caches for a suite's cases in 8 processes at once (a sweep run compiles each
# case's graphs one after another otherwise: most of its time); the timed run then finds them compiled.
warm_compile() {
  local d=/tmp/warm_$1 f
  rm -rf "$d" && mkdir -p "$d"
  python -m opbench cases "$1" --device gpu 2>/dev/null | sed 's/^[^]]*\] //' >"$d/all.txt"
  split -n r/8 "$d/all.txt" "$d/shard_"
  for f in "$d"/shard_*; do
    mv "$f" "$f.txt"
    python -m opbench bench "$f.txt" --providers torch-compile --directions fwd,bwd --rounds 1 --budget 1 \
      --min-samples 1 --warmup 0 --no-progress >/dev/null 2>&1 &
  done
  wait
}

step_sweep() {
  local op providers t0
  for op in ${SWEEPS:-lerp}; do
    providers=torch,torch-compile,torch-ops
    [ "$op" = lerp ] || { with_liger && providers=torch,torch-compile,liger,torch-ops; }
    t0=$(date +%s)
    warm_compile "$op-sweep"
    echo "sweep $op: torch.compile's caches filled in $(($(date +%s) - t0)) s"
    # a record that failed (an anchor's compile error, say) is in the JSON: the reports are made all the same
    python -m opbench bench "$op-sweep" --providers $providers --directions fwd,bwd --rounds 1 \
      --budget "${SWEEP_BUDGET:-100}" --method events --copy-floor --json "$out/sweep_$op.json" --no-progress >"$out/sweep_${op}_table.md"
    [ -s "$out/sweep_$op.json" ] && python -m opbench report "$out/sweep_$op.json" --markdown "$out/sweep_$op.md" &&
      python docs/ops/sweep_doc.py "$out/sweep_$op.json" --out "$out/sweep_${op}_doc.md" || return 1
    echo "sweep $op: done at $(($(date +%s) - t0)) s"
  done
}

step_lerp-host() {
  python -m opbench bench lerp --providers torch,torch-compile,torch-ops --directions bwd,fwd+bwd \
    --method host --json "$out/lerp_host.json" --markdown "$out/lerp_host.md" --no-progress
}

step_core() {
  python -m opbench bench perf-core --providers torch --directions fwd,bwd --method events \
    --json "$out/core.json" --markdown "$out/core.md" --no-progress
}

step_validate() {
  local rc=0
  python docs/op_benchmark/validate.py --out "$out/op_benchmark" || rc=1
  python docs/accuracy/overhead.py --out "$out/accuracy" || rc=1
  python docs/tools/validate.py --out "$out/tools" || rc=1
  return $rc
}

step_verdicts() {
  python docs/accuracy/verdicts.py --device gpu --out "$out/verdicts_gpu.md"
}

step_ray-scaling() {
  python docs/ray_scaling.py --out "$out/ray_scaling.md" --work "$out/ray_scaling"
}

step_compare-aa() {
  local runs=()
  for i in 1 2 3 4 5 6; do
    # shellcheck disable=SC2086  # AA_ARGS: extra bench options to validate (e.g. --precision 0.5)
    python -m opbench bench lerp --providers torch,torch-ops --directions fwd,bwd --method events ${AA_ARGS:-} \
      --json "/tmp/aa_run$i.json" --no-progress >/dev/null || return 1
    runs+=("/tmp/aa_run$i.json")
  done
  tar czf "$out/aa_runs.tgz" -C /tmp "${runs[@]#/tmp/}"
  python docs/op_benchmark/compare_validation.py "${runs[@]}" --out "$out/compare_validation.md"
}

step_tools() {
  python -m opbench tools clocks --json "$out/tools_clocks.json" &&
    python -m opbench tools timing-pitfalls --json "$out/tools_timing_pitfalls.json" &&
    python -m opbench tools transfer --json "$out/tools_transfer.json" --png "$out/tools_transfer.png" &&
    python -m opbench tools transfer --preset offload --json "$out/tools_offload.json" &&
    python -m opbench tools overlap --json "$out/tools_overlap.json"
}

step_ab() {
  local tgz=${AB_BASE:-.ab/base.tgz} dev=${AB_DEVICE:-gpu} tree run c rc o work base
  o=$(realpath -m "$out") work=$(realpath -m "${AB_WORK:-/tmp/opbench_ab}")  # absolute: the base runs elsewhere
  base=$work/base
  local cases=() runs=(base new) again=()
  case ${AB_ORDERS:-1} in
  1) ;;
  2) runs+=(new2 base2) again=(--again "$o/ab_base2.json" "$o/ab_new2.json") ;;
  *) echo "ab: AB_ORDERS must be 1 or 2, not '$AB_ORDERS'"; return 1 ;;
  esac
  [ -f "$tgz" ] || { echo "ab: no base tarball $tgz (git archive REV | gzip >$tgz)"; return 1; }
  rm -rf "$base" && mkdir -p "$base" && tar xzf "$tgz" -C "$base" || return 1
  for c in ${AB_CASES:-rms_norm-sweep layer_norm-sweep rms_norm layer_norm norm-paths}; do  # case files by absolute path
    if [ -f "$c" ]; then cases+=("$(realpath "$c")"); else cases+=("$c"); fi
  done
  local -A pid
  for tree in base new; do  # each tree's build in its own cache, both at once
    (if [ $tree = base ]; then cd "$base"; fi
      OPBENCH_CACHE_DIR=$work/cache_$tree python -m opbench ops build --framework torch --device "$dev" \
        ${BUILD_EXT:+--ext "$BUILD_EXT"} >"$o/ab_build_$tree.log" 2>&1) &
    pid[$tree]=$!
  done
  for tree in base new; do
    wait "${pid[$tree]}" || { echo "ab: the $tree build failed: $o/ab_build_$tree.log"; return 1; }
  done
  for run in "${runs[@]}"; do  # exit 1 (records that failed) still writes the JSON, and compare shows them
    tree=${run%2}
    (if [ $tree = base ]; then cd "$base"; fi
      OPBENCH_CACHE_DIR=$work/cache_$tree python -m opbench bench "${cases[@]}" --providers torch-ops \
        --directions "${AB_DIRECTIONS:-fwd,bwd}" --device "$dev" --rounds 1 --no-progress --json "$o/ab_$run.json" \
        >"$o/ab_$run.md" 2>&1)
    rc=$?
    [ "$rc" -le 1 ] && [ -s "$o/ab_$run.json" ] || { echo "ab: the $run bench failed: $o/ab_$run.md"; return 1; }
  done
  python -m opbench compare "$o/ab_base.json" "$o/ab_new.json" "${again[@]}" --markdown "$o/ab_compare.md" \
    --fail-on-slower 100 >/dev/null
  rc=$?
  [ "$rc" -le 1 ] && tail -n 12 "$o/ab_compare.md"
}

step_paddle-check() {
  local p=/tmp/paddle_include
  mkdir -p $p && tar xzf .paddle_include/inc.tgz -C $p --strip-components=1 || return 1
  local cui op
  cui=$(python -c "import nvidia,os,glob; print(' '.join('-I'+d for p in nvidia.__path__ for d in glob.glob(os.path.join(p,'*','include'))))")
  for op in lerp rms_norm layer_norm; do  # each op's Paddle CUDA file; includes resolve in its folder or ops/csrc
    # shellcheck disable=SC2086
    nvcc -c -std=c++17 -DPADDLE_WITH_CUDA -DEIGEN_USE_GPU -DPADDLE_NO_PYTHON --expt-relaxed-constexpr \
      -gencode arch=compute_90,code=sm_90 -I$p -I$p/third_party -I$p/paddle/phi/api/include/compat \
      -I$p/paddle/phi/api/include/compat/torch/csrc/api/include -Iops/csrc -Iops/csrc/$op \
      -I"$(python -c "import sysconfig; print(sysconfig.get_paths()['include'])")" $cui \
      "ops/csrc/$op/paddle_$op.cu" -o "/tmp/paddle_$op.o" &&
      echo "paddle_$op.cu compiled against Paddle's headers: $(stat -c %s "/tmp/paddle_$op.o") bytes" || return 1
  done
}

for s in "$@"; do  # every step named exists before any runs
  declare -F "step_$s" >/dev/null || {
    echo "gpu_run.sh: no step '$s' (steps: $(declare -F | sed -n 's/^declare -f step_//p' | paste -sd' '))" >&2
    exit 2
  }
done

{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem --format=csv
  python -m opbench env
} >"$out/env.log" 2>&1

for s in "$@"; do
  start=$(date +%s)
  if "step_$s" >"$out/$s.log" 2>&1; then status=ok; else status=FAILED; failed=$((failed + 1)); fi
  echo "$s: $status ($(($(date +%s) - start)) s)" | tee -a "$out/steps.log"
done
if [ -n "${PACK:-}" ]; then
  tar czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")" && rm -rf "$out"
fi
exit $failed
