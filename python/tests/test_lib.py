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
