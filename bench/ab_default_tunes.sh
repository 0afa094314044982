#!/usr/bin/env bash
# Behaviour and speed of two builds side by side on one GPU: the default tune (no limit: brute force) of each
# built-in family at 2^28 elements, from an empty database, with binary A and binary B alternating (the order flips
# from family to family), then each one's best configuration and median. Logs, bests and summaries go under $OUT
# (databases are left out of the tarball: they hold every compiled binary).
# Usage: OUT=dir bash bench/ab_default_tunes.sh A_AUTOTUNE B_AUTOTUNE
# Environment: FAMILIES [reduction scan compaction transpose], TUNE_TIMEOUT [90] seconds per tune.
set -uo pipefail
if [ $# -ne 2 ] || [ ! -x "$1" ] || [ ! -x "$2" ]; then
  echo "usage: OUT=dir $0 A_AUTOTUNE B_AUTOTUNE   (two executables)" >&2
  exit 2
fi
declare -A bin=([a]="$1" [b]="$2")
OUT=${OUT:-out}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$OUT/ab"
# Each family's problem of 2^28 elements (the workload is the family's default).
declare -A problem=([reduction]="--n 268435456" [scan]="--n 268435456"
                    [compaction]="--problem n=268435456,select_pct=50" [transpose]="--rows 16384 --cols 16384")
flip=0
for fam in ${FAMILIES:-reduction scan compaction transpose}; do
  if [ -z "${problem[$fam]:-}" ]; then
    echo "unknown family $fam" >&2
    continue
  fi
  args="$fam ${problem[$fam]}"
  order="a b"; [ $flip = 1 ] && order="b a"; flip=$((1 - flip))
  for v in $order; do
    db="$OUT/ab/${fam}_$v.db"
    rm -f "$db"
    start=$(date +%s)
    timeout "${TUNE_TIMEOUT:-90}" "${bin[$v]}" --db "$db" tune $args > "$OUT/ab/${fam}_$v.log" 2>&1
    echo "== $fam $v rc=$? in $(( $(date +%s) - start )) s"
    "${bin[$v]}" --db "$db" best $args --json > "$OUT/ab/${fam}_$v.best.json" 2>&1
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("   best", d["config"], "%.2f us" % (d["median_ns"] / 1e3))' \
      "$OUT/ab/${fam}_$v.best.json" 2>/dev/null || head -c 400 "$OUT/ab/${fam}_$v.best.json"
    "${bin[$v]}" --db "$db" summary $args > "$OUT/ab/${fam}_$v.summary.txt" 2>&1
  done
done
tar -czf "$OUT/ab.tgz" -C "$OUT" --exclude="*.db" ab
