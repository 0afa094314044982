#!/usr/bin/env bash
# Serving other sizes from one tune (docs/performance.md; docs/lookup.md, "Filling the SMs" and "Smaller sizes"):
# one default 60 s tune at 2^28 from an empty database, which measures a few of its configurations at the sizes 4
# to 256 times smaller after the search, then bench/versus_libraries at every size on that database ("after") and
# on a copy without the smaller sizes' trials ("before": only the 2^28 cell, served at the other sizes by the fill
# rule, what the lookup did until the smaller sizes).
#
#   OUT=<dir> bash bench/serve_sizes.sh <dir with autotune and versus_libraries> scan|compaction
#
# Writes $OUT/tune_<family>.log and $OUT/versus_<family>.db.md / versus_<family>.before.db.md; prints the rows.
set -uo pipefail
if [ $# -ne 2 ] || { [ "$2" != scan ] && [ "$2" != compaction ]; }; then
  echo "usage: OUT=<dir> bash bench/serve_sizes.sh <dir with autotune and versus_libraries> scan|compaction" >&2
  exit 2
fi
BIN=$1
fam=$2
OUT=${OUT:-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "cores: $(nproc)"
rm -f "$fam.db" "$fam.before.db" "$fam.db-wal" "$fam.db-shm"
if [ "$fam" = scan ]; then
  tune=(--n 268435456 --dtype float32 --op inclusive_sum)
  ask() { echo "--n $1 --dtype float32 --op inclusive_sum"; }
  versus=(--only scan --sizes "20,22,24,26,28,30" --match "float32 n=")
else
  tune=(--problem "n=268435456,select_pct=50" --dtype int32 --op flagged)
  ask() { echo "--problem n=$1,select_pct=50 --dtype int32 --op flagged"; }
  versus=(--only compaction --sizes "20,22,24,26,28" --select 50 --match "int32 flagged")
fi
start=$(date +%s)
timeout 120 "$BIN/autotune" --db "$fam.db" tune "$fam" "${tune[@]}" --time-limit 60 > "$OUT/tune_$fam.log" 2>&1
echo "tune $fam rc=$? in $(($(date +%s) - start)) s"
grep -E "measured now|smaller sizes" "$OUT/tune_$fam.log"
python3 - "$fam.db" "$fam.before.db" <<'PY'
import shutil, sqlite3, sys
src, dst = sys.argv[1], sys.argv[2]
s = sqlite3.connect(src)
s.execute("PRAGMA wal_checkpoint(TRUNCATE)")
s.close()
shutil.copyfile(src, dst)
c = sqlite3.connect(dst)
c.execute("DELETE FROM trials WHERE session_id IN (SELECT id FROM sessions WHERE strategy = 'smaller_sizes')")
c.commit()
print("before: rows kept", c.execute("SELECT COUNT(*) FROM trials").fetchone()[0])
PY
for e in 20 24; do
  # shellcheck disable=SC2046
  "$BIN/autotune" --db "$fam.db" best "$fam" $(ask $((1 << e))) 2>&1 | grep -v "^observed"
done
for db in "$fam.db" "$fam.before.db"; do
  timeout 240 "$BIN/versus_libraries" --db "$db" "${versus[@]}" > "$OUT/versus_$db.md" 2> "$OUT/versus_$db.log"
  echo "versus $db rc=$?"
  grep "^| $fam" "$OUT/versus_$db.md"
done
