"""T4 output and metadata files (the auto-tuning community's result format, schema version 1.0.0), with the
functions Kernel Tuner's scripts import from kernel_tuner.file_utils."""
import json
import os
import platform
import subprocess
import sys

import numpy

from .util import CompilationFailedConfig, ErrorConfig, InvalidConfig, RuntimeFailedConfig

SCHEMA_VERSION = "1.0.0"
_TIMING_KEYS = {"compile_time": "compilation", "benchmark_time": "benchmark", "framework_time": "framework",
                "strategy_time": "search_algorithm", "verification_time": "validation"}


def _json_default(o):
    if isinstance(o, numpy.integer):
        return int(o)
    if isinstance(o, numpy.floating):
        return float(o)
    if isinstance(o, numpy.ndarray):
        return o.tolist()
    raise TypeError("%r is not JSON serializable" % (o,))


def _with_json_extension(name):
    name = os.fspath(name)
    return name if name.endswith(".json") else name + ".json"


def _invalidity(result):
    """T4's "invalidity": correct, compile, runtime or constraints (a wrong result has its own word here)."""
    err = result.get("__error__")
    if not isinstance(err, ErrorConfig):
        return "correct"
    if isinstance(err, CompilationFailedConfig):
        return "compile"
    if isinstance(err, RuntimeFailedConfig):
        return "runtime"
    if isinstance(err, InvalidConfig):
        return "constraints"
    return "correctness"


def get_t4_results(results, tune_params, objective="time"):
    """The T4 results document (a dict) of tune_kernel's `results` over `tune_params`: per configuration its
    "configuration", "times" (ms: compilation, benchmark, framework, search_algorithm, validation where the
    result has them, runtimes), "invalidity", "correctness", "measurements" (every other key; unit ms for keys
    starting with "time") and "objectives". ValueError for several objectives, as the format has one."""
    if isinstance(objective, (list, tuple)):
        raise ValueError("The T4 format does not support multiple objectives.")
    skip = set(tune_params) | set(_TIMING_KEYS) | {"timestamp", "times", "__error__"}
    out = []
    for r in results:
        entry = {}
        if "timestamp" in r:
            entry["timestamp"] = r["timestamp"]
        entry["configuration"] = dict((k, v) for k, v in r.items() if k in tune_params)
        times = dict((t4, r[k]) for k, t4 in _TIMING_KEYS.items() if k in r)
        times["runtimes"] = list(r.get("times", []))
        entry["times"] = times
        entry["invalidity"] = _invalidity(r)
        entry["correctness"] = 0 if entry["invalidity"] == "correctness" else 1
        entry["measurements"] = [dict(name=k, value=str(v) if isinstance(v, ErrorConfig) else v,
                                      unit="ms" if k.startswith("time") else "")
                                 for k, v in r.items() if k not in skip]
        entry["objectives"] = [objective]
        out.append(entry)
    return dict(results=out, schema_version=SCHEMA_VERSION, metadata={"timeunit": "milliseconds"})


def store_output_file(output_filename, results, tune_params, objective="time"):
    """Writes get_t4_results(...) to `output_filename` (".json" appended when missing; its folder made)."""
    path = _with_json_extension(output_filename)
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    with open(path, "w") as f:
        json.dump(get_t4_results(results, tune_params, objective), f, default=_json_default)


def _nvidia_smi():
    fields = "name,uuid,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit,pci.bus_id"
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=" + fields, "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    keys = fields.split(",")
    return [dict(zip(keys, [v.strip() for v in line.split(",")])) for line in out.stdout.splitlines() if line.strip()]


def get_t4_metadata():
    """The T4 metadata document: operating system, hardware (platform's description), the GPUs as nvidia-smi
    reports them (where it runs), the Python and numpy versions and this package's library version (where the
    library loads)."""
    from . import _lib
    from .errors import GpuAutotuneError
    os_name = {"linux": "Linux", "win32": "Windows", "darwin": "Mac"}.get(sys.platform, "unidentified OS")
    requirements = ["numpy==%s" % numpy.__version__, "python==%s" % platform.python_version()]
    try:
        requirements.append("gpu_autotune==%s" % _lib.version())
    except GpuAutotuneError:
        pass
    device_query = {}
    gpus = _nvidia_smi()
    if gpus is not None:
        device_query["nvidia-smi"] = gpus
    metadata = {"operating_system": os_name,
                "hardware": {"hardware_description": [{"machine": platform.machine(), "processor": platform.processor(),
                                                       "node": platform.node()}]},
                "environment": {"device_query": device_query, "requirements": requirements}}
    return dict(metadata=metadata, schema_version=SCHEMA_VERSION)


def store_metadata_file(metadata_filename):
    """Writes get_t4_metadata() to `metadata_filename` (".json" appended when missing; its folder made)."""
    path = _with_json_extension(metadata_filename)
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    with open(path, "w") as f:
        json.dump(get_t4_metadata(), f, default=_json_default)
