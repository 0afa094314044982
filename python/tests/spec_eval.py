"""Evaluating a translated spec's Python expressions in Python (what the C++ evaluator does for these spec
texts), for tests that need no library: constraints, launch grid and block, and the count of valid configs."""
import itertools
import re

DEVICE = {"max_threads_per_block": 1024, "warp_size": 32, "sm_count": 132, "cc": 90}
_BUILTINS = {"int": int, "min": min, "max": max, "abs": abs, "len": len, "range": range}


def evaluate(expr, config, problem):
    names = dict(DEVICE)
    names.update(problem)
    names.update(config)
    return eval(str(expr), {"__builtins__": _BUILTINS}, names)


def problem_of(spec):
    return dict(spec["problem"]["sizes"][0])


def launch_at(spec, config):
    """(grid, block) of the spec's one launch step at `config`, as integer triples."""
    step = spec["launch"][0]
    p = problem_of(spec)
    return (tuple(evaluate(e, config, p) for e in step["grid"]), tuple(evaluate(e, config, p) for e in step["block"]))


def valid(spec, config):
    p = problem_of(spec)
    return all(evaluate(c, config, p) for c in spec.get("constraints", []))


def count_valid(spec):
    """The number of valid configurations: the parameters the constraints name are enumerated, the others'
    value counts multiplied in (they cannot change validity)."""
    params = dict((p["name"], p["values"]) for p in spec["parameters"])
    text = " ".join(spec.get("constraints", []))
    used = [n for n in params if re.search(r"\b%s\b" % re.escape(n), text)]
    free = 1
    for n in params:
        if n not in used:
            free *= len(params[n])
    count = sum(1 for vals in itertools.product(*[params[n] for n in used]) if valid(spec, dict(zip(used, vals))))
    return count * free
