#!/usr/bin/env bash
# Online tuning's targets (docs/lookup.md "Online tuning"; needs a GPU): an application's loop of launches of the
# smoothing kernel (examples/online/smooth.tune.json, 384 configurations) at a size never tuned, with a database that
# holds the kernel tuned offline at another size, against the offline best at that size.
#
#   bash bench/online_tuning.sh AUTOTUNE ONLINE_TUNING OUT_DIR [N_OTHER=16777216] [N=268435456] [LAUNCHES=2000]
#
# 1. `autotune tune` at N_OTHER (every configuration): the database the application starts from (other.db).
# 2. `autotune tune` at N (every configuration) into a copy: the offline best at N (offline.db).
# 3. Twice each, alternating: the loop of LAUNCHES launches at N tuned online (a fresh copy of other.db) and the loop
#    of the offline best (offline.db, match exact), then 500 launches of what each settled on ("steady").
#    The same loop from an empty database (the spec default as reference, every candidate compiled on the way).
# 4. Correctness: the loop at a small size with every launch's output compared with the spec default's (--check).
# 5. The host cost per call once settled, against a Kernel without online tuning (--overhead).
set -euo pipefail
AUTOTUNE=${1:?AUTOTUNE}
APP=${2:?ONLINE_TUNING}
OUT=${3:?OUT_DIR}
N_OTHER=${4:-16777216}
N=${5:-268435456}
LAUNCHES=${6:-2000}
SPEC=examples/online/smooth.tune.json
mkdir -p "$OUT"
rm -f "$OUT"/*.db

t0=$(date +%s)
"$AUTOTUNE" --db "$OUT/other.db" tune "$SPEC" --n "$N_OTHER" > "$OUT/tune_other.txt" 2>&1
cp "$OUT/other.db" "$OUT/offline.db"
"$AUTOTUNE" --db "$OUT/offline.db" tune "$SPEC" --n "$N" > "$OUT/tune_target.txt" 2>&1
echo "offline tunes: $(( $(date +%s) - t0 )) s"
tail -n 4 "$OUT/tune_target.txt"

for r in 1 2; do
  cp "$OUT/other.db" "$OUT/online_$r.db"
  "$APP" --spec "$SPEC" --db "$OUT/online_$r.db" --n "$N" --launches "$LAUNCHES" --online "200" --steady 500 \
    > "$OUT/online_$r.txt" 2>&1
  "$APP" --spec "$SPEC" --db "$OUT/offline.db" --n "$N" --launches "$LAUNCHES" --online off --steady 500 \
    > "$OUT/offline_$r.txt" 2>&1
  echo "== run $r: online (from other.db) | offline best (offline.db)"
  paste -d '|' <(grep -E "loop ms|steady|after config|after online" "$OUT/online_$r.txt") \
               <(grep -E "loop ms|steady|after config" "$OUT/offline_$r.txt") || true
done

# From an empty database: the spec default is the reference and every candidate compiles with NVRTC on the way.
"$APP" --spec "$SPEC" --db "$OUT/empty.db" --n "$N" --launches "$LAUNCHES" --online "200" --steady 500 \
  > "$OUT/online_empty.txt" 2>&1
echo "== from an empty database"
grep -E "loop ms|steady|after config|after online" "$OUT/online_empty.txt" || true

cp "$OUT/other.db" "$OUT/check.db"
"$APP" --spec "$SPEC" --db "$OUT/check.db" --n 1000003 --launches 2000 --online "120, samples=2" --check \
  > "$OUT/check.txt" 2>&1
echo "== correctness"
grep -E "differing|after online" "$OUT/check.txt"

"$APP" --spec "$SPEC" --db "$OUT/online_1.db" --n "$N" --launches 10 --online "on" --overhead 20000 \
  > "$OUT/overhead.txt" 2>&1
echo "== overhead"
grep -E "host us|overhead" "$OUT/overhead.txt"
