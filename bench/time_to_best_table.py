#!/usr/bin/env python3
"""The table of bench/time_to_best.sh: reads OUT/runs/*.json (tune --stats-json) and OUT/runs/libs_*.csv
(versus_libraries) and prints Markdown.

usage: time_to_best_table.py OUT "15 30 60"

Ratios: "best / optimum" = the best median a limited run had found by the limit (its trace, command time)
divided by the brute-force best of the full space, both as the tuner measured them in this run (1.00 = the
optimum; 1.03 = 3% slower). "ours / library" = library time / time of the database's best configuration,
both timed again by versus_libraries in one harness (> 1: ours faster)."""
import csv
import glob
import json
import os
import sys

FAMILIES = ["reduction", "scan", "compaction", "transpose"]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def best_by(stats, limit, phase="target"):
    """Best median (ns) the run had found by `limit` seconds of command time (target phase only)."""
    best = 0
    for p in stats.get("trace", []):
        if p.get("phase", "target") != phase or p["elapsed_s"] > limit:
            continue
        if p["best_ns"] > 0:
            best = p["best_ns"]
    return best


def libs(out):
    """(database base name, case label) -> csv row."""
    rows = {}
    for path in glob.glob(os.path.join(out, "runs", "libs_*.csv")):
        base = os.path.basename(path)[len("libs_"):-len(".csv")]
        with open(path) as f:
            for r in csv.DictReader(f):
                rows[(base, r["family"] + " " + r["case"])] = r
    return rows


def label(family, s):
    side = 1 << (s // 2 - (1 if s > 24 else 0))  # as time_to_best.sh: 2^24 -> 4096^2, 2^28 -> 8192^2
    return {
        "reduction": f"reduction float32 n=2^{s}",
        "scan": f"scan float32 n=2^{s}",
        "compaction": f"compaction int32 flagged n=2^{s} 50%",
        "transpose": f"transpose float32 {side}x{side}",
    }[family]


def ratio_text(x, opt):
    return f"{x / opt:.3f}" if x > 0 and opt > 0 else "-"


def main():
    out = sys.argv[1]
    limits = [int(x) for x in (sys.argv[2] if len(sys.argv) > 2 else "15 30 60").split()]
    lib = libs(out)
    runs = os.path.join(out, "runs")
    gpu = open(os.path.join(out, "gpu.txt")).read().strip() if os.path.exists(os.path.join(out, "gpu.txt")) else "?"
    print(f"GPU: {gpu}\n")
    print("best / optimum: the best the default `autotune tune` had found by the limit (command time, from an "
          "empty database unless said otherwise) over the brute-force best of the full space, both measured in "
          "this run (1.000 = the optimum). ours / library: library time over the database's best, timed again "
          "by versus_libraries (> 1: ours faster).\n")
    head = ["case", "space", "brute force: best, configs/s, verify ms/config"]
    head += [f"cold {l} s" for l in limits]
    head += ["warm 15 s", "warm 30 s", "screen 30 s", "library", "ours/lib brute", f"ours/lib cold {max(limits)} s",
             "ours/lib warm"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    sizes = sorted({int(os.path.basename(p).split("_")[2].split(".")[0])
                    for p in glob.glob(os.path.join(runs, "brute_*_*.json"))}, reverse=True) or [28, 24]
    for s in sizes:
        for f in FAMILIES:
            brute = load(os.path.join(runs, f"brute_{f}_{s}.json"))
            if brute is None:
                continue
            opt = brute["best"]["median_ns"] if brute.get("best") else 0
            verify_ms = 1e3 * brute["verify_s"] / max(1, brute["configs"] - brute["statuses"].get("compile_error", 0))
            row = [label(f, s), str(brute["space_size"]),
                   f"{opt / 1e3:.1f} us, {brute['configs_per_s']:.1f}/s, {verify_ms:.2f} ms"]
            for l in limits:
                cold = load(os.path.join(runs, f"cold_{f}_{s}_{l}.json")) or load(
                    os.path.join(runs, f"cold_{f}_{s}_{max(limits)}.json"))
                row.append(ratio_text(best_by(cold, l), opt) if cold else "-")
            warm = [load(p) for p in glob.glob(os.path.join(runs, f"warm_{f}_{s}_*.json"))]
            warm = warm[0] if warm else None
            row.append(ratio_text(best_by(warm, 15), opt) if warm else "-")
            row.append(ratio_text(best_by(warm, 30), opt) if warm else "-")
            screen = [load(p) for p in glob.glob(os.path.join(runs, f"screen_{f}_{s}_*.json"))]
            screen = screen[0] if screen else None
            row.append(ratio_text(best_by(screen, 30), opt) if screen else "-")
            key = label(f, s)
            lrow = lib.get((f"brute{s}", key))
            row.append(f"{lrow['library']} {float(lrow['library_ms']) * 1e3:.1f} us" if lrow else "-")
            for base in [f"brute{s}", f"cold_{f}_{s}_{max(limits)}"] + [
                    os.path.basename(p)[len("libs_"):-4] for p in glob.glob(os.path.join(runs, f"libs_warm_{f}_{s}.csv"))][:1]:
                r = lib.get((base, key))
                row.append(f"{float(r['ours_over_library']):.3f}" if r and float(r["ours_over_library"]) > 0 else "-")
            while len(row) < len(head):
                row.append("-")
            print("| " + " | ".join(row) + " |")
    print()
    for p in sorted(glob.glob(os.path.join(runs, "*.json"))):
        j = load(p)
        if not j:
            continue
        b = j.get("best") or {}
        extra = ""
        if j.get("warm_start", {}).get("used"):
            extra += f"; warm start {j['warm_start']['used']} ({j['warm_start']['source']})"
        if j.get("screen"):
            extra += f"; screened {j['screen']['configs']} at {j['screen']['problem']}"
        print(f"- {os.path.basename(p)[:-5]}: {j['strategy']}, {j['configs']} measured of {j['space_size']} in "
              f"{j.get('command_s', j['wall_s']):.1f} s, best {b.get('median_ns', 0) / 1e3:.1f} us "
              f"{b.get('label', '')}{extra}")


if __name__ == "__main__":
    main()
