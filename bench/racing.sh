#!/usr/bin/env bash
# Early rejection (racing, `tune --race`, docs/performance.md "Early rejection") measured: the same tuning run with
# racing off (--race 0) and on (the default, --race 25), each from an empty database and binary cache, on one GPU:
#   1. a GPU-bound space (SPEC, e.g. a Kernel Tuner T1 file of a GEMM): a time limit each (TIME, default 60 s), the
#      default strategy, seed 1: configurations measured, how many were raced, the best found, benchmark time;
#   2. the built-in scan at 2^28 (float32 inclusive sum, whose configurations take 0.7 ms and more): the default
#      strategy for TIME each, seed 1 (skipped with SCAN=0);
#   3. a memory-bound brute force (the 270-configuration reduction space of bench/tuning_throughput.sh at 2^26):
#      the best configuration and its median with and without racing, wall and benchmark time.
# "raced" counts the configurations stopped early, "at the probe" those stopped by the timed first warm-up run.
# Usage: OUT=<dir> [TIME=60] [SCAN=1] bash bench/racing.sh <dir with the autotune binary> <SPEC of the GPU-bound space>
set -uo pipefail
AT=${1:?usage: OUT=dir bash bench/racing.sh BUILD_DIR SPEC}/autotune
SPEC=${2:?usage: OUT=dir bash bench/racing.sh BUILD_DIR SPEC}
OUT=${OUT:-out}
TIME=${TIME:-60}
SCAN=${SCAN:-1}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/racing.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
echo "host: $(nproc) cores; GPU: $("$AT" devices 2>&1 | head -n 2 | tail -n 1)"

RED=(reduction --n 67108864 --dtype float32 --op sum --values VARIANT=grid_stride --values FINAL=second_pass
     --values KAHAN=0 --values BLOCKS_PER_SM=1,2,4,8,16,32 --values ITEMS_PER_THREAD=1,2,4
     --drop-constraint 'BLOCKS_PER_SM * BLOCK_SIZE <= 2048')

run() {  # $1: label, $2: --race value, rest: the tune arguments
  local label=$1 race=$2
  shift 2
  local db="$WORK/$label.db"
  "$AT" --db "$db" tune "$@" --race "$race" --seed 1 --stats-json "$OUT/$label.stats.json" >"$OUT/$label.log" 2>&1
  echo "== $label (--race $race): rc=$?"
  grep -E "measured now|time split" "$OUT/$label.log"
  python3 - "$db" <<'PY'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
rows = con.execute("SELECT median_ns, protocol, config_json FROM trials WHERE status = 'ok'").fetchall()
raced = sum(1 for r in rows if ";raced" in r[1])
probed = sum(1 for r in rows if "@probe" in r[1])
best = min(rows, key=lambda r: r[0]) if rows else None
print(f"ok trials {len(rows)}, raced {raced} ({100.0 * raced / max(1, len(rows)):.0f}%), {probed} of them at the probe")
if best:
    print(f"best {best[0] / 1e3:.2f} us  {best[2]}  protocol {best[1]}")
PY
}

run gpu_bound_race0 0 "$SPEC" --time-limit "$TIME"
run gpu_bound_race25 25 "$SPEC" --time-limit "$TIME"
if [ "$SCAN" != 0 ]; then
  run scan28_race0 0 scan --n 268435456 --dtype float32 --op inclusive_sum --time-limit "$TIME"
  run scan28_race25 25 scan --n 268435456 --dtype float32 --op inclusive_sum --time-limit "$TIME"
fi
run reduction_race0 0 "${RED[@]}"
run reduction_race25 25 "${RED[@]}"
