#!/usr/bin/env bash
# The final pick (docs/performance.md "Final pick") measured: RUNS default tunes of the built-in scan at 2^28
# (float32 inclusive sum, TIME seconds each, default 60), each from an empty database and binary cache, on one GPU;
# then, for every pair of runs, whether they agree: the same winner, or the winner of one in the other's tie set
# (issue 66's target). Prints per run the candidates, the tie set and its noise, the rounds and the pick's wall time,
# and writes $OUT/final_pick.md; exits 1 when a pair disagrees.
# Usage: OUT=<dir> [TIME=60] [RUNS=2] [N=268435456] bash bench/final_pick.sh <dir with the autotune binary>
set -uo pipefail
AT=${1:?usage: OUT=dir bash bench/final_pick.sh BUILD_DIR}/autotune
OUT=${OUT:-out}
TIME=${TIME:-60}
RUNS=${RUNS:-2}
N=${N:-268435456}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/final_pick.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
echo "host: $(nproc) cores; GPU: $("$AT" devices 2>&1 | head -n 2 | tail -n 1)"
for i in $(seq 1 "$RUNS"); do
  "$AT" --db "$WORK/run$i.db" tune scan --n "$N" --dtype float32 --op inclusive_sum --time-limit "$TIME" \
    --stats-json "$OUT/final_pick_run$i.json" >"$OUT/final_pick_run$i.log" 2>&1 || {
    echo "run $i failed: see $OUT/final_pick_run$i.log"
    exit 1
  }
  grep -A6 "^final pick" "$OUT/final_pick_run$i.log"
done
python3 - "$OUT" "$RUNS" <<'PY'
import json, sys
out, runs = sys.argv[1], int(sys.argv[2])
picks = [json.load(open(f"{out}/final_pick_run{i}.json"))["final_pick"] for i in range(1, runs + 1)]
key = lambda c: json.dumps(c, sort_keys=True)
lines = ["| run | ran | candidates | tie set | noise | rounds | pick s | winner |", "|---|---|---|---|---|---|---|---|"]
for i, p in enumerate(picks, 1):
    w = key(p["configs"][0]["config"]) if p["ran"] else "-"
    lines.append(f"| {i} | {p['ran']} | {p['candidates']} | {p['tie_set_size']} | {100 * p['noise']:.2f}% | "
                 f"{p['rounds']} | {p['wall_s']:.2f} | {w if p['ran'] else p['note']} |")
bad = 0
for a in range(runs):
    for b in range(a + 1, runs):
        pa, pb = picks[a], picks[b]
        if not (pa["ran"] and pb["ran"]):
            lines.append(f"runs {a + 1} and {b + 1}: not compared (a pick did not run)")
            continue
        wa, wb = key(pa["configs"][0]["config"]), key(pb["configs"][0]["config"])
        tie = lambda p: {key(c["config"]) for c in p["configs"] if c["in_tie_set"]}
        agree = wa == wb or wa in tie(pb) or wb in tie(pa)
        bad += 0 if agree else 1
        lines.append(f"runs {a + 1} and {b + 1}: " + ("same winner" if wa == wb else
                     "winner of one in the other's tie set" if agree else "DISAGREE"))
open(f"{out}/final_pick.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
sys.exit(1 if bad else 0)
PY
