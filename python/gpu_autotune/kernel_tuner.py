"""Kernel Tuner 1.4's tune_kernel and run_kernel over this tuner (docs/python.md has the table of arguments).

A script written for Kernel Tuner runs with `from gpu_autotune import tune_kernel` in place of
`from kernel_tuner import tune_kernel`: the arguments become a spec (module _translate), the C++ tuner runs the
search in this process, and the session's trials come back as Kernel Tuner's (results, env).
"""
import atexit
import ctypes
import hashlib
import os
import shutil
import tempfile
import warnings
from time import perf_counter

import numpy

from . import _lib, _results, _translate, api
from ._source import write_if_changed
from .errors import UnsupportedError, UsageError, error_for_code
from .util import get_config_string

# Kernel Tuner's strategy names -> this tuner's (`autotune strategies`). Those without a counterpart of the same
# idea map to the nearest one (docs/python.md says which); the others are refused.
STRATEGIES = {
    "brute_force": "brute_force", "random_sample": "random_sample", "simulated_annealing": "simulated_annealing",
    "dual_annealing": "simulated_annealing", "genetic_algorithm": "genetic_algorithm", "pso": "particle_swarm",
    "firefly_algorithm": "particle_swarm", "diff_evo": "differential_evolution", "basinhopping": "basin_hopping",
    "greedy_ils": "iterated_local_search", "greedy_mls": "greedy_local_search", "mls": "greedy_local_search",
    "ordered_greedy_mls": "greedy_local_search", "minimize": "greedy_local_search",
    "bayes_opt": "bayesian_optimization",
}
# Kernel Tuner's strategy options of the same meaning as one of ours: (its strategy, its option) -> (our option,
# conversion of the value, given the number of parameters). Other options are warned about and not used.
STRATEGY_OPTIONS = {
    ("genetic_algorithm", "popsize"): ("population", lambda v, n: int(v)),
    ("genetic_algorithm", "mutation_chance"): ("mutation_rate", lambda v, n: 1.0 / float(v)),  # 1 in v
    ("pso", "popsize"): ("swarm", lambda v, n: int(v)),
    ("pso", "w"): ("inertia", lambda v, n: float(v)),
    ("pso", "c1"): ("cognitive", lambda v, n: float(v)),
    ("pso", "c2"): ("social", lambda v, n: float(v)),
    ("diff_evo", "popsize"): ("population", lambda v, n: int(v) * n),  # popsize_times_dimensions, its default
    ("diff_evo", "F"): ("differential_weight", lambda v, n: float(v)),
    ("diff_evo", "CR"): ("crossover_rate", lambda v, n: float(v)),
    ("simulated_annealing", "alpha"): ("cooling", lambda v, n: float(v)),
}
_OBJECTIVES = {"time": False, "energy": False, "edp": False, "gbps_per_watt": True}
_LANGS = ("cuda", "cupy", "nvcuda")


def _refuse_unsupported(lang, texmem_args, compiler, verify, observers, parallel, objectives, device):
    if lang is not None and str(lang).lower() not in _LANGS:
        raise UnsupportedError("lang: %r is not supported (CUDA only: None, 'CUDA', 'cupy', 'nvcuda')" % (lang,))
    if texmem_args is not None:
        raise UnsupportedError("texmem_args: texture memory arguments are not supported")
    if compiler is not None:
        raise UnsupportedError("compiler: %r is not supported; CUDA kernels are compiled with NVRTC" % (compiler,))
    from .observers.nvml import NVMLObserver
    for o in observers or ():
        if not isinstance(o, NVMLObserver):
            raise UnsupportedError("observers: %s is not supported; gpu_autotune.observers.nvml.NVMLObserver is (clocks, "
                                   "power, energy and temperature are recorded with every trial)" % type(o).__name__)
    if parallel:
        raise UnsupportedError("parallel: not supported in Python; the command line tunes on several GPUs under MPI")
    if objectives:
        raise UnsupportedError("objectives: multi-objective tuning is not supported; give one objective")
    if not isinstance(device, int) or isinstance(device, bool):
        raise UnsupportedError("device: %r is not supported; give the GPU's ordinal (an int)" % (device,))


class _Verifier:
    """Kernel Tuner's `verify` function as the library's verification callback (gat_set_verify_callback): after
    each configuration's verification run the tuner hands over the outputs (arguments named arg<i>, as bytes);
    the function gets (answer, result_host, atol=atol) as in Kernel Tuner: result_host[i] a host copy of argument
    i where it is an output, else None. An exception in it counts as a wrong result, with its message."""

    _FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(_lib._GatArray),
                           ctypes.c_size_t, ctypes.POINTER(_lib._GatArray), ctypes.c_size_t,
                           ctypes.POINTER(ctypes.c_char), ctypes.c_size_t)

    def __init__(self, verify, arguments, answer, atol):
        self.verify, self.arguments, self.answer, self.atol = verify, arguments, answer, atol
        self.fn = self._FN(self._call)  # kept alive while registered

    def _call(self, user, kernel, outputs, n_outputs, expected, n_expected, message, size):
        try:
            result_host = [None] * len(self.arguments)
            for k in range(n_outputs):
                o = outputs[k]
                i = int(o.name.decode()[len("arg"):])
                arg = self.arguments[i]
                data = ctypes.string_at(o.data, o.bytes)
                result_host[i] = numpy.frombuffer(data, dtype=arg.dtype).reshape(arg.shape).copy()
            try:
                correct = self.verify(self.answer, result_host, atol=self.atol)
            except TypeError:
                correct = self.verify(self.answer, result_host)
            if correct:
                return 0
            text = "verify returned %r" % (correct,)
        except Exception as e:  # noqa: BLE001 - the tuner records it as this configuration's wrong result
            text = "verify raised %s: %s" % (type(e).__name__, e)
        raw = text.encode("utf-8", "replace")[:max(0, size - 1)]
        ctypes.memmove(message, raw + b"\0", len(raw) + 1)
        return 1

    def __enter__(self):
        lib = _lib.library()
        lib.gat_set_verify_callback.restype = ctypes.c_int
        lib.gat_set_verify_callback.argtypes = [self._FN, ctypes.c_void_p]
        lib.gat_set_verify_callback(self.fn, None)
        return self

    def __exit__(self, *exc):
        lib = _lib.library()
        lib.gat_set_verify_callback(self._FN(), None)


def _strategy_args(strategy, strategy_options, spec):
    """The command line's strategy arguments; a budget share goes into the spec's tuning object."""
    if strategy is not None and not isinstance(strategy, str):
        raise UnsupportedError("strategy: a strategy object (custom Python strategies) is not supported; give one of "
                               "%s, or gpu_autotune.strategies.NAME" % ", ".join(sorted(STRATEGIES)))
    name = strategy or "brute_force"
    if name not in STRATEGIES:
        raise UnsupportedError("strategy: %r is not supported; supported are %s" % (name, ", ".join(sorted(STRATEGIES))))
    args = ["--strategy", STRATEGIES[name]]
    options = dict(strategy_options or {})
    if name == "random_sample" and "fraction" not in options and "max_fevals" not in options:
        options["fraction"] = 0.1  # Kernel Tuner's random_sample covers a tenth of the space by default
    for k, v in options.items():
        if (name, k) in STRATEGY_OPTIONS:
            ours, convert = STRATEGY_OPTIONS[(name, k)]
            args += ["--strategy-option", "%s=%s" % (ours, convert(v, len(spec["parameters"])))]
        elif k == "max_fevals":
            args += ["--budget", str(int(v))]
        elif k == "time_limit":
            args += ["--time-limit", repr(float(v))]
        elif k == "fraction":
            spec["tuning"] = {"budget_fraction": float(v)}
        else:
            warnings.warn("strategy_options[%r]: Kernel Tuner's option is not used (this tuner's strategies name "
                          "their options differently: `autotune strategies`)" % k)
    return args


def _apply_callables(tr, spec_path):
    """Adds one constraint that keeps the configurations the callable restrictions accept (tr.callables).

    The space without them comes from the library's `space` query; each callable gets what Kernel Tuner gives it:
    a lone one-argument function (with several parameters) the configuration dict, a (function, names) tuple those
    parameters' values, any other function every parameter's value in order."""
    reply = _lib.query({"op": "space", "kernel": spec_path, "problem": tr.problem})
    names = list(tr.tune_params)
    lone = len(tr.callables) == 1 and callable(tr.callables[0])
    keep = []
    for cfg in reply["configs"]:
        p = _results.to_kt_config(cfg, tr.tune_params)
        ok = True
        for f in tr.callables:
            if isinstance(f, tuple):
                ok = f[0](*[p[n] for n in f[1]])
            elif lone and len(names) > 1 and _one_argument(f):
                ok = f(p)
            else:
                ok = f(*[p[n] for n in names])
            if not ok:
                break
        if ok:
            keep.append(tuple(p[n] for n in names))
    tr.spec.setdefault("constraints", []).append("(%s,) in %r" % (", ".join(names), keep))


def _valid_defaults(tr, spec_path):
    """Makes the first valid configuration the spec's default one, the reference that every configuration's
    outputs are compared with when there is no answer (the first values need not satisfy the restrictions)."""
    configs = _lib.query({"op": "space", "kernel": spec_path, "problem": tr.problem})["configs"]
    if not configs:
        raise UsageError("restrictions: no configuration of tune_params satisfies them")
    first = _results.to_kt_config(configs[0], tr.tune_params)
    for p in tr.spec["parameters"]:
        p["default"] = _translate.json_value(first[p["name"]])


def _one_argument(f):
    import inspect
    try:
        return len(inspect.signature(f).parameters) == 1
    except (TypeError, ValueError):
        return False


def _cache_path(cache):
    path = os.fspath(cache)
    return path if path.endswith(".json") else path + ".json"


def _simulation_args(cache, spec_path, tr, tmp, quiet):
    """Imports Kernel Tuner cache file `cache` as trials of the spec into a database in `tmp`; returns the
    arguments that replay it (--simulate --from DB --device NAME)."""
    path = _cache_path(cache)
    if not os.path.isfile(path):
        raise UsageError("cache: simulation mode requires an existing cache file: %s does not exist" % path)
    imported = os.path.join(tmp, "imported.db")
    argv = ["autotune", "--db", imported, "import", path, "--format", "kt-cache", "--kernel", spec_path,
            "--problem", tr.problem]
    with api.silenced(quiet):
        rc = _lib.main(argv)
    if rc != 0:
        raise error_for_code(rc, "cache: `%s` exited with code %d (its message is above)" % (" ".join(argv), rc))
    with open(path) as f:
        device = _results.read_cache(f.read()).get("device_name")
    return ["--simulate", "--from", imported] + (["--device", device] if device else [])


_binary_cache_dir = []


def _binary_cache():
    """The process's binary cache (a database in a temporary folder, removed at exit), made on first use."""
    if not _binary_cache_dir:
        d = tempfile.mkdtemp(prefix="gpu_autotune_binaries_")
        atexit.register(shutil.rmtree, d, True)
        _binary_cache_dir.append(d)
    return os.path.join(_binary_cache_dir[0], "binaries.db")


def _write_spec(tr):
    text = _translate.spec_json(tr.spec)
    path = os.path.join(tr.spec_dir, "spec-%s.tune.json" % hashlib.sha256(text.encode()).hexdigest()[:16])
    write_if_changed(path, text)
    return path


def prepare_tune(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x=None,
                 grid_div_y=None, grid_div_z=None, restrictions=None, answer=None, atol=1e-6, verify=None,
                 verbose=False, lang=None, device=0, platform=0, smem_args=None, cmem_args=None, texmem_args=None,
                 compiler=None, compiler_options=None, defines=None, log=None, iterations=7, block_size_names=None,
                 quiet=False, strategy=None, strategy_options=None, cache=None, metrics=None, simulation_mode=None,
                 parallel=None, observers=None, objective=None, objective_higher_is_better=None, objectives=None,
                 seed=None):
    """The first half of tune_kernel, which needs no library: checks the arguments and translates them.

    Returns (Translation, the `autotune tune` arguments after the spec). Raises what tune_kernel raises for its
    arguments. `verbose`, `platform`, `log`, `quiet`, `cache` and `metrics` are not used here."""
    _refuse_unsupported(lang, texmem_args, compiler, verify, observers, parallel, objectives, device)
    if simulation_mode and not cache:
        raise UsageError("simulation_mode: needs cache, an existing Kernel Tuner cache file to replay")
    objective = objective or "time"
    if objective not in _OBJECTIVES:
        raise UnsupportedError("objective: %r is not supported (%s)" % (objective, ", ".join(sorted(_OBJECTIVES))))
    if objective_higher_is_better not in (None, _OBJECTIVES[objective]):
        raise UnsupportedError("objective_higher_is_better: %s is fixed to %s here" % (objective, _OBJECTIVES[objective]))
    tr = _translate.translate(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x,
                              grid_div_y, grid_div_z, restrictions, answer, atol, smem_args, cmem_args,
                              compiler_options, defines, block_size_names, verify)
    # One warm-up run: the verification run before it has already loaded the module and run it once. No final pick
    # (docs/performance.md): Kernel Tuner's best is the lowest time among the results, each measured once.
    args = ["--problem", tr.problem, "--samples", str(max(7, int(iterations))), "--warmup", "1", "--final-k", "0",
            "--gpu", str(device), "--objective", objective] + _strategy_args(strategy, strategy_options, tr.spec)
    if seed is not None:
        args += ["--seed", str(int(seed))]
    if any("nvml_energy" in o.observables for o in observers or ()) and objective in ("time", "gbps_per_watt"):
        args += ["--energy-ms", "100"]  # the energy counter's window after the samples (docs/energy.md)
    return tr, args


def tune_kernel(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x=None, grid_div_y=None,
                grid_div_z=None, restrictions=None, answer=None, atol=1e-6, verify=None, verbose=False, lang=None,
                device=0, platform=0, smem_args=None, cmem_args=None, texmem_args=None, compiler=None,
                compiler_options=None, defines=None, log=None, iterations=7, block_size_names=None, quiet=False,
                strategy=None, strategy_options=None, cache=None, metrics=None, simulation_mode=None, parallel=None,
                observers=None, objective=None, objective_higher_is_better=None, objectives=None, seed=None):
    """Tunes a CUDA kernel as Kernel Tuner 1.4's tune_kernel does; returns (results, env).

    results: one dict per configuration evaluated: the parameters, "time" (ms, median of the samples), "times"
    (ms, where kept), "compile_time", "verification_time", "benchmark_time", "framework_time", "strategy_time"
    (ms), "timestamp", and each metric; a failed one has an ErrorConfig under "__error__" and "time". env:
    device_name, problem_size, tune_params, kernel_name, iterations, best_config, and the tuner's own figures.
    Raises UsageError for arguments Kernel Tuner refuses too, UnsupportedError (naming the argument) for what
    this package does not support, NoGpuError without a GPU.
    """
    start = perf_counter()
    tr, args = prepare_tune(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x,
                            grid_div_y, grid_div_z, restrictions, answer, atol, verify, verbose, lang, device,
                            platform, smem_args, cmem_args, texmem_args, compiler, compiler_options, defines, log,
                            iterations, block_size_names, quiet, strategy, strategy_options, cache, metrics,
                            simulation_mode, parallel, observers, objective, objective_higher_is_better, objectives,
                            seed)
    objective = objective or "time"
    _lib.set_arrays(tr.arrays)
    if tr.callables:
        _apply_callables(tr, _write_spec(tr))
    if answer is None and "constraints" in tr.spec:
        _valid_defaults(tr, _write_spec(tr))
    spec_path = _write_spec(tr)
    tmp = tempfile.mkdtemp(prefix="gpu_autotune_kt_")
    try:
        if simulation_mode:
            args += _simulation_args(cache, spec_path, tr, tmp, quiet)
        # A database of its own per call: every configuration is measured, as Kernel Tuner does without a cache;
        # the compiled binaries are kept for the process (a script that tunes one kernel for several inputs
        # compiles each configuration once).
        if not simulation_mode:
            args += ["--binary-cache", _binary_cache()]
        if verify is not None:
            with _Verifier(verify, arguments, answer, atol):
                stats = api.run_tune(spec_path, os.path.join(tmp, "tune.db"), args, quiet=quiet)
        else:
            stats = api.run_tune(spec_path, os.path.join(tmp, "tune.db"), args, quiet=quiet)
        rows = api.Database(os.path.join(tmp, "tune.db")).trials(stats["session"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    results = _results.to_results(rows, tune_params, metrics, stats, objective, observers or ())
    env = {"device_name": stats.get("device"), "problem_size": problem_size, "tune_params": tune_params,
           "kernel_name": kernel_name, "kernel_string": tr.spec["source"], "iterations": iterations,
           "objective": objective, "strategy": strategy or "brute_force", "strategy_options": strategy_options or {},
           "verification": stats.get("verification"), "session": stats.get("session"),
           "total_compile_time": 1000 * stats.get("compile_s", 0.0),
           "total_verification_time": 1000 * stats.get("verify_s", 0.0),
           "total_benchmark_time": 1000 * stats.get("benchmark_s", 0.0), "autotune_stats": stats}
    ok = [r for r in results if "__error__" not in r and r.get(objective) is not None]
    if ok:
        pick = max if _OBJECTIVES[objective] else min
        best = pick(ok, key=lambda r: r[objective])
        env["best_config"] = best
        if not quiet:
            keys = list(tune_params) + [objective] + list(metrics or {})
            print("\nBEST PERFORMING CONFIGURATION FOR OBJECTIVE %s:" % objective)
            print(get_config_string(best, keys))
    elif not quiet:
        print("no results to report")
    if cache and not simulation_mode:
        header = {"device_name": env["device_name"], "kernel_name": kernel_name, "problem_size": problem_size,
                  "objective": objective}
        _results.write_cache(_cache_path(cache), header, tune_params, results)
    env["overhead_time"] = 1000 * (perf_counter() - start)
    return results, env


def run_kernel(kernel_name, kernel_source, problem_size, arguments, params, grid_div_x=None, grid_div_y=None,
               grid_div_z=None, lang=None, device=0, platform=0, smem_args=None, cmem_args=None, texmem_args=None,
               compiler=None, compiler_options=None, defines=None, block_size_names=None, quiet=False, log=None):
    """Runs a CUDA kernel once with the configuration `params`, as Kernel Tuner 1.4's run_kernel does, and returns
    a list like `arguments`: for each array a numpy array with its contents after the run, each scalar as given.

    The call becomes a spec of one configuration (the same translation as tune_kernel's), launched through
    gpu_autotune.Kernel (launch.py) on GPU 0's primary context with the arrays uploaded from `arguments`; nothing
    is verified or timed. Raises UsageError / UnsupportedError naming the argument, NoGpuError without a GPU or
    for a failed launch (its message names the driver's error)."""
    from . import cuda_memory  # needs the driver only here
    from .launch import Kernel
    _refuse_unsupported(lang, texmem_args, compiler, None, None, None, None, device)
    if device != 0:
        raise UnsupportedError("device: run_kernel runs on GPU 0 only, got %r" % (device,))
    if not isinstance(params, dict):
        raise UsageError("params: expected a dict of parameter name -> value, got %s" % type(params).__name__)
    # Each parameter a tuning parameter of one value: its macro, block size and grid divisor as tune_kernel's.
    tune_params = {k: [v] for k, v in params.items()} or {"gpu_autotune_run_kernel": [0]}
    tr = _translate.translate(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x,
                              grid_div_y, grid_div_z, None, None, 1e-6, smem_args, cmem_args, compiler_options,
                              defines, block_size_names, None)
    _lib.set_arrays(tr.arrays)  # the spec names its inputs' data in memory; loading it reads them
    spec_path = _write_spec(tr)
    sizes = tr.spec["problem"]["sizes"][0]
    dims = [sizes[d] for d in tr.spec["problem"]["dims"]]
    device_args, host = [], []
    for i, arg in enumerate(arguments):
        if isinstance(arg, numpy.ndarray):
            device_args.append(cuda_memory.DeviceArray.from_host(numpy.ascontiguousarray(arg)))
        else:
            device_args.append(arg)  # a numpy scalar (translate checked its type)
    for sym, arr in (cmem_args or {}).items():
        arr = numpy.array([arr]) if isinstance(arr, numpy.generic) else arr
        device_args.append(cuda_memory.DeviceArray.from_host(numpy.ascontiguousarray(arr)))
    tmp = tempfile.mkdtemp(prefix="gpu_autotune_run_")
    try:
        # An empty database: the kernel runs its spec's default configuration, which is `params`.
        with api.silenced(quiet), Kernel(spec_path, os.path.join(tmp, "run.db")) as k:
            k.launch(0, dims, device_args)
            cuda_memory.synchronize()
        for i, arg in enumerate(arguments):
            host.append(device_args[i].to_host().reshape(arg.shape) if isinstance(arg, numpy.ndarray) else arg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return host
