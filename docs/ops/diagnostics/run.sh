#!/usr/bin/env bash
# Diagnostics behind lerp-design.md (and norm_*: norms-design.md), on a CUDA host with the torch
# extension buildable:
#   bash docs/ops/diagnostics/run.sh OUTDIR [SECTION ...]
# Sections (default: all): ncu timeline inductor knobs ncu_small nd sass rows tile2d small tiny slower cols_slices
# cols_groups cols_wfull rows_wave fwd_slower fwd_narrow fwd_narrow_train norm_small norm_one_row norm_long norm_small_fwd norm_odd_fwd norm_many_fwd norm_split
# norm_split_vec norm_fwd_reads norm_words norm_half norm_words4 norm_words_ln norm_fine norm_fwd_shapes norm_bwd_shapes norm_bwd_grid norm_bwd_one_row norm_part_clusters norm_dx_pass norm_mid_bwd
# norm_words_slower t2rows t2rows_narrow pdl (rows:
# the rows and cols kernels; tile2d, small: the backwards those paths take, with them and without them, against
# torch.compile; tiny: the tiny backwards with short rows (rows and gen_r) whole and sliced, slices summed by their
# last block and by a finalize launch; slower: the backwards lerp-design.md's known gaps list as running gen_r with
# one-element packs, kernels and ncu; cols_slices: the backwards the cols kernel takes in row slices, with and
# without them; cols_groups: the backwards over dout [O, K, G] the sliced cols kernel takes as G columns a target, and on gen_r; cols_wfull: the
# backwards with a full-size weight the cols kernels take, and on tile2d or gen_r; rows_wave: per-row weights'
# gradients over long rows, the rows kernel's slices within one wave and just past it (LERP_ROWS_OVER_WAVE);
# fwd_slower: the lerp sweep's broadcast forwards of 5 us and more below 0.95x of torch.compile, the kernels of
# each after the L2 flushes and ncu of ours and Inductor's; fwd_narrow: the sweep's forwards of no whole 16-byte
# packs but narrower ones, in those packs and as before; fwd_narrow_train: the same for f32 training forwards that
# save y - x, timed with their backwards;
# norm_small, norm_long: the small and the long-row norm backwards' kernels against torch.compile's; norm_one_row: the
# 1-row norm backwards with col_sums blocks and without, timed, their kernels and ncu; norm_small_fwd: the small norm
# forwards' kernels against Liger's and torch.compile's; norm_odd_fwd: the large layer_norm forwards of odd rows beside
# the same shapes in whole packs and rms_norm's odd rows, their kernels and ncu; norm_many_fwd: the many-row
# forwards that trail torch.compile at the copy's speed, their kernels against Inductor's, ncu, and ours under each
# block shape; norm_split: the split backward's cases with it and without;
# norm_split_vec: few long rows on the split backward, with and without its 16-byte accesses and with the share of L2
# it took before; norm_fwd_reads: the norm sweeps' forwards with and without prefetched parameters, batched loads,
# wide early reads, the early reads of 2-byte layer_norm rows of whole packs and rows staged in shared memory;
# norm_words: the 2-byte rms_norm forwards that hold x as words, with and without them, both orders; norm_half:
# the 2-byte rms_norm forwards past the 4-pack floats' wave at half the threads with x as words, and without;
# norm_words4: the norm forwards with x held as words at 128 and 256 x 4 (rms_norm's, the default; both ops') and without;
# norm_words_ln: layer_norm's forwards with x held as words where rms_norm's are (the default) and without (NORM_FWD_WORDS_LN=0);
# norm_fine: the norm forwards and backwards with and without the rungs for many waves (160 x 4, 384 x 4), both orders;
# norm_fwd_shapes, norm_bwd_shapes: the norm forward and backward under each block shape; norm_bwd_grid: the norm
# backwards with and without the table's rows for few and many rows; norm_bwd_one_row: the norm backwards with and
# without the one-row kernel; norm_part_clusters: the norm backwards with and without clusters adding the partial
# rows of grids of a few long rows a block; norm_dx_pass: the norm backwards with and without the dx pass and
# col_pass, and backwards without dw/db on the dx pass alone, without it and without its warps at 4 packs, and
# the mid-size backwards' kernels without it; norm_mid_bwd: the mid-size backwards PyTorch eager runs faster than
# ours, its kernels beside ours and torch.compile's, and ncu;
# norm_words_slower: the cases the 2-byte packs as words made slower, timed, with and without col_sums, and ncu;
# t2rows: the backwards of short rows with row sums alone (f16, bf16) and of the broadcast weights with the
# saved y - x, on tile2d's short-row kernel, its tiles, other grids and the other paths, their kernels against
# torch.compile's); t2rows_narrow: the backwards of short rows of no whole 16-byte packs on that kernel in narrower
# packs and on tile2d's tiles, and f32 training forwards with them; pdl: the norm and lerp backwards with their second
# kernels launched as dependent launches (the default) and plainly (OPS_PDL=0), both orders.
# BUILD_EXT=lerp (or norm) builds that extension alone first (default: the one the sections name, norm for the
# norm_* sections and lerp for the others; both where they name both, and for pdl). norm_small_fwd and
# norm_words_slower need Liger-Kernel importable (a PYTHONPATH given is kept: e.g. the wheel installed with
# pip --target DIR and PYTHONPATH=DIR).
# ncu runs with --clock-control none: clocks and device settings are only read, never changed.
# PACK=1 packs OUTDIR into OUTDIR.tgz at the end and removes it (one file to copy back from a remote host).
set -uo pipefail
out=${1:?usage: run.sh OUTDIR [SECTION ...] (sections: see the header)}
shift
sections=${*:-ncu timeline inductor knobs ncu_small nd sass rows tile2d small tiny slower cols_slices cols_groups cols_wfull rows_wave fwd_slower fwd_narrow fwd_narrow_train norm_small norm_one_row norm_long norm_small_fwd norm_odd_fwd norm_many_fwd norm_split norm_split_vec norm_fwd_reads norm_words norm_half norm_words4 norm_words_ln norm_fine norm_fwd_shapes norm_bwd_shapes norm_bwd_grid norm_bwd_one_row norm_part_clusters norm_dx_pass norm_mid_bwd norm_words_slower t2rows t2rows_narrow pdl}
mkdir -p "$out"
here=docs/ops/diagnostics
export PYTHONPATH=.:$here${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
if [ -z "${BUILD_EXT:-}" ]; then
  norm=0 other=0
  for s in $sections; do case $s in pdl) norm=1 other=1 ;; norm_*) norm=1 ;; *) other=1 ;; esac; done
  [ $norm = 1 ] && [ $other = 0 ] && BUILD_EXT=norm
  [ $norm = 0 ] && BUILD_EXT=lerp
fi
# PACK=1: OUTDIR packed into OUTDIR.tgz and removed, after the sections or after a failed build.
finish() {
  [ -n "${PACK:-}" ] && tar czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")" && rm -rf "$out" && out=$out.tgz
  echo "diagnostics in $out"
}
python -m opbench ops build --framework torch --device gpu ${BUILD_EXT:+--ext "$BUILD_EXT"} >"$out/build.log" 2>&1 ||
  { echo "run.sh: the build failed: $out/build.log"; finish; exit 1; }
CB='paddle.lerp(Tensor([16, 1, 1, 1],"float32"), Tensor([16, 3, 224, 224],"float32"), Tensor([3, 1, 224],"float32"))'
CB5='paddle.lerp(Tensor([16, 1, 1, 1],"float32"), Tensor([16, 3, 224, 224],"float32"), 0.5)'
C1='paddle.lerp(Tensor([16, 102400],"float32"), Tensor([16, 102400],"float32"), 0.2)'
C3='paddle.lerp(Tensor([3, 224, 224],"float32"), Tensor([16, 3, 224, 224],"float32"), 0.7)'
BF='paddle.lerp(Tensor([16, 3, 224, 224],"bfloat16"), Tensor([16, 3, 224, 224],"bfloat16"), Tensor([224],"bfloat16"))'
F16M='paddle.lerp(Tensor([64, 1, 128, 256],"float16"), Tensor([64, 32, 1, 256],"float16"), 0.3)'

# The backwards of the cases after `--` timed with events: torch.compile's (NAME_compile.md), then ours under
# each environment setting before `--` ("" for none): NAME_default.md, NAME_<VAR>_<value>.md. BUDGET: ms of
# sampling a case.
bwd_ab() {
  local name=$1 budget=$2 cfg tag cfgs=()
  shift 2
  while [ "$1" != -- ]; do cfgs+=("$1"); shift; done
  shift
  local opts=(--directions bwd --method events --rounds 1 --budget "$budget" --no-progress)
  python -m opbench bench "$@" --providers torch-compile "${opts[@]}" >"$out/${name}_compile.md" 2>&1
  for cfg in "${cfgs[@]}"; do
    tag=${cfg:-default}
    env ${cfg:+"$cfg"} python -m opbench bench "$@" --providers torch-ops "${opts[@]}" >"$out/${name}_${tag/=/_}.md" 2>&1
  done
}

# Our DIRECTION of the SUITES (one word, space-separated) timed with events as built (NAME_default.json/.md),
# then under each KNOB=VALUE after them (NAME_<KNOB>_<VALUE>.json/.md), each compared with the default
# (NAME_<KNOB>_<VALUE>_compare.md: the knob's run as base, so new/base is the default's time over the knob's).
# SUITE_ROUNDS: rounds of each run (default 1).
suite_ab() {
  local name=$1 direction=$2 suites=$3 cfg tag
  shift 3
  for cfg in "" "$@"; do
    tag=${name}_${cfg:-default}
    tag=${tag/=/_}
    # shellcheck disable=SC2086  # SUITES is a list of words
    env ${cfg:+"$cfg"} python -m opbench bench $suites --providers torch-ops --directions "$direction" \
      --method events --rounds "${SUITE_ROUNDS:-1}" --no-progress --json "$out/$tag.json" >"$out/$tag.md" 2>&1
    [ -n "$cfg" ] && python -m opbench compare "$out/$tag.json" "$out/${name}_default.json" >"$out/${tag}_compare.md" 2>&1
  done
  return 0
}

# A path switch's backwards timed (bwd_ab with no setting and each KNOB=VALUE before `--`) and profiled: the
# kernels each runs, torch.compile's and ours (NAME_timeline.log), then ours under each setting
# (NAME_timeline_<KNOB>_<VALUE>.log).
knob_ab() {
  local name=$1 budget=$2 cfg cfgs=()
  shift 2
  while [ "$1" != -- ]; do cfgs+=("$1"); shift; done
  shift
  bwd_ab "$name" "$budget" "" "${cfgs[@]}" -- "$@"
  python $here/diagnose.py timeline --providers torch-compile,torch-ops --directions bwd "$@" \
    >"$out/${name}_timeline.log" 2>&1
  for cfg in "${cfgs[@]}"; do
    env "$cfg" python $here/diagnose.py timeline --providers torch-ops --directions bwd "$@" \
      >"$out/${name}_timeline_${cfg/=/_}.log" 2>&1
  done
}

# ncu: our broadcast forward vs Triton's (speed of light, memory, occupancy, warp states)
section_ncu() {
  ncu --clock-control none --cache-control all --nvtx --nvtx-include "measure/" \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy \
    --section WarpStateStats python $here/diagnose.py ncu-target "$F16M|torch-ops|fwd" "$F16M|torch-compile|fwd" \
    "$CB|torch-ops|fwd" "$CB|torch-compile|fwd" >"$out/ncu.log" 2>&1
}

# where the event-timed microseconds go for a small case
section_timeline() { python $here/diagnose.py timeline "$C1" >"$out/timeline.log" 2>&1; }

# what torch.compile's training graph saves
section_inductor() { python $here/diagnose.py inductor >"$out/inductor_code.log" 2>&1; }

# the kernel-choice knobs (kernel time and event time)
section_knobs() {
  for m in kernel events; do
    python -m opbench bench "$CB" "$CB5" "$C3" "$BF" "$F16M" --providers torch-compile --directions fwd,bwd \
      --method $m --budget 200 --no-progress >"$out/compile_$m.md" 2>&1
    for w in 0 1 2 4; do
      LERP_SUBS_WAVES=$w python -m opbench bench "$C3" "$CB" --providers torch-ops --directions bwd \
        --method $m --budget 200 --no-progress >"$out/subs${w}_$m.md" 2>&1
    done
  done
}

# small broadcast forwards, ours vs Triton: instructions, active cycles, DRAM bytes, stall reasons per issue
section_ncu_small() {
  ncu --clock-control none --cache-control all --nvtx --nvtx-include "measure/" \
    --section SpeedOfLight --section Occupancy --section LaunchStats \
    --metrics "smsp__inst_executed.sum,sm__cycles_active.avg,dram__bytes_read.sum,dram__bytes_write.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
    python $here/diagnose.py ncu-target "$CB|torch-ops|fwd" "$CB|torch-compile|fwd" "$BF|torch-ops|fwd" \
    "$BF|torch-compile|fwd" "$F16M|torch-ops|fwd" "$F16M|torch-compile|fwd" \
    >"$out/ncu_small.log" 2>&1
}

# broadcast forwards: the compiled-dims kernel (LERP_FWD_ND=1, packs per thread chosen, or forced by
# LERP_PACKS) against the runtime-dims kernel (LERP_FWD_ND=0); kernel and event time. Also the
# [16,102400] backward's packs per thread and the broadcast backwards against torch.compile.
section_nd() {
  for m in kernel events; do
    python -m opbench bench "$CB" "$CB5" "$C3" "$BF" "$F16M" --providers torch-compile --directions fwd \
      --method $m --budget 200 --no-progress >"$out/nd_compile_$m.md" 2>&1
    LERP_FWD_ND=0 python -m opbench bench "$CB" "$CB5" "$C3" "$BF" "$F16M" --providers torch-ops \
      --directions fwd --method $m --budget 200 --no-progress >"$out/nd0_$m.md" 2>&1
    for u in 0 1 2 4; do
      LERP_PACKS=$u python -m opbench bench "$CB" "$CB5" "$C3" "$BF" "$F16M" --providers torch-ops \
        --directions fwd --method $m --budget 200 --no-progress >"$out/nd1_packs${u}_$m.md" 2>&1
      LERP_PACKS=$u python -m opbench bench "$C1" --providers torch-ops,torch-compile --directions bwd \
        --method $m --budget 200 --no-progress >"$out/c1bwd_packs${u}_$m.md" 2>&1
    done
    python -m opbench bench "$CB" "$C3" "$BF" "$F16M" --providers torch-ops,torch-compile --directions bwd \
      --method $m --budget 200 --no-progress >"$out/bcast_bwd_$m.md" 2>&1
  done
}

# SASS instruction counts of the broadcast forward kernels (cuobjdump)
section_sass() { python $here/diagnose.py sass fwd_nd fwd_bcast >"$out/sass_counts.txt" 2>&1; }

# the rows and cols backward kernels against what they replace (LERP_ROWS=0: gen_r; LERP_COLS=0: gen_k) and
# their knobs (LERP_ROW_COUNTERS=0: finalize launch instead of the last block's sums; LERP_ROWS_PACKS;
# LERP_COLS_SUBS), kernel time; torch and torch.compile in kernel and event time; timelines
section_rows() {
  local R1='paddle.lerp(Tensor([1],"float32"), Tensor([262144],"float32"), 0.3)'
  local C1W='paddle.lerp(Tensor([16, 102400],"float32"), Tensor([16, 102400],"float32"), Tensor([1],"float32"))'
  for m in kernel events; do
    python -m opbench bench "$CB5" "$R1" "$C1W" "$C3" --providers torch,torch-compile,torch-ops --directions bwd \
      --method $m --budget 200 --no-progress >"$out/rows_ref_$m.md" 2>&1
  done
  for knob in LERP_ROWS=0 LERP_ROW_COUNTERS=0 LERP_ROWS_PACKS=1 LERP_ROWS_PACKS=2 LERP_ROWS_PACKS=4; do
    env $knob python -m opbench bench "$CB5" "$R1" "$C1W" --providers torch-ops --directions bwd --method kernel \
      --budget 200 --no-progress >"$out/rows_${knob//=/}_kernel.md" 2>&1
  done
  for knob in LERP_COLS=0 LERP_COLS_SUBS=2 LERP_COLS_SUBS=4 LERP_COLS_SUBS=8 LERP_COLS_SUBS=16; do
    env $knob python -m opbench bench "$C3" --providers torch-ops --directions bwd --method kernel \
      --budget 200 --no-progress >"$out/rows_${knob//=/}_kernel.md" 2>&1
  done
  python $here/diagnose.py timeline "$CB5" "$C1W" "$C3" >"$out/rows_timeline.log" 2>&1
}

# A path switch's backwards with it on and off: KNOB=1 and KNOB=0 over CASES, torch.compile alongside, events
# with L2 flushed, into NAME_1.md and NAME_0.md; OPTS: more bench options.
path_ab() {
  local knob=$1 name=$2 opts=$3
  shift 3
  for v in 1 0; do
    # shellcheck disable=SC2086  # OPTS splits into options
    env "$knob=$v" python -m opbench bench "$@" --providers torch-compile,torch-ops --directions bwd \
      --method events --no-progress $opts >"$out/${name}_$v.md" 2>&1
  done
}

# the lerp-sweep backwards that take tile2d (lerp-design.md, path 5): LERP_TILE2D=0 sends them to the older
# paths; events with L2 flushed, torch.compile alongside
section_tile2d() {
  local T=(
    'paddle.lerp(Tensor([373993, 90],"float64"), Tensor([373993, 90],"float64"), Tensor([373993, 1],"float64"), )'
    'paddle.lerp(Tensor([2860, 1],"float32"), Tensor([2860, 39],"float32"), Tensor([2860, 39],"float32"), )'
    'paddle.lerp(Tensor([1, 155],"float32"), Tensor([831, 1],"float32"), Tensor([1, 155],"float32"), )'
    'paddle.lerp(Tensor([415, 1],"float64"), Tensor([1, 50],"float64"), Tensor([415, 1],"float64"), )'
    'paddle.lerp(Tensor([1141341, 10],"float32"), Tensor([1141341, 10],"float32"), Tensor([1, 10],"float32"), )'
  )
  path_ab LERP_TILE2D tile2d "" "${T[@]}"
}

# lerp-sweep backwards that take the small path (lerp-design.md, path 9): LERP_SMALL=0 sends them to the other
# paths; events with L2 flushed, torch.compile alongside
section_small() {
  local S=(
    'paddle.lerp(Tensor([12, 1],"float16"), Tensor([1, 345],"float16"), Tensor([12, 1],"float16"), )'
    'paddle.lerp(Tensor([42, 1, 2, 6],"float32"), Tensor([42, 755, 2, 1],"float32"), Tensor([1, 755, 2, 6],"float32"), )'
    'paddle.lerp(Tensor([1, 3, 13, 2],"float64"), Tensor([331, 1, 13, 2],"float64"), Tensor([331, 3, 1, 2],"float64"), )'
    'paddle.lerp(Tensor([2, 3, 32, 32],"float64"), Tensor([2, 3, 32, 32],"float64"), Tensor([1, 3, 32, 1],"float64"), )'
    'paddle.lerp(Tensor([1, 494, 1],"float16"), Tensor([35, 494, 2],"float16"), Tensor([35, 494, 2],"float16"), )'
    'paddle.lerp(Tensor([15, 2, 1, 2, 49],"float16"), Tensor([1, 2, 140, 2, 49],"float16"), Tensor([15, 1, 140, 2, 49],"float16"), )'
  )
  path_ab LERP_SMALL small "--rounds 1 --budget 100" "${S[@]}"
}

# lerp-design.md, paths 3, 6 and 9: the tiny lerp-sweep backwards, torch.compile's and ours by default, with short
# rows sliced (LERP_ROWS_WHOLE=0), with every slice's partials summed by a finalize launch (LERP_ROW_COUNTERS=0) and
# with gen_r's short reduced runs sliced (LERP_GEN_WHOLE=0),
# events with L2 flushed; kernel time alone; the kernels' timeline; ncu of gen_r and the small kernel
section_tiny() {
  local T=(
    'paddle.lerp(Tensor([1, 1],"float16"), Tensor([287, 4],"float16"), Tensor([287, 4],"float16"), )'
    'paddle.lerp(Tensor([2, 3, 32, 32],"float64"), Tensor([2, 3, 32, 32],"float64"), Tensor([1, 3, 32, 1],"float64"), )'
    'paddle.lerp(Tensor([1, 494, 1],"float16"), Tensor([35, 494, 2],"float16"), Tensor([35, 494, 2],"float16"), )'
    'paddle.lerp(Tensor([6, 2, 5, 65],"float64"), Tensor([1, 1, 1, 65],"float64"), Tensor([6, 2, 5, 65],"float64"), )'
    'paddle.lerp(Tensor([3013, 2],"float16"), Tensor([3013, 2],"float16"), Tensor([1],"float16"), )'
    'paddle.lerp(Tensor([2860, 1],"float32"), Tensor([2860, 39],"float32"), Tensor([2860, 39],"float32"), )'
    'paddle.lerp(Tensor([14, 1249, 5, 3],"float32"), Tensor([1, 1249, 1, 3],"float32"), Tensor([14, 1249, 5, 3],"float32"), )'
    'paddle.lerp(Tensor([12, 1],"float16"), Tensor([1, 345],"float16"), Tensor([12, 1],"float16"), )'
    'paddle.lerp(Tensor([42, 1, 2, 6],"float32"), Tensor([42, 755, 2, 1],"float32"), Tensor([1, 755, 2, 6],"float32"), )'
    'paddle.lerp(Tensor([15, 2, 1, 2, 49],"float16"), Tensor([1, 2, 140, 2, 49],"float16"), Tensor([15, 1, 140, 2, 49],"float16"), )'
    'paddle.lerp(Tensor([1, 3, 13, 2],"float64"), Tensor([331, 1, 13, 2],"float64"), Tensor([331, 3, 1, 2],"float64"), )'
    'paddle.lerp(Tensor([6783, 1],"float32"), Tensor([1, 13],"float32"), Tensor([6783, 1],"float32"), )'
  )
  bwd_ab tiny 100 "" LERP_ROWS_WHOLE=0 LERP_ROW_COUNTERS=0 LERP_GEN_WHOLE=0 -- "${T[@]}"
  # kernel time alone (profiler), ours and torch.compile's: events minus this is each one's launch latency and gaps
  python -m opbench bench "${T[@]}" --providers torch-compile,torch-ops --directions bwd --method kernel --rounds 1 \
    --budget 100 --no-progress >"$out/tiny_kernel.md" 2>&1
  python $here/diagnose.py timeline --providers torch-compile,torch-ops --directions bwd "${T[@]}" >"$out/tiny_timeline.log" 2>&1
  # gen_r (x [1,1]) and the small kernel against torch.compile's one kernel on three of them: where the warps
  # wait (stall reasons per SASS line in SourceCounters), instructions, occupancy; then ours per SASS line
  ncu --clock-control none --cache-control all --profile-from-start off -k regex:"gen_r|small_bwd|triton" \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --section SourceCounters --metrics "smsp__inst_executed.sum,sm__cycles_active.avg,dram__bytes_read.sum" \
    python $here/diagnose.py ncu-target "${T[0]}|torch-ops|bwd" "${T[0]}|torch-compile|bwd" \
    "${T[1]}|torch-ops|bwd" "${T[1]}|torch-compile|bwd" "${T[2]}|torch-ops|bwd" "${T[2]}|torch-compile|bwd" \
    >"$out/tiny_ncu.log" 2>&1
  ncu --clock-control none --cache-control all --profile-from-start off -k regex:"gen_r|small_bwd" \
    --section SourceCounters --page source --print-source sass --csv \
    python $here/diagnose.py ncu-target "${T[0]}|torch-ops|bwd" "${T[1]}|torch-ops|bwd" >"$out/tiny_sass.csv" 2>&1
}

# norms-design.md, known gaps: the kernels of small rms_norm backwards, ours against torch.compile's (profiler
# timeline after the L2 flushes)
section_norm_small() {
  local R='paddle.nn.functional.rms_norm'
  python $here/diagnose.py timeline --providers torch-compile,torch-ops --directions bwd \
    "$R(Tensor([6, 1024],\"bfloat16\"), [1024], Tensor([1024],\"bfloat16\"), 1e-06, )" \
    "$R(Tensor([47, 2159],\"bfloat16\"), [2159], Tensor([2159],\"bfloat16\"), 1e-06, )" >"$out/norm_small.log" 2>&1
}

# norms-design.md, known gaps, 1-row backwards: timed (events) as the path choice takes them (a row group and
# col_sums blocks in one launch) and with NORM_COLS=0 (the one block writes dw itself), against torch.compile,
# the kernels of each after the L2 flushes, then ncu of ours and Inductor's (warp states: stalls on instruction
# fetch show there, the L2 flush having evicted the code too)
section_norm_one_row() {
  local R='paddle.nn.functional.rms_norm' L='paddle.nn.functional.layer_norm' c specs=()
  local C=("$R(Tensor([1, 768],\"bfloat16\"), [768], Tensor([768],\"bfloat16\"), 1e-06, )"
    "$R(Tensor([1, 4096],\"bfloat16\"), [4096], Tensor([4096],\"bfloat16\"), 1e-06, )"
    "$L(Tensor([1, 8192],\"bfloat16\"), [8192], Tensor([8192],\"bfloat16\"), Tensor([8192],\"bfloat16\"), 1e-05, )")
  knob_ab norm_one_row 300 NORM_COLS=0 -- "${C[@]}"
  for c in "${C[@]}"; do specs+=("$c|torch-ops|bwd" "$c|torch-compile|bwd"); done
  ncu --clock-control none --cache-control all --profile-from-start off -k regex:"bwd_reg|triton" \
    --section SpeedOfLight --section LaunchStats --section WarpStateStats --section SourceCounters \
    python $here/diagnose.py ncu-target "${specs[@]}" >"$out/norm_one_row_ncu.log" 2>&1
}

# norms-design.md, known gaps: long-row backwards short of the targets (few long rows on the split backward,
# below 0.95x; long rows in clusters looping over rows, under 50% of the copy bandwidth), ours against
# torch.compile's: the kernels after the L2 flushes, then ncu of each backward kernel (throughput, occupancy,
# warp states, memory, warp stalls by source line)
section_norm_long() {
  local R='paddle.nn.functional.rms_norm' L='paddle.nn.functional.layer_norm' c specs=()
  local cases=("$R(Tensor([21, 48983],\"float16\"), [48983], Tensor([48983],\"float16\"), 1e-06, )"
    "$L(Tensor([6700, 20031],\"bfloat16\"), [20031], Tensor([20031],\"bfloat16\"), Tensor([20031],\"bfloat16\"), 1e-05, )"
    "$L(Tensor([688, 16935],\"float16\"), [16935], Tensor([16935],\"float16\"), Tensor([16935],\"float16\"), 1e-05, )")
  python $here/diagnose.py timeline --providers torch-compile,torch-ops --directions bwd "${cases[@]}" \
    >"$out/norm_long.log" 2>&1
  for c in "${cases[@]}"; do specs+=("$c|torch-ops|bwd" "$c|torch-compile|bwd"); done
  ncu --clock-control none --cache-control all --profile-from-start off \
    -k regex:"bwd_reg|split_sums|split_dx|finalize|triton" --section SpeedOfLight --section Occupancy \
    --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis --section SourceCounters \
    python $here/diagnose.py ncu-target "${specs[@]}" >"$out/norm_long_ncu.log" 2>&1
}

# norms-design.md, known gaps, the cases the 2-byte words made slower: the backwards timed (events) as the path
# choice takes them and without col_sums blocks (NORM_COLS=0), against torch.compile, and their kernels after
# the L2 flushes; the layer_norm forward's kernels against torch.compile's and Liger's; then ncu of ours (launch
# statistics with registers and waves, occupancy, warp states, throughput)
section_norm_words_slower() {
  local R='paddle.nn.functional.rms_norm' L='paddle.nn.functional.layer_norm' c specs=()
  local bwd=("$R(Tensor([12, 16384],\"float16\"), [16384], Tensor([16384],\"float16\"), 1e-06, )"
    "$R(Tensor([1549, 28967],\"float16\"), [28967], Tensor([28967],\"float16\"), 1e-06, )"
    "$R(Tensor([110, 897],\"float16\"), [897], Tensor([897],\"float16\"), 1e-06, )")
  local fwd="$L(Tensor([1649, 2587],\"bfloat16\"), [2587], Tensor([2587],\"bfloat16\"), Tensor([2587],\"bfloat16\"), 1e-05, )"
  knob_ab norm_words_slower 100 NORM_COLS=0 -- "${bwd[@]}"
  python $here/diagnose.py timeline --providers torch-compile,liger,torch-ops --directions fwd "$fwd" \
    >"$out/norm_words_slower_fwd_timeline.log" 2>&1
  for c in "${bwd[@]}"; do specs+=("$c|torch-ops|bwd"); done
  specs+=("$fwd|torch-ops|fwd")
  ncu --clock-control none --cache-control all --profile-from-start off -k regex:"bwd_reg|fwd_reg|finalize" \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    python $here/diagnose.py ncu-target "${specs[@]}" >"$out/norm_words_slower_ncu.log" 2>&1
}

# norms-design.md, known gaps: small forwards that trail Liger's or torch.compile's by 0.3-1 us (odd-length f16
# rows in small grids, two just over a wave, and a whole-pack row of the same size beside the odd ones), the
# three side by side: the kernels after the L2 flushes, then ncu of each forward kernel (throughput, occupancy,
# launch, warp states, warp stalls by source line)
section_norm_small_fwd() {
  local R='paddle.nn.functional.rms_norm' L='paddle.nn.functional.layer_norm' c specs=() p
  local cases=("$R(Tensor([110, 897],\"float16\"), [897], Tensor([897],\"float16\"), 1e-06, )"
    "$R(Tensor([110, 896],\"float16\"), [896], Tensor([896],\"float16\"), 1e-06, )"
    "$R(Tensor([2, 2181],\"float16\"), [2181], Tensor([2181],\"float16\"), 1e-06, )"
    "$L(Tensor([164, 957],\"float16\"), [957], Tensor([957],\"float16\"), Tensor([957],\"float16\"), 1e-05, )"
    "$L(Tensor([33, 2083],\"float16\"), [2083], Tensor([2083],\"float16\"), Tensor([2083],\"float16\"), 1e-05, )"
    "$L(Tensor([272, 12288],\"float32\"), [12288], Tensor([12288],\"float32\"), Tensor([12288],\"float32\"), 1e-05, )"
    "$R(Tensor([406, 16384],\"float16\"), [16384], Tensor([16384],\"float16\"), 1e-06, )")
  python $here/diagnose.py timeline --providers torch-compile,liger,torch-ops --directions fwd "${cases[@]}" \
    >"$out/norm_small_fwd.log" 2>&1
  for c in "${cases[@]}"; do
    for p in torch-ops liger torch-compile; do specs+=("$c|$p|fwd"); done
  done
  ncu --clock-control none --cache-control all --profile-from-start off \
    -k regex:"fwd_reg|fwd_loop|triton|_norm_forward" --section SpeedOfLight --section Occupancy \
    --section LaunchStats --section WarpStateStats --section SourceCounters python $here/diagnose.py ncu-target "${specs[@]}" >"$out/norm_small_fwd_ncu.log" 2>&1
}

# norms-design.md, known gaps (large forwards of long 2-byte layer_norm rows): the layer_norm sweep's large
# forwards of odd rows, each beside the same shape with its rows rounded up to whole packs, and rms_norm's odd rows
# that reach 93-99% of the copy bandwidth: our kernels after the L2 flushes, then ncu of each (throughput, memory,
# occupancy, launch, warp states, warp stalls by source line)
section_norm_odd_fwd() {
  local f=$out/norm_odd_fwd_cases.txt c cases specs=()
  norm_cases layer_norm "$f" "6700, 20031:bfloat16" "6700, 20032:bfloat16" "4295, 31245:float16" \
    "4295, 31248:float16" "9966, 13467:bfloat16" "9966, 13472:bfloat16" "20161, 6657:float16" "20161, 6664:float16" \
    "14452, 9287:float32" "14452, 9288:float32"
  norm_cases rms_norm "$out/norm_odd_fwd_rms.txt" "4647, 28877:float16" "22035, 6091:float16" "14061, 9545:float32"
  cat "$out/norm_odd_fwd_rms.txt" >>"$f"
  mapfile -t cases <"$f"
  python $here/diagnose.py timeline --providers torch-ops --directions fwd "${cases[@]}" >"$out/norm_odd_fwd.log" 2>&1
  for c in "${cases[@]}"; do specs+=("$c|torch-ops|fwd"); done
  ncu --clock-control none --cache-control all --profile-from-start off -k regex:"fwd_reg" --section SpeedOfLight \
    --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats \
    --section SourceCounters python $here/diagnose.py ncu-target "${specs[@]}" >"$out/norm_odd_fwd_ncu.log" 2>&1
}

# norms-design.md, known gaps (many-row forwards at the copy's speed): the forwards of many whole-pack rows that
# trail torch.compile where it runs as fast as the device's copy of their bytes, beside four of like size that ours
# leads ([16384,4096] bf16 rms_norm, at 93% of the copy bandwidth, among them): ours and Inductor's kernels after
# the L2 flushes, ncu of each
# (throughput, memory, occupancy, launch, warp states), then ours under every block shape that holds the row
section_norm_many_fwd() {
  local f=$out/norm_many_fwd_cases.txt g=$out/norm_many_fwd_ln.txt cases specs=() c
  norm_cases rms_norm "$f" "4096, 8192:bfloat16" "8192, 4096:float16" "16384, 4096:bfloat16" "7438, 768:bfloat16" \
    "12362, 1024:float16" "4325, 5120:float32"
  norm_cases layer_norm "$g" "8192, 4096:float16" "4096, 8192:bfloat16"
  cat "$g" >>"$f"
  mapfile -t cases <"$f"
  python $here/diagnose.py timeline --providers torch-compile,torch-ops --directions fwd "${cases[@]}" \
    >"$out/norm_many_fwd.log" 2>&1
  for c in "${cases[@]}"; do specs+=("$c|torch-ops|fwd" "$c|torch-compile|fwd"); done
  ncu --clock-control none --cache-control all --profile-from-start off -k regex:"fwd_reg|fwd_staged|triton" \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    --section WarpStateStats python $here/diagnose.py ncu-target "${specs[@]}" >"$out/norm_many_fwd_ncu.log" 2>&1
  python $here/diagnose.py fwd-shapes "$out/many_fwd_shapes" "$f" >"$out/norm_many_fwd_shapes.log" 2>&1
}

# norms-design.md, split backward: the sweeps' backwards it takes (few long rows whose x and dy fit in L2), with it
# and without (NORM_BWD_SPLIT=0: a cluster a row), against torch.compile, and their kernels
section_norm_split() {
  local R='paddle.nn.functional.rms_norm' L='paddle.nn.functional.layer_norm'
  local C=("$R(Tensor([21, 48983],\"float16\"), [48983], Tensor([48983],\"float16\"), 1e-06, )"
    "$R(Tensor([27, 44219],\"bfloat16\"), [44219], Tensor([44219],\"bfloat16\"), 1e-06, )"
    "$R(Tensor([85, 37791],\"float32\"), [37791], Tensor([37791],\"float32\"), 1e-06, )"
    "$R(Tensor([154, 20997],\"float32\"), [20997], Tensor([20997],\"float32\"), 1e-06, )"
    "$R(Tensor([190, 14713],\"float16\"), [14713], Tensor([14713],\"float16\"), 1e-06, )"
    "$R(Tensor([247, 12288],\"float32\"), [12288], Tensor([12288],\"float32\"), 1e-06, )"
    "$R(Tensor([137, 6144],\"float32\"), [6144], Tensor([6144],\"float32\"), 1e-06, )"
    "$R(Tensor([22, 8953],\"float32\"), [8953], Tensor([8953],\"float32\"), 1e-06, )"
    "$L(Tensor([82, 38543],\"float16\"), [38543], Tensor([38543],\"float16\"), Tensor([38543],\"float16\"), 1e-05, )"
    "$L(Tensor([72, 12288],\"bfloat16\"), [12288], Tensor([12288],\"bfloat16\"), Tensor([12288],\"bfloat16\"), 1e-05, )"
    "$L(Tensor([96, 16384],\"float16\"), [16384], Tensor([16384],\"float16\"), Tensor([16384],\"float16\"), 1e-05, )"
    "$L(Tensor([114, 16384],\"float16\"), [16384], Tensor([16384],\"float16\"), Tensor([16384],\"float16\"), 1e-05, )"
    "$L(Tensor([193, 16384],\"float32\"), [16384], Tensor([16384],\"float32\"), Tensor([16384],\"float32\"), 1e-05, )"
    "$L(Tensor([39, 12288],\"float32\"), [12288], Tensor([12288],\"float32\"), Tensor([12288],\"float32\"), 1e-05, )")
  knob_ab norm_split 100 NORM_BWD_SPLIT=0 -- "${C[@]}"
}

# norms-design.md, split backward: few long rows the split backward takes (x and dy up to all of L2), as the path
# choice takes them, with scalar accesses on rows of whole packs (NORM_SPLIT_VEC=0) and with the share of L2 it
# took before (NORM_SPLIT_L2_PCT=60: clusters above it), against torch.compile; and each kernel's time
section_norm_split_vec() {
  local R='paddle.nn.functional.rms_norm' L='paddle.nn.functional.layer_norm'
  local C=(
    "$R(Tensor([128, 65536],\"bfloat16\"), [65536], Tensor([65536],\"bfloat16\"), 1e-06, )"
    "$R(Tensor([236, 51491],\"bfloat16\"), [51491], Tensor([51491],\"bfloat16\"), 1e-06, )"
    "$R(Tensor([200, 40000],\"bfloat16\"), [40000], Tensor([40000],\"bfloat16\"), 1e-06, )"
    "$R(Tensor([250, 32768],\"bfloat16\"), [32768], Tensor([32768],\"bfloat16\"), 1e-06, )"
    "$R(Tensor([160, 65536],\"float16\"), [65536], Tensor([65536],\"float16\"), 1e-06, )"
    "$R(Tensor([100, 65536],\"bfloat16\"), [65536], Tensor([65536],\"bfloat16\"), 1e-06, )"
    "$R(Tensor([256, 49152],\"bfloat16\"), [49152], Tensor([49152],\"bfloat16\"), 1e-06, )"
    "$R(Tensor([128, 32768],\"float32\"), [32768], Tensor([32768],\"float32\"), 1e-06, )"
    "$R(Tensor([200, 30000],\"float32\"), [30000], Tensor([30000],\"float32\"), 1e-06, )"
    "$R(Tensor([250, 20000],\"float32\"), [20000], Tensor([20000],\"float32\"), 1e-06, )"
    "$R(Tensor([64, 65536],\"float32\"), [65536], Tensor([65536],\"float32\"), 1e-06, )"
    "$L(Tensor([160, 65536],\"bfloat16\"), [65536], Tensor([65536],\"bfloat16\"), Tensor([65536],\"bfloat16\"), 1e-05, )"
    "$L(Tensor([236, 51491],\"bfloat16\"), [51491], Tensor([51491],\"bfloat16\"), Tensor([51491],\"bfloat16\"), 1e-05, )"
    "$L(Tensor([128, 65536],\"bfloat16\"), [65536], Tensor([65536],\"bfloat16\"), Tensor([65536],\"bfloat16\"), 1e-05, )"
    "$L(Tensor([200, 30000],\"float32\"), [30000], Tensor([30000],\"float32\"), Tensor([30000],\"float32\"), 1e-05, )"
    "$L(Tensor([240, 40000],\"float16\"), [40000], Tensor([40000],\"float16\"), Tensor([40000],\"float16\"), 1e-05, )"
    "$L(Tensor([64, 65536],\"float32\"), [65536], Tensor([65536],\"float32\"), Tensor([65536],\"float32\"), 1e-05, )"
    "$L(Tensor([180, 24000],\"float32\"), [24000], Tensor([24000],\"float32\"), Tensor([24000],\"float32\"), 1e-05, )"
    "$R(Tensor([247, 12288],\"float32\"), [12288], Tensor([12288],\"float32\"), 1e-06, )"
    "$R(Tensor([272, 8192],\"float32\"), [8192], Tensor([8192],\"float32\"), 1e-06, )"
    "$R(Tensor([154, 20997],\"float32\"), [20997], Tensor([20997],\"float32\"), 1e-06, )"
    "$R(Tensor([137, 6144],\"float32\"), [6144], Tensor([6144],\"float32\"), 1e-06, )"
    "$L(Tensor([193, 16384],\"float32\"), [16384], Tensor([16384],\"float32\"), Tensor([16384],\"float32\"), 1e-05, )"
    "$L(Tensor([39, 12288],\"float32\"), [12288], Tensor([12288],\"float32\"), Tensor([12288],\"float32\"), 1e-05, )"
    "$R(Tensor([85, 37791],\"float32\"), [37791], Tensor([37791],\"float32\"), 1e-06, )"
    "$R(Tensor([100, 20000],\"float32\"), [20000], Tensor([20000],\"float32\"), 1e-06, )"
    "$L(Tensor([120, 16384],\"float32\"), [16384], Tensor([16384],\"float32\"), Tensor([16384],\"float32\"), 1e-05, )")
  knob_ab norm_split_vec 100 NORM_SPLIT_VEC=0 NORM_SPLIT_L2_PCT=60 -- "${C[@]}"
}

# norms-design.md, when the forward's loads go out: the norm sweeps' forwards as the path choice takes them, without
# prefetched parameters (NORM_FWD_PREFETCH=0), without batched loads (NORM_FWD_BATCH=0), without the 512-thread
# blocks' early reads (NORM_FWD_EARLY_WIDE=0), without those of 2-byte layer_norm rows of whole packs
# (NORM_FWD_EARLY_LN2=0), with no row staged in shared memory (NORM_FWD_STAGED=0) and with 2-byte rms_norm rows at
# 512 x 8 held as floats, not words (NORM_FWD_WORDS=0); ours alone, events with L2 flushed; JSON, tables, and
# opbench compare of each knob-off run (base) against the default (new)
section_norm_fwd_reads() {
  suite_ab norm_fwd_reads fwd "rms_norm-sweep layer_norm-sweep" NORM_FWD_PREFETCH=0 NORM_FWD_BATCH=0 \
    NORM_FWD_EARLY_WIDE=0 NORM_FWD_EARLY_LN2=0 NORM_FWD_STAGED=0 NORM_FWD_WORDS=0
}

# The norm cases of OP (rms_norm or layer_norm, with a bias of its dtype) and each "ROWS, COLS:DTYPE" after it,
# one a line, in FILE.
norm_cases() {
  local op=$1 f=$2 shape dt h
  shift 2
  for shape in "$@"; do
    dt=${shape#*:} shape=${shape%:*} h=${shape#*, }
    if [ "$op" = rms_norm ]; then
      echo "paddle.nn.functional.rms_norm(Tensor([$shape],\"$dt\"), [$h], Tensor([$h],\"$dt\"), 1e-06, )"
    else
      echo "paddle.nn.functional.layer_norm(Tensor([$shape],\"$dt\"), [$h], Tensor([$h],\"$dt\"), Tensor([$h],\"$dt\"), 1e-05, )"
    fi
  done >"$f"
}

# Our DIRECTIONS of the suites or case files after NAME KNOB OFF ON DIRECTIONS, with KNOB=OFF (base) and KNOB=ON
# (new), timed in the orders base, new, new2, base2 (NAME_<run>.json/.md) and compared with the verdicts both
# orders give (NAME_compare.md). ORDERS_BUDGET: ms of sampling a case (default: opbench bench's). fwd_orders: the
# forwards.
knob_orders() {
  local name=$1 knob=$2 off=$3 on=$4 directions=$5 run
  shift 5
  for run in base new new2 base2; do
    env "$knob=$([ "${run%2}" = base ] && echo "$off" || echo "$on")" python -m opbench bench "$@" \
      --providers torch-ops --directions "$directions" --method events --rounds 1 --no-progress \
      ${ORDERS_BUDGET:+--budget "$ORDERS_BUDGET"} \
      --json "$out/${name}_$run.json" >"$out/${name}_$run.md" 2>&1
  done
  python -m opbench compare "$out/${name}_base.json" "$out/${name}_new.json" --again "$out/${name}_base2.json" \
    "$out/${name}_new2.json" --markdown "$out/${name}_compare.md" --fail-on-slower 100 >/dev/null
  return 0
}
fwd_orders() {
  local name=$1 knob=$2 off=$3 on=$4
  shift 4
  knob_orders "$name" "$knob" "$off" "$on" fwd "$@"
}

# norms-design.md, x held as words: the 2-byte rms_norm forwards of 16,385-32,768 elements past a block an SM with x
# as floats (NORM_FWD_WORDS=0, base) and as words (new), both orders (norm_words_compare.md).
section_norm_words() {
  norm_cases rms_norm "$out/norm_words_cases.txt" "4647, 28877:float16" "1549, 28967:float16" "1536, 32768:float16" \
    "250, 32768:bfloat16"
  fwd_orders norm_words NORM_FWD_WORDS 0 1 "$out/norm_words_cases.txt"
}

# norm_launch_fwd.cuh, half the threads with x as words: 2-byte rms_norm forwards past the 4-pack floats' wave
# with NORM_FWD_HALF=0 (base) against 1 (the default; norm_half_compare.md) and against 2 (every grid past that
# wave; norm_half_any_compare.md), both orders each.
section_norm_half() {
  local f=$out/norm_half_cases.txt
  norm_cases rms_norm "$f" "406, 16384:float16" "300, 16384:float16" "500, 12287:float16" "800, 8001:float16" \
    "22035, 6091:float16" "8192, 5121:bfloat16" "6400, 5121:bfloat16" "1100, 8001:bfloat16" "600, 12288:bfloat16" \
    "11195, 8192:float16" "4096, 8192:bfloat16" "3000, 6143:float16" "2000, 7000:float16" "1024, 16384:bfloat16"
  fwd_orders norm_half NORM_FWD_HALF 0 1 "$f"
  fwd_orders norm_half_any NORM_FWD_HALF 0 2 "$f"
}

# norm_launch_fwd.cuh, words at 4 packs: the norm sweeps' and named suites' forwards, and many-row 2-byte rows
# of 257-1,024 whole packs, with x as floats at 128 and 256 x 4 (NORM_FWD_WORDS4=0, base) and as words (new: 1,
# rms_norm's rows, norm_words4_compare.md; 2, both ops', norm_words4_ln_compare.md), both orders.
section_norm_words4() {
  local f=$out/norm_words4_cases.txt g=$out/norm_words4_ln_cases.txt
  norm_cases rms_norm "$f" "32768, 4096:bfloat16" "8192, 8192:float16" "2048, 8192:bfloat16" "1000, 8192:bfloat16" \
    "6000, 3072:float16" "65536, 2560:bfloat16"
  norm_cases layer_norm "$g" "32768, 4096:bfloat16" "8192, 8192:float16" "2048, 8192:bfloat16" "6000, 3072:float16"
  fwd_orders norm_words4 NORM_FWD_WORDS4 0 1 rms_norm-sweep rms_norm "$f"
  fwd_orders norm_words4_ln NORM_FWD_WORDS4 0 2 layer_norm-sweep layer_norm "$g"
}

# norm_launch_fwd.cuh, layer_norm's words: the layer_norm sweep's and suite's forwards, and long 2-byte rows, with
# x as floats (NORM_FWD_WORDS_LN=0, base) and held as words where rms_norm's are (1, new), both orders
# (norm_words_ln_compare.md).
section_norm_words_ln() {
  local f=$out/norm_words_ln_cases.txt
  norm_cases layer_norm "$f" "4295, 31245:float16" "6700, 20031:bfloat16" "2048, 20480:bfloat16" \
    "1536, 32768:float16" "406, 16384:float16" "500, 12287:float16" "6400, 5121:bfloat16" "300, 20001:float16"
  fwd_orders norm_words_ln NORM_FWD_WORDS_LN 0 1 layer_norm-sweep layer_norm "$f"
}

# norms-design.md, rungs for many waves: the norm sweeps', named suites' and norm-paths' forwards and backwards
# in the power-of-two shapes alone (NORM_FINE=0, base) and as the path choice takes them (new), timed in both
# orders (base, new, new, base) and compared with the verdicts both orders give (norm_fine_compare.md).
section_norm_fine() {
  knob_orders norm_fine NORM_FINE 0 1 fwd,bwd rms_norm-sweep layer_norm-sweep rms_norm layer_norm norm-paths
}

# common/dependent_launch.cuh: the backwards of the norm sweeps, named suites and norm-paths and of the lerp sweep
# and suite with every second kernel of a backward (split_dx, finalize, col_pass; lerp's finalize_kernel) launched
# plainly (OPS_PDL=0, base) and to overlap the kernel before it (the default, new), timed in both orders and
# compared with the verdicts both orders give (pdl_compare.md).
section_pdl() {
  knob_orders pdl OPS_PDL 0 1 bwd rms_norm-sweep layer_norm-sweep rms_norm layer_norm norm-paths lerp-sweep lerp
}

# The norm sweeps' and named suites' backwards with and without the table's rows for few and many rows
# (NORM_BWD_GRID=0: the first fit, 4 packs a thread, for every grid), compared.
section_norm_bwd_grid() {
  suite_ab norm_bwd_grid bwd "rms_norm-sweep layer_norm-sweep rms_norm layer_norm" NORM_BWD_GRID=0
}

# The norm sweeps' and named suites' backwards without the one-row kernel (NORM_BWD_ONE_ROW=0), compared with the
# default, and the 1-row backwards with it and without, their kernels after the L2 flushes beside torch.compile's.
section_norm_bwd_one_row() {
  local R='paddle.nn.functional.rms_norm' L='paddle.nn.functional.layer_norm'
  local C=("$R(Tensor([1, 768],\"bfloat16\"), [768], Tensor([768],\"bfloat16\"), 1e-06, )"
    "$R(Tensor([1, 4096],\"bfloat16\"), [4096], Tensor([4096],\"bfloat16\"), 1e-06, )"
    "$L(Tensor([1, 8192],\"bfloat16\"), [8192], Tensor([8192],\"bfloat16\"), Tensor([8192],\"bfloat16\"), 1e-05, )")
  suite_ab norm_bwd_one_row bwd "rms_norm-sweep layer_norm-sweep rms_norm layer_norm" NORM_BWD_ONE_ROW=0
  bwd_ab norm_bwd_one_row_cases 300 "" NORM_BWD_ONE_ROW=0 -- "${C[@]}"
  python $here/diagnose.py timeline --providers torch-compile,torch-ops --directions bwd "${C[@]}" \
    >"$out/norm_bwd_one_row_timeline.log" 2>&1
}

# norms-design.md, clusters of partial rows: the norm sweeps' and named suites' backwards with the partial rows of
# grids of a few long rows a block written by every block (NORM_BWD_PART_CLUSTERS=0), compared with the default
# (their partial rows added in clusters first)
section_norm_part_clusters() {
  suite_ab norm_part_clusters bwd "rms_norm-sweep layer_norm-sweep rms_norm layer_norm" NORM_BWD_PART_CLUSTERS=0
}

# norms-design.md, the dx pass: the norm sweeps' and named suites' backwards on the table's kernels with dw/db sums
# (NORM_BWD_DX_PASS=0), compared with the default (the two-pass backward where col_pass_fits), then backwards
# that ask for no dw/db, past a small grid (the dx pass alone), each way and with rows of 65-128 packs in
# 128 x 2 blocks, not warps at 4 (NORM_DX_WARP4=0); then the mid-size backwards' kernels
# without the dx pass after the L2 flushes (norm_mid_bwd has them as built)
section_norm_dx_pass() {
  local L='paddle.nn.functional.layer_norm'
  suite_ab norm_dx_pass bwd "rms_norm-sweep layer_norm-sweep rms_norm layer_norm" NORM_BWD_DX_PASS=0
  local C=("$L(Tensor([8192, 4096],\"bfloat16\"), normalized_shape=[4096], epsilon=1e-05, )"
    "$L(Tensor([4096, 1024],\"float16\"), normalized_shape=[1024], epsilon=1e-05, )"
    "$L(Tensor([65536, 768],\"bfloat16\"), normalized_shape=[768], epsilon=1e-05, )"
    "$L(Tensor([3000, 4099],\"float32\"), normalized_shape=[4099], epsilon=1e-05, )")
  bwd_ab norm_dx_pass_no_params 300 "" NORM_BWD_DX_PASS=0 NORM_DX_WARP4=0 -- "${C[@]}"
  local M=("$L(Tensor([1278, 1897],\"bfloat16\"), [1897], Tensor([1897],\"bfloat16\"), Tensor([1897],\"bfloat16\"), 1e-05, )"
    "$L(Tensor([513, 3072],\"float16\"), [3072], Tensor([3072],\"float16\"), Tensor([3072],\"float16\"), 1e-05, )"
    "paddle.nn.functional.rms_norm(Tensor([772, 801],\"bfloat16\"), [801], Tensor([801],\"bfloat16\"), 1e-06, )")
  NORM_BWD_DX_PASS=0 python $here/diagnose.py timeline --providers torch-ops --directions bwd "${M[@]}" \
    >"$out/norm_dx_pass_timeline_off.log" 2>&1
}

# The lerp sweep's broadcast forwards of 5 us and more that run below 0.95x of torch.compile (the sweep table of
# record; most at 50-95% of the copy bandwidth where torch.compile's run at the device copy's speed): each
# kernel after the L2 flushes, ours against torch.compile's, then ncu of both (throughput, occupancy, launch,
# warp states, DRAM bytes)
section_fwd_slower() {
  local S=('paddle.lerp(Tensor([1, 1, 1, 8565, 94],"float64"), Tensor([2, 8, 3, 8565, 94],"float64"), Tensor([2, 8, 3, 8565, 94],"float64"), )'
    'paddle.lerp(Tensor([364, 7492],"float16"), Tensor([364, 7492],"float16"), Tensor([1, 7492],"float16"), )'
    'paddle.lerp(Tensor([2, 450894],"bfloat16"), Tensor([2, 450894],"bfloat16"), Tensor([1, 450894],"bfloat16"), )'
    'paddle.lerp(Tensor([9, 2, 5246, 31],"float16"), Tensor([9, 2, 5246, 31],"float16"), Tensor([1, 1, 5246, 1],"float16"), )'
    'paddle.lerp(Tensor([2, 1, 1],"float16"), Tensor([2, 36615, 7],"float16"), Tensor([2, 36615, 7],"float16"), )')
  local c specs=()
  python $here/diagnose.py timeline --providers torch-compile,torch-ops --directions fwd "${S[@]}" \
    >"$out/fwd_slower_timeline.log" 2>&1
  for c in "${S[@]}"; do specs+=("$c|torch-ops|fwd" "$c|torch-compile|fwd"); done
  ncu --clock-control none --cache-control all --profile-from-start off -k regex:"fwd_|triton" \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --metrics "smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum" \
    python $here/diagnose.py ncu-target "${specs[@]}" >"$out/fwd_slower_ncu.log" 2>&1
}

# lerp-design.md, path 2: the lerp sweep's broadcast forwards whose innermost run divides no 16-byte pack but an
# 8- or 4-byte one, in those packs (default) and on the gather kernel or one-element packs (LERP_FWD_NARROW=0):
# events, 3 rounds, compared, torch.compile beside them; then each kernel after the L2 flushes, ours (both ways)
# against torch.compile's
section_fwd_narrow() {
  local P=paddle.lerp f=$out/fwd_narrow_cases.txt
  printf '%s\n' \
    "$P(Tensor([364, 7492],\"float16\"), Tensor([364, 7492],\"float16\"), Tensor([1, 7492],\"float16\"), )" \
    "$P(Tensor([2, 450894],\"bfloat16\"), Tensor([2, 450894],\"bfloat16\"), Tensor([1, 450894],\"bfloat16\"), )" \
    "$P(Tensor([1141341, 10],\"float32\"), Tensor([1141341, 10],\"float32\"), Tensor([1, 10],\"float32\"), )" \
    "$P(Tensor([94866, 4, 173],\"bfloat16\"), Tensor([1, 4, 173],\"bfloat16\"), Tensor([94866, 4, 173],\"bfloat16\"), )" \
    "$P(Tensor([1847908, 9],\"bfloat16\"), Tensor([1, 1],\"bfloat16\"), Tensor([1847908, 9],\"bfloat16\"), )" \
    "$P(Tensor([1767, 892],\"float16\"), Tensor([1, 1],\"float16\"), Tensor([1767, 892],\"float16\"), )" \
    "$P(Tensor([42, 1, 2, 6],\"float32\"), Tensor([42, 755, 2, 1],\"float32\"), Tensor([1, 755, 2, 6],\"float32\"), )" \
    "$P(Tensor([2208, 3, 5, 6],\"float16\"), Tensor([1, 1, 5, 1],\"float16\"), Tensor([2208, 3, 5, 6],\"float16\"), )" \
    "$P(Tensor([15, 2, 1, 2, 49],\"float16\"), Tensor([1, 2, 140, 2, 49],\"float16\"), Tensor([15, 1, 140, 2, 49],\"float16\"), )" \
    "$P(Tensor([19, 2, 4, 15, 89],\"bfloat16\"), Tensor([19, 2, 4, 15, 89],\"bfloat16\"), Tensor([19, 1, 4, 15, 89],\"bfloat16\"), )" \
    "$P(Tensor([3, 1, 1, 1],\"bfloat16\"), Tensor([3, 2, 3829, 2],\"bfloat16\"), Tensor([3, 2, 3829, 2],\"bfloat16\"), )" \
    "$P(Tensor([1, 494, 1],\"float16\"), Tensor([35, 494, 2],\"float16\"), Tensor([35, 494, 2],\"float16\"), )" \
    "$P(Tensor([24899, 2],\"bfloat16\"), Tensor([1, 1],\"bfloat16\"), Tensor([24899, 2],\"bfloat16\"), )" \
    "$P(Tensor([1, 1],\"float16\"), Tensor([287, 4],\"float16\"), Tensor([287, 4],\"float16\"), )" >"$f"
  python -m opbench bench "$f" --providers torch-compile --directions fwd --method events --rounds 3 --no-progress \
    --json "$out/fwd_narrow_compile.json" >"$out/fwd_narrow_compile.md" 2>&1
  SUITE_ROUNDS=3 suite_ab fwd_narrow fwd "$f" LERP_FWD_NARROW=0
  local C
  mapfile -t C <"$f"
  python $here/diagnose.py timeline --providers torch-compile,torch-ops --directions fwd "${C[@]}" \
    >"$out/fwd_narrow_timeline.log" 2>&1
  LERP_FWD_NARROW=0 python $here/diagnose.py timeline --providers torch-ops --directions fwd "${C[@]}" \
    >"$out/fwd_narrow_timeline_LERP_FWD_NARROW_0.log" 2>&1
}

# lerp-design.md, path 1: training forwards and backwards (fwd+bwd) of f32 x, y of one shape with a broadcast
# weight that needs a gradient, whose saved-diff forward takes narrow packs (default) or one element a thread
# (LERP_FWD_NARROW=0): events, 3 rounds, compared, torch.compile beside them
section_fwd_narrow_train() {
  local P=paddle.lerp f=$out/fwd_narrow_train_cases.txt
  printf '%s\n' \
    "$P(Tensor([1141341, 10],\"float32\"), Tensor([1141341, 10],\"float32\"), Tensor([1, 10],\"float32\"), )" \
    "$P(Tensor([4096, 4098],\"float32\"), Tensor([4096, 4098],\"float32\"), Tensor([4098],\"float32\"), )" \
    "$P(Tensor([200000, 54],\"float32\"), Tensor([200000, 54],\"float32\"), Tensor([200000, 1],\"float32\"), )" \
    "$P(Tensor([42, 755, 2, 6],\"float32\"), Tensor([42, 755, 2, 6],\"float32\"), Tensor([1, 755, 2, 6],\"float32\"), )" \
    >"$f"
  python -m opbench bench "$f" --providers torch-compile --directions fwd+bwd --method events --rounds 3 \
    --no-progress >"$out/fwd_narrow_train_compile.md" 2>&1
  SUITE_ROUNDS=3 suite_ab fwd_narrow_train fwd+bwd "$f" LERP_FWD_NARROW=0
}

# norms-design.md, known gaps, mid-size backwards: the sweeps' backwards that PyTorch eager runs faster than ours
# (5-15 MB at a fifth of the copy bandwidth), each provider's kernels after the L2 flushes, then ncu of ours and
# eager's (throughput, occupancy, launch, warp states, stalls by source line)
section_norm_mid_bwd() {
  local R='paddle.nn.functional.rms_norm' L='paddle.nn.functional.layer_norm' c specs=()
  local C=("$L(Tensor([1278, 1897],\"bfloat16\"), [1897], Tensor([1897],\"bfloat16\"), Tensor([1897],\"bfloat16\"), 1e-05, )"
    "$L(Tensor([513, 3072],\"float16\"), [3072], Tensor([3072],\"float16\"), Tensor([3072],\"float16\"), 1e-05, )"
    "$L(Tensor([724, 1815],\"float32\"), [1815], Tensor([1815],\"float32\"), Tensor([1815],\"float32\"), 1e-05, )"
    "$R(Tensor([772, 801],\"bfloat16\"), [801], Tensor([801],\"bfloat16\"), 1e-06, )")
  python $here/diagnose.py timeline --providers torch,torch-compile,torch-ops --directions bwd "${C[@]}" \
    >"$out/norm_mid_bwd.log" 2>&1
  for c in "${C[@]}"; do specs+=("$c|torch-ops|bwd" "$c|torch|bwd"); done
  ncu --clock-control none --cache-control all --profile-from-start off \
    -k regex:"bwd_reg|bwd_loop|finalize|col_sums|col_pass|cols_partial|write_partial|[Nn]orm|GammaBeta|[Gg]rad" \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --section SourceCounters python $here/diagnose.py ncu-target "${specs[@]}" >"$out/norm_mid_bwd_ncu.log" 2>&1
}

# lerp-design.md, known gaps: the two backwards that run gen_r with one-element packs: each kernel after the
# L2 flushes, ours against torch.compile's, then ncu of ours (throughput, occupancy, warp states, instructions)
section_slower() {
  local S=('paddle.lerp(Tensor([9, 2, 5246, 31],"float16"), Tensor([9, 2, 5246, 31],"float16"), Tensor([1, 1, 5246, 1],"float16"), )'
    'paddle.lerp(Tensor([1847908, 9],"bfloat16"), Tensor([1, 1],"bfloat16"), Tensor([1847908, 9],"bfloat16"), )')
  python $here/diagnose.py timeline --providers torch-compile,torch-ops --directions bwd "${S[@]}" >"$out/slower_timeline.log" 2>&1
  ncu --clock-control none --cache-control all --profile-from-start off -k regex:gen_r \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --metrics "smsp__inst_executed.sum,sm__cycles_active.avg,dram__bytes_read.sum,dram__bytes_write.sum" \
    python $here/diagnose.py ncu-target "${S[0]}|torch-ops|bwd" "${S[1]}|torch-ops|bwd" >"$out/slower_ncu.log" 2>&1
}

# lerp-design.md, cols: the backwards the cols kernel takes in row slices, with them (LERP_COLS_SLICES=1), on
# tile2d or gen_k as before (0) and in up to 256 slices (LERP_COLS_MAX_SLICES=256), against torch.compile
# (events), then the kernels each runs (profiler timeline: torch.compile's and ours with the slices, and ours
# without them and in up to 256)
section_cols_slices() {
  local C=(
    'paddle.lerp(Tensor([364, 7492],"float16"), Tensor([364, 7492],"float16"), Tensor([1, 7492],"float16"), )'
    'paddle.lerp(Tensor([32, 128, 768],"bfloat16"), Tensor([32, 128, 768],"bfloat16"), Tensor([768],"bfloat16"), )'
    'paddle.lerp(Tensor([16, 3, 224, 224],"bfloat16"), Tensor([16, 3, 224, 224],"bfloat16"), Tensor([224],"bfloat16"), )'
    'paddle.lerp(Tensor([2048, 768],"float32"), Tensor([2048, 768],"float32"), Tensor([768],"float32"), )'
    'paddle.lerp(Tensor([1500, 3000],"float32"), Tensor([3000],"float32"), 0.3, )'
  )
  knob_ab cols_slices 200 LERP_COLS_SLICES=0 LERP_COLS_MAX_SLICES=256 -- "${C[@]}"
}

# lerp-design.md, cols: the backwards over dout [O, K, G] (the gradient kept along K, G a short run) as targets
# of G columns on cols_sliced_kernel (LERP_COLS_GROUPS=1) and on gen_r (0), against torch.compile (events), then
# the kernels each runs (profiler timeline)
section_cols_groups() {
  local C=('paddle.lerp(Tensor([9, 2, 5246, 31],"float16"), Tensor([9, 2, 5246, 31],"float16"), Tensor([1, 1, 5246, 1],"float16"), )'
    'paddle.lerp(Tensor([9, 2, 5246, 31],"float32"), Tensor([9, 2, 5246, 31],"float32"), Tensor([1, 1, 5246, 1],"float32"), )'
    'paddle.lerp(Tensor([64, 3, 1000, 7],"bfloat16"), Tensor([3, 1000, 1],"bfloat16"), 0.4, )')
  knob_ab cols_groups 200 LERP_COLS_GROUPS=0 -- "${C[@]}"
}

# lerp-design.md, cols: the backwards with a full-size weight (x's or y's gradient summed down the columns, dw
# and the other input's gradient written on the way) on the cols kernels (LERP_COLS_WFULL=1) and on tile2d or
# gen_r (0), against torch.compile (events), then the kernels each runs (profiler timeline), then ncu of the
# first case's cols kernel
section_cols_wfull() {
  local C=('paddle.lerp(Tensor([94866, 4, 173],"bfloat16"), Tensor([1, 4, 173],"bfloat16"), Tensor([94866, 4, 173],"bfloat16"), )'
    'paddle.lerp(Tensor([1, 91, 1, 1],"float32"), Tensor([11039, 2, 91, 14, 2],"float32"), Tensor([11039, 2, 91, 14, 2],"float32"), )'
    'paddle.lerp(Tensor([8192, 4096],"float16"), Tensor([4096],"float16"), Tensor([8192, 4096],"float16"), )')
  knob_ab cols_wfull 300 LERP_COLS_WFULL=0 -- "${C[@]}"
  ncu --clock-control none --cache-control all --profile-from-start off -k regex:cols_sliced \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    --section WarpStateStats python $here/diagnose.py ncu-target "${C[0]}|torch-ops|bwd" >"$out/cols_wfull_ncu.log" 2>&1
}

# lerp-design.md, rows: per-row weights' gradients over long rows (the weight's gradient summed along each row,
# x and y read) with the rows kernel's slices within one wave (default) and rounded up past it
# (LERP_ROWS_OVER_WAVE=1), against torch.compile (events), then the kernels each runs (profiler timeline)
section_rows_wave() {
  local C=('paddle.lerp(Tensor([64, 65536],"float32"), Tensor([64, 65536],"float32"), Tensor([64, 1],"float32"), )'
    'paddle.lerp(Tensor([16, 65536],"bfloat16"), Tensor([16, 65536],"bfloat16"), Tensor([16, 1],"bfloat16"), )'
    'paddle.lerp(Tensor([128, 32768],"float16"), Tensor([128, 32768],"float16"), Tensor([128, 1],"float16"), )'
    'paddle.lerp(Tensor([16, 102400],"float32"), Tensor([16, 102400],"float32"), Tensor([1],"float32"), )')
  knob_ab rows_wave 300 LERP_ROWS_OVER_WAVE=1 -- "${C[@]}"
}

# lerp-design.md, tile2d short rows and the known gap of broadcast weights with the saved y - x: the backwards
# timed (events) as the path choice takes them, on tile2d's tiles (LERP_T2ROWS=0), on the short-row kernel that
# reads the layout at run time (LERP_T2ROWS_XY=0; x, y one per row), with 4 and 16 waves of
# short-row blocks, and on the other paths (LERP_TILE2D=0, LERP_COLS=0, LERP_ROWS=0, LERP_BLOCKS_PER_SM=2);
# torch.compile's beside them, and the kernels of each after the L2 flushes
section_t2rows() {
  local C=('paddle.lerp(Tensor([200000, 1],"float16"), Tensor([200000, 1],"float16"), Tensor([200000, 64],"float16"), )'
    'paddle.lerp(Tensor([200000, 1],"bfloat16"), Tensor([200000, 1],"bfloat16"), Tensor([200000, 64],"bfloat16"), )'
    'paddle.lerp(Tensor([200000, 64],"float16"), Tensor([200000, 64],"float16"), Tensor([200000, 1],"float16"), )'
    'paddle.lerp(Tensor([373993, 90],"float64"), Tensor([373993, 90],"float64"), Tensor([373993, 1],"float64"), )'
    'paddle.lerp(Tensor([373993, 90],"float32"), Tensor([373993, 90],"float32"), Tensor([373993, 1],"float32"), )'
    'paddle.lerp(Tensor([5325, 1124, 4],"float64"), Tensor([5325, 1124, 4],"float64"), Tensor([5325, 1, 4],"float64"), )')
  knob_ab t2rows 300 LERP_T2ROWS=0 LERP_T2ROWS_XY=0 LERP_T2ROWS_WAVES=4 LERP_T2ROWS_WAVES=16 LERP_TILE2D=0 \
    LERP_COLS=0 LERP_ROWS=0 LERP_BLOCKS_PER_SM=2 -- "${C[@]}"
}

# lerp-design.md, tile2d short rows of no whole 16-byte packs: backwards (and f32 training forwards with their
# backwards) of per-row weights and of x, y summed along rows, on the short-row kernel at 8- or 4-byte packs
# (default) and on tile2d's tiles (LERP_T2ROWS_NARROW=0): events, 3 rounds, compared, torch.compile beside them
section_t2rows_narrow() {
  local P=paddle.lerp f=$out/t2rows_narrow_cases.txt t=$out/t2rows_narrow_train_cases.txt
  printf '%s\n' \
    "$P(Tensor([200000, 54],\"float32\"), Tensor([200000, 54],\"float32\"), Tensor([200000, 1],\"float32\"), )" \
    "$P(Tensor([373993, 90],\"float32\"), Tensor([373993, 90],\"float32\"), Tensor([373993, 1],\"float32\"), )" \
    "$P(Tensor([200000, 54],\"float16\"), Tensor([200000, 54],\"float16\"), Tensor([200000, 1],\"float16\"), )" \
    "$P(Tensor([200000, 60],\"bfloat16\"), Tensor([200000, 60],\"bfloat16\"), Tensor([200000, 1],\"bfloat16\"), )" \
    "$P(Tensor([200000, 1],\"float16\"), Tensor([200000, 1],\"float16\"), Tensor([200000, 62],\"float16\"), )" \
    "$P(Tensor([200000, 1],\"float32\"), Tensor([200000, 1],\"float32\"), Tensor([200000, 62],\"float32\"), )" \
    >"$f"
  head -n 2 "$f" >"$t"
  python -m opbench bench "$f" --providers torch-compile --directions bwd --method events --rounds 3 \
    --no-progress >"$out/t2rows_narrow_compile.md" 2>&1
  python -m opbench bench "$t" --providers torch-compile --directions fwd+bwd --method events --rounds 3 \
    --no-progress >"$out/t2rows_narrow_train_compile.md" 2>&1
  SUITE_ROUNDS=3 suite_ab t2rows_narrow bwd "$f" LERP_T2ROWS_NARROW=0
  SUITE_ROUNDS=3 suite_ab t2rows_narrow_train fwd+bwd "$t" LERP_T2ROWS_NARROW=0
}

# norms-design.md, forward threads a row: every case's forward under each block shape of the table
section_norm_fwd_shapes() { python $here/diagnose.py fwd-shapes "$out/fwd_shapes" >"$out/norm_fwd_shapes.log" 2>&1; }

# norms-design.md, backward threads a row: every case's backward under each block shape of the table, the
# 2-pack blocks the fits take only for few or many rows (or never) included
section_norm_bwd_shapes() { python $here/diagnose.py bwd-shapes "$out/bwd_shapes" >"$out/norm_bwd_shapes.log" 2>&1; }

for s in $sections; do "section_$s" || echo "section $s failed"; done
finish
