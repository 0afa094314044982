#!/usr/bin/python3
"""Kernel Tuner 1.4.0's strategies replayed on our recorded spaces, for `compare-strategies --score time --traces`.

For every space and every Kernel Tuner strategy (its default options), runs Kernel Tuner's tune_kernel in simulation
mode on the space's cache, RUNS times with seeds 0, 1, ... (Python's `random` and numpy's generator, which Kernel
Tuner's strategies draw from), and writes the order in which each run evaluated configurations as one JSON line
(tuner/compare/traces.hpp). autotune then scores those orders with its own score, cost model and time range, as it
scores its own strategies: docs/strategies.md "Kernel Tuner's strategies on the same spaces".

Spaces come from two kinds of files:
  --kt-cache [KERNEL=]FILE
                    a Kernel Tuner cache (.json or .json.gz), imported into autotune with `import --format kt-cache`
                    as kernel KERNEL (`--spec`'s name; default: the cache's kernel_name, the stub's name):
                    the space is the cache's configurations that are not InvalidConfig (Kernel Tuner's restrictions),
                    given to Kernel Tuner as a restriction that admits exactly those;
  --t4 [DB=]FILE    an autotune T4 export (`autotune export --format t4`) of database DB (its file name, as
                    compare-strategies labels a space of several --from; needed when two of them hold the same space):
                    one space per kernel, problem and device,
                    written out as a Kernel Tuner cache (values by label, times from the export) with the same
                    restriction; rows of status "invalid" (not in the spec's space) are left out.
Budget: each run may spend as many new evaluations (max_fevals) as can end within the space's time range under
autotune's cost model (compile + verification + the recorded samples), counted from the cheapest configurations, plus
one; the range's end is read from --ranges, the --csv of `compare-strategies --score time` on the same spaces
(column end_s). So no run is cut before the range ends; autotune's replay stops it there, as it stops its own.
Decision time: none is charged (autotune's --no-strategy-time, for both).

Usage:
  PYTHONPATH=SITE /usr/bin/python3 bench/kt_strategy_scores.py --ranges scores.csv --out traces.jsonl \
      [--kt-cache FILE ...] [--t4 FILE ...] [--runs 10] [--strategies a,b,...] [--work DIR]
SITE: bench/kt_site.sh's site (Kernel Tuner 1.4.0 and python-constraint2, pure Python), with Debian's numpy, scipy
and jsonschema. Strategies default to every one of 1.4.0 that runs there (those needing scikit-optimize, pyATF or
pymoo are left out). Exit status 0, or 2 for bad usage or input.
"""
import argparse
import csv
import gzip
import json
import os
import random
import sys
import time
import warnings

DEFAULT_STRATEGIES = [
    "random_sample", "brute_force", "minimize", "basinhopping", "diff_evo", "genetic_algorithm", "greedy_mls",
    "ordered_greedy_mls", "greedy_ils", "dual_annealing", "mls", "pso", "simulated_annealing", "firefly_algorithm",
    "bayes_opt", "hybrid_vndx", "adaptive_tabu_greywolf",
]


def load_json(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def cost_ms(entry):
    """autotune's recorded cost of a cache entry (ms): compile + verification + the samples (else benchmark_time)."""
    bench = sum(t for t in entry.get("times", []) if isinstance(t, (int, float)) and t > 0)
    if not entry.get("times"):
        bench = entry.get("benchmark_time", 0) or 0
    return (entry.get("compile_time", 0) or 0) + (entry.get("verification_time", 0) or 0) + bench


def kt_key(values):
    return ",".join(str(v) for v in values)


def spaces_from_kt_cache(arg, work):
    kernel, _, path = arg.rpartition("=") if "=" in arg and not os.path.exists(arg) else ("", "", arg)
    d = load_json(path)
    out = os.path.join(work, os.path.basename(path).removesuffix(".gz"))
    with open(out, "w") as f:
        json.dump(d, f)
    return [{"cache": out, "data": d, "kernel": kernel or d["kernel_name"], "device": d["device_name"], "problem": "",
             "from": "",
             "what": os.path.basename(path)}]


def spaces_from_t4(arg, work):
    db, _, path = arg.rpartition("=") if "=" in arg and not os.path.exists(arg) else ("", "", arg)
    d = load_json(path)
    groups = {}
    for r in d["results"]:
        ext = r.get("autotune", {})
        if ext.get("status") == "invalid":
            continue
        key = (ext["kernel"], ext["workload"], ext["problem"], ext["device"])
        groups.setdefault(key, []).append(r)
    # A binary that came from the cache has compile time 0: take the one recorded for the same configuration under
    # another problem, as autotune's replay charges it (compare.cpp, borrow_compile_times).
    compiled = {}
    for rows in groups.values():
        for r in rows:
            ext = r["autotune"]
            key = (ext["kernel"], ext["device"], json.dumps(ext["config_values"], sort_keys=True))
            if r.get("times", {}).get("compilation", 0) > 0:
                compiled.setdefault(key, r["times"]["compilation"])
    spaces = []
    for n, ((kernel, workload, problem, device), rows) in enumerate(sorted(groups.items())):
        names = sorted(rows[0]["configuration"].keys())
        tune_params = {k: sorted({r["configuration"][k] for r in rows}, key=lambda v: (isinstance(v, str), v))
                       for k in names}
        cache = {}
        for r in rows:
            values = [r["configuration"][k] for k in names]
            entry = dict(r["configuration"])
            meas = {m["name"]: m["value"] for m in r.get("measurements", [])}
            times = r.get("times", {})
            runtimes = times.get("runtimes", [])
            if r.get("invalidity", "correct") == "correct":
                entry["time"] = meas["time"]
                bench = sum(runtimes) if runtimes else meas["time"] * meas.get("samples", 1)
            else:
                entry["time"] = "CompilationFailedConfig" if r["invalidity"] == "compile" else "RuntimeFailedConfig"
                bench = 0
            entry["times"] = runtimes
            compile_ms = times.get("compilation", 0) or compiled.get(
                (kernel, device, json.dumps(r["autotune"]["config_values"], sort_keys=True)), 0)
            entry.update(compile_time=compile_ms, verification_time=times.get("validation", 0),
                         benchmark_time=bench, strategy_time=0, framework_time=0)
            cache[kt_key(values)] = entry
        c = {"device_name": device, "kernel_name": kernel, "problem_size": [1], "tune_params_keys": names,
             "tune_params": tune_params, "objective": "time", "cache": cache}
        out = os.path.join(work, "%s_%d.json" % (os.path.basename(path).split(".")[0], n))
        with open(out, "w") as f:
            json.dump(c, f)
        spaces.append({"cache": out, "data": c, "kernel": kernel, "device": device, "problem": problem, "from": db,
                       "what": "%s %s %s %s%s" % (kernel, workload, problem, device, " in " + db if db else "")})
    return spaces


def range_end_s(ranges, space):
    """The end (s) of the space's time range in autotune's score CSV: its label is
    'kernel workload problem device[ in db]'."""
    ends = []
    for row in ranges:
        label = row["space"]
        if not label.startswith(space["kernel"] + " "):
            continue
        tail = (" " + space["problem"] + " " if space["problem"] else " ") + space["device"]
        if space["from"]:
            tail += " in " + space["from"]
        if label.endswith(tail) or (not space["from"] and (tail + " in ") in label):
            ends.append(float(row["end_s"]))
    if len(set(ends)) > 1:
        sys.exit("error: %s: %d ranges in --ranges match (expected one)" % (space["what"], len(set(ends))))
    return ends[0] if ends else None


def max_fevals(space, end_s):
    costs = sorted(cost_ms(e) / 1e3 for e in space["data"]["cache"].values() if e["time"] != "InvalidConfig")
    total, n = 0.0, 0
    for c in costs:
        total += c
        if total > end_s:
            break
        n += 1
    return min(len(costs), n + 1)


_SEARCHSPACES = {}


def cache_searchspaces():
    """Kernel Tuner builds a space's Searchspace in every tune_kernel call, by testing the restriction on every
    configuration of the product (minutes for the scan spaces): build it once per space and hand each run a deep copy,
    which is what a fresh build gives."""
    import copy
    import kernel_tuner.interface as kti
    build = kti.Searchspace

    def cached(tune_params, restrictions, *args, **kwargs):
        key = (json.dumps(tune_params, sort_keys=True), getattr(restrictions, "space_key", None))
        if key[1] is None:
            return build(tune_params, restrictions, *args, **kwargs)
        if key not in _SEARCHSPACES:
            _SEARCHSPACES[key] = build(tune_params, restrictions, *args, **kwargs)
        return copy.deepcopy(_SEARCHSPACES[key])

    kti.Searchspace = cached


def run_strategy(space, strategy, seed, fevals):
    from kernel_tuner import tune_kernel
    d = space["data"]
    tp = {k: d["tune_params"][k] for k in d["tune_params_keys"]}
    valid = space["valid"]
    names = list(tp)

    def admitted(p):
        return kt_key(p[k] for k in names) in valid

    admitted.space_key = space["cache"]

    # brute_force takes no options (it walks the whole space in Kernel Tuner's order; the replay cuts it)
    options = {} if strategy == "brute_force" else {"max_fevals": fevals}
    random.seed(seed)
    import numpy as np
    np.random.seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results, _ = tune_kernel(d["kernel_name"], "__global__ void k() {}", d["problem_size"], [], tp,
                                 restrictions=admitted, cache=space["cache"], simulation_mode=True, strategy=strategy,
                                 strategy_options=options, quiet=True, verbose=False)
    return [{k: r[k] for k in names} for r in results]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kt-cache", action="append", default=[])
    ap.add_argument("--t4", action="append", default=[])
    ap.add_argument("--ranges", required=True, help="compare-strategies --score time --csv of the same spaces")
    ap.add_argument("--out", required=True, help="the JSON Lines traces file to write")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--strategies", default=",".join(DEFAULT_STRATEGIES))
    ap.add_argument("--no-searchspace-cache", action="store_true",
                    help="let Kernel Tuner build each run's Searchspace itself (slow; the same runs)")
    ap.add_argument("--only", default="", help="only the spaces whose description contains this text")
    ap.add_argument("--work", default="/tmp/kt_strategy_scores", help="where the caches are written for Kernel Tuner")
    args = ap.parse_args()
    if args.runs < 1:
        sys.exit("error: --runs must be at least 1")
    os.makedirs(args.work, exist_ok=True)
    with open(args.ranges) as f:
        ranges = [row for row in csv.DictReader(f) if row["space"] != "all"]
    spaces = []
    for p in args.kt_cache:
        spaces += spaces_from_kt_cache(p, args.work)
    for p in args.t4:
        spaces += spaces_from_t4(p, args.work)
    if not spaces:
        sys.exit("error: no spaces (give --kt-cache or --t4)")
    spaces = [sp for sp in spaces if args.only in sp["what"]]
    strategies = [s for s in args.strategies.split(",") if s]
    if not args.no_searchspace_cache:
        cache_searchspaces()
    with open(args.out, "w") as out:
        for space in spaces:
            d = space["data"]
            space["valid"] = {k for k, e in d["cache"].items() if e["time"] != "InvalidConfig"}
            end_s = range_end_s(ranges, space)
            if end_s is None:
                print("%s: not among the spaces of --ranges, skipped" % space["what"], flush=True)
                continue
            fevals = max_fevals(space, end_s)
            print("%s: %d configurations, range end %.4g s, max_fevals %d" % (space["what"], len(space["valid"]), end_s,
                                                                          fevals), flush=True)
            for strategy in strategies:
                t0 = time.perf_counter()
                lines = []
                try:
                    for seed in range(args.runs):
                        lines.append({"strategy": "kt:" + strategy, "run": seed,
                                      "configs": run_strategy(space, strategy, seed, fevals)})
                except Exception as e:  # a strategy that fails here is reported and left out of this space
                    print("  kt:%s: failed: %s: %s" % (strategy, type(e).__name__, e), flush=True)
                    continue
                for line in lines:
                    line.update({"kernel": space["kernel"], "device": space["device"]})
                    for key in ("problem", "from"):
                        if space[key]:
                            line[key] = space[key]
                    out.write(json.dumps(line) + "\n")
                print("  kt:%s: %d runs in %.1f s" % (strategy, args.runs, time.perf_counter() - t0), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
