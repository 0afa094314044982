#!/usr/bin/env bash
# Time to the best configuration (docs/performance.md, "Time to best"): how close the default `autotune tune`
# gets within a time limit, as a user meets it, for reduction float32 sum, scan float32 inclusive sum,
# compaction int32 flagged 50% and transpose float32, at 2^28 elements (transpose 8192 x 8192) and 2^24
# (4096 x 4096).
#
#   OUT=<dir> bash bench/time_to_best.sh <dir with autotune and versus_libraries>
#
# Databases, logs (runs/) and the table go to $DIR (default $OUT); a DIR outside $OUT lets the phases run as
# several commands on one machine (each phase only adds to what is there; phase brute removes nothing).
#
# Phases (PHASES, default "brute cold warm screen libs table"), each into databases of its own under $DIR:
#   brute   brute force of the full space of every case (--strategy brute_force, no limit): the optimum that
#           the limited runs are divided by. 2^24 first: brute24.db then holds only 2^24 trials, the start of
#           the warm phase. All cases also go into recorded.db (trials only: binaries in a separate cache), the
#           recording that tests and `compare-strategies` replay.
#   cold    the default command from an empty database: `autotune tune F <size> --time-limit L` with no other
#           option, L = the largest of LIMITS (default "15 30 60"). The best at the smaller limits is read off
#           the same run's trace (--stats-json): the default strategy does not know the limit, so a run cut at
#           15 s is this run up to 15 s. RUNS=separate runs every limit on its own instead.
#   warm    the same at 2^28 from a copy of brute24.db (only 2^24 trials): warm start across sizes, WARM_LIMIT
#           seconds (default 30).
#   screen  the same at 2^28 from an empty database with --screen 16 (multi-fidelity), SCREEN_LIMIT (default 30).
#   libs    bench/versus_libraries on each database: the best configuration of each phase timed again next to
#           CUB / cuBLAS and a copy in one harness (median of 30, L2 evicted).
#   table   time_to_best.md from all of the above (bench/time_to_best_table.py).
# Environment: OUT [out], DIR [$OUT], FAMILIES [reduction scan compaction transpose], SIZES [28 24], LIMITS [15 30 60],
#   RUNS [trace], WARM_LIMIT [30], SCREEN_LIMIT [30], SCREEN [16], EXTRA (more tune options for every run).
set -uo pipefail
if [ $# -ne 1 ]; then
  echo "usage: OUT=<dir> bash bench/time_to_best.sh <dir with autotune and versus_libraries>" >&2
  exit 2
fi
AT=$1/autotune
VL=$1/versus_libraries
[ -x "$AT" ] || { echo "error: no autotune binary at $AT" >&2; exit 2; }
OUT=${OUT:-out}
DIR=${DIR:-$OUT}
PHASES=${PHASES:-brute cold warm screen libs table}
FAMILIES=${FAMILIES:-reduction scan compaction transpose}
SIZES=${SIZES:-28 24}
LIMITS=${LIMITS:-15 30 60}
RUNS=${RUNS:-trace}
WARM_LIMIT=${WARM_LIMIT:-30}
SCREEN_LIMIT=${SCREEN_LIMIT:-30}
SCREEN=${SCREEN:-16}
EXTRA=${EXTRA:-}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$DIR/runs"
LOG=$DIR/time_to_best.log
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$DIR/gpu.txt" 2>&1 || true

# The case's tune arguments (kernel, problem, workload) for family $1 at size exponent $2.
case_args() {
  local n=$((1 << $2)) side=$((1 << ($2 / 2 - ($2 > 24))))
  case $1 in
    reduction) echo "reduction --n $n --dtype float32 --op sum" ;;
    scan) echo "scan --n $n --dtype float32 --op inclusive_sum" ;;
    compaction) echo "compaction --problem n=$n,select_pct=50 --dtype int32 --op flagged" ;;
    transpose) echo "transpose --rows $side --cols $side --dtype float32" ;;
  esac
}
# The versus_libraries label of the same case.
case_label() {
  local side=$((1 << ($2 / 2 - ($2 > 24))))
  case $1 in
    reduction) echo "reduction float32 n=2^$2" ;;
    scan) echo "scan float32 n=2^$2" ;;
    compaction) echo "compaction int32 flagged n=2^$2 50%" ;;
    transpose) echo "transpose float32 ${side}x${side}" ;;
  esac
}
max_limit() { local m=0; for l in $LIMITS; do [ "$l" -gt "$m" ] && m=$l; done; echo "$m"; }

# run NAME DB ARGS...: one tune, its stats JSON and log under runs/, the command and its time in the log.
run() {
  local name=$1 db=$2
  shift 2
  local start rc ms
  start=$(date +%s%N)
  # shellcheck disable=SC2086
  "$AT" --db "$db" tune "$@" $EXTRA --stats-json "$DIR/runs/$name.json" > "$DIR/runs/$name.log" 2>&1
  rc=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  echo "$name rc=$rc $((ms / 1000)).$(printf '%03d' $((ms % 1000))) s: autotune tune $*" | tee -a "$LOG"
  grep -E "^(stopped|warm start|verification|time split)" "$DIR/runs/$name.log" | sed 's/^/    /' | tee -a "$LOG"
}

for phase in $PHASES; do
  echo "== phase $phase ($(date +%T))" | tee -a "$LOG"
  case $phase in
    brute)
      for s in $(echo "$SIZES" | tr ' ' '\n' | sort -n); do
        for f in $FAMILIES; do
          # shellcheck disable=SC2046
          run "brute_${f}_$s" "$DIR/recorded.db" $(case_args "$f" "$s") --strategy brute_force \
            --binary-cache "$DIR/binaries.db"
        done
        cp "$DIR/recorded.db" "$DIR/brute$s.db"
      done ;;
    cold)
      for s in $SIZES; do
        for f in $FAMILIES; do
          if [ "$RUNS" = separate ]; then
            for l in $LIMITS; do
              rm -f "$DIR/cold_${f}_${s}_$l.db"
              # shellcheck disable=SC2046
              run "cold_${f}_${s}_$l" "$DIR/cold_${f}_${s}_$l.db" $(case_args "$f" "$s") --time-limit "$l"
            done
          else
            l=$(max_limit)
            rm -f "$DIR/cold_${f}_${s}_$l.db"
            # shellcheck disable=SC2046
            run "cold_${f}_${s}_$l" "$DIR/cold_${f}_${s}_$l.db" $(case_args "$f" "$s") --time-limit "$l"
          fi
        done
      done ;;
    warm)
      [ -f "$DIR/brute24.db" ] || { echo "warm: $DIR/brute24.db is missing (phase brute)" | tee -a "$LOG"; continue; }
      for f in $FAMILIES; do
        cp "$DIR/brute24.db" "$DIR/warm_${f}_28.db"
        # shellcheck disable=SC2046
        run "warm_${f}_28_$WARM_LIMIT" "$DIR/warm_${f}_28.db" $(case_args "$f" 28) --time-limit "$WARM_LIMIT"
      done ;;
    screen)
      for f in $FAMILIES; do
        rm -f "$DIR/screen_${f}_28.db"
        # shellcheck disable=SC2046
        run "screen_${f}_28_$SCREEN_LIMIT" "$DIR/screen_${f}_28.db" $(case_args "$f" 28) --time-limit "$SCREEN_LIMIT" \
          --screen "$SCREEN"
      done ;;
    libs)
      [ -x "$VL" ] || { echo "libs: no versus_libraries binary at $VL" | tee -a "$LOG"; continue; }
      for db in "$DIR"/brute28.db "$DIR"/brute24.db "$DIR"/cold_*.db "$DIR"/warm_*.db "$DIR"/screen_*.db; do
        [ -f "$db" ] || continue
        base=$(basename "$db" .db)
        matches=()
        for f in $FAMILIES; do
          for s in $SIZES; do
            case $base in
              brute28) [ "$s" = 28 ] || continue ;;
              brute24) [ "$s" = 24 ] || continue ;;
              *) [[ $base == *"_${f}_${s}"* ]] || continue ;;
            esac
            matches+=("$(case_label "$f" "$s")")
          done
        done
        [ ${#matches[@]} -gt 0 ] || continue
        list=$(IFS=,; echo "${matches[*]}")
        start=$(date +%s)
        timeout 300 "$VL" --db "$db" --match "$list" --csv "$DIR/runs/libs_$base.csv" > "$DIR/runs/libs_$base.md" \
          2> "$DIR/runs/libs_$base.log"
        echo "libs $base rc=$? in $(( $(date +%s) - start )) s ($list)" | tee -a "$LOG"
      done ;;
    table)
      python3 "$(dirname "$0")/time_to_best_table.py" "$DIR" "$LIMITS" > "$DIR/time_to_best.md"
      cat "$DIR/time_to_best.md" ;;
    *) echo "unknown phase $phase" | tee -a "$LOG" ;;
  esac
done
