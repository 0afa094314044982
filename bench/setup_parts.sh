#!/usr/bin/env bash
# The set-up of a large problem (docs/performance.md "The set-up's memory"): what a tune does before its
# first measurement -- make the inputs, compute the reference, copy them through the shared region to the GPU --
# split into its parts (`setup_parts_s` of --stats-json), for one or more builds, alternating round by round.
# Each run: `tune <case> --budget BUDGET` from an empty database (and so a cold binary cache); the table also gives
# the session's wall time and how long its GPU waited for binaries.
#
# Usage: OUT=<dir> bash bench/setup_parts.sh <build> [<another build> ...]
#   a build is a dir with autotune, optionally followed by "::" and options for its tune commands
#   (e.g. "bin::--inputs-on host" against "bin": one binary, inputs made on the host and drawn on the GPU)
#   CASES   which problems (default "red28 scan28": reduction float32 sum and scan float32 inclusive sum at 2^28)
#   ROUNDS  rounds of alternation (default 3)
#   BUDGET  configurations per run (default 8)
#   RANKS   also run each case under `mpirun -np RANKS` (default 0: not); on a machine with fewer GPUs the ranks
#           share them, so their set-ups overlap on the same cores, as on a node of a cluster
# Writes $OUT/setup_parts.md (the table) and $OUT/setup_parts.log. Exit status 0, 1 when a run failed, 2 for bad
# usage, 3 without a GPU.
set -uo pipefail
. "$(dirname "$0")/common.sh"
if [ $# -lt 1 ]; then
  echo "usage: OUT=<dir> bash bench/setup_parts.sh <dir with autotune> [<another dir> ...]" >&2
  exit 2
fi
OUT=${OUT:-out}
CASES=${CASES:-red28 scan28}
ROUNDS=${ROUNDS:-3}
RANKS=${RANKS:-0}
BUDGET=${BUDGET:-8}
BINS=()
EXTRA=()
for build in "$@"; do
  d=${build%%::*}
  extra=""
  [ "$d" != "$build" ] && extra=${build#*::}
  [ -x "$d/autotune" ] || { echo "error: no autotune binary at $d/autotune" >&2; exit 2; }
  BINS+=("$(cd "$d" && pwd)/autotune")
  EXTRA+=("$extra")
done
command -v python3 >/dev/null || { echo "error: python3 is needed for the table" >&2; exit 2; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
bench_out_work_log setup_parts
if ! "${BINS[0]}" devices >> "$LOG" 2>&1; then
  echo "error: no GPU (see $LOG)" >&2
  exit 3
fi
echo "host: $(nproc) cores"

problem() {
  case $1 in
    red28) echo "reduction --n 268435456 --dtype float32 --op sum" ;;
    scan28) echo "scan --n 268435456 --dtype float32 --op inclusive_sum" ;;
    *) echo "error: unknown case $1" >&2; exit 2 ;;
  esac
}

failed=0
for round in $(seq 1 "$ROUNDS"); do
  for c in $CASES; do
    read -r -a P <<< "$(problem "$c")"
    for b in "${!BINS[@]}"; do
      for ranks in 0 $([ "$RANKS" -gt 0 ] && echo "$RANKS"); do
        name="${c}_b${b}_np${ranks}_r${round}"
        cmd=()
        [ "$ranks" -gt 0 ] && cmd=(mpirun --bind-to none --oversubscribe -np "$ranks")
        read -r -a X <<< "${EXTRA[$b]}"
        cmd+=("${BINS[$b]}" --db "$WORK/$name.db" tune "${P[@]}" --budget "$BUDGET" --stats-json "$WORK/$name.json"
              "${X[@]}")
        echo "== $name: ${cmd[*]}" >> "$LOG"
        "${cmd[@]}" > "$WORK/$name.log" 2>&1
        rc=$?
        cat "$WORK/$name.log" >> "$LOG"
        if [ $rc -ne 0 ]; then
          echo "$name failed (see $LOG)"
          failed=1
          continue
        fi
        # Rank 0's summary of this run: how long each rank took to prepare.
        sed -n 's/^ *rank [0-9]* (.*, \([0-9.]*\) s preparing.*/\1/p' "$WORK/$name.log" | paste -sd/ > "$WORK/$name.ranks"
        echo "$c $b $ranks $round $WORK/$name.json $WORK/$name.ranks" >> "$WORK/runs.txt"
      done
    done
  done
done
[ -s "$WORK/runs.txt" ] || { echo "error: no run succeeded (see $LOG)" >&2; exit 1; }

python3 - "$WORK/runs.txt" "$@" > "$OUT/setup_parts.md" <<'PY'
import json, sys
runs = [l.split() for l in open(sys.argv[1])]
dirs = sys.argv[2:]
print("builds: " + ", ".join(f"b{i} = {d}" for i, d in enumerate(dirs)))
print()
print("| case | build | ranks | round | set-up s | inputs | draw | tools | reference | upload | expected values upload | "
      "copy bandwidth | each rank preparing s | configs | session wall s | idle GPU s |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for case, b, ranks, rnd, js, rk in runs:
    s = json.load(open(js))
    p = s.get("setup_parts_s", {})
    cell = lambda k: f"{p[k]:.2f}" if k in p else "-"
    per_rank = open(rk).read().strip() if ranks != "0" else ""
    print(f"| {case} | b{b} | {ranks if ranks != '0' else '1 (no mpirun)'} | {rnd} | {s.get('setup_s', 0):.2f} | "
          f"{cell('inputs')} | {cell('draw')} | {cell('tools')} | {cell('reference')} | {cell('upload')} | {cell('expected_upload')} | "
          f"{cell('copy_bandwidth')} | {per_rank or '-'} | {s.get('configs', 0)} | {s.get('wall_s', 0):.2f} | "
          f"{s.get('idle_gpu_s', 0):.2f} |")
PY
cat "$OUT/setup_parts.md"
exit $failed
