"""Tests against libgpu_autotune.so (marker needs_lib; GPU_AUTOTUNE_LIB names the library): the space of each
translated example, errors with their messages, a simulated tune from a recording, Database.best/trials."""
import json
import os

import numpy
import pytest

import gpu_autotune
from gpu_autotune import Database, UsageError, _lib
from gpu_autotune._results import to_kt_config
from gpu_autotune.kernel_tuner import _write_spec, prepare_tune

from conftest import REPO
from kt_examples import VALID_CONFIGS, capture_calls, reduction_calls

pytestmark = pytest.mark.needs_lib
RECORDED = os.path.join(REPO, "tests", "data", "recorded_h100.db")
H100 = "NVIDIA H100 80GB HBM3"


def space_of(call):
    tr, _ = prepare_tune(**call)
    _lib.set_arrays(tr.arrays)
    return _lib.query({"op": "space", "kernel": _write_spec(tr), "problem": tr.problem})


@pytest.mark.parametrize("name", ["vector_add", "matmul", "convolution"])
def test_space_of_scripts(kt_dir, monkeypatch, name):
    (call,) = capture_calls(kt_dir, name, monkeypatch)
    assert len(space_of(call)["configs"]) == VALID_CONFIGS[name]


def test_space_of_reduction(kt_dir):
    first, second = reduction_calls(kt_dir)
    assert len(space_of(second)["configs"]) == VALID_CONFIGS["reduction"]
    assert len(space_of(dict(first, verify=None, answer=None))["configs"]) == VALID_CONFIGS["reduction_first"]


def test_space_values_map_back(kt_dir):
    """Typed parameter values (strings, floats) come back from the library as Kernel Tuner's values."""
    _, second = reduction_calls(kt_dir)
    call = dict(second, tune_params=dict(second["tune_params"], mode=["fast", "exact"], scale=[0.5, 1.5]),
                restrictions=["mode == 'fast' or scale > 1"])
    tr, _ = prepare_tune(**call)
    _lib.set_arrays(tr.arrays)
    reply = _lib.query({"op": "space", "kernel": _write_spec(tr), "problem": tr.problem})
    assert len(reply["configs"]) == VALID_CONFIGS["reduction"] * 3
    configs = [to_kt_config(c, call["tune_params"]) for c in reply["configs"]]
    assert set((c["mode"], c["scale"]) for c in configs) == {("fast", 0.5), ("fast", 1.5), ("exact", 1.5)}


def test_callable_restriction_filters_space(kt_dir, monkeypatch):
    from gpu_autotune import kernel_tuner
    (call,) = capture_calls(kt_dir, "matmul", monkeypatch)
    call["restrictions"] = call["restrictions"] + [lambda bx, by, tx, ty: tx == ty]
    tr, _ = prepare_tune(**call)
    _lib.set_arrays(tr.arrays)
    kernel_tuner._apply_callables(tr, _write_spec(tr))
    reply = _lib.query({"op": "space", "kernel": _write_spec(tr), "problem": tr.problem})
    assert len(reply["configs"]) == 10  # matmul's 40 with tile_size_x == tile_size_y: one of 4
    assert all(c["tile_size_x"] == c["tile_size_y"] for c in reply["configs"])


def test_unknown_name_in_restriction(kt_dir, monkeypatch):
    (call,) = capture_calls(kt_dir, "matmul", monkeypatch)
    call["restrictions"] = ["block_size_q > 1"]
    with pytest.raises(UsageError, match="block_size_q"):
        space_of(call)


def test_set_arrays_errors():
    with pytest.raises(UsageError, match="complex"):
        _lib.set_arrays([("a", numpy.zeros(3, numpy.complex64))])
    with pytest.raises(UsageError, match="contiguous"):
        _lib.set_arrays([("a", numpy.zeros((4, 4), numpy.float32)[:, 1])])
    with pytest.raises(UsageError, match="big-endian"):
        _lib.set_arrays([("a", numpy.zeros(3, ">f4"))])
    with pytest.raises(UsageError):
        _lib.set_arrays([("a", numpy.zeros(3, numpy.float32)), ("a", numpy.zeros(3, numpy.float32))])
    _lib.set_arrays([])


def test_query_errors():
    with pytest.raises(UsageError, match="nope"):
        _lib.query({"op": "nope"})
    with pytest.raises(UsageError):
        _lib.query({"op": "space", "kernel": "no_such_kernel", "problem": "n=1"})


def test_simulated_tune_and_best(tmp_path):
    db = str(tmp_path / "sim.db")
    trials = gpu_autotune.tune("reduction", problem="n=16777216", db=db, budget=20, simulate=True,
                               from_db=RECORDED, quiet=True)
    assert len(trials) == 20
    assert all(t["status"] == "ok" and t["median_ns"] > 0 for t in trials)
    assert set(trials[0]["config"]) == {"VARIANT", "BLOCK_SIZE", "ITEMS_PER_THREAD", "VEC", "BLOCKS_PER_SM",
                                        "FINAL", "KAHAN"}
    fastest = min(t["median_ns"] for t in trials)
    best = Database(db).best("reduction", {"n": 16777216}, device=H100)
    assert best["median_ns"] == pytest.approx(fastest)
    assert Database(db).trials(trials[0]["session_id"]) == trials


def test_tune_errors(tmp_path):
    with pytest.raises(UsageError):
        gpu_autotune.tune("no_such_kernel", db=str(tmp_path / "x.db"), simulate=True, quiet=True)
    with pytest.raises(UsageError, match="from_db"):
        gpu_autotune.tune("reduction", db=str(tmp_path / "x.db"), from_db=RECORDED)


def test_default_configuration_is_a_valid_one(kt_dir, monkeypatch):
    """Without an answer the default configuration is the reference; it is made the first valid one (matmul's
    first values, 16 x 1 threads with tiles 1 x 1, break its restriction)."""
    from gpu_autotune import kernel_tuner
    from spec_eval import valid
    (call,) = capture_calls(kt_dir, "matmul", monkeypatch)
    tr, _ = prepare_tune(**call)
    _lib.set_arrays(tr.arrays)
    kernel_tuner._valid_defaults(tr, _write_spec(tr))
    default = dict((p["name"], p["default"]) for p in tr.spec["parameters"])
    assert valid(tr.spec, default)
    reply = _lib.query({"op": "space", "kernel": _write_spec(tr), "problem": tr.problem})
    assert len(reply["configs"]) == VALID_CONFIGS["matmul"]


VECTOR_ADD = ("__global__ void vector_add(float *c, float *a, float *b, int n) {\n"
              "    int i = blockIdx.x * block_size_x + threadIdx.x;\n    if (i < n) c[i] = a[i] + b[i];\n}\n")


def kt_cache(path, sizes, failed=()):
    """A Kernel Tuner cache file of vector_add at n = 100000 on an H100 (time 0.01 ms per 128 threads)."""
    entries = {}
    for b in sizes:
        t = "CompilationFailedConfig" if b in failed else 0.01 * b / 128
        entries[str(b)] = {"block_size_x": b, "time": t, "times": [] if b in failed else [t] * 7,
                           "compile_time": 100.0, "verification_time": 0, "benchmark_time": 1.0,
                           "strategy_time": 0, "framework_time": 0, "timestamp": "2026-01-01 00:00:00+00:00"}
    doc = {"device_name": H100, "kernel_name": "vector_add", "problem_size": 100000,
           "tune_params_keys": ["block_size_x"], "tune_params": {"block_size_x": list(sizes)}, "objective": "time",
           "cache": entries}
    with open(path, "w") as f:
        json.dump(doc, f)


def test_tune_kernel_simulated_from_a_kernel_tuner_cache(tmp_path):
    n = 100000
    a = numpy.arange(n, dtype=numpy.float32)
    args = [numpy.zeros(n, numpy.float32), a, a, numpy.int32(n)]
    tune_params = {"block_size_x": [128, 256, 512, 1024]}
    cache = str(tmp_path / "vector_add.json")
    kt_cache(cache, tune_params["block_size_x"])
    results, env = gpu_autotune.tune_kernel("vector_add", VECTOR_ADD, n, args, tune_params, cache=cache,
                                            simulation_mode=True, quiet=True,
                                            metrics={"GB/s": lambda p: 3 * 4 * n / 1e6 / p["time"]})
    assert sorted(r["block_size_x"] for r in results) == [128, 256, 512, 1024]
    by_block = dict((r["block_size_x"], r) for r in results)
    assert by_block[256]["time"] == pytest.approx(0.02, rel=1e-6)
    assert by_block[128]["GB/s"] == pytest.approx(3 * 4 * n / 1e6 / 0.01, rel=1e-6)
    assert env["best_config"]["block_size_x"] == 128 and env["device_name"] == H100
    assert env["kernel_name"] == "vector_add" and env["problem_size"] == n


def test_tune_kernel_simulation_needs_an_existing_cache(tmp_path):
    n = 1000
    args = [numpy.zeros(n, numpy.float32), numpy.int32(n)]
    with pytest.raises(UsageError, match="does not exist"):
        gpu_autotune.tune_kernel("k", VECTOR_ADD, n, args, {"block_size_x": [128]}, quiet=True,
                                 cache=str(tmp_path / "none"), simulation_mode=True)


def test_tune_kernel_simulated_failed_configuration(tmp_path):
    n = 100000
    a = numpy.arange(n, dtype=numpy.float32)
    args = [numpy.zeros(n, numpy.float32), a, a, numpy.int32(n)]
    tune_params = {"block_size_x": [128, 256, 512]}
    cache = str(tmp_path / "vector_add.json")
    kt_cache(cache, tune_params["block_size_x"], failed=(512,))
    results, env = gpu_autotune.tune_kernel("vector_add", VECTOR_ADD, n, args, tune_params, cache=cache,
                                            simulation_mode=True, quiet=True)
    by_block = dict((r["block_size_x"], r) for r in results)
    assert str(by_block[512]["__error__"]) == "CompilationFailedConfig"
    assert "__error__" not in by_block[128] and env["best_config"]["block_size_x"] == 128


def test_tune_a_spec_dict_with_inputs(tmp_path):
    """gpu_autotune.tune with a spec dict (here a translated tune_kernel call) and its arrays as `inputs`,
    replaying trials imported from a Kernel Tuner cache."""
    n = 100000
    a = numpy.arange(n, dtype=numpy.float32)
    tr, _ = prepare_tune("vector_add", VECTOR_ADD, n, [numpy.zeros(n, numpy.float32), a, a, numpy.int32(n)],
                         {"block_size_x": [128, 256, 512]})
    spec = dict(tr.spec, source=os.path.join(tr.spec_dir, tr.spec["source"]))
    cache, recorded = str(tmp_path / "c.json"), str(tmp_path / "recorded.db")
    kt_cache(cache, [128, 256, 512])
    _lib.set_arrays(tr.arrays)
    assert _lib.main(["autotune", "--db", recorded, "import", cache, "--format", "kt-cache", "--kernel",
                      _write_spec(tr), "--problem", tr.problem]) == 0
    trials = gpu_autotune.tune(spec, problem=tr.problem, db=str(tmp_path / "t.db"), simulate=True,
                               from_db=recorded, inputs=dict(tr.arrays), quiet=True)
    assert sorted(t["config"]["block_size_x"] for t in trials) == [128, 256, 512]
    assert min(trials, key=lambda t: t["median_ns"])["config"]["block_size_x"] == 128


def test_callable_restriction_with_typed_values():
    """A function restriction sees Kernel Tuner's typed values; the survivors' constraint holds them as such."""
    from gpu_autotune import kernel_tuner
    from test_translate_errors import call
    tune_params = {"block_size_x": [32, 64, 128], "mode": ["a", "b"], "f": [True, False], "s": [0.5, 1.5]}
    tr, _ = call(tune_params=tune_params, restrictions=[lambda bx, mode, f, s: f and mode == "b" and s > 1])
    _lib.set_arrays(tr.arrays)
    kernel_tuner._apply_callables(tr, _write_spec(tr))
    reply = _lib.query({"op": "space", "kernel": _write_spec(tr), "problem": tr.problem})
    configs = [to_kt_config(c, tune_params) for c in reply["configs"]]
    assert configs == [{"block_size_x": b, "mode": "b", "f": True, "s": 1.5} for b in (32, 64, 128)]


def test_lone_one_argument_restriction_gets_the_config_dict(kt_dir, monkeypatch):
    """Kernel Tuner's old style: restrictions=f with f(p) taking the configuration as a dict."""
    from gpu_autotune import kernel_tuner
    (call,) = capture_calls(kt_dir, "matmul", monkeypatch)
    call["restrictions"] = lambda p: p["block_size_x"] == p["block_size_y"] * p["tile_size_y"]
    tr, _ = prepare_tune(**call)
    _lib.set_arrays(tr.arrays)
    kernel_tuner._apply_callables(tr, _write_spec(tr))
    reply = _lib.query({"op": "space", "kernel": _write_spec(tr), "problem": tr.problem})
    assert len(reply["configs"]) == VALID_CONFIGS["matmul"]
