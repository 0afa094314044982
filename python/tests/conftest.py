"""Test setup: the package from this tree, kernel sources written to a temporary cache, the markers.

Markers: `needs_lib` (needs libgpu_autotune.so: GPU_AUTOTUNE_LIB or an installed one; CI runs them where it
exists) and `gpu` (needs a GPU). Without the library, `-m "not needs_lib"` runs the rest. The `gpu` tests run
only when the -m expression names them (`-m gpu`); otherwise they are deselected (the summary counts them).
"""
import os
import shutil
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
# python/run_tests.sh (the pytest tier of CI) tests the installed package: it sets GPU_AUTOTUNE_TEST_INSTALLED and
# puts the installed site first; run by hand, the tests take the package of this tree.
if os.environ.get("GPU_AUTOTUNE_TEST_INSTALLED") != "1":
    sys.path.insert(0, os.path.dirname(HERE))

KT_DATA = os.path.join(HERE, "data", "kernel_tuner")
REPO = os.path.dirname(os.path.dirname(HERE))


def pytest_configure(config):
    config.addinivalue_line("markers", "needs_lib: needs libgpu_autotune.so (GPU_AUTOTUNE_LIB)")
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU")


def pytest_collection_modifyitems(config, items):
    if "gpu" in (config.getoption("markexpr") or ""):
        return
    gpu = [i for i in items if i.get_closest_marker("gpu")]
    if gpu:
        config.hook.pytest_deselected(items=gpu)
        items[:] = [i for i in items if not i.get_closest_marker("gpu")]


@pytest.fixture(autouse=True)
def kernel_cache(tmp_path, monkeypatch):
    """Kernel sources of each test go to a folder of its own."""
    monkeypatch.setenv("GPU_AUTOTUNE_CACHE", str(tmp_path / "kernels"))
    return tmp_path / "kernels"


@pytest.fixture
def kt_dir(tmp_path):
    """A copy of tests/data/kernel_tuner to run the scripts in (they write their result files to the cwd)."""
    d = tmp_path / "kt"
    shutil.copytree(KT_DATA, str(d))
    return d
