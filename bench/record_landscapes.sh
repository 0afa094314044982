#!/usr/bin/env bash
# Records the brute-force landscapes of issue 29 ("landscapes where optima move") into one database: every
# configuration of each space measured with the full protocol (no racing: --race 0), three sizes per kernel:
#   reduction float32 sum (its grid size, BLOCKS_PER_SM, is a tuning parameter) at n = 2^18, 2^20, 2^22
#   transpose float32 at 1024^2, 2048^2 (inside the L2) and 8192^2 (far outside it)
#   the examples/saxpy user kernel at n = 2^16, 2^20, 2^24
# The result ships as tests/data/landscapes_<gpu>.db for the cpu tests and `compare-strategies`; the log names the
# best configuration of every size, so that one sees whether the optimum moved.
# Usage: OUT=<dir> bash bench/record_landscapes.sh <dir with the autotune binary> [GPU ordinal]
set -uo pipefail
AT=${1:?usage: OUT=dir bash bench/record_landscapes.sh BUILD_DIR [GPU]}/autotune
GPU=${2:-0}
HERE=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-out}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$OUT"
DB=$OUT/landscapes.db
LOG=$OUT/landscapes.log
: > "$LOG"
rc_all=0
record() {  # tune arguments
  local t0 t1 rc
  t0=$(date +%s.%N)
  "$AT" --db "$DB" tune "$@" --strategy brute_force --race 0 --gpu "$GPU" --top 3 >> "$LOG" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  [ "$rc" -eq 0 ] || rc_all=1
  echo "== $* rc=$rc $(python3 -c "print(round($t1 - $t0, 1))") s" | tee -a "$LOG"
}
for n in 262144 1048576 4194304; do record reduction --n "$n" --dtype float32 --op sum; done
for d in 1024 2048 8192; do record transpose --rows "$d" --cols "$d"; done
for n in 65536 1048576 16777216; do record "$HERE/examples/saxpy/saxpy.tune.json" --n "$n"; done
"$AT" --db "$DB" summary >> "$LOG" 2>&1 || true
exit $rc_all
