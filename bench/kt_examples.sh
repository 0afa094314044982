#!/usr/bin/env bash
# Kernel Tuner 1.4.0's CUDA examples run with gpu_autotune, their imports changed and nothing else (issue 62): each
# script of EXAMPLES (a folder with Kernel Tuner's examples/cuda) in a copy of that folder, `kernel_tuner` replaced
# by `gpu_autotune` in its imports, run as `python3 SCRIPT.py` (pytest for test_*.py) under a time limit.
# Reports per script: finished (exit 0), refused (a gpu_autotune error naming what it does not support), failed,
# or out of time, with the last lines of its output.
#
# Usage: OUT=<dir> bash bench/kt_examples.sh EXAMPLES [SCRIPT...]    (default: every *.py in EXAMPLES)
#   LIMIT   seconds per script (default 120)
#   PYTHON  the interpreter (default python3); gpu_autotune must be importable (PYTHONPATH is honoured)
# Writes $OUT/kt_examples.md and one log per script. Exit status 0 when no script failed; 1 otherwise; 2 for bad
# usage.
set -uo pipefail
[ $# -ge 1 ] && [ -d "$1" ] || { echo "usage: OUT=<dir> bash bench/kt_examples.sh EXAMPLES_DIR [SCRIPT...]" >&2; exit 2; }
EX=$(cd "$1" && pwd)
shift
OUT=${OUT:-out}
LIMIT=${LIMIT:-120}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kt_examples.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cp -r "$EX"/. "$WORK/"
cd "$WORK" || exit 2
for f in *.py; do
  sed -i -e 's/^\(\s*\)from kernel_tuner/\1from gpu_autotune/' -e 's/^\(\s*\)import kernel_tuner/\1import gpu_autotune as kernel_tuner/' "$f"
done
scripts=("$@")
[ ${#scripts[@]} -gt 0 ] || scripts=($(ls *.py | sed 's/\.py$//'))
echo "| script | result | seconds | last line |" > "$WORK/table.md"
echo "|---|---|---|---|" >> "$WORK/table.md"
failed=0
for s in "${scripts[@]}"; do
  s=${s%.py}
  t0=$(date +%s.%N)
  if [[ $s == test_* ]]; then
    timeout "$LIMIT" "$PYTHON" -m pytest -q -p no:cacheprovider "$s.py" > "$OUT/kt_example_$s.log" 2>&1
  else
    timeout "$LIMIT" "$PYTHON" "$s.py" > "$OUT/kt_example_$s.log" 2>&1
  fi
  rc=$?
  secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  last=$(grep -v '^\s*$' "$OUT/kt_example_$s.log" | tail -n 1 | cut -c1-160 | tr '|' '/')
  if [ $rc -eq 0 ]; then result=finished
  elif [ $rc -eq 124 ]; then result="out of time (${LIMIT} s)"; failed=1
  elif grep -q "gpu_autotune.errors.UnsupportedError\|UnsupportedError:" "$OUT/kt_example_$s.log"; then result=refused
  elif grep -q "ModuleNotFoundError" "$OUT/kt_example_$s.log"; then result="needs a module: $(grep -o "No module named '[^']*'" "$OUT/kt_example_$s.log" | head -1)"
  else result="failed (exit $rc)"; failed=1; fi
  echo "| $s | $result | $secs | $last |" >> "$WORK/table.md"
  echo "== $s: $result, $secs s"
done
cp "$WORK/table.md" "$OUT/kt_examples.md"
cat "$OUT/kt_examples.md"
exit $failed
