#!/usr/bin/env bash
# autotune against Kernel Tuner on the same space (issue 31): the brute force of bench/tuning_throughput.sh's
# 270-configuration reduction space (float32 sum, n = 2^26) by `autotune tune` (the default command: no --jobs,
# an empty database and binary cache each time) and by Kernel Tuner (bench/kt_reduction.py, its cuda-python
# backend unless KT_LANG says otherwise), alternating, REPS times each after one uncounted run of each (the first
# NVRTC process on a fresh machine reads the compiler's libraries from disk). Timed by whole command (process
# start to exit, Python start-up and imports included for Kernel Tuner, driver start-up for autotune) and by
# session (each tool's own clock around the tuning). Every configuration must verify in both.
#
# Usage: OUT=<dir> bash bench/kernel_tuner_compare.sh <dir with the autotune binary>
#   REPS     counted runs of each tool (default 3)
#   KT_LANG  Kernel Tuner backend (default nvcuda = cuda-python; cupy also works)
#   PYTHON   the Python with numpy, kernel_tuner and cuda.bindings (default python3; PYTHONPATH is honoured)
# Writes $OUT/kernel_tuner_compare.md and the runs' JSON files. Exit status 0 when every run verified all 270
# configurations; 1 otherwise; 2 for bad usage; 3 without a GPU or without Kernel Tuner.
set -uo pipefail
[ $# -eq 1 ] || { echo "usage: OUT=<dir> bash bench/kernel_tuner_compare.sh <dir with the autotune binary>" >&2; exit 2; }
AT=$1/autotune
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-out}
REPS=${REPS:-3}
KT_LANG=${KT_LANG:-nvcuda}
PYTHON=${PYTHON:-python3}
[ -x "$AT" ] || { echo "error: no autotune binary at $AT" >&2; exit 2; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kt_compare.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
if ! "$AT" devices > "$WORK/devices.txt" 2>&1; then
  echo "error: no GPU: $(head -n 3 "$WORK/devices.txt")" >&2
  exit 3
fi
if ! "$PYTHON" -c "import kernel_tuner, numpy" 2> "$WORK/import.txt"; then
  echo "error: $PYTHON cannot import kernel_tuner: $(tail -n 1 "$WORK/import.txt")" >&2
  echo "  (pip install kernel_tuner cuda-python, or put its sources on PYTHONPATH)" >&2
  exit 3
fi
HOST="host: $(nproc) cores, $(lscpu 2>/dev/null | awk -F: '/Model name/ {sub(/^ +/,"",$2); print $2; exit}')"
echo "$HOST"
head -n 2 "$WORK/devices.txt"

RED=(reduction --n 67108864 --dtype float32 --op sum --values VARIANT=grid_stride --values FINAL=second_pass
     --values KAHAN=0 --values BLOCKS_PER_SM=1,2,4,8,16,32 --values ITEMS_PER_THREAD=1,2,4
     --drop-constraint 'BLOCKS_PER_SM * BLOCK_SIZE <= 2048' --strategy brute_force)
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
run_autotune() {  # label
  local t0 t1 rc
  rm -f "$WORK/at.db" "$WORK/at.db-wal" "$WORK/at.db-shm"
  t0=$(now)
  "$AT" --db "$WORK/at.db" tune "${RED[@]}" --stats-json "$OUT/kt_compare_$1.json" > "$OUT/kt_compare_$1.log" 2>&1
  rc=$?
  t1=$(now)
  echo "autotune $1 $rc $(secs "$t0" "$t1")" >> "$WORK/runs.txt"
  echo "== autotune $1: rc=$rc, $(secs "$t0" "$t1") s"
}
run_kt() {  # label
  local t0 t1 rc
  t0=$(now)
  "$PYTHON" "$HERE/kt_reduction.py" --lang "$KT_LANG" --json "$OUT/kt_compare_$1.json" > "$OUT/kt_compare_$1.log" 2>&1
  rc=$?
  t1=$(now)
  echo "kt $1 $rc $(secs "$t0" "$t1")" >> "$WORK/runs.txt"
  echo "== Kernel Tuner $1: rc=$rc, $(secs "$t0" "$t1") s"
  [ $rc -eq 0 ] || tail -n 20 "$OUT/kt_compare_$1.log"
}
: > "$WORK/runs.txt"
run_autotune at_warmup
run_kt kt_warmup
for r in $(seq 1 "$REPS"); do
  run_autotune "at_$r"
  run_kt "kt_$r"
done

"$PYTHON" - "$WORK/runs.txt" "$OUT" "$HOST" <<'PY' | tee "$OUT/kernel_tuner_compare.md"
import json, statistics, sys
runs, out, host = sys.argv[1], sys.argv[2], sys.argv[3]
rows, ok, cmd, ses = [], True, {"autotune": [], "kt": []}, {"autotune": [], "kt": []}
for line in open(runs):
    tool, label, rc, secs = line.split()
    try:
        s = json.load(open(f"{out}/kt_compare_{label}.json"))
    except Exception:
        s = None
    if tool == "autotune":
        verified = s["statuses"].get("ok", 0) if s else 0
        configs = s["configs"] if s else 0
        session = s["wall_s"] if s else float("nan")
        best = f"{s['best']['median_ns'] / 1e3:.2f} us" if s and s.get("best") else "-"
        name = "autotune (default)"
    else:
        verified = s["verified"] if s else 0
        configs = s["configs"] if s else 0
        session = s["session_s"] if s else float("nan")
        best = f"{s['best']['time_ms'] * 1e3:.2f} us" if s and s.get("best") else "-"
        name = s["tool"] if s else "Kernel Tuner"
    good = rc == "0" and verified == 270 and configs == 270
    ok = ok and good
    if not label.endswith("warmup") and good:
        cmd[tool].append(float(secs))
        ses[tool].append(session)
    rows.append(f"| {label} | {name} | {float(secs):.2f} | {session:.2f} | {configs} | {verified} | {best} |")
print(f"# autotune against Kernel Tuner: 270-configuration reduction space, brute force\n\n{host}\n")
print("| run | tool | whole command s | session s | configurations | verified | best |")
print("|---|---|---|---|---|---|---|")
print("\n".join(rows))
if cmd["autotune"] and cmd["kt"]:
    m = {k: statistics.median(v) for k, v in cmd.items()}
    s = {k: statistics.median(v) for k, v in ses.items()}
    print(f"\nMedians of the counted runs: whole command autotune {m['autotune']:.2f} s, Kernel Tuner {m['kt']:.2f} s: "
          f"**{m['kt'] / m['autotune']:.1f}x**; session {s['autotune']:.2f} s against {s['kt']:.2f} s: "
          f"{s['kt'] / s['autotune']:.1f}x.")
print("\nChecks: " + ("every run verified all 270 configurations" if ok else "FAILED (see the logs)"))
sys.exit(0 if ok else 1)
PY
