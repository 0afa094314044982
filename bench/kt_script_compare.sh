#!/usr/bin/env bash
# A Kernel Tuner script, whole, under Kernel Tuner and under gpu_autotune (issue 62): Kernel Tuner 1.4.0's
# examples/cuda/reduction.py (or another example of python/tests/data/kernel_tuner) run as it is, once with
# `import kernel_tuner` (Kernel Tuner) and once with the imports changed to gpu_autotune (the copy in
# python/tests/data/kernel_tuner), alternating, REPS times each after one uncounted run of each. Timed from process
# start to exit (Python start-up, imports, the script's own numpy work, every tune_kernel call); the best
# configuration of the first tune_kernel call, as the script prints it, is compared. gpu_autotune's runs also log each
# tune_kernel call's split (set-up, compile, idle GPU, verification, timing: the tuner's --stats-json).
#
# Usage: OUT=<dir> bash bench/kt_script_compare.sh [SCRIPT]      (SCRIPT: reduction (default), vector_add, matmul)
#   REPS      counted runs of each (default 1)
#   WARMUP    uncounted runs of each first (default 1; 0 where the machine already ran both tools' work)
#   KT_SITE   a folder with Kernel Tuner 1.4.0 importable (its pure-Python site; docs/performance.md)
#   GA_SITE   a folder with gpu_autotune importable (the installed package); else the interpreter's own
#   KT_LANG   Kernel Tuner's backend where its default (PyCUDA) is missing: the script's tune_kernel calls get
#             lang=KT_LANG through a wrapper that changes nothing else (default: pycuda if importable, else
#             nvcuda if cuda.bindings is, else cupy)
#   LIMIT     seconds a run may take (default 900)
#   TOOLS     which runs, in this order (default "ga kt"; "ga" alone for gpu_autotune's split without Kernel Tuner)
#   PYTHON    the interpreter (default python3)
# Writes $OUT/kt_script_<script>.md and the runs' logs. Exit status 0 when every run finished; 1 otherwise; 2 for
# bad usage; 3 when Kernel Tuner or gpu_autotune cannot be imported.
set -uo pipefail
SCRIPT=${1:-reduction}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
SRC=$ROOT/python/tests/data/kernel_tuner
OUT=${OUT:-out}
REPS=${REPS:-1}
WARMUP=${WARMUP:-1}
LIMIT=${LIMIT:-900}
PYTHON=${PYTHON:-python3}
[ -f "$SRC/$SCRIPT.py" ] || { echo "usage: OUT=<dir> bash bench/kt_script_compare.sh [$(cd "$SRC" && ls *.py | sed 's/\.py$//' | tr '\n' ' ')]" >&2; exit 2; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kt_script.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/kt" "$WORK/ga"
cp "$SRC"/* "$WORK/ga/"
cp "$SRC"/* "$WORK/kt/"
# Kernel Tuner's copy: the imports as Kernel Tuner's repository has them.
sed -i -e 's/^from gpu_autotune/from kernel_tuner/' -e 's/^import gpu_autotune/import kernel_tuner/' \
  -e 's/gpu_autotune\./kernel_tuner./g' "$WORK/kt/$SCRIPT.py"
if grep -n "gpu_autotune" "$WORK/kt/$SCRIPT.py"; then echo "error: gpu_autotune left in Kernel Tuner's copy" >&2; exit 2; fi
KT_PATH=${KT_SITE:-}
GA_PATH=${GA_SITE:-}
if [[ " ${TOOLS:-ga kt} " == *" kt "* ]] && ! PYTHONPATH=$KT_PATH "$PYTHON" -c "import kernel_tuner, numpy; print('Kernel Tuner', kernel_tuner.__version__)"; then
  echo "error: $PYTHON cannot import kernel_tuner (KT_SITE=$KT_PATH)" >&2; exit 3
fi
if ! PYTHONPATH=$GA_PATH "$PYTHON" -c "import gpu_autotune; print('gpu_autotune', gpu_autotune.__file__)"; then
  echo "error: $PYTHON cannot import gpu_autotune (GA_SITE=$GA_PATH)" >&2; exit 3
fi
if [ -z "${KT_LANG:-}" ]; then
  if "$PYTHON" -c "import pycuda.driver" 2>/dev/null; then KT_LANG=pycuda
  elif "$PYTHON" -c "import cuda.bindings" 2>/dev/null || "$PYTHON" -c "from cuda import cuda" 2>/dev/null; then KT_LANG=nvcuda
  else KT_LANG=cupy; fi
fi
echo "Kernel Tuner backend: $KT_LANG"
# Runs the script's tune() as `python3 SCRIPT.py` would (its __main__ block), with tune_kernel's lang defaulted.
cat > "$WORK/kt/run_with_lang.py" <<'PY'
import runpy, sys
import kernel_tuner
lang = sys.argv[1]
if lang != "pycuda":
    real = kernel_tuner.tune_kernel
    def tune_kernel(*args, **kwargs):
        kwargs.setdefault("lang", lang)
        return real(*args, **kwargs)
    kernel_tuner.tune_kernel = tune_kernel
sys.argv = [sys.argv[2]]
runpy.run_path(sys.argv[0], run_name="__main__")
PY
# gpu_autotune's runs: the script as it is, each tune_kernel call's figures (the tuner's --stats-json, returned in
# env["autotune_stats"]) written to stderr as one line, so the log shows where a whole script's time goes.
cat > "$WORK/ga/run_with_times.py" <<'PY'
import runpy, sys, time
import gpu_autotune
real = gpu_autotune.tune_kernel
calls = []
def tune_kernel(*args, **kwargs):
    t0 = time.perf_counter()
    results, env = real(*args, **kwargs)
    wall = time.perf_counter() - t0
    s = env.get("autotune_stats", {})
    calls.append(wall)
    keys = ("setup_s", "compile_s", "idle_gpu_s", "verify_s", "benchmark_s", "database_s", "other_s")
    sys.stderr.write("[tune_kernel %d] %.2f s in the call, %.2f s in the tuner (%s), python %.2f s; %s configs, %s "
                     "compiled, %s cache hits; setup parts %s\n"
                     % (len(calls), wall, s.get("wall_s", 0.0), ", ".join("%s %.2f" % (k[:-2], s.get(k, 0.0)) for k in keys),
                        wall - s.get("wall_s", 0.0), s.get("configs"), s.get("compiled"), s.get("cache_hits"),
                        {k: round(v, 2) for k, v in (s.get("setup_parts_s") or {}).items()}))
    return results, env
gpu_autotune.tune_kernel = tune_kernel
t_start = time.perf_counter()
sys.argv = [sys.argv[1]]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
finally:
    sys.stderr.write("[script] %.2f s in %d tune_kernel calls, %.2f s outside them\n"
                     % (sum(calls), len(calls), time.perf_counter() - t_start - sum(calls)))
PY
now() { date +%s.%N; }
: > "$WORK/runs.txt"
run() {  # tool label
  local t0 t1 rc dir=$WORK/$1
  t0=$(now)
  if [ "$1" = kt ]; then
    (cd "$dir" && PYTHONPATH=$KT_PATH timeout "$LIMIT" "$PYTHON" run_with_lang.py "$KT_LANG" "$SCRIPT.py") > "$OUT/kt_script_$2.log" 2>&1
  else
    (cd "$dir" && PYTHONPATH=$GA_PATH timeout "$LIMIT" "$PYTHON" run_with_times.py "$SCRIPT.py") > "$OUT/kt_script_$2.log" 2>&1
  fi
  rc=$?
  t1=$(now)
  local s
  s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
  echo "$1 $2 $rc $s" >> "$WORK/runs.txt"
  echo "== $1 $2: rc=$rc, $s s"
  [ $rc -eq 0 ] || tail -n 15 "$OUT/kt_script_$2.log"
}
TOOLS=${TOOLS:-ga kt}
if [ "$WARMUP" -gt 0 ]; then
  for t in $TOOLS; do run "$t" "${t}_warmup"; done
fi
for r in $(seq 1 "$REPS"); do
  for t in $TOOLS; do run "$t" "${t}_$r"; done
done
"$PYTHON" - "$WORK/runs.txt" "$OUT" "$SCRIPT" "$KT_LANG" <<'PY' | tee "$OUT/kt_script_$SCRIPT.md"
import re, statistics, sys
runs, out, script, lang = sys.argv[1:5]
name = {"ga": "gpu_autotune", "kt": "Kernel Tuner 1.4.0 (%s)" % lang}
rows, ok, secs = [], True, {"ga": [], "kt": []}
for line in open(runs):
    tool, label, rc, s = line.split()
    log = open("%s/kt_script_%s.log" % (out, label), errors="replace").read()
    # The first "best" the script prints: reduction's "first kernel only", or tune_kernel's own best line.
    m = re.search(r"Best performing config first kernel only: *\n(.*)", log) or \
        re.search(r"BEST PERFORMING CONFIGURATION[^\n]*\n(.*)", log) or re.search(r"best performing configuration:?\s*(.*)", log, re.I)
    best = m.group(1).strip() if m else "-"
    ok = ok and rc == "0"
    if rc == "0" and not label.endswith("warmup"):
        secs[tool].append(float(s))
    rows.append("| %s | %s | %s | %s | %s |" % (label, name[tool], rc, s, best))
print("# %s.py whole script: Kernel Tuner 1.4.0 and gpu_autotune\n" % script)
print("| run | tool | exit | wall s | best of the first tune_kernel call |")
print("|---|---|---|---|---|")
print("\n".join(rows))
ga_logs = [label for label in (l.split()[1] for l in open(runs)) if label.startswith("ga")]
if ga_logs:
    lines = [l.rstrip() for l in open("%s/kt_script_%s.log" % (out, ga_logs[-1]), errors="replace")
             if l.startswith("[tune_kernel") or l.startswith("[script]")]
    print("\nWhere gpu_autotune's time went (%s):\n\n```\n%s\n```" % (ga_logs[-1], "\n".join(lines)))
if secs["ga"] and secs["kt"]:
    g, k = statistics.median(secs["ga"]), statistics.median(secs["kt"])
    print("\nMedian of the counted runs: Kernel Tuner %.1f s, gpu_autotune %.1f s: **%.1fx**" % (k, g, k / g))
sys.exit(0 if ok else 1)
PY
