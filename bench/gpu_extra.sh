#!/usr/bin/env bash
# Further steps for a run on the GPU machine, after bench/gpu_run.sh has filled $OUT/tune.db (same OUT):
# explore sweeps with the driver's occupancy, the launch-API benchmarks, the example application against the
# tuned database, and compute-sanitizer over the small-size variant tests. Binaries are carried from the
# development machine.
# Usage: OUT=dir [DB=path] STEPS="explore bench app sanitize" bash bench/gpu_extra.sh [build-dir] [app-binary]
set -uo pipefail
B=${1:-build}
APP=${2:-}
OUT=${OUT:-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
DB=${DB:-$OUT/tune.db}
at() { "$B/autotune" --db "$DB" "$@"; }
stamp() { echo "== $1 rc=$2 in $(( $(date +%s) - $3 )) s"; }

for step in ${STEPS:-explore bench app sanitize}; do
  start=$(date +%s)
  case $step in
    explore)
      red="reduction --n 67108864 --dtype float32 --op sum"
      at explore $red --fix VARIANT=grid_stride --fix ITEMS_PER_THREAD=8 --fix VEC=2 --fix FINAL=atomic \
         --fix KAHAN=0 --plot "$OUT/explore_reduction.svg" > "$OUT/explore_reduction.txt" 2>&1
      stamp explore_reduction $? "$start"; tail -n 14 "$OUT/explore_reduction.txt"
      start=$(date +%s)
      at explore $red --fix VARIANT=warp_shuffle --fix ITEMS_PER_THREAD=1 --fix VEC=1 --fix FINAL=atomic \
         --fix KAHAN=0 --plot "$OUT/explore_reduction_scalar.svg" > "$OUT/explore_reduction_scalar.txt" 2>&1
      stamp explore_reduction_scalar $? "$start"; tail -n 6 "$OUT/explore_reduction_scalar.txt"
      start=$(date +%s)
      at explore scan --n 67108864 --dtype float32 --op inclusive_sum --plot "$OUT/explore_scan.svg" \
         > "$OUT/explore_scan.txt" 2>&1
      stamp explore_scan $? "$start"; tail -n 12 "$OUT/explore_scan.txt"
      ;;
    bench)
      "$B/bench/lookup_latency" "$DB" > "$OUT/lookup_latency.txt" 2>&1
      stamp lookup_latency $? "$start"; tail -n 8 "$OUT/lookup_latency.txt"
      start=$(date +%s)
      "$B/bench/launch_overhead" --out "$OUT/launch_overhead.csv" > "$OUT/launch_overhead.txt" 2>&1
      stamp launch_overhead $? "$start"; tail -n 12 "$OUT/launch_overhead.txt"
      ;;
    app)
      [ -n "$APP" ] || { echo "app: no binary given"; continue; }
      at tune reduction --n 1048576 --dtype float32 --op sum --strategy random_sample --budget 40 > "$OUT/app_tune.log" 2>&1
      at tune scan --n 1048576 --dtype float32 --op inclusive_sum --strategy random_sample --budget 40 >> "$OUT/app_tune.log" 2>&1
      { "$APP" "$DB" 1048576; echo "rc=$?"; "$APP" "$DB" 10000000; echo "rc=$?";
        "$APP" "$OUT/missing.db" 4097; echo "rc=$?"; } > "$OUT/app.txt" 2>&1
      stamp app 0 "$start"; cat "$OUT/app.txt" | tail -n 30
      ;;
    sanitize)
      for tool in memcheck racecheck; do
        for tag in scan compaction; do
          timeout "${SANITIZE_TIMEOUT:-120}" compute-sanitizer --tool $tool --error-exitcode 9 \
            "$B/tests/test_gpu" "[sanitize][$tag]" > "$OUT/sanitize_${tool}_$tag.log" 2>&1
          echo "compute-sanitizer $tool [$tag] rc=$?: $(grep -E 'ERROR SUMMARY|test cases' "$OUT/sanitize_${tool}_$tag.log" | tr '\n' ' ')"
        done
      done
      stamp sanitize 0 "$start"
      ;;
  esac
done
