#!/usr/bin/env bash
# Compile scaling (issue 31): the brute force of the 270-configuration reduction space (bench/tuning_throughput.sh) at
# 2^26 with 1, 2, 4, ... compile threads up to the host's cores, each from an empty database and binary cache, and
# at all cores with NVRTC in process; per run the figures of one compilation from --stats-json (docs/performance.md
# "The time split"): its wall time on the pool thread (messages to the worker included), the compiler's own wall and
# CPU time, context switches (waits, preemptions) and minor page faults of the compiling thread. Prints the host
# (cores, threads per core, CPU model) with the table; writes $OUT/compile_scaling.md and the stats files.
# Usage: OUT=<dir> bash bench/compile_scaling.sh <dir with the autotune binary> [GPU ordinal]
set -uo pipefail
AT=${1:?usage: OUT=dir bash bench/compile_scaling.sh BUILD_DIR [GPU]}/autotune
GPU=${2:-0}
OUT=${OUT:-out}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/compile_scaling.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
CORES=$(nproc)
HOST="host: $CORES cores ($(lscpu 2>/dev/null | awk -F: '/Thread\(s\) per core/ {gsub(/ /,"",$2); print $2}') threads per core), $(lscpu 2>/dev/null | awk -F: '/Model name/ {sub(/^ +/,"",$2); print $2; exit}'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$HOST"
RED=(reduction --n 67108864 --dtype float32 --op sum --values VARIANT=grid_stride --values FINAL=second_pass
     --values KAHAN=0 --values BLOCKS_PER_SM=1,2,4,8,16,32 --values ITEMS_PER_THREAD=1,2,4
     --drop-constraint 'BLOCKS_PER_SM * BLOCK_SIZE <= 2048' --strategy brute_force --gpu "$GPU")
JOBS=()
for j in 1 2 4 8 16 32 64 128; do [ "$j" -le "$CORES" ] && JOBS+=("$j"); done
run() {  # $1: label, rest: extra flags
  local label=$1
  shift
  "$AT" --db "$WORK/$label.db" tune "${RED[@]}" "$@" --stats-json "$OUT/$label.json" >"$OUT/$label.log" 2>&1
  echo "== $label rc=$? $(grep -E '^compilations:' "$OUT/$label.log")"
  # The compile time of each trial in the order measured: the first ones include the workers' start-up.
  python3 - "$WORK/$label.db" "$OUT/$label.json" <<'PY'
import json, sqlite3, statistics, sys
ms = [r[0] for r in sqlite3.connect(sys.argv[1]).execute("SELECT compile_ms FROM trials ORDER BY id") if r[0]]
s = json.load(open(sys.argv[2]))
k = max(1, int(s.get("compile_jobs", 1)))
if len(ms) > k:
    s["first_compiles_ms_mean"] = statistics.mean(ms[:k])
    s["later_compiles_ms_median"] = statistics.median(ms[k:])
    json.dump(s, open(sys.argv[2], "w"), indent=1)
    print(f"   first {k} compilations (one per worker) mean {s['first_compiles_ms_mean']:.1f} ms, later median "
          f"{s['later_compiles_ms_median']:.1f} ms")
PY
}
# A first run that is not counted: the first NVRTC process on a fresh machine reads the compiler's libraries from disk
# (about 3x the compile time of later runs, whatever runs first). Then REPS rounds (default 2) of the default command
# (no --jobs: the adaptive pool) and every fixed cap; the ratio of the default's mean to the best fixed cap's mean is
# the figure of merit (issue 31: at least 0.95).
REPS=${REPS:-2}
run warmup --jobs 4 > /dev/null
for rep in $(seq 1 "$REPS"); do
  sfx=$([ "$rep" -gt 1 ] && echo "_r$rep")
  run "default$sfx"
  for j in "${JOBS[@]}"; do run "jobs$j$sfx" --jobs "$j"; done
done
run "jobs${CORES}_in_process" --jobs "$CORES" --compile-in-process
python3 - "$OUT" "$HOST" "$REPS" "${JOBS[@]}" "$CORES" <<'PY'
import json, os, sys
out, host, reps, jobs, cores = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:-1], sys.argv[-1]
sfx = [""] + [f"_r{r}" for r in range(2, reps + 1)]
labels = [b + x for x in sfx for b in ["default"] + [f"jobs{j}" for j in jobs]] + [f"jobs{cores}_in_process"]
rows = ["| run | threads used | wall s | configs/s | compiles/s | per compile: thread ms | compiler ms | CPU ms | waits | preemptions | page faults | first per worker ms | later median ms | idle GPU s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
for l in labels:
    p = os.path.join(out, l + ".json")
    if not os.path.exists(p):
        rows.append(f"| {l} | failed | | | | | | | | | | | | |")
        continue
    s = json.load(open(p))
    g = lambda k: s.get(k, float("nan"))
    rows.append(f"| {l} | {g('compile_threads_used')}/{g('compile_jobs')} | {g('wall_s'):.2f} | {g('configs_per_s'):.1f} | {g('compiles_per_s'):.1f} | "
                f"{g('compile_wall_ms_mean'):.1f} | {g('compiler_ms_mean'):.1f} | {g('compile_cpu_ms_mean'):.1f} | "
                f"{g('compile_voluntary_switches_mean'):.1f} | {g('compile_involuntary_switches_mean'):.1f} | "
                f"{g('compile_minor_faults_mean'):.0f} | {g('first_compiles_ms_mean'):.1f} | "
                f"{g('later_compiles_ms_median'):.1f} | {g('idle_gpu_s'):.2f} |")
def rate(l):
    p = os.path.join(out, l + ".json")
    return json.load(open(p)).get("configs_per_s", 0.0) if os.path.exists(p) else 0.0
mean = lambda xs: sum(xs) / len(xs)
fixed = max((mean([rate(f"jobs{j}{x}") for x in sfx]), j) for j in jobs)
defaults = [rate("default" + x) for x in sfx]
summary = (f"default (mean of {len(defaults)} runs) {mean(defaults):.1f} configs/s "
           f"({', '.join(f'{d:.1f}' for d in defaults)}); best fixed cap (mean of {len(sfx)} runs each) --jobs "
           f"{fixed[1]} {fixed[0]:.1f}; ratio {mean(defaults) / fixed[0]:.3f}" if fixed[0] > 0
           else "no fixed run succeeded")
text = host + "\n\n" + "\n".join(rows) + "\n\n" + summary + "\n"
open(os.path.join(out, "compile_scaling.md"), "w").write(text)
print(text)
PY
