#!/usr/bin/env bash
# Time-best vs energy-best (docs/energy.md): tunes reduction float32 sum at 2^26 elements on this GPU with the
# NVML observers on, then prints the best configuration by each objective (time, energy, edp, gbps_per_watt)
# with its time, bandwidth, power, joules per run and GB/s per watt, as a markdown table. Every objective is
# answered from the same trials: the database keeps every metric.
#
#   OUT=<dir> bash bench/energy.sh <dir with autotune>
#
# Environment: OUT [out], N [67108864], ENERGY_MS [200] (the energy window of each configuration),
#   RESTRICT [VARIANT == 7 && KAHAN == 0 && FINAL == 0] (the warp-shuffle grid-stride variant: every block size x
#   grid size x items per thread x vector width, 297 configurations, about 2 minutes on an H100 at 200 ms;
#   "" = the whole space), EXTRA (more tune options). Needs libnvidia-ml.so.1 (ldconfig) and a GPU with power readings.
set -uo pipefail
. "$(dirname "$0")/common.sh"
bench_autotune_dir "OUT=<dir> bash bench/energy.sh <dir with autotune>" "$@"
OUT=${OUT:-out}
N=${N:-67108864}
ENERGY_MS=${ENERGY_MS:-200}
RESTRICT=${RESTRICT-VARIANT == 7 && KAHAN == 0 && FINAL == 0}
EXTRA=${EXTRA:-}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$OUT"
DB=$OUT/energy.db
CASE=(reduction --n "$N" --dtype float32 --op sum)
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/gpu.txt" 2>&1 || true

restrict=()
[ -n "$RESTRICT" ] && restrict=(--restrict "$RESTRICT")
echo "tuning ${CASE[*]} with --energy-ms $ENERGY_MS ${restrict[*]} into $DB" >&2
# shellcheck disable=SC2086
"$AT" --db "$DB" tune "${CASE[@]}" --strategy brute_force --energy-ms "$ENERGY_MS" "${restrict[@]}" \
  --stats-json "$OUT/tune.json" $EXTRA > "$OUT/tune.log" 2>&1 || { tail -20 "$OUT/tune.log" >&2; exit 1; }
for o in time energy edp gbps_per_watt; do
  "$AT" --db "$DB" best "${CASE[@]}" --json --objective "$o" > "$OUT/best_$o.json" || exit 1
done
"$AT" --db "$DB" summary "${CASE[@]}" --by BLOCK_SIZE --objective energy > "$OUT/summary_energy.txt" || true

python3 - "$OUT" "$N" <<'PY' | tee "$OUT/energy.md"
import json, sys
out, n = sys.argv[1], int(sys.argv[2])
gpu = open(f"{out}/gpu.txt").read().strip().splitlines()
print(f"reduction float32 sum, n = {n} (2^{n.bit_length() - 1}); GPU: {gpu[-1] if gpu else '?'}\n")
print("| best by | configuration | median | GB/s | power | energy per run | GB/s per W | SM MHz (min) | throttled |")
print("|---|---|---:|---:|---:|---:|---:|---:|---|")
for o in ["time", "energy", "edp", "gbps_per_watt"]:
    j = json.load(open(f"{out}/best_{o}.json"))
    ob = j.get("observed") or {}
    cfg = ", ".join(f"{k}={v}" for k, v in j["config"].items())
    def num(key, fmt, scale=1.0):
        v = ob.get(key)
        return fmt.format(v * scale) if isinstance(v, (int, float)) else "-"
    print(f"| {o} | {cfg} | {j['median_ns'] / 1e3:.1f} us | {j['gbps']:.0f} | {num('power_w', '{:.0f} W')} | "
          f"{num('energy_j', '{:.2f} mJ', 1e3)} | {num('gbps_per_watt', '{:.2f}')} | "
          f"{num('sm_clock_mhz', '{:.0f}')} ({num('sm_clock_min_mhz', '{:.0f}')}) | "
          f"{ob.get('throttle_reasons', '-') if ob.get('throttled') else 'no'} |")
print(f"\nmethod of the energy-best row: {(json.load(open(f'{out}/best_energy.json')).get('observed') or {}).get('method', '-')}")
PY
