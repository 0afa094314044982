"""Trials rows as Kernel Tuner results, its cache file, T4 output files, get_config_string (no library)."""
import json

import pytest

from gpu_autotune._results import to_results, write_cache
from gpu_autotune.file_utils import get_t4_results, store_output_file
from gpu_autotune.util import CompilationFailedConfig, VerificationFailedConfig, get_config_string

TUNE_PARAMS = {"block_size_x": [64, 128], "mode": ["fast", "exact"]}
ROWS = [
    {"config": {"block_size_x": 64, "mode": 1}, "status": "ok", "median_ns": 2.5e6, "samples": 10,
     "sample_ns": [2.4e6, 2.6e6], "compile_ms": 100.0, "verify_ms": 3.0, "created_at": "2026-12-07T08:00:00Z"},
    {"config": {"block_size_x": 128, "mode": 0}, "status": "compile_error", "median_ns": 0, "samples": 0,
     "sample_ns": [], "compile_ms": 50.0, "verify_ms": 0.0, "created_at": "2026-12-07T08:00:01Z"},
    {"config": {"block_size_x": 128, "mode": 1}, "status": "wrong_result", "median_ns": 0, "samples": 0,
     "sample_ns": [], "compile_ms": 40.0, "verify_ms": 1.0, "created_at": "2026-12-07T08:00:02Z"},
]
STATS = {"setup_s": 0.3, "database_s": 0.0, "other_s": 0.0}


def test_to_results():
    res = to_results(ROWS, TUNE_PARAMS, {"GB/s": lambda p: 1.0 / p["time"], "twice": "time * 2"}, STATS)
    ok, failed, wrong = res
    assert ok["block_size_x"] == 64 and ok["mode"] == "exact"
    assert ok["time"] == pytest.approx(2.5) and ok["times"] == pytest.approx([2.4, 2.6])
    assert ok["compile_time"] == 100.0 and ok["verification_time"] == 3.0
    assert ok["benchmark_time"] == pytest.approx(25.0) and ok["framework_time"] == pytest.approx(100.0)
    assert ok["GB/s"] == pytest.approx(0.4) and ok["twice"] == pytest.approx(5.0)
    assert isinstance(failed["__error__"], CompilationFailedConfig) and str(failed["time"]) == "CompilationFailedConfig"
    assert isinstance(wrong["__error__"], VerificationFailedConfig) and "GB/s" not in wrong
    assert get_config_string(ok, ["block_size_x", "time"]) == "block_size_x=64, time=2.500"


def test_objective_values():
    rows = [dict(ROWS[0], energy_j=0.002, power_w=400.0, gbps=2000.0)]
    assert to_results(rows, TUNE_PARAMS, objective="energy")[0]["energy"] == 0.002
    assert to_results(rows, TUNE_PARAMS, objective="edp")[0]["edp"] == pytest.approx(0.002 * 2.5e-3)
    assert to_results(rows, TUNE_PARAMS, objective="gbps_per_watt")[0]["gbps_per_watt"] == pytest.approx(5.0)
    assert to_results(ROWS[:1], TUNE_PARAMS, objective="energy")[0]["energy"] is None  # not observed


def test_cache_file_in_kernel_tuner_format(tmp_path):
    path = str(tmp_path / "cache.json")
    res = to_results(ROWS, TUNE_PARAMS, None, STATS)
    header = {"device_name": "NVIDIA H100", "kernel_name": "k", "problem_size": 1000, "objective": "time"}
    write_cache(path, header, TUNE_PARAMS, res[:1])
    write_cache(path, header, TUNE_PARAMS, res[1:])  # entries of the existing file are kept
    with open(path) as f:
        text = f.read()
    assert text.rstrip().endswith("}\n}")  # closed as Kernel Tuner's read_cache expects
    doc = json.loads(text)
    assert doc["tune_params_keys"] == ["block_size_x", "mode"] and doc["kernel_name"] == "k"
    assert sorted(doc["cache"]) == ["128,exact", "128,fast", "64,exact"]
    assert doc["cache"]["128,fast"]["time"] == "CompilationFailedConfig"
    with pytest.raises(ValueError, match="holds k"):
        write_cache(path, dict(header, kernel_name="other"), TUNE_PARAMS, res)


def test_t4_output(tmp_path):
    res = to_results(ROWS, TUNE_PARAMS, None, STATS)
    doc = get_t4_results(res, TUNE_PARAMS)
    assert doc["schema_version"] == "1.0.0" and doc["metadata"] == {"timeunit": "milliseconds"}
    first = doc["results"][0]
    assert first["configuration"] == {"block_size_x": 64, "mode": "exact"}
    assert first["times"]["compilation"] == 100.0 and first["times"]["runtimes"] == pytest.approx([2.4, 2.6])
    assert first["invalidity"] == "correct" and first["correctness"] == 1
    assert {"name": "time", "value": pytest.approx(2.5), "unit": "ms"} in first["measurements"]
    assert [r["invalidity"] for r in doc["results"][1:]] == ["compile", "correctness"]
    store_output_file(str(tmp_path / "out" / "t4"), res, TUNE_PARAMS)
    with open(str(tmp_path / "out" / "t4.json")) as f:
        assert len(json.load(f)["results"]) == 3


def test_outputs_that_differ_from_the_reference_are_reported_not_failed():
    from gpu_autotune import _results
    rows = [{"config": {"block_size_x": 64}, "status": "ok", "median_ns": 2e6, "samples": 7, "sample_ns": [],
             "log": "accepted: y[3] = 1 but expected 2; 1 of 10 elements differ", "created_at": ""},
            {"config": {"block_size_x": 128}, "status": "ok", "median_ns": 3e6, "samples": 7, "sample_ns": [],
             "log": "", "created_at": ""}]
    res = _results.to_results(rows, {"block_size_x": [64, 128]})
    assert res[0]["reference_mismatch"] == "y[3] = 1 but expected 2; 1 of 10 elements differ"
    assert "reference_mismatch" not in res[1] and "__error__" not in res[0]


def test_nvml_observer_values_come_before_the_metrics():
    from gpu_autotune.observers.nvml import NVMLObserver
    rows = [dict(ROWS[0], energy_j=0.5, temperature_c=61.0, power_w=None)]
    (r,) = to_results(rows, TUNE_PARAMS, {"per_joule": lambda p: 1.0 / p["nvml_energy"]}, STATS,
                      observers=[NVMLObserver(["nvml_energy", "temperature", "nvml_power"])])
    assert r["nvml_energy"] == 0.5 and r["temperature"] == 61.0 and r["nvml_power"] is None
    assert r["per_joule"] == pytest.approx(2.0)
