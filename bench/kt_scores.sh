#!/usr/bin/env bash
# Our strategies and Kernel Tuner 1.4.0's scored on the same spaces with the same methodology score (issue 63;
# docs/strategies.md "Kernel Tuner's strategies on the same spaces"): the six published spaces of tests/data/spaces
# and the fourteen H100 spaces of tests/data/recorded_h100.db and landscapes_h100.db. No GPU needed.
#
# Usage: bash bench/kt_scores.sh AUTOTUNE_BIN KT_SITE OUT_DIR
#   AUTOTUNE_BIN  the autotune binary
#   KT_SITE       the site of bench/kt_site.sh (Kernel Tuner 1.4.0, python-constraint2), used with /usr/bin/python3
#                 and Debian's numpy, scipy, jsonschema and, for bayes_opt, scikit-learn
#   KT_RUNS       runs of each Kernel Tuner strategy per published space (default 10), KT_H100_RUNS per H100 space
#                 (default 5), BO_RUNS for bayes_opt (default 3: its Gaussian process in Python takes minutes a run on
#                 the larger spaces)
#   REPEATS       runs of each of our strategies per space (default 20)
# Writes to OUT_DIR: pub.db (the imported spaces), *.t4.json (the H100 recordings for Kernel Tuner), ranges.csv (the
# spaces' time ranges), traces.jsonl (Kernel Tuner's runs), scores.csv and scores.md (the table).
set -euo pipefail
[[ $# -eq 3 ]] || { sed -n '2,15p' "$0" >&2; exit 2; }
AT=$(realpath "$1") SITE=$(realpath "$2") OUT=$3
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=$HERE/../tests/data
KT_RUNS=${KT_RUNS:-10} KT_H100_RUNS=${KT_H100_RUNS:-5} BO_RUNS=${BO_RUNS:-3} REPEATS=${REPEATS:-20}
mkdir -p "$OUT"
cd "$OUT"

# 1. The published spaces: convolution through its T1 file (restrictions), pnpoly as a stub (no restrictions).
rm -f pub.db
for gpu_cc in RTX_2080_Ti:75 RTX_3090:86 RTX_Titan:75; do
  gpu=${gpu_cc%:*} cc=${gpu_cc#*:}
  "$AT" --db pub.db import --format kt-cache "$DATA/spaces/convolution_$gpu.json.gz" \
    --spec "$DATA/spaces/convolution.T1.json" --cc "$cc" >/dev/null
  "$AT" --db pub.db import --format kt-cache "$DATA/spaces/pnpoly_$gpu.json.gz" --cc "$cc" >/dev/null
done
# 2. The H100 recordings as T4, for Kernel Tuner.
for db in recorded_h100 landscapes_h100; do
  "$AT" --db "$DATA/$db.db" export --format t4 -o "$db.t4.json" 2>/dev/null
done
KERNELS=$DATA/spaces/convolution.T1.json,cn_pnpoly,compaction,reduction,scan,transpose
FROM=(--from pub.db --from "$DATA/recorded_h100.db" --from "$DATA/landscapes_h100.db")
# 3. The time range of every space (random_sample only: the range does not depend on the strategies).
"$AT" --db pub.db compare-strategies "$KERNELS" --score time "${FROM[@]}" --strategies random_sample --repeats 1 \
  --resolution 20 --no-strategy-time --csv ranges.csv >/dev/null
# 4. Kernel Tuner's runs.
PUB=(--kt-cache "convolution=$DATA/spaces/convolution_RTX_2080_Ti.json.gz"
  --kt-cache "convolution=$DATA/spaces/convolution_RTX_3090.json.gz"
  --kt-cache "convolution=$DATA/spaces/convolution_RTX_Titan.json.gz"
  --kt-cache "$DATA/spaces/pnpoly_RTX_2080_Ti.json.gz" --kt-cache "$DATA/spaces/pnpoly_RTX_3090.json.gz"
  --kt-cache "$DATA/spaces/pnpoly_RTX_Titan.json.gz")
H100=(--t4 recorded_h100.db=recorded_h100.t4.json --t4 landscapes_h100.db=landscapes_h100.t4.json)
STRATS=random_sample,brute_force,minimize,basinhopping,diff_evo,genetic_algorithm,greedy_mls,ordered_greedy_mls
STRATS=$STRATS,greedy_ils,dual_annealing,mls,pso,simulated_annealing,firefly_algorithm,hybrid_vndx,adaptive_tabu_greywolf
kt() { PYTHONPATH=$SITE /usr/bin/python3 "$HERE/kt_strategy_scores.py" --ranges ranges.csv --work kt_work "$@"; }
kt "${PUB[@]}" --strategies "$STRATS" --runs "$KT_RUNS" --out traces_pub.jsonl
kt "${H100[@]}" --strategies "$STRATS" --runs "$KT_H100_RUNS" --out traces_h100.jsonl
kt "${PUB[@]}" "${H100[@]}" --strategies bayes_opt --runs "$BO_RUNS" --out traces_bo.jsonl
cat traces_pub.jsonl traces_h100.jsonl traces_bo.jsonl >traces.jsonl
# 5. Every one of our strategies, then theirs (with random_sample again, the same seeds: the same rows), the same
# score; no decision time charged to either. Two commands, so that ours can run while Kernel Tuner's runs are made.
"$AT" --db pub.db compare-strategies "$KERNELS" --score time "${FROM[@]}" --repeats "$REPEATS" --resolution 200 \
  --no-strategy-time --markdown --csv scores_ours.csv >scores_ours.md
"$AT" --db pub.db compare-strategies "$KERNELS" --score time "${FROM[@]}" --repeats "$REPEATS" --resolution 200 \
  --no-strategy-time --strategies random_sample --traces traces.jsonl --markdown --csv scores_kt.csv >scores_kt.md
{ cat scores_ours.csv; grep -v '^space,' scores_kt.csv | grep -v ',random_sample,'; } >scores.csv
# 6. The table of docs/strategies.md: each strategy's mean score over the published spaces, the H100 spaces and all,
# with standard errors as compare-strategies aggregates them (sqrt(sum se^2) / n); best first.
/usr/bin/python3 - scores.csv >scores_table.md <<'PY'
import csv, math, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["space"] != "all"]
groups = {"published (6)": lambda s: s.endswith(" in pub.db"), "H100 (14)": lambda s: not s.endswith(" in pub.db"),
          "all (20)": lambda s: True}
by = {}
for r in rows:
    by.setdefault(r["strategy"], []).append(r)
def agg(rs):
    if not rs:
        return "-"
    n = len(rs)
    m = sum(float(r["score"]) for r in rs) / n
    se = math.sqrt(sum(float(r["score_se"]) ** 2 for r in rs)) / n
    return "%+.3f ± %.3f" % (m, se) + ("" if n in (6, 14, 20) else " (%d spaces)" % n)
def mean_all(rs):
    return sum(float(r["score"]) for r in rs) / len(rs)
print("| strategy | runs per space | " + " | ".join(groups) + " |")
print("|---|---:|" + "---:|" * len(groups))
for name, rs in sorted(by.items(), key=lambda kv: -mean_all(kv[1])):
    cells = [agg([r for r in rs if f(r["space"])]) for f in groups.values()]
    runs = "/".join(sorted({r["runs"] for r in rs}, key=int, reverse=True))
    print("| `%s` | %s | %s |" % (name, runs, " | ".join(cells)))
# Per space: our default, our best other strategy, Kernel Tuner's best.
print()
print("| space | range (s) | `broad_then_local` | our best other | Kernel Tuner's best |")
print("|---|---:|---:|---|---|")
spaces = list(dict.fromkeys(r["space"] for r in rows))
for sp in spaces:
    rs = [r for r in rows if r["space"] == sp]
    cell = lambda r: "%+.3f ± %.3f" % (float(r["score"]), float(r["score_se"]))
    ours = [r for r in rs if not r["strategy"].startswith("kt:") and r["strategy"] != "broad_then_local"]
    kt = [r for r in rs if r["strategy"].startswith("kt:")]
    btl = [r for r in rs if r["strategy"] == "broad_then_local"]
    best = lambda xs: max(xs, key=lambda r: float(r["score"])) if xs else None
    fmt = lambda r: "`%s` %s" % (r["strategy"], cell(r)) if r else "-"
    print("| %s | %.3g to %.3g | %s | %s | %s |" % (sp, float(rs[0]["start_s"]), float(rs[0]["end_s"]),
                                                   cell(btl[0]) if btl else "-", fmt(best(ours)), fmt(best(kt))))
PY
cat scores_table.md
