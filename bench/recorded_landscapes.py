#!/usr/bin/env python3
"""The default strategy on every recorded landscape, through `autotune compare-strategies` (simulation, no GPU).

  bench/recorded_landscapes.py warm  [--repeats 1000] [--db DB ...]   warm start against cold (docs/strategies.md)
  bench/recorded_landscapes.py cold  [--repeats 1000] [--db DB ...]   the cold default against random at 5%
  bench/recorded_landscapes.py tune  [--repeats 100]  [--db DB ...]   broad_then_local's options, leave one out

Landscapes are found in the databases (default: tests/data/recorded_h100.db, recorded_h200.db and, when present,
tests/data/landscapes_h100.db): every kernel, workload, problem and device with trials. A pair of sizes is two
landscapes of one kernel, workload and device; `warm` runs both directions of every pair.

warm: for each direction, budgets 5% and 10% of the space, batch 1 and 32: broad_then_local cold, warm-started as a
session is (the hint with the source's times), and warm-started as given (the 5 fastest only, the former behaviour).
Prints a Markdown table; a warm share below the cold one by more than one standard error of the difference is
marked "LOSS".

cold: every landscape, budget 5%, batch 1 and 32: the share of the space within 5% of the optimum, random_sample and
the cold default; on landscapes with less than 15% within 5%, the target is at least 90% of runs within 5% and above
random by two standard errors of the difference.

tune: a small grid of broad_then_local's options (covering-round size, local batch, restart rule, warm-start
shares) on every landscape at budgets 5% and 10%, batch 32 as in `tune` (cold runs; warm-started runs from the other
size where the landscape has a pair), scored by the mean share of runs within 5% of the optimum (--score: or within 1%,
the share that found it, the mean of optimum / best found). Leave one landscape
out: for each landscape the option set that is best on all the others is chosen and scored on the one left out, so a
default is never fitted to the landscape it is scored on.
"""
import argparse
import csv
import itertools
import math
import os
import sqlite3
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DBS = ["tests/data/recorded_h100.db", "tests/data/recorded_h200.db", "tests/data/landscapes_h100.db"]


def landscapes(dbs):
    """(db, kernel, workload, problem, device, elements) of every recorded cell."""
    out = []
    for db in dbs:
        if not os.path.exists(db):
            continue
        con = sqlite3.connect("file:" + db + "?mode=ro", uri=True)
        rows = con.execute(
            "select t.kernel, t.workload, t.problem, d.name, max(t.problem_elements) from trials t "
            "join devices d on d.id = t.device_id group by 1, 2, 3, 4 order by 1, 2, 4, 5").fetchall()
        out += [(db,) + tuple(r) for r in rows]
    return out


def kernel_arg(kernel):
    """A built-in kernel's name, or the spec of an example's kernel (examples/NAME/NAME.tune.json)."""
    spec = os.path.join(ROOT, "examples", kernel, kernel + ".tune.json")
    return spec if os.path.exists(spec) else kernel


def workload_flags(kernel, workload):
    parts = workload.split("/")
    flags = ["--dtype", parts[0]]
    if len(parts) > 1:
        flags += ["--op", parts[1]]
    return flags


def compare(autotune, land, budgets, batch, repeats, options=(), warm_from=None, as_given=False, seed=1,
            strategy="broad_then_local", info=None):
    """Rows of the CSV of one compare-strategies call: {budget: (within, within_se, warm_trust, {column: value})} of
    `strategy` (columns mean, within_1pct, within_5pct, found_optimum);
    `info` (a dict) gets the size of the space, the share of it within 5% of the optimum and the rows of the other
    strategies (random_sample) by name."""
    db, kernel, workload, problem, device = land[:5]
    with tempfile.NamedTemporaryFile(suffix=".csv") as f:
        cmd = [autotune, "compare-strategies", kernel_arg(kernel), "--problem", problem, "--from", db, "--device", device,
               "--budgets", budgets, "--repeats", str(repeats), "--batch", str(batch), "--seed", str(seed),
               "--strategies", "broad_then_local", "--csv", f.name] + workload_flags(kernel, workload)
        for o in options:
            cmd += ["--strategy-option", "broad_then_local." + o]
        if warm_from:
            cmd += ["--warm-from-problem", warm_from]
            if as_given:
                cmd.append("--warm-as-given")
        out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
        if info is not None:
            for line in out.splitlines():
                if "are within 5% of the optimum" in line:
                    info["share"] = float(line.split("(")[1].split("%")[0])
                if "valid configurations," in line:
                    info["size"] = int(line.split("valid configurations,")[0].split()[-1])
        rows = {}
        for r in csv.DictReader(open(f.name)):
            row = (float(r["within"]), float(r["within_se"]), float(r.get("warm_trust", 0) or 0),
                   {k: float(r[k]) for k in ("mean", "within_1pct", "within_5pct", "found_optimum")})
            if r["strategy"] == strategy:
                rows[int(r["budget"])] = row
            elif info is not None:
                info.setdefault(r["strategy"], {})[int(r["budget"])] = row
        return rows


def pairs(lands):
    """Both directions (target, source) of every two sizes of one kernel, workload and device."""
    out = []
    for a, b in itertools.permutations(lands, 2):
        if a[0] == b[0] and a[1:3] == b[1:3] and a[4] == b[4] and a[3] != b[3]:
            out.append((a, b))
    return out


def short(problem):
    for k in (16, 18, 20, 22, 24, 26, 28):
        problem = problem.replace("n=%d" % (1 << k), "n=2^%d" % k)
    return problem


def warm_table(args):
    print("| kernel | target | from | batch | budget | cold | warm (hint) | warm trust | warm as given |")
    print("|---|---|---|---|---|---|---|---|---|")
    losses = 0
    for target, source in pairs(landscapes(args.db)):
        for batch in (1, 32):
            cold = compare(args.autotune, target, "5%,10%", batch, args.repeats)
            warm = compare(args.autotune, target, "5%,10%", batch, args.repeats, warm_from=source[3])
            given = compare(args.autotune, target, "5%,10%", batch, args.repeats, warm_from=source[3], as_given=True)
            for budget in sorted(cold):
                c, w, g = cold[budget], warm[budget], given[budget]
                loss = w[0] < c[0] - math.hypot(c[1], w[1])
                losses += loss
                print("| %s | %s | %s | %d | %d | %.1f +- %.1f%% | %.1f +- %.1f%%%s | %.2f | %.1f +- %.1f%% |" %
                      (target[1], short(target[3]), short(source[3]), batch, budget, 100 * c[0], 100 * c[1],
                       100 * w[0], 100 * w[1], " LOSS" if loss else "", w[2], 100 * g[0], 100 * g[1]), flush=True)
    print("\nwarm below cold by more than one standard error: %d" % losses)


def cold_table(args):
    print("| kernel | problem | device | configs | within 5% | batch | budget | random | default (cold) | target |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for land in landscapes(args.db):
        for batch in (1, 32):
            info = {}
            default = compare(args.autotune, land, "5%", batch, args.repeats, info=info)
            rnd = info["random_sample"]
            for budget in sorted(default):
                d, r = default[budget], rnd[budget]
                hard = info["share"] < 15
                above = d[0] - r[0] >= 2 * math.hypot(d[1], r[1])
                verdict = ("met" if d[0] >= 0.9 and above else "MISSED") if hard else "(not a hard landscape)"
                print("| %s | %s | %s | %d | %.1f%% | %d | %d | %.1f +- %.1f%% | %.1f +- %.1f%% | %s |" %
                      (land[1], short(land[3]), land[4], info["size"], info["share"], batch, budget,
                       100 * r[0], 100 * r[1], 100 * d[0], 100 * d[1], verdict), flush=True)


# The grid of `tune`: each entry one option set of broad_then_local (the defaults first).
GRID = {
    "broad": ["0", "0.02"],
    "local_batch": ["0", "2"],
    "elite": ["16", "4"],
    "warm_first": ["0.03", "0.08"],
    "warm_more": ["0.05", "0.15"],
}


def tune(args):
    lands = landscapes(args.db)
    by_target = {}
    for t, s in pairs(lands):
        by_target.setdefault(t, []).append(s)
    names = list(GRID)
    sets = [dict(zip(names, values)) for values in itertools.product(*(GRID[n] for n in names))]
    # Warm options only matter with a warm start: tried on the default cold options only, and cold options on the
    # default warm options, to keep the grid small.
    defaults = {n: GRID[n][0] for n in names}
    warm_names = {"warm_first", "warm_more"}
    sets = [s for s in sets if all(s[n] == defaults[n] for n in warm_names) or
            all(s[n] == defaults[n] for n in names if n not in warm_names)]
    scores = {}  # (set index, landscape index) -> mean share within 5% over budgets, batches and warm sources
    for li, land in enumerate(lands):
        for si, s in enumerate(sets):
            opts = ["%s=%s" % kv for kv in s.items()]
            vals = []
            # Batch 32 as in `tune` (local_batch caps the local steps of a larger batch only).
            vals += [r[3][args.score] for r in compare(args.autotune, land, "5%,10%", 32, args.repeats, opts).values()]
            for src in by_target.get(land, []):
                vals += [r[3][args.score] for r in compare(args.autotune, land, "5%,10%", 32, args.repeats, opts,
                                                           warm_from=src[3]).values()]
            scores[si, li] = sum(vals) / len(vals)
        print("scored %s %s (%d option sets)" % (land[1], land[3], len(sets)), file=sys.stderr, flush=True)
    print("score: the mean of %s over budgets 5%% and 10%%, cold and warm-started (batch 32, %d seeds)\n" %
          (args.score, args.repeats))
    label = lambda s: " ".join("%s=%s" % (n, v) for n, v in s.items() if v != defaults[n]) or "(defaults)"
    print("| left out | chosen on the others | its score there | defaults there | best there (in hindsight) |")
    print("|---|---|---|---|---|")
    held_out = []
    for li, land in enumerate(lands):
        others = [lj for lj in range(len(lands)) if lj != li]
        chosen = max(range(len(sets)), key=lambda si: (sum(scores[si, lj] for lj in others), -si))
        best = max(range(len(sets)), key=lambda si: (scores[si, li], -si))
        print("| %s %s %s | %s | %.1f%% | %.1f%% | %.1f%% (%s) |" %
              (land[1], short(land[3]), land[4], label(sets[chosen]), 100 * scores[chosen, li], 100 * scores[0, li],
               100 * scores[best, li], label(sets[best])), flush=True)
        held_out.append((scores[chosen, li], scores[0, li]))
    print("\nleft-out mean: chosen on the others %.2f%%, defaults %.2f%%" %
          (100 * sum(c for c, _ in held_out) / len(lands), 100 * sum(d for _, d in held_out) / len(lands)))
    overall = max(range(len(sets)), key=lambda si: (sum(scores[si, lj] for lj in range(len(lands))), -si))
    print("best on all landscapes together: %s (mean %.2f%%; defaults %.2f%%)" %
          (label(sets[overall]), 100 * sum(scores[overall, lj] for lj in range(len(lands))) / len(lands),
           100 * sum(scores[0, lj] for lj in range(len(lands))) / len(lands)))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["warm", "cold", "tune"])
    p.add_argument("--db", action="append", help="recorded database (repeatable; default: the shipped ones)")
    p.add_argument("--repeats", type=int, help="seeds per simulated cell (default: 1000 for warm, 100 for tune)")
    p.add_argument("--autotune", default=os.path.join(ROOT, "build", "autotune"))
    p.add_argument("--score", default="within_5pct", choices=["within_5pct", "within_1pct", "found_optimum", "mean"],
                   help="tune: the per-run figure averaged (share within 5%% or 1%% of the optimum, share that found "
                   "it, mean optimum / best found)")
    args = p.parse_args()
    args.db = args.db or [os.path.join(ROOT, d) for d in DEFAULT_DBS]
    args.repeats = args.repeats or (100 if args.what == "tune" else 1000)
    {"warm": warm_table, "cold": cold_table, "tune": tune}[args.what](args)


if __name__ == "__main__":
    main()
