#!/usr/bin/env bash
# Tuning throughput (docs/performance.md): brute force over the reduction space of the Kernel Tuner
# comparison -- block size 64..1024 x grid {1,2,4,8,16,32} x SMs x vector width 1/2/4 x unroll 1/2/4 = 270
# configurations at n = 2^26, float32 sum -- expressed as a restriction of the built-in reduction spec
# (grid-stride variant, second-pass final step, no Kahan, and without the spec's "one wave of blocks" rule).
# Four cases, each with a fresh trial database: --jobs 1 and all cores, each with a cold binary cache and
# then with the cache the cold run filled (binaries cached, trials not).
#
# Usage: OUT=<dir> bash bench/tuning_throughput.sh <dir with the autotune binary>
#   OUT       where throughput.md, throughput_<case>.json and throughput.log go (default ./out)
#   JOBS_ALL  compile threads of the "all cores" cases (default: nproc)
#   SIMULATE  a recorded database (e.g. tests/data/recorded_h200.db): no GPU needed; replays recorded trials
#             over the part of the space they cover (the spec's constraints kept), to check this script and
#             the CLI's statistics. Its figures measure nothing.
# Exit status: 0 when every case verified every configuration and the best configurations agree within
# noise; 1 when a check failed (the table is written anyway); 2 for bad usage; 3 without a GPU.
set -uo pipefail
if [ $# -ne 1 ]; then
  echo "usage: OUT=<dir> bash bench/tuning_throughput.sh <dir with the autotune binary>" >&2
  exit 2
fi
AT=$1/autotune
OUT=${OUT:-out}
JOBS_ALL=${JOBS_ALL:-$(nproc)}
SIMULATE=${SIMULATE:-}
if [ ! -x "$AT" ]; then
  echo "error: no autotune binary at $AT" >&2
  exit 2
fi
command -v python3 >/dev/null || { echo "error: python3 is needed for the table" >&2; exit 2; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/throughput.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

PROBLEM=(reduction --n 67108864 --dtype float32 --op sum)
SPACE=(--values VARIANT=grid_stride --values FINAL=second_pass --values KAHAN=0
       --values BLOCKS_PER_SM=1,2,4,8,16,32 --values ITEMS_PER_THREAD=1,2,4)
if [ -n "$SIMULATE" ]; then
  MODE=(--simulate --from "$SIMULATE")
  echo "SIMULATE: replaying $SIMULATE; the figures below measure nothing"
else
  SPACE+=(--drop-constraint 'BLOCKS_PER_SM * BLOCK_SIZE <= 2048')
  MODE=()
  if ! "$AT" devices > "$WORK/devices.txt" 2>&1; then
    echo "error: no GPU: $(head -n 3 "$WORK/devices.txt")" >&2
    echo "  (SIMULATE=tests/data/recorded_h200.db checks this script without one)" >&2
    exit 3
  fi
  cat "$WORK/devices.txt"
fi

expected=$("$AT" space "${PROBLEM[@]}" "${SPACE[@]}" | awk '/^valid:/ {print $2}')
if [ -z "$SIMULATE" ] && [ "$expected" != 270 ]; then
  echo "error: the restricted space has ${expected:-no} configurations, not 270" >&2
  exit 1
fi
echo "space: $expected configurations; all cores = --jobs $JOBS_ALL"

LOG=$OUT/throughput.log
: > "$LOG"
run_case() {  # name jobs cache-db
  local name=$1 jobs=$2 cache=$3
  local start end rc
  start=$(date +%s.%N)
  "$AT" --db "$WORK/$name.db" tune "${PROBLEM[@]}" "${SPACE[@]}" "${MODE[@]}" --strategy brute_force \
    --jobs "$jobs" --binary-cache "$cache" --stats-json "$OUT/throughput_$name.json" > "$WORK/$name.log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  echo "$name $(python3 -c "print(f'{$end - $start:.2f}')") $rc" >> "$WORK/commands.txt"
  { echo "== $name (--jobs $jobs, cache $(basename "$cache")): rc=$rc"; cat "$WORK/$name.log"; } >> "$LOG"
  echo "== $name rc=$rc: $(grep '^time split' "$WORK/$name.log" || tail -n 2 "$WORK/$name.log")"
}

run_case jobs1_cold 1 "$WORK/cache_jobs1.db"
run_case all_cold "$JOBS_ALL" "$WORK/cache_all.db"
run_case all_warm "$JOBS_ALL" "$WORK/cache_all.db"
run_case jobs1_warm 1 "$WORK/cache_jobs1.db"

python3 - "$OUT" "$WORK/commands.txt" "$expected" "$JOBS_ALL" "${SIMULATE:+simulated}" <<'EOF'
import json, os, sys
out, commands, expected, jobs_all, simulated = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
NOISE = 0.03  # two best times closer than this count as the same result
cases = [("jobs1_cold", "1", "cold"), ("all_cold", jobs_all, "cold"), ("all_warm", jobs_all, "warm"),
         ("jobs1_warm", "1", "warm")]
command = {}
for line in open(commands):
    name, seconds, rc = line.split()
    command[name] = (float(seconds), int(rc))
stats, problems = {}, []
for name, _, _ in cases:
    path = os.path.join(out, f"throughput_{name}.json")
    if command.get(name, (0, 1))[1] != 0 or not os.path.exists(path):
        problems.append(f"{name}: the tune command failed (see throughput.log)")
        continue
    s = json.load(open(path))
    stats[name] = s
    ok = s["statuses"].get("ok", 0)
    if s["configs"] != expected or ok != expected:
        problems.append(f"{name}: {ok} of {s['configs']} configurations verified ok, {expected} expected "
                        f"(statuses {s['statuses']})")

def agree(a, b):
    """Same best configuration, or best times within NOISE and each best within NOISE of the best in the other
    run (its time there from the other run's verified trials; the top list where those are missing)."""
    if a["best"]["label"] == b["best"]["label"]:
        return True, "same"
    ta, tb = a["best"]["median_ns"], b["best"]["median_ns"]
    if abs(ta - tb) > NOISE * min(ta, tb):
        return False, f"{ta / 1e3:.2f} us vs {tb / 1e3:.2f} us"
    for x, y in ((a, b), (b, a)):
        times = y.get("ok_median_ns") or {t["label"]: t["median_ns"] for t in y["top"]}
        t = times.get(x["best"]["label"])
        if t is None or t > (1 + NOISE) * y["best"]["median_ns"]:
            return False, f"{x['best']['label']} is not within {NOISE:.0%} of the best in the other run"
    return True, "within noise"

ref = stats.get("jobs1_cold")
rows = []
for name, jobs, cache in cases:
    s = stats.get(name)
    if s is None:
        rows.append(f"| {name} | {jobs} | {cache} | failed | | | | | | | | | | | |")
        continue
    verdict = "reference"
    if ref is not None and s is not ref:
        same, why = agree(ref, s)
        verdict = why
        if not same:
            problems.append(f"{name}: best configuration differs from jobs1_cold beyond noise ({why})")
    b = s["best"] or {"label": "-", "median_ns": 0}
    rows.append(f"| {name} | {jobs} | {cache} | {command[name][0]:.2f} | {s['wall_s']:.2f} | {s['configs_per_s']:.1f} "
                f"| {s['setup_s']:.2f} | {s['compile_s']:.2f} ({s['compiled']} / {s['cache_hits']} hits) "
                f"| {s['idle_gpu_s']:.2f} | {s['verify_s']:.2f} | {s['benchmark_s']:.2f} | {s['database_s']:.2f} "
                f"| {s['statuses'].get('ok', 0)}/{s['configs']} | `{b['label']}` | {b['median_ns'] / 1e3:.2f} us ({verdict}) |")

device = next(iter(stats.values()))["device"] if stats else "?"
lines = [f"# Tuning throughput{' (SIMULATED: replayed trials, no measurement)' if simulated else ''}", "",
         f"Brute force over {expected} reduction configurations (float32 sum, n = 2^26) on {device}; "
         f"all cores = --jobs {jobs_all}.",
         "Times in seconds. command: the whole `autotune tune` process; wall: the session (setup included); "
         "compile: summed over the compile threads (compilations / cache hits); idle GPU: time the GPU waited "
         "for a compilation.", "",
         "| case | jobs | binary cache | command s | wall s | configs/s | setup | compile (compiled / hits) "
         "| idle GPU | verify | benchmark | db | verified ok | best config | best time |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"] + rows + [""]
parts = ["start", "inputs", "reference", "upload", "copy_bandwidth"]
lines += ["Set-up parts in seconds (`setup_parts_s`; inputs overlap the copy-bandwidth measurement and the "
          "reference overlaps the upload; start: the backend's GPU worker, driver and context, before the "
          "session's wall time):", "",
          "| case | " + " | ".join(parts) + " |", "|---|" + "---|" * len(parts)]
for name, jobs, cache in cases:
    s = stats.get(name)
    if s is None:
        continue
    sp = s.get("setup_parts_s", {})
    lines.append(f"| {name} | " + " | ".join(f"{sp[k]:.2f}" if k in sp else "-" for k in parts) + " |")
lines += [""]
lines += ["Checks: " + ("all passed" if not problems else "FAILED")] + [f"- {p}" for p in problems]
open(os.path.join(out, "throughput.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
sys.exit(1 if problems else 0)
EOF
