"""The tuner from Python: tune a kernel (a built-in name, a spec or T1 file, or a spec dict) and read a database.

    import gpu_autotune
    trials = gpu_autotune.tune("reduction", problem="n=1048576", db="tune.db", time_limit=30)
    best = gpu_autotune.Database("tune.db").best("reduction", "n=1048576")

Everything runs in the C++ library (the `autotune` command line in this process, and its JSON queries).
"""
import contextlib
import json
import os
import shutil
import tempfile

from . import _lib
from ._source import write_if_changed
from .errors import GpuAutotuneError, UsageError, error_for_code


def _problem_text(problem):
    """"x=1000,y=1" from a string as it is, or from a dict {"x": 1000, "y": 1}."""
    if isinstance(problem, dict):
        return ",".join("%s=%d" % (k, int(v)) for k, v in problem.items())
    if isinstance(problem, str):
        return problem
    raise UsageError("problem: expected 'name=value,...' or a dict, got %r" % (problem,))


class Database(object):
    """A tuning database (SQLite file) written by `tune` or the `autotune` command line."""

    def __init__(self, path):
        self.path = os.fspath(path)

    def best(self, kernel, problem, device=None, workload=None):
        """The best recorded configuration of `kernel` (a built-in name or a spec/T1 file) at `problem`.

        Returns the `autotune best --json` answer as a dict: "config" (parameter -> value), "match" (how close the
        answer's problem and device are to the ones asked), "provenance", "median_ns" (ns) and more. `device` is a
        recorded device name (default: this machine's GPU, or the only recorded one). Raises UsageError (unknown
        kernel, nothing recorded), DatabaseError.
        """
        req = {"op": "best", "db": self.path, "kernel": os.fspath(kernel), "problem": _problem_text(problem)}
        if device is not None:
            req["device"] = device
        if workload is not None:
            req["workload"] = workload
        return _lib.query(req)

    def trials(self, session):
        """Every trial of session `session` (an id) as dicts of the trials table's columns (times in ns, compile
        and verification in ms), the configuration as a dict under "config"."""
        return _lib.query({"op": "trials", "db": self.path, "session": int(session)})["trials"]


@contextlib.contextmanager
def silenced(quiet):
    """Within it, the process's stdout and stderr go to /dev/null when `quiet` (the library writes to them)."""
    if not quiet:
        yield
        return
    import sys
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved + [null]:
            os.close(fd)


def run_tune(kernel, db, args, quiet=False):
    """Runs `autotune --db DB tune KERNEL ARGS...` in this process; returns the session's --stats-json as a dict.

    Raises the error of the command's exit code (UsageError for 2, NoGpuError for 3, DatabaseError for 4,
    GpuAutotuneError for 1); its message is printed by the command itself.
    """
    tmp = tempfile.mkdtemp(prefix="gpu_autotune_")
    try:
        stats = os.path.join(tmp, "stats.json")
        argv = ["autotune", "--db", os.fspath(db), "tune", os.fspath(kernel), "--stats-json", stats] + list(args)
        with silenced(quiet):
            rc = _lib.main(argv)
        if rc != 0:
            raise error_for_code(rc, "`%s` exited with code %d (its message is above)" % (" ".join(argv), rc))
        with open(stats) as f:
            return json.load(f)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _kernel_path(kernel_or_spec, tmp):
    """A built-in name or a path as it is; a spec dict written to a file in `tmp` (relative paths in it are then
    relative to that folder: give its "source" as an absolute path)."""
    if isinstance(kernel_or_spec, dict):
        path = os.path.join(tmp, "%s.tune.json" % kernel_or_spec.get("name", "kernel"))
        write_if_changed(path, json.dumps(kernel_or_spec, indent=1))
        return path
    return os.fspath(kernel_or_spec)


def tune(kernel_or_spec_or_t1, problem=None, db="autotune.db", time_limit=None, strategy=None, budget=None,
         simulate=False, from_db=None, inputs=None, samples=None, strategy_options=None, quiet=False):
    """Tunes a kernel and returns the session's trials (as Database.trials gives them).

    `kernel_or_spec_or_t1`: a built-in kernel name, the path of a spec or T1 file, or a spec dict. `problem`:
    "n=1048576" or {"n": 1048576} (default: the spec's first size). `time_limit` in seconds, `budget` in new
    evaluations, `strategy` a name of `autotune strategies` with `strategy_options` {key: value}; `samples` the
    most timed runs per configuration (>= 7). `simulate=True` answers from trials recorded in `from_db` (default
    `db`) instead of a GPU. `inputs`: {name: numpy array}, the values of user kernels' arguments that the spec
    names as {"memory": NAME}. Raises UsageError, NoGpuError, DatabaseError, GpuAutotuneError.
    """
    args = []
    if problem is not None:
        args += ["--problem", _problem_text(problem)]
    if time_limit is not None:
        args += ["--time-limit", repr(float(time_limit))]
    if budget is not None:
        args += ["--budget", str(int(budget))]
    if strategy is not None:
        args += ["--strategy", strategy]
    for k, v in (strategy_options or {}).items():
        args += ["--strategy-option", "%s=%s" % (k, v)]
    if samples is not None:
        args += ["--samples", str(int(samples))]
    if simulate:
        args.append("--simulate")
        if from_db is not None:
            args += ["--from", os.fspath(from_db)]
    elif from_db is not None:
        raise UsageError("from_db: only with simulate=True")
    _lib.set_arrays(list((inputs or {}).items()))
    tmp = tempfile.mkdtemp(prefix="gpu_autotune_spec_")
    try:
        stats = run_tune(_kernel_path(kernel_or_spec_or_t1, tmp), db, args, quiet)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if "session" not in stats:
        raise GpuAutotuneError("the tune wrote no session id to its statistics")
    return Database(db).trials(stats["session"])
