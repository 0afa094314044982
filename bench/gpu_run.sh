#!/usr/bin/env bash
# One full run on the GPU machine (binaries built on the development machine and carried along):
# the gpu test tier, then brute-force tunes whose databases and logs come back under $OUT.
# Usage: bash bench/gpu_run.sh [build-dir]   (OUT defaults to ./out)
# Environment: JOBS (tunes: reduction transpose scan compaction), TEST_FILTER / TEST_TIMEOUT / SKIP_TESTS=1,
# DB (database path, default $OUT/tune.db; a re-run with the same DB measures only what is missing),
# TUNE_EXTRA (more tune options, e.g. "--time-limit 150").
set -uo pipefail
B=${1:-build}
OUT=${OUT:-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"
DB=${DB:-$OUT/tune.db}
at() { "$B/autotune" --db "$DB" "$@"; }

if [ "${SKIP_TESTS:-0}" != 1 ]; then
  start=$(date +%s)
  # The [sticky] test ends in a fault that leaves its process without a usable context: a process of its own.
  timeout "${TEST_TIMEOUT:-400}" "$B/tests/test_gpu" "${TEST_FILTER:-~[.]}~[sticky]" -d yes > "$OUT/test_gpu.log" 2>&1
  echo "test_gpu rc=$? in $(( $(date +%s) - start )) s: $(tail -n 3 "$OUT/test_gpu.log" | tr '\n' ' ')"
  timeout 60 "$B/tests/test_gpu" "[sticky]" > "$OUT/test_gpu_sticky.log" 2>&1
  echo "test_gpu [sticky] rc=$?: $(tail -n 3 "$OUT/test_gpu_sticky.log" | tr '\n' ' ')"
fi

for job in ${JOBS:-reduction}; do
  case $job in
    reduction) args="reduction --n 67108864 --dtype float32 --op sum" ;;
    transpose) args="transpose --rows 8192 --cols 8192 --dtype float32" ;;
    scan) args="scan --n 67108864 --dtype float32 --op inclusive_sum" ;;
    compaction) args="compaction --problem n=67108864,select_pct=50 --dtype int32 --op flagged" ;;
    *) continue ;;
  esac
  start=$(date +%s)
  at tune $args --strategy brute_force ${TUNE_EXTRA:-} >> "$OUT/tune_$job.log" 2>&1
  echo "== tune $job rc=$? in $(( $(date +%s) - start )) s"
  tail -n 14 "$OUT/tune_$job.log"
  case $job in
    reduction) at summary $args --by VARIANT ;;
    *) at summary $args ;;
  esac | tee "$OUT/summary_$job.txt"
done
