#!/usr/bin/env bash
# Scale-out with MPI (docs/performance.md "Scale-out"): the same tuning job in one process and under mpirun
# with 1 and 2 ranks, each case with a fresh database and a cold binary cache:
#   thr_*   the 270-configuration throughput space (bench/tuning_throughput.sh) at n = 2^26
#   scan_*  the full scan space at n = 2^26 (float32 inclusive sum)
#   red28_*, scan28_*  full brute force of the reduction and scan spaces at n = 2^28 (one process, 2 ranks)
#   sim_*   a replay of the 2436 recorded reduction configurations (tests/data/recorded_h200.db): no GPU work,
#           so the difference to the single process is the MPI overhead per configuration
# Two ranks on a machine with one GPU share it (correctness and overhead, not speed: their timed samples
# overlap); with RANKS_GPU=2 on a machine with two GPUs each rank drives its own (node-local rank -> GPU).
# Ranks split the cores: the default compile cap of a rank is its share of the node (docs/performance.md).
#
# Usage: OUT=<dir> bash bench/scale_out.sh <dir with the autotune binary built with -DAUTOTUNE_MPI=ON>
#   CASES  which groups to run (default "thr scan sim"; also red28, scan28; without a GPU only sim runs)
#   WARMUP seconds of an uncounted compile-heavy tune (the scan at 2^20, a scratch database) before the cases
#          (default 60; 0 skips it): on a freshly started GPU machine the first minute or two of compiling runs
#          several times slower, which would slow whichever case came first (docs/performance.md "Compile scaling")
# Writes $OUT/scale_out.md (the table), scale_out_<case>.json (--stats-json) and scale_out.log.
set -uo pipefail
. "$(dirname "$0")/common.sh"
if [ $# -ne 1 ]; then
  echo "usage: OUT=<dir> bash bench/scale_out.sh <dir with the autotune binary>" >&2
  exit 2
fi
AT=$(cd "$1" && pwd)/autotune
HERE=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-out}
CASES=${CASES:-thr scan sim}
NPROC=$(nproc)
[ -x "$AT" ] || { echo "error: no autotune binary at $AT" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "error: mpirun is not installed (Debian: openmpi-bin)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "error: python3 is needed for the table" >&2; exit 2; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# No core binding: each rank runs compile threads on its share of the cores.
MPI=(mpirun --bind-to none --oversubscribe)
bench_out_work_log scale_out
if ! "$AT" devices >> "$LOG" 2>&1; then
  echo "no GPU: only the replay cases run" | tee -a "$LOG"
  CASES=sim
fi

THR=(reduction --n 67108864 --dtype float32 --op sum --values VARIANT=grid_stride --values FINAL=second_pass
     --values KAHAN=0 --values BLOCKS_PER_SM=1,2,4,8,16,32 --values ITEMS_PER_THREAD=1,2,4
     --drop-constraint 'BLOCKS_PER_SM * BLOCK_SIZE <= 2048')
SCAN=(scan --n 67108864)
SIM=(reduction --n 67108864 --simulate --from "$HERE/tests/data/recorded_h200.db")
RED28=(reduction --n 268435456 --strategy brute_force)
SCAN28=(scan --n 268435456 --strategy brute_force)

# run_case NAME RANKS (0 = no mpirun) ARGS...
run_case() {
  local name=$1 ranks=$2
  shift 2
  # The default command: no --jobs (each rank compiles on its share of the node's cores, ranks >= 2 included).
  local jobs="default"
  local db=$WORK/$name.db cmd=()
  [ "$ranks" -gt 0 ] && cmd=("${MPI[@]}" -np "$ranks")
  cmd+=("$AT" --db "$db" tune "$@" --stats-json "$OUT/scale_out_$name.json")
  echo "== $name (started $(date +%s.%N)): ${cmd[*]}" >> "$LOG"
  local t0 t1
  t0=$(date +%s.%N)
  "${cmd[@]}" >> "$LOG" 2>&1
  local rc=$?
  t1=$(date +%s.%N)
  echo "$name $ranks $jobs $rc $(python3 -c "print($t1 - $t0)")" >> "$WORK/cases.txt"
  echo "$name: ranks=$ranks jobs=$jobs rc=$rc"
}

WARMUP=${WARMUP:-60}
if [ "$WARMUP" -gt 0 ] && [ "$CASES" != sim ]; then
  echo "warm-up: ${WARMUP} s of compiling (not counted)"
  "$AT" --db "$WORK/warmup.db" tune scan --n 1048576 --time-limit "$WARMUP" >> "$LOG" 2>&1 ||
    echo "warning: the warm-up tune failed (see $LOG)"
  grep -E "^compilations" "$LOG" | tail -n 1 | sed 's/^/  warm-up /'
fi

for group in $CASES; do
  case $group in
    thr) run_case thr_single 0 "${THR[@]}"; run_case thr_np1 1 "${THR[@]}"; run_case thr_np2 2 "${THR[@]}" ;;
    scan) run_case scan_single 0 "${SCAN[@]}"; run_case scan_np1 1 "${SCAN[@]}"; run_case scan_np2 2 "${SCAN[@]}" ;;
    sim) for r in 0 1 2 4; do run_case "sim_np$r" "$r" "${SIM[@]}"; done ;;
    red28) run_case red28_single 0 "${RED28[@]}"; run_case red28_np2 2 "${RED28[@]}" ;;
    scan28) run_case scan28_single 0 "${SCAN28[@]}"; run_case scan28_np2 2 "${SCAN28[@]}" ;;
    *) echo "error: unknown case group $group" >&2; exit 2 ;;
  esac
done

python3 - "$WORK/cases.txt" "$OUT" > "$OUT/scale_out.md" <<'PY'
import json, sys
rows = [l.split() for l in open(sys.argv[1])]
out = sys.argv[2]
base = {}
print("| case | ranks | compile threads per rank | configs | command s | session wall s | configs/s | x single | "
      "GPU work s | set-up s | database s | idle GPU s | CPU ms per compilation | best (median) | best configuration |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
notes = []
for name, ranks, jobs, rc, cmd_s in rows:
    group = name.split("_")[0]
    try:
        s = json.load(open(f"{out}/scale_out_{name}.json"))
    except Exception:
        print(f"| {name} | {ranks} | {jobs} | failed (rc {rc}) | | | | | | | | | | | |")
        continue
    n = s["configs"] + s["reused"]
    rate = s["configs"] / s["wall_s"] if s["wall_s"] > 0 else 0
    if ranks in ("0",):
        base[group] = (rate, s["wall_s"], n)
    x = rate / base[group][0] if group in base and base[group][0] > 0 else float("nan")
    best = s.get("best") or {}
    print(f"| {name} | {ranks if ranks != '0' else '- (no mpirun)'} | {s.get('compile_threads_used', '?')} of "
          f"{s.get('compile_jobs', jobs)} | {n} | {float(cmd_s):.2f} | "
          f"{s['wall_s']:.2f} | {rate:.1f} | {x:.2f} | {s.get('verify_s', 0) + s.get('benchmark_s', 0):.2f} | "
          f"{s.get('setup_s', 0):.2f} | {s.get('database_s', 0):.2f} | {s.get('idle_gpu_s', 0):.2f} | "
          f"{s.get('compile_cpu_ms_mean', 0):.1f} | {best.get('median_ns', 0) / 1e3:.2f} us | "
          f"`{best.get('label', '-')}` |")
    if group == "sim" and ranks != "0" and group in base and n:
        notes.append(f"{name}: MPI overhead {(s['wall_s'] - base[group][1]) / n * 1e3:.3f} ms per configuration "
                     f"(session wall {s['wall_s']:.3f} s vs {base[group][1]:.3f} s in one process, {n} configurations)")
print()
print("GPU work (verification and benchmark runs) and idle GPU are summed over the ranks; set-up (the ranks prepare at "
      "once; the log's 'mpi: what each rank measured' gives each rank's) and database are the session's.")
for n in notes:
    print("- " + n)
PY
cat "$OUT/scale_out.md"
