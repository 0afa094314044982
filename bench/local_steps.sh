#!/usr/bin/env bash
# What small local steps cost a budget-limited `autotune tune` in wall time (docs/strategies.md, "Local steps on
# the GPU"). broad_then_local hands out one configuration per step of its local phase (local_batch=1) and names
# the likely next ones for compilation ahead; the old behaviour handed out a whole batch of neighbours at once
# (now local_batch=100000, local_order=random; under a time limit, without a budget, whole batches are still the
# default). Each run starts from an empty database (cold binary cache), as a user's
# first tune does, with --budget = 5% or 10% of the space.
#
#   OUT=<dir> bash bench/local_steps.sh <dir with autotune>
#
# Environment: CASES (default: compaction and scan at 2^28 at 5% and 10%, reduction 2^28 at 5%), SEEDS [1 2].
# Writes $OUT/local_steps/<case>_<variant>_<seed>.json (--stats-json) and .log, and local_steps.md (the table).
set -uo pipefail
. "$(dirname "$0")/common.sh"
bench_autotune_dir "OUT=<dir> bash bench/local_steps.sh <dir with autotune>" "$@"
OUT=${OUT:-out}
D=$OUT/local_steps
mkdir -p "$D"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
SEEDS=${SEEDS:-1 2}
# name|budget|tune arguments (budgets: 5% and 10% of 763 compaction, 1964 scan, 2436 reduction configurations)
CASES=${CASES:-"compaction28|38|compaction --problem n=268435456,select_pct=50 --dtype int32 --op flagged
compaction28|76|compaction --problem n=268435456,select_pct=50 --dtype int32 --op flagged
scan28|98|scan --n 268435456 --dtype float32 --op inclusive_sum
reduction28|122|reduction --n 268435456 --dtype float32 --op sum"}

while IFS='|' read -r name budget args; do
  [ -n "$name" ] || continue
  for seed in $SEEDS; do
    for variant in steps batch; do
      opts=()
      [ "$variant" = batch ] && opts=(--strategy-option local_batch=100000 --strategy-option local_order=random)
      tag=${name}_b${budget}_${variant}_$seed
      rm -f "$D/$tag.db"
      # shellcheck disable=SC2086
      "$AT" --db "$D/$tag.db" tune $args --budget "$budget" --seed "$seed" "${opts[@]}" \
        --stats-json "$D/$tag.json" > "$D/$tag.log" 2>&1
      echo "$tag rc=$?"
      rm -f "$D/$tag.db"
    done
  done
done <<< "$CASES"

python3 - "$D" > "$OUT/local_steps.md" <<'EOF'
import json, sys, glob, os, collections
d = sys.argv[1]
rows = collections.defaultdict(list)
for f in sorted(glob.glob(os.path.join(d, "*.json"))):
    tag = os.path.basename(f)[:-5]
    name, budget, variant, seed = tag.split("_")
    j = json.load(open(f))
    best = j.get("best") or {}
    rows[(name, budget, variant)].append((j["wall_s"], j["compile_s"], j["idle_gpu_s"], j["configs"],
                                          j.get("unused_compiles", 0), best.get("median_ns", float("nan"))))
print("| case | budget | variant | runs | wall s | compile s | GPU idle s | configs | unused compiles | best us |")
print("|---|---|---|---|---|---|---|---|---|---|")
for (name, budget, variant), rs in sorted(rows.items()):
    n = len(rs)
    mean = lambda k: sum(r[k] for r in rs) / n
    print(f"| {name} | {budget} | {variant} | {n} | {mean(0):.1f} | {mean(1):.1f} | {mean(2):.1f} | {mean(3):.0f} | "
          f"{mean(4):.0f} | {', '.join(f'{r[5] / 1000:.1f}' for r in rs)} |")
EOF
cat "$OUT/local_steps.md"
