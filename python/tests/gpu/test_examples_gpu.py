"""Kernel Tuner 1.4.0's CUDA examples run as they are (imports changed to gpu_autotune), on a GPU.

Marked `gpu` (and needs_lib). Each script's tune() runs in a copy of tests/data/kernel_tuner; its results must be
non-empty and every configuration verified (no "__error__"). Convolution's space has 1867776 configurations
(days of brute force, in Kernel Tuner too): its call gets a time limit of 40 s added.
"""
import inspect
import os
import runpy

import pytest

import gpu_autotune
import gpu_autotune.kernel_tuner

pytestmark = [pytest.mark.gpu, pytest.mark.needs_lib]


def run_script(kt_dir, monkeypatch, name, extra=None):
    """tune() of NAME.py in kt_dir; every tune_kernel call's (results, env) in a list, with `extra` arguments."""
    returned = []
    real = gpu_autotune.kernel_tuner.tune_kernel
    sig = inspect.signature(real)

    def wrapped(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.arguments.update(extra or {})
        out = real(**bound.arguments)
        returned.append(out)
        return out

    monkeypatch.setattr(gpu_autotune, "tune_kernel", wrapped)
    monkeypatch.chdir(str(kt_dir))
    runpy.run_path(os.path.join(str(kt_dir), name + ".py"))["tune"]()
    return returned


def check_verified(results, count=None):
    assert results, "no results"
    failed = [r for r in results if "__error__" in r]
    assert not failed, "configurations failed: %s" % failed[:5]
    assert all(r["time"] > 0 for r in results)
    if count is not None:
        assert len(results) == count


def test_vector_add(kt_dir, monkeypatch):
    ((results, env),) = run_script(kt_dir, monkeypatch, "vector_add")
    check_verified(results, 15)
    assert env["best_config"] in results
    assert os.path.isfile(str(kt_dir / "vector_add.json"))


def test_matmul(kt_dir, monkeypatch):
    ((results, _),) = run_script(kt_dir, monkeypatch, "matmul")
    check_verified(results, 40)
    assert all(r["GFLOP/s"] > 0 for r in results)


def test_convolution(kt_dir, monkeypatch):
    ((results, _),) = run_script(kt_dir, monkeypatch, "convolution", {"strategy_options": {"time_limit": 40}})
    check_verified(results)


def test_reduction(kt_dir, monkeypatch):
    calls = run_script(kt_dir, monkeypatch, "reduction")
    for results, _ in calls:
        check_verified(results)
