#!/usr/bin/env bash
# The capture round trip of docs/lookup.md "Capture" with the user-kernel example (examples/user_kernel), on a GPU:
#   1. the application runs with AUTOTUNE_CAPTURE=saxpy on an empty database: the spec default, and a capture
#   2. `autotune tune CAPTURE_DIR` tunes the capture (its data, its outputs as the expected values)
#   3. the application runs again: the tuned configuration, match exact
#   4. for comparison, the spec tuned with the same data given as files (--input), in a database of its own: both
#      sessions' best configurations and times are printed side by side
#   5. the capture tuned once more into a third database: how much the best moves between two sessions anyway
# Exits non-zero when a step fails or the second run does not use the tuned configuration.
#
#   scripts/capture_roundtrip.sh AUTOTUNE_BIN SAXPY_APP_BIN [n=4194304] [work dir]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
autotune=${1:?usage: capture_roundtrip.sh AUTOTUNE_BIN SAXPY_APP_BIN [n] [work dir]}
app=${2:?usage: capture_roundtrip.sh AUTOTUNE_BIN SAXPY_APP_BIN [n] [work dir]}
n=${3:-4194304}
work=${4:-$(mktemp -d "${TMPDIR:-/tmp}/autotune_capture.XXXXXX")}
spec="$root/examples/saxpy/saxpy.tune.json"
mkdir -p "$work"
rm -rf "$work/captures" "$work/tune.db" "$work/files.db" "$work/again.db"
step() { echo; echo "== $*"; }

step "1. the application with AUTOTUNE_CAPTURE=saxpy, empty database"
AUTOTUNE_CAPTURE=saxpy AUTOTUNE_CAPTURE_DIR="$work/captures" "$app" "$work/tune.db" "$spec" "$n" 2>&1 |
  tee "$work/run1.txt"
grep -q "match spec_default" "$work/run1.txt"
capture=$(ls "$work"/captures/saxpy_*.tune.json)
echo "capture: $capture"; ls -l "$work/captures" "$work/captures/data"

step "2. autotune tune $work/captures"
"$autotune" --db "$work/tune.db" tune "$work/captures"

step "3. the application again: the tuned configuration"
"$app" "$work/tune.db" "$spec" "$n" 2>&1 | tee "$work/run2.txt"
grep -q "match exact" "$work/run2.txt"
grep -q "elements differ from the CPU ok" "$work/run2.txt"

step "4. the same kernel tuned with the same data given as files"
x=$(python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(s['arguments'][0]['init']['file'])" "$capture")
y=$(python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(s['arguments'][1]['init']['file'])" "$capture")
"$autotune" --db "$work/files.db" tune "$spec" --n "$n" --input "x=$work/captures/$x" --input "y=$work/captures/$y"
echo
echo "best from the capture:"
"$autotune" --db "$work/tune.db" best "$capture"
"$autotune" --db "$work/tune.db" summary "$capture"
echo "best from the spec with the data as files:"
files=(--n "$n" --input "x=$work/captures/$x" --input "y=$work/captures/$y")
"$autotune" --db "$work/files.db" best "$spec" "${files[@]}"
"$autotune" --db "$work/files.db" summary "$spec" "${files[@]}"
echo
echo "5. the noise floor of the comparison: the capture tuned once more, into a database of its own"
"$autotune" --db "$work/again.db" tune "$capture" >/dev/null
"$autotune" --db "$work/again.db" best "$capture"
echo
echo "capture_roundtrip: all steps passed ($work)"
