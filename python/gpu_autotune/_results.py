"""Trials of a session as Kernel Tuner's results, and Kernel Tuner's cache file (util.process_cache's format)."""
import json
import numbers
import os

import numpy

from .errors import UsageError
from .util import CompilationFailedConfig, ErrorConfig, InvalidConfig, RuntimeFailedConfig, \
    VerificationFailedConfig, process_metrics

# Trial status -> the error object Kernel Tuner puts under "__error__" (and "time") of a failed configuration.
_ERRORS = {"compile_error": CompilationFailedConfig, "invalid_resources": InvalidConfig, "invalid": InvalidConfig,
           "launch_error": RuntimeFailedConfig, "runtime_fault": RuntimeFailedConfig, "timeout": RuntimeFailedConfig,
           "wrong_result": VerificationFailedConfig}


def kt_value(name, value, values):
    """The Kernel Tuner value of parameter `name` (values `values`) for `value` as the library reports it: an
    integer parameter's value itself; a typed one's (strings, floats: the value's index; booleans: 0 or 1) code,
    or its text where a label is reported."""
    typed = any(isinstance(v, (bool, numpy.bool_)) or not isinstance(v, numbers.Integral) for v in values)
    if not typed:
        for v in values:
            if v == value and not isinstance(value, (bool, str)):
                return v
    elif isinstance(value, str):
        for v in values:
            if str(v) == value:
                return v
    elif all(isinstance(v, (bool, numpy.bool_)) for v in values):
        for v in values:
            if bool(v) == bool(value):
                return v
    elif isinstance(value, numbers.Integral) and 0 <= value < len(values):
        return values[value]
    raise UsageError("parameter %r: the library reported value %r, which is not one of %r" % (name, value, values))


def to_kt_config(config, tune_params):
    """{name: value} in tune_params' order with Kernel Tuner's values."""
    return dict((k, kt_value(k, config[k], list(v))) for k, v in tune_params.items())


def objective_value(row, objective):
    """The value of `objective` of a trials row: "energy" (J per run), "edp" (J s), "gbps_per_watt"; None where
    the row has no energy or power."""
    energy, power = row.get("energy_j"), row.get("power_w")
    if objective == "energy":
        return energy
    if objective == "edp":
        return None if energy is None else energy * row["median_ns"] / 1e9
    if objective == "gbps_per_watt":
        return None if not power or row.get("gbps") is None else row["gbps"] / power
    raise UsageError("objective: %r has no value in a trial" % objective)


def to_results(rows, tune_params, metrics=None, stats=None, objective="time", observers=()):
    """Kernel Tuner's results list from trials rows: params, "time" (ms, the median), "times" (ms, where the trial
    kept them), "compile_time" and "verification_time" (ms), "benchmark_time" (ms: median x samples, the timed
    runs), "framework_time" (ms: the session's setup, database and other time of `stats`, its --stats-json,
    shared evenly as Kernel Tuner shares its own), "strategy_time" (0: not measured apart here), "timestamp";
    failed configurations carry an ErrorConfig under "__error__" and "time" as Kernel Tuner's cache does; a
    configuration whose outputs differ from the reference configuration's where no answer was given (Kernel Tuner
    checks nothing then, and neither fails it here) has what differs under "reference_mismatch".
    Metrics only on verified ones, after the `observers`' values (observers.nvml.NVMLObserver: its observables as
    keys); an `objective` other than "time" is a key of its own (objective_value)."""
    stats = stats or {}
    framework_ms = 1000.0 * sum(stats.get(k, 0.0) for k in ("setup_s", "database_s", "other_s")) / max(len(rows), 1)
    results = []
    for row in rows:
        r = to_kt_config(row["config"], tune_params)
        status = row.get("status", "ok")
        if status == "ok":
            r["time"] = row["median_ns"] / 1e6
            r["times"] = [t / 1e6 for t in (row.get("sample_ns") or [])]
            log = row.get("log") or ""
            if log.startswith("accepted: "):  # without an answer: outputs that differ from the reference's
                r["reference_mismatch"] = log[len("accepted: "):]
        else:
            err = _ERRORS.get(status, ErrorConfig)()
            r["time"] = err
            r["__error__"] = err
        r["compile_time"] = float(row.get("compile_ms") or 0.0)
        r["verification_time"] = float(row.get("verify_ms") or 0.0)
        r["benchmark_time"] = row["median_ns"] * row.get("samples", 0) / 1e6 if status == "ok" else 0.0
        r["framework_time"] = framework_ms
        r["strategy_time"] = 0.0
        r["timestamp"] = row.get("created_at", "")
        if status == "ok" and objective != "time":
            r[objective] = objective_value(row, objective)
        if status == "ok":
            for o in observers:
                r.update(o.values(row))
        if status == "ok" and metrics:
            r = process_metrics(r, metrics)
        results.append(r)
    return results


def _encode(v):
    if isinstance(v, ErrorConfig):
        return str(v)
    if hasattr(v, "item"):
        return v.item()
    return v


def read_cache(text):
    """Kernel Tuner's cache file from its text, closing one that Kernel Tuner left open as it does itself."""
    text = text.strip()
    if text and text[-3:] not in ("}\n}", "}}}"):
        text = text.rstrip(",") + "}\n}"
    return json.loads(text)


def write_cache(path, header, tune_params, results):
    """Writes Kernel Tuner's cache file `path` (a closed one): `header` (device_name, kernel_name, problem_size,
    objective), the entries of an existing file, and `results` under their key "v1,v2,...". An existing file of
    another kernel or other parameters is a UsageError, as Kernel Tuner refuses it."""
    keys = list(tune_params.keys())
    cache = {}
    if os.path.isfile(path):
        with open(path) as f:
            old = read_cache(f.read())
        if old.get("kernel_name") != header["kernel_name"] or old.get("tune_params_keys") != keys:
            raise UsageError("cache: %s holds %s with parameters %s, not %s with %s" % (
                path, old.get("kernel_name"), old.get("tune_params_keys"), header["kernel_name"], keys))
        cache = old.get("cache", {})
    for r in results:
        key = ",".join(str(r[k]) for k in keys)
        cache[key] = dict((k, _encode(v)) for k, v in r.items())
    doc = dict(header)
    doc["tune_params_keys"] = keys
    doc["tune_params"] = dict((k, [_encode(x) for x in v]) for k, v in tune_params.items())
    doc["cache"] = cache
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent="")
    os.replace(tmp, path)
