"""Kernel Tuner 1.4.0's CUDA examples run as they are (imports changed to gpu_autotune), on a GPU.

Marked `gpu` (and needs_lib). Each script's tune() runs in a copy of tests/data/kernel_tuner; its results must be
non-empty and every configuration verified (no "__error__"). Convolution's space has 1867776 configurations
(days of brute force, in Kernel Tuner too): its call gets a time limit of 20 s added.
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


def check_verified(results, count=None, agree=True):
    """Every configuration ran (those past the GPU's resources are refused, as by Kernel Tuner) and, with `agree`,
    produced the reference configuration's outputs (the scripts give no answer: the default configuration is the
    reference, and a kernel whose outputs do not depend on the parameters must agree with it)."""
    assert results, "no results"
    failed = [r for r in results if "__error__" in r and not isinstance(r["__error__"], gpu_autotune.util.InvalidConfig)]
    assert not failed, "configurations failed: %s" % failed[:5]
    ran = [r for r in results if "__error__" not in r]
    assert ran and all(r["time"] > 0 for r in ran)
    if agree:
        differ = [r for r in ran if "reference_mismatch" in r]
        assert not differ, "outputs differ from the reference configuration's: %s" % differ[:3]
    if count is not None:
        assert len(results) == count


def test_vector_add(kt_dir, monkeypatch):
    ((results, env),) = run_script(kt_dir, monkeypatch, "vector_add")
    check_verified(results, 15)
    assert env["best_config"] in results
    assert os.path.isfile(str(kt_dir / "vector_add.json"))


def test_matmul(kt_dir, monkeypatch):
    ((results, _),) = run_script(kt_dir, monkeypatch, "matmul")
    # Tiles change the order of the products' rounding: within Kernel Tuner's test (atol 1e-6, rtol 1e-5) elements
    # near zero may still differ from the default configuration's; such differences are reported, not failed.
    check_verified(results, 40, agree=False)
    assert all(r["GFLOP/s"] > 0 for r in results if "__error__" not in r)  # metrics of the configurations that ran


def test_convolution(kt_dir, monkeypatch):
    ((results, _),) = run_script(kt_dir, monkeypatch, "convolution", {"strategy_options": {"time_limit": 20}})
    check_verified(results, agree=False)  # its parameters include the filter's size: outputs differ legitimately


def test_reduction(kt_dir, monkeypatch):
    calls = run_script(kt_dir, monkeypatch, "reduction")
    assert len(calls) == 12  # the first pass, then the second pass for each of the 11 num_blocks (2^5 ... 2^15)
    # The first pass is checked by the script's verify function (the partial sums add up to numpy's sum).
    check_verified(calls[0][0], 2376)
    for results, _ in calls[1:]:
        # The second pass has no answer: block sizes and vector widths sum in other orders than the default's.
        check_verified(results, 216, agree=False)
