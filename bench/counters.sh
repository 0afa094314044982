#!/usr/bin/env bash
# Hardware counters per configuration (docs/observers.md "Hardware counters"): measures the three targets of the
# counter observer on this GPU and writes them as one Markdown table to $OUT/counters.md.
#   1. reduction float32 sum at 2^28, the grid-stride variants (VARIANT 6 and 7): DRAM bytes read per configuration
#      against 4 n (target: within 2%), and the counters' bandwidth (DRAM bytes / the counters' GPU time) against
#      bytes moved / median time (target: within 5%);
#   2. transpose float32 8192 x 8192, the tiled variant with and without padding: shared-memory bank conflicts
#      (target: the unpadded tiles have them, the padded ones not);
#   3. a 270-configuration space (reduction at 2^26, warp shuffle, every block size x grid size x items per thread
#      x vector width but ITEMS_PER_THREAD = VEC = 4): the tune's wall time with --metrics counters against without
#      (target: at most 2x), and without --metrics against the tuner before the counters (BEFORE, optional; target:
#      nothing measurable); where a replay's time goes (the mean of each phase the observer records in its method)
#      and whether the timed medians moved with the range profiler kept enabled between replays (target: within 3%).
# Every step runs even when another failed; a failed step is a row saying so, with its log in $OUT.
#
#   OUT=<dir> bash bench/counters.sh <dir with autotune>
#
# Environment: OUT [out]; BEFORE (a dir with the autotune of the base commit, for "off by default vs before");
#   STEP_TIMEOUT [240] seconds per tune; EXTRA (more tune options); REPLAYS (space-separated values of
#   AUTOTUNE_CUPTI_REPLAY, docs/observers.md, e.g. "sync_flush config_once reenable": steps 1 and the counted tune
#   of 3 again with each, one row per value, to compare the replay's variants on one machine). About 4 minutes on
#   an H100 (2 minutes more with BEFORE, about 1 more per REPLAYS value). Needs python3 (with sqlite3).
set -uo pipefail
. "$(dirname "$0")/common.sh"
bench_autotune_dir "OUT=<dir> bash bench/counters.sh <dir with autotune>" "$@"
OUT=${OUT:-out}
BEFORE=${BEFORE:-}
REPLAYS=${REPLAYS:-}
STEP_TIMEOUT=${STEP_TIMEOUT:-240}
EXTRA=${EXTRA:-}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
bench_out_work_log counters
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader > "$OUT/gpu.txt" 2>&1 ||
  echo "nvidia-smi failed" > "$OUT/gpu.txt"
FAILED=()

# run NAME TIMEOUT CMD...: runs CMD with its output in $OUT/NAME.log; its wall seconds in $OUT/NAME.seconds; records a
# failure (exit code and the log's tail on stderr) and returns non-zero when it fails.
run() {
  local name=$1 limit=$2
  shift 2
  echo "== $name: $*" | tee -a "$LOG" >&2
  local t0 t1 rc
  t0=$(date +%s.%N)
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  python3 -c "print(f'{$t1 - $t0:.2f}')" > "$OUT/$name.seconds"
  if [ $rc -ne 0 ]; then
    FAILED+=("$name (exit $rc$([ $rc -eq 124 ] && echo ", timed out after ${limit}s"))")
    echo "error: $name failed with exit code $rc; the end of $OUT/$name.log:" >&2
    tail -15 "$OUT/$name.log" >&2
    return 1
  fi
  echo "   $name: $(cat "$OUT/$name.seconds") s" >&2
}

RED_GS='VARIANT >= 6 && KAHAN == 0 && FINAL == 0 && ITEMS_PER_THREAD == 4 && VEC == 4 && BLOCK_SIZE == 256'
TRANSPOSE='VARIANT == 1 && DIAGONAL == 0 && BLOCK_ROWS == 8'
SPACE270='VARIANT == 7 && KAHAN == 0 && FINAL == 0 && (VEC != 4 || ITEMS_PER_THREAD != 4)'

# 1. reduction at 2^28, grid-stride variants, the default counters.
# shellcheck disable=SC2086
run reduction "$STEP_TIMEOUT" "$AT" --db "$WORK/reduction.db" tune reduction --n 268435456 --dtype float32 --op sum \
  --strategy brute_force --restrict "$RED_GS" --metrics counters $EXTRA
run reduction_summary 60 "$AT" --db "$WORK/reduction.db" summary reduction --n 268435456 --dtype float32 --op sum \
  --by BLOCKS_PER_SM

# 2. transpose 8192^2, tiled, padded and unpadded.
# shellcheck disable=SC2086
run transpose "$STEP_TIMEOUT" "$AT" --db "$WORK/transpose.db" tune transpose --rows 8192 --cols 8192 --dtype float32 \
  --strategy brute_force --restrict "$TRANSPOSE" --metrics shared_bank_conflicts,shared_wavefronts,dram_bytes $EXTRA
run transpose_summary 60 "$AT" --db "$WORK/transpose.db" summary transpose --rows 8192 --cols 8192 --dtype float32 \
  --by PADDING

# 3. the 270-configuration space: without counters, with them, and (BEFORE) the tuner before them. Each into a
# database of its own, so that each compiles and measures everything.
SPACE=(reduction --n 67108864 --dtype float32 --op sum --strategy brute_force --restrict "$SPACE270")
# shellcheck disable=SC2086
run space_off "$STEP_TIMEOUT" "$AT" --db "$WORK/off.db" tune "${SPACE[@]}" $EXTRA
# shellcheck disable=SC2086
run space_counters "$STEP_TIMEOUT" "$AT" --db "$WORK/counters.db" tune "${SPACE[@]}" --metrics counters $EXTRA
if [ -n "$BEFORE" ]; then
  if [ -x "$BEFORE/autotune" ]; then
    # shellcheck disable=SC2086
    run space_before "$STEP_TIMEOUT" "$BEFORE/autotune" --db "$WORK/before.db" tune "${SPACE[@]}" $EXTRA
    # shellcheck disable=SC2086
    run space_off_again "$STEP_TIMEOUT" "$AT" --db "$WORK/off_again.db" tune "${SPACE[@]}" $EXTRA
  else
    FAILED+=("space_before (no autotune in BEFORE=$BEFORE)")
  fi
fi
# 4. (REPLAYS) the replay's variants: the reduction at 2^28 and the counted 270-configuration tune again with each.
VARIANTS=()
for v in $REPLAYS; do
  name=${v//,/_}
  VARIANTS+=("$name=$v")
  # shellcheck disable=SC2086
  run "reduction_$name" "$STEP_TIMEOUT" env AUTOTUNE_CUPTI_REPLAY="$v" "$AT" --db "$WORK/reduction_$name.db" tune \
    reduction --n 268435456 --dtype float32 --op sum --strategy brute_force --restrict "$RED_GS" --metrics counters $EXTRA
  # shellcheck disable=SC2086
  run "space_$name" "$STEP_TIMEOUT" env AUTOTUNE_CUPTI_REPLAY="$v" "$AT" --db "$WORK/space_$name.db" tune \
    "${SPACE[@]}" --metrics counters $EXTRA
  cp "$WORK/reduction_$name.db" "$WORK/space_$name.db" "$OUT/" 2> /dev/null
done

for db in reduction transpose off counters before off_again; do
  [ -f "$WORK/$db.db" ] && cp "$WORK/$db.db" "$OUT/$db.db"
done

python3 - "$OUT" "${VARIANTS[*]+${VARIANTS[*]}}" ${FAILED[@]+"${FAILED[@]}"} <<'PY' | tee "$OUT/counters.md"
import json, math, os, re, sqlite3, sys
out, variants, failed = sys.argv[1], sys.argv[2].split(), sys.argv[3:]

def trials(name):
    path = f"{out}/{name}.db"
    if not os.path.exists(path):
        return None
    con = sqlite3.connect(path)
    rows = con.execute("SELECT config_json, median_ns, gbps, problem_elements, metrics, observer FROM trials "
                       "WHERE status = 'ok'").fetchall()
    res = []
    for cfg, median, gbps, elems, metrics, observer in rows:
        m = {x["name"]: x["value"] for x in json.loads(metrics)} if metrics else {}
        res.append(dict(cfg=json.loads(cfg), median=median, gbps=gbps, n=elems, m=m, observer=observer))
    return res

def secs(name):
    try:
        return float(open(f"{out}/{name}.seconds").read())
    except (OSError, ValueError):
        return None

def verdict(ok):
    return "**met**" if ok else "**missed**"

gpu = open(f"{out}/gpu.txt").read().strip()
print(f"Hardware counters per configuration (bench/counters.sh); GPU: {gpu}\n")
print("| target | measured | result |")
print("|---|---|---|")

red = trials("reduction")
if not red:
    print("| reduction 2^28: DRAM bytes read within 2% of 4 n | no trials (see reduction.log) | **failed** |")
    print("| reduction 2^28: counters' bandwidth within 5% of bytes / median | no trials | **failed** |")
else:
    with_m = [t for t in red if "dram_bytes_read" in t["m"]]
    if not with_m:
        note = open(f"{out}/reduction.log").read().splitlines()
        note = next((l for l in note if "observers that recorded nothing" in l), "no counters recorded")
        print(f"| reduction 2^28: counters | {note} | **failed** |")
    else:
        ratios = [t["m"]["dram_bytes_read"] / (4 * t["n"]) for t in with_m]
        bw = [((t["m"].get("dram_bytes_read") or 0) + (t["m"].get("dram_bytes_write") or 0)) /
              t["m"]["gpu_time"] / t["gbps"] for t in with_m if t["m"].get("gpu_time") and t["gbps"]]
        worst = max(abs(r - 1) for r in ratios)
        print(f"| reduction 2^28, {len(with_m)} grid-stride configurations: DRAM bytes read within 2% of 4 n | "
              f"read / 4n from {min(ratios):.4f} to {max(ratios):.4f} | {verdict(worst <= 0.02)} |")
        if bw:
            worstb = max(abs(b - 1) for b in bw)
            flush = sorted({m.group(1) for t in with_m
                            for m in [re.search(r"flush=(\w+)", t["observer"] or "")] if m})
            span = [t["m"]["gpu_time"] / t["median"] for t in with_m if t["m"].get("gpu_time") and t["median"]]
            print(f"| reduction 2^28: counters' bandwidth within 5% of bytes / median | counters / (bytes / median) "
                  f"from {min(bw):.4f} to {max(bw):.4f}; the counters' gpu_time / median from {min(span):.4f} to "
                  f"{max(span):.4f} (flush {', '.join(flush) or '?'}) | {verdict(worstb <= 0.05)} |")
        occ = [t["m"].get("achieved_occupancy") for t in with_m if t["m"].get("achieved_occupancy") is not None]
        rep = [t["m"].get("counter_replay_ms") for t in with_m if t["m"].get("counter_replay_ms") is not None]
        if occ and rep:
            print(f"| reduction 2^28: achieved occupancy; replay cost | occupancy {min(occ):.1f}% to {max(occ):.1f}%;"
                  f" replay {sum(rep) / len(rep):.1f} ms per configuration | - |")

tr = trials("transpose")
if not tr:
    print("| transpose 8192^2: bank conflicts padded vs unpadded | no trials (see transpose.log) | **failed** |")
else:
    def conflicts(t):
        m = t["m"]
        if "shared_bank_conflicts_ld" not in m:
            return None
        return (m.get("shared_bank_conflicts_ld") or 0) + (m.get("shared_bank_conflicts_st") or 0)
    cells = []
    ok = True
    for tile in sorted({t["cfg"]["TILE_DIM"] for t in tr}):
        pair = {t["cfg"]["PADDING"]: t for t in tr if t["cfg"]["TILE_DIM"] == tile}
        if 0 in pair and 1 in pair and conflicts(pair[0]) is not None and conflicts(pair[1]) is not None:
            c0, c1 = conflicts(pair[0]), conflicts(pair[1])
            w0, w1 = pair[0]["m"].get("shared_wavefronts"), pair[1]["m"].get("shared_wavefronts")
            cells.append(f"TILE_DIM={tile}: unpadded {c0:.3g} ({c0 / pair[0]['n']:.2f}/element), padded {c1:.3g}; "
                         f"wavefronts {w0:.3g} vs {w1:.3g}; median {pair[0]['median'] / 1e3:.0f} vs "
                         f"{pair[1]['median'] / 1e3:.0f} us")
            ok = ok and c0 > 0.5 * pair[0]["n"] and c1 < 0.1 * c0 if tile == 32 else ok
    if cells:
        print(f"| transpose 8192^2: the unpadded tile has bank conflicts, the padded not | {'<br>'.join(cells)} | "
              f"{verdict(ok)} |")
    else:
        print("| transpose 8192^2: bank conflicts | no counters recorded (see transpose.log) | **failed** |")

off, cnt = secs("space_off"), secs("space_counters")
n_off, n_cnt = trials("off"), trials("counters")
if off and cnt and n_off is not None and n_cnt is not None:
    print(f"| 270-configuration space: counters add at most 2x | without {off:.1f} s ({len(n_off)} ok), with "
          f"--metrics counters {cnt:.1f} s ({len(n_cnt)} ok, "
          f"{sum(1 for t in n_cnt if t['m'])} with counters): {cnt / off:.2f}x | {verdict(cnt <= 2 * off)} |")
else:
    print("| 270-configuration space: counters add at most 2x | a tune failed (see space_*.log) | **failed** |")
def phases(rows):
    """Mean ms per replay of each phase the observer writes into its method (";phases=enable:0.00,setup:...")."""
    sums, n, first = {}, 0, None
    for t in rows:
        m = re.search(r"phases=([^;]*)", t["observer"] or "")
        if not m:
            continue
        n += 1
        for part in m.group(1).split(","):
            k, v = part.split(":")
            sums[k] = sums.get(k, 0.0) + float(v)
            if k == "enable" and float(v) > 0:
                first = float(v) if first is None else max(first, float(v))
    return n, {k: v / n for k, v in sums.items()}, first

if n_cnt:
    n, mean, first = phases(n_cnt)
    if n:
        cells = ", ".join(f"{k} {v:.2f}" for k, v in mean.items())
        print(f"| 270-configuration space: where a replay's time goes | mean ms per replay over {n}: {cells}; "
              f"enabling the profiler (first replay) {first if first is not None else 0:.1f} ms | - |")
if n_off and n_cnt:
    base = {json.dumps(t["cfg"], sort_keys=True): t["median"] for t in n_off if t["median"]}
    r = [t["median"] / base[k] for t in n_cnt for k in [json.dumps(t["cfg"], sort_keys=True)]
         if k in base and t["median"]]
    if r:
        g = math.exp(sum(math.log(x) for x in r) / len(r))
        print(f"| timed medians with counters / without (the profiler stays enabled between replays) | geometric "
              f"mean {g:.4f} over {len(r)} configurations, from {min(r):.3f} to {max(r):.3f} | "
              f"{verdict(abs(g - 1) <= 0.03)} |")
def gpu_time_spans(rows):
    """The counters' gpu_time / median and (DRAM bytes / gpu_time) / (bytes / median) of each row with both."""
    span, bw = [], []
    for t in rows or []:
        m = t["m"]
        if m.get("gpu_time") and t["median"] and t["gbps"]:
            span.append(m["gpu_time"] / t["median"])
            bw.append(((m.get("dram_bytes_read") or 0) + (m.get("dram_bytes_write") or 0)) / m["gpu_time"] / t["gbps"])
    return span, bw

for variant in variants:
    name, flags = variant.split("=", 1)
    cells = []
    sp, rows = secs(f"space_{name}"), trials(f"space_{name}")
    if sp and off and rows is not None:
        n, mean, first = phases(rows)
        cells.append(f"270 space {sp:.1f} s ({sp / off:.2f}x of without), mean ms per replay: " +
                     ", ".join(f"{k} {v:.2f}" for k, v in mean.items()))
    span, bw = gpu_time_spans(trials(f"reduction_{name}"))
    if span:
        cells.append(f"reduction 2^28: gpu_time / median {min(span):.4f} to {max(span):.4f}, counters' bandwidth / "
                     f"(bytes / median) {min(bw):.4f} to {max(bw):.4f}")
    print(f"| AUTOTUNE_CUPTI_REPLAY={flags} | {'<br>'.join(cells) or 'no trials (see its logs)'} | - |")
before, again = secs("space_before"), secs("space_off_again")
if before and again and off:
    print(f"| off by default adds nothing measurable | before the counters {before:.1f} s; this tuner without "
          f"--metrics {off:.1f} s and {again:.1f} s | {(off + again) / 2 / before:.3f}x |")
else:
    print("| off by default adds nothing measurable | not measured (BEFORE=<dir with the base commit's autotune>) | - |")
for f in failed:
    print(f"| step failed | {f} | see {f.split()[0]}.log |")
PY
[ ${#FAILED[@]} -eq 0 ] || { echo "failed steps: ${FAILED[*]}" >&2; exit 1; }
