#!/usr/bin/env bash
# Nsight Compute profile of our tuned kernel and the library's kernel for chosen bench/versus_libraries cases
# (the issue's "find out with ncu why a kernel is below the limit"). For the GPU machine.
#
#   MATCH='scan float32 n=2^28' KERNELS='regex:scan_single_pass|DeviceScanKernel' NAME=scan28 \
#     OUT=out bash bench/profile_versus.sh BIN_DIR DB
#
# BIN_DIR holds `versus_libraries`; DB is a tuning database for this GPU (versus_libraries' --db). Each matched
# case runs ours and the library once for verification and --reps 5 times (no warm-up); ncu profiles the first
# COUNT launches whose kernel name matches KERNELS, with the clocks left alone (--clock-control none) and caches
# flushed before every replay pass (ncu's default). Writes $OUT/$NAME.ncu-rep, $OUT/$NAME.txt (the details page)
# and $OUT/$NAME.run.log (the benchmark's own output under the profiler).
#
# Environment: MATCH (required: --match of versus_libraries), KERNELS [regex:.] (ncu -k), COUNT [24],
#   NAME [profile], OUT [out], SECTIONS [SpeedOfLight MemoryWorkloadAnalysis Occupancy LaunchStats
#   WarpStateStats SchedulerStats ComputeWorkloadAnalysis]
set -uo pipefail

if [ $# -ne 2 ]; then
  echo "usage: MATCH='<case text>' bash bench/profile_versus.sh BIN_DIR DB" >&2
  exit 2
fi
BIN=$1
DB=$2
MATCH=${MATCH:?MATCH must name the cases to profile, e.g. MATCH='scan float32 n=2^28'}
KERNELS=${KERNELS:-regex:.}
COUNT=${COUNT:-24}
NAME=${NAME:-profile}
OUT=${OUT:-out}
SECTIONS=${SECTIONS:-SpeedOfLight MemoryWorkloadAnalysis Occupancy LaunchStats WarpStateStats SchedulerStats ComputeWorkloadAnalysis}
if [ ! -x "$BIN/versus_libraries" ]; then
  echo "profile_versus.sh: $BIN/versus_libraries is missing or not executable" >&2
  exit 2
fi
if ! command -v ncu > /dev/null; then
  echo "profile_versus.sh: ncu (Nsight Compute) is not on the PATH" >&2
  exit 3
fi
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}

args=(--clock-control none -k "$KERNELS" -c "$COUNT" -f -o "$OUT/$NAME")
for s in $SECTIONS; do args+=(--section "$s"); done
ncu "${args[@]}" "$BIN/versus_libraries" --db "$DB" --match "$MATCH" --reps 5 --warmup 0 \
  > "$OUT/$NAME.run.log" 2>&1
rc=$?
echo "ncu + versus_libraries: rc=$rc ($OUT/$NAME.run.log)"
if [ -f "$OUT/$NAME.ncu-rep" ]; then
  ncu --import "$OUT/$NAME.ncu-rep" --page details > "$OUT/$NAME.txt" 2>&1
  echo "details: $OUT/$NAME.txt ($(grep -c 'Section: GPU Speed Of Light' "$OUT/$NAME.txt") kernels)"
else
  tail -n 20 "$OUT/$NAME.run.log"
fi
exit $rc
