#!/usr/bin/env bash
# Revalidates the shipped recording of this GPU model (tests/data/recorded_h100.db on an H100) with today's kernel
# sources: every built-in kernel, each recorded cell's best 10 re-measured, carried forward where they agree
# (autotune revalidate, docs/database.md "What invalidates trials"). Writes the revalidated copy and the log under
# $OUT; the wall time of the whole revalidation is the last line.
# Usage: OUT=dir bash bench/revalidate_shipped.sh [build-dir] [recording]
set -uo pipefail
B=${1:-build}
REC=${2:-tests/data/recorded_h100.db}
OUT=${OUT:-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
db="$OUT/$(basename "$REC")"
cp "$REC" "$db"
start=$(date +%s.%N)
for k in reduction scan transpose compaction; do
  "$B/autotune" --db "$db" revalidate "$k" --top 10 2>&1 | tee -a "$OUT/revalidate.log"
  echo "== revalidate $k rc=${PIPESTATUS[0]}"
done
end=$(date +%s.%N)
echo "revalidated $(basename "$REC") (4 kernels, top 10 per cell) in $(python3 -c "print(round($end - $start, 1))") s"
