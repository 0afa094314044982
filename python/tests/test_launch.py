"""gpu_autotune.Kernel without a GPU: the stream handles it accepts, and a clear error where no driver is."""
import ctypes
import os

import pytest

import gpu_autotune
from gpu_autotune.launch import stream_handle

SAXPY = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "saxpy", "saxpy.tune.json")


class _CupyLike:
    ptr = 1234


class _TorchLike:
    cuda_stream = 5678


class _Protocol:
    def __cuda_stream__(self):
        return (0, 91011)


def test_stream_handles():
    assert stream_handle(None) == 0
    assert stream_handle(0) == 0
    assert stream_handle(42) == 42
    assert stream_handle(_CupyLike()) == 1234
    assert stream_handle(_TorchLike()) == 5678
    assert stream_handle(_Protocol()) == 91011
    with pytest.raises(gpu_autotune.UsageError, match="stream: expected None, an int"):
        stream_handle("default")


def _driver_present():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


@pytest.mark.needs_lib
def test_kernel_without_a_driver_says_so(tmp_path):
    if _driver_present():
        with gpu_autotune.Kernel(SAXPY, str(tmp_path / "k.db")) as k:
            assert k.spec.endswith("saxpy.tune.json")
        return
    with pytest.raises(gpu_autotune.NoGpuError, match="libcuda.so.1"):
        gpu_autotune.Kernel(SAXPY, str(tmp_path / "k.db"))


@pytest.mark.needs_lib
def test_kernel_of_a_missing_spec_names_it(tmp_path):
    with pytest.raises(gpu_autotune.GpuAutotuneError, match="nothing.tune.json"):
        gpu_autotune.Kernel(str(tmp_path / "nothing.tune.json"), str(tmp_path / "k.db"))
