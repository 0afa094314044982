#!/usr/bin/env bash
# The one command for the GPU machine: tunes every (family, size, dtype) case of bench/versus_libraries into
# one database with the autotune CLI, then runs the benchmark (ours against CUB, cuBLAS and a copy).
#
#   bash bench/versus_libraries.sh [BIN_DIR]
#
# BIN_DIR holds the carried binaries `autotune` and `versus_libraries` (default: build/ and build/bench/).
# Everything it writes goes under $OUT (default ./out): tune.db (trials and the binary cache), tune/*.log,
# tune_times.txt, versus_libraries.md (the tables), versus_libraries.csv, versus_libraries.log (progress,
# chosen configurations, errors), gpu.txt. Documented in docs/performance.md.
#
# Tuning is random sampling with the same seed at every size, so the configurations tried at a large size are
# a prefix of those tried at a smaller one and their binaries come from the database's cache. Budgets are per
# size (configurations measured); at 2^28 every verification of a scan or compaction moves 1 GiB back to the
# host, hence the small budget there. TUNE_SECONDS bounds all tuning: cases left when it is spent are skipped
# (the log says which) and the benchmark falls back to the nearest tuned size for them.
#
# Environment (defaults in brackets):
#   OUT [out]  DB [$OUT/tune.db]  TUNE [1] (0: skip tuning, reuse DB)  TUNE_SECONDS [300]
#   SEED [1]  STRATEGY [random_sample]  SAMPLES [15]
#   BUDGET_20 [128]  BUDGET_24 [64]  BUDGET_28 [32]  BUDGET_28_OUT [20] (scan, compaction at 2^28)
#   LIMIT_20 [20]  LIMIT_24 [40]  LIMIT_28 [90] (seconds per tune, a safety net; includes input generation)
#   TRANSPOSE_STRATEGY [brute_force] (90 configurations)  TRANSPOSE_LIMIT [40]
#   COMPACTION_DTYPES [int32 float32]  ONLY [reduction scan compaction transpose]
#   BENCH_ARGS [] (extra arguments of versus_libraries, e.g. --reps 50)  BENCH_TIMEOUT [240]
#   RESTRICT_28_SCAN, RESTRICT_28_COMPACTION: at 2^24 and 2^28, where each verification moves up to 1 GiB and
#     the budget is small, sample only the region that won the tunes at 2^26 and 2^28 (docs/scan.md,
#     docs/compaction.md): scan single_pass and single_pass_warp with VEC 4, PADDING 1, 16 items, 256-512
#     threads, MIN_THREADS_PER_SM 2048, STREAMING and CLEAR_STATE 0 or 1, and 256 x 32 with MIN_THREADS_PER_SM
#     1024 and STREAMING 0 or 1 (20 configurations); compaction
#     single_pass_blocked, staged output, 16 items, 256-512 threads, MIN_THREADS_PER_SM 1536 or 2048,
#     STREAMING and CLEAR_STATE 0 or 1 (20). '' = whole space
set -uo pipefail

BIN=${1:-}
if [ -n "$BIN" ]; then
  AT=$BIN/autotune
  VL=$BIN/versus_libraries
else
  AT=build/autotune
  VL=build/bench/versus_libraries
fi
for b in "$AT" "$VL"; do
  if [ ! -x "$b" ]; then
    echo "versus_libraries.sh: $b is missing or not executable (usage: bash bench/versus_libraries.sh [BIN_DIR])" >&2
    exit 2
  fi
done

OUT=${OUT:-out}
mkdir -p "$OUT/tune"
DB=${DB:-$OUT/tune.db}
SEED=${SEED:-1}
STRATEGY=${STRATEGY:-random_sample}
SAMPLES=${SAMPLES:-15}
BUDGET_20=${BUDGET_20:-128}
BUDGET_24=${BUDGET_24:-64}
BUDGET_28=${BUDGET_28:-32}
BUDGET_28_OUT=${BUDGET_28_OUT:-20}
LIMIT_20=${LIMIT_20:-20}
LIMIT_24=${LIMIT_24:-40}
LIMIT_28=${LIMIT_28:-90}
TRANSPOSE_STRATEGY=${TRANSPOSE_STRATEGY:-brute_force}
TRANSPOSE_LIMIT=${TRANSPOSE_LIMIT:-40}
COMPACTION_DTYPES=${COMPACTION_DTYPES:-int32 float32}
ONLY=${ONLY:-reduction scan compaction transpose}
TUNE_SECONDS=${TUNE_SECONDS:-300}
BENCH_TIMEOUT=${BENCH_TIMEOUT:-240}
RESTRICT_28_SCAN=${RESTRICT_28_SCAN-(VARIANT == 4 || VARIANT == 6) && VEC == 4 && PADDING == 1 && LOOKBACK_DELAY == 0 && L2_PREFETCH == 0 && ((ITEMS_PER_THREAD == 16 && BLOCK_SIZE >= 256 && BLOCK_SIZE <= 512 && MIN_THREADS_PER_SM == 2048) || (ITEMS_PER_THREAD == 32 && BLOCK_SIZE == 256 && MIN_THREADS_PER_SM == 1024))}
RESTRICT_28_COMPACTION=${RESTRICT_28_COMPACTION-VARIANT == 2 && STAGE_OUTPUT == 1 && LOOKBACK_DELAY == 0 && ITEMS_PER_THREAD == 16 && BLOCK_SIZE >= 256 && BLOCK_SIZE <= 512 && MIN_THREADS_PER_SM >= 1536}

export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"

wants() { case " $ONLY " in *" $1 "*) return 0 ;; esac; return 1; }

start_all=$(date +%s)
: > "$OUT/tune_times.txt"
skipped=0
failed=0

# tune LABEL SECONDS AUTOTUNE-TUNE-ARGS...
tune() {
  local label=$1 limit=$2
  shift 2
  local now=$(date +%s)
  if (( now - start_all >= TUNE_SECONDS )); then
    echo "skipped (TUNE_SECONDS=$TUNE_SECONDS spent): $label" | tee -a "$OUT/tune_times.txt"
    skipped=$((skipped + 1))
    return
  fi
  "$AT" --db "$DB" tune "$@" --seed "$SEED" --samples "$SAMPLES" --time-limit "$limit" --top 3 \
    > "$OUT/tune/$label.log" 2>&1
  local rc=$?
  local line="$label: rc=$rc in $(( $(date +%s) - now )) s; $(grep -m1 'valid configurations' "$OUT/tune/$label.log" | sed 's/.*: //')"
  echo "$line" | tee -a "$OUT/tune_times.txt"
  if [ $rc -eq 3 ]; then
    tail -n 3 "$OUT/tune/$label.log"
    echo "versus_libraries.sh: no usable GPU (autotune exit status 3); nothing to measure here" >&2
    exit 3
  fi
  if [ $rc -ne 0 ]; then
    failed=$((failed + 1))
    tail -n 5 "$OUT/tune/$label.log"
  fi
}

# budget_of SIZE_LOG2 MOVES_OUTPUT(0|1): "budget time-limit" of one size (MOVES_OUTPUT: verification moves n elements back).
budget_of() {
  case $1 in
    20) echo "$BUDGET_20 $LIMIT_20" ;;
    24) echo "$BUDGET_24 $LIMIT_24" ;;
    28) if [ "$2" = 1 ]; then echo "$BUDGET_28_OUT $LIMIT_28"; else echo "$BUDGET_28 $LIMIT_28"; fi ;;
  esac
}

if [ "${TUNE:-1}" != 0 ]; then
  # The targets are at 2^24 and 2^28: those sizes first, 2^20 last (skipped first when time runs out).
  if wants transpose; then
    for shape in 8192x8192 4000x4000 4096x4096; do
      r=${shape%x*}
      c=${shape#*x}
      tune "transpose_float32_$shape" "$TRANSPOSE_LIMIT" transpose --rows "$r" --cols "$c" --dtype float32 \
        --strategy "$TRANSPOSE_STRATEGY"
    done
  fi
  for lg in 24 28 20; do
    n=$((1 << lg))
    if wants reduction; then
      read -r budget limit <<< "$(budget_of $lg 0)"
      for dt in int32 float32; do
        tune "reduction_${dt}_2^$lg" "$limit" reduction --n $n --dtype $dt --op sum --strategy "$STRATEGY" --budget "$budget"
      done
    fi
    if wants scan; then
      read -r budget limit <<< "$(budget_of $lg 1)"
      for dt in int32 float32; do
        if [ $lg != 20 ] && [ -n "$RESTRICT_28_SCAN" ]; then r28=(--restrict "$RESTRICT_28_SCAN"); else r28=(); fi
        tune "scan_${dt}_2^$lg" "$limit" scan --n $n --dtype $dt --op inclusive_sum --strategy "$STRATEGY" --budget "$budget" \
          "${r28[@]}"
      done
    fi
    if wants compaction && [ $lg != 20 ]; then
      read -r budget limit <<< "$(budget_of $lg 1)"
      for dt in $COMPACTION_DTYPES; do
        for op in flagged if; do
          for pct in 50 5; do
            if [ $lg != 20 ] && [ -n "$RESTRICT_28_COMPACTION" ]; then r28=(--restrict "$RESTRICT_28_COMPACTION"); else r28=(); fi
            tune "compaction_${dt}_${op}_2^${lg}_${pct}pct" "$limit" compaction --problem "n=$n,select_pct=$pct" \
              --dtype $dt --op $op --strategy "$STRATEGY" --budget "$budget" "${r28[@]}"
          done
        done
      done
    fi
  done
  echo "tuning: $(( $(date +%s) - start_all )) s, $failed failed, $skipped skipped" | tee -a "$OUT/tune_times.txt"
fi

only_arg=$(echo "$ONLY" | tr ' ' ',')
bench_start=$(date +%s)
# shellcheck disable=SC2086
timeout "$BENCH_TIMEOUT" "$VL" --db "$DB" --only "$only_arg" --csv "$OUT/versus_libraries.csv" ${BENCH_ARGS:-} \
  > "$OUT/versus_libraries.md" 2> "$OUT/versus_libraries.log"
rc=$?
echo "versus_libraries: rc=$rc in $(( $(date +%s) - bench_start )) s (total $(( $(date +%s) - start_all )) s)"
tail -n 3 "$OUT/versus_libraries.log"
echo
cat "$OUT/versus_libraries.md"
exit $rc
