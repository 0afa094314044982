#!/usr/bin/env bash
# Tunes T1 files (Kernel Tuner's input format) as they are, each for a time limit from an empty database, and
# prints one line per file: its valid configurations, how many were measured and verified, and the best time.
# Logs, statistics and each file's failures (status and log of every failed trial) under $OUT, in one t1_files.tar.gz
# (and the databases when KEEP_DB=1).
# Usage: OUT=dir TIME_LIMIT=20 bash bench/t1_files.sh [build-dir] FILE.json...
set -uo pipefail
B=${1:-build}
shift
OUT=${OUT:-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
printf '%-40s %8s %8s %8s %8s %12s %s\n' file valid measured ok failed best rc
for f in "$@"; do
  name=$(basename "$(dirname "$f")")_$(basename "$f" .json)
  db="$OUT/$name.db"
  rm -f "$db"*
  timeout $(( ${TIME_LIMIT:-20} + 120 )) "$B/autotune" --db "$db" tune "$f" --time-limit "${TIME_LIMIT:-20}" \
    --stats-json "$OUT/$name.stats.json" > "$OUT/$name.log" 2>&1
  rc=$?
  python3 - "$OUT/$name.stats.json" "$f" "$rc" <<'PY'
import json, sys, os
path, f, rc = sys.argv[1], sys.argv[2], sys.argv[3]
if not os.path.exists(path):
    print(f"{f:40s} {'-':>8s} {'-':>8s} {'-':>8s} {'-':>8s} {'-':>12s} {rc}")
    sys.exit()
s = json.load(open(path))
st = s.get("statuses", {})
ok = st.get("ok", 0)
best = s.get("best") or {}
ns = best.get("median_ns")
print(f"{f:40s} {s['space_size']:8d} {s['configs']:8d} {ok:8d} {s['failed']:8d} "
      f"{(f'{ns/1000:.2f} us' if ns else '-'):>12s} {rc}  {', '.join(f'{k} {v}' for k, v in sorted(st.items()) if k != 'ok')}")
PY
  python3 - "$db" > "$OUT/$name.failures.txt" <<'PY'
import sqlite3, sys
try:
    for status, config, log in sqlite3.connect(sys.argv[1]).execute(
            "select status, config_json, log from trials where status != 'ok' order by status, id"):
        print(status, config, (log or "")[:600].replace("\n", " | "))
except Exception as e:
    print("no trials:", e)
PY
  [ "${KEEP_DB:-0}" = 1 ] || rm -f "$db"*
done
tar -C "$OUT" --remove-files -czf "$OUT/../t1_files.tar.gz" . 2>/dev/null || true
