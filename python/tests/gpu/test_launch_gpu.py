"""gpu tier: gpu_autotune.Kernel launches a spec's kernel on device arrays (gpu_autotune.cuda_memory, and CuPy or
PyTorch where installed) with the database's configuration, and refuses bad arguments by name; each through the
C path (gpu_autotune._fastlaunch) and through ctypes."""
import os

import numpy
import pytest

import gpu_autotune
from gpu_autotune import cuda_memory

pytestmark = pytest.mark.gpu
# python/run_tests.sh sets it where the build made the extension: then the C path must be in use.
EXPECT_FAST = os.environ.get("GPU_AUTOTUNE_EXPECT_FASTLAUNCH") == "1"

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SAXPY = os.path.join(ROOT, "examples", "saxpy", "saxpy.tune.json")


def _kernel(tmp_path, path):
    """The SAXPY Kernel launching through `path`: "C" (the extension; skipped where it was not built) or "ctypes"."""
    k = gpu_autotune.Kernel(SAXPY, str(tmp_path / "k.db"))
    if path == "ctypes":
        k._fast = None
    elif not k.fast_launch:
        k.close()
        assert not EXPECT_FAST, "the build made gpu_autotune._fastlaunch, but Kernel does not use it"
        pytest.skip("gpu_autotune._fastlaunch is not installed: the ctypes path only")
    return k


PATHS = pytest.mark.parametrize("path", ["C", "ctypes"])


@PATHS
def test_saxpy_launch_matches_numpy(tmp_path, path):
    n = 1000003
    rng = numpy.random.default_rng(3)
    x = rng.standard_normal(n).astype(numpy.float32)
    y = rng.standard_normal(n).astype(numpy.float32)
    dx, dy = cuda_memory.DeviceArray.from_host(x), cuda_memory.DeviceArray.from_host(y)
    dout = cuda_memory.DeviceArray.from_host(numpy.full(n, numpy.nan, numpy.float32))
    with _kernel(tmp_path, path) as k:
        if path == "C":  # the C path launches these itself (0), not handing them to ctypes (None)
            assert k._fast(0, [n], [dx, dy, dout, 2.5, n]) == 0
        k.launch(0, [n], [dx, dy, dout, 2.5, n])
        cuda_memory.synchronize()
        # The GPU fuses a * x + y into one FMA (one rounding), numpy rounds twice: within 1 ulp.
        numpy.testing.assert_allclose(dout.to_host(), numpy.float32(2.5) * x + y, rtol=2e-7, atol=2e-7)
        choice = k.choice([n])
        assert choice["match"] == "spec_default"  # an empty database serves the spec's default
        assert "BLOCK_SIZE=256" in choice["config_text"]


@PATHS
def test_launch_refuses_bad_arguments_by_name(tmp_path, path):
    n = 1024
    d = cuda_memory.DeviceArray(n, numpy.float32)
    wrong = cuda_memory.DeviceArray(n, numpy.float64)
    with _kernel(tmp_path, path) as k:
        if path == "C":  # the library refuses it (2), after the C path called it
            assert k._fast(0, [n], [d, wrong, d, 2.0, n]) == 2
        with pytest.raises(gpu_autotune.UsageError, match="argument 2 \\('y'\\).*float32.*float64"):
            k.launch(0, [n], [d, wrong, d, 2.0, n])
        with pytest.raises(gpu_autotune.UsageError, match="takes 5 arguments, 4 were given"):
            k.launch(0, [n], [d, d, d, 2.0])
        with pytest.raises(gpu_autotune.UsageError, match="int32 scalar, which cannot hold 4294967296"):
            k.launch(0, [n], [d, d, d, 2.0, 2 ** 32])


def _saxpy_on(k, n, x, y, out, stream):
    """out = 2 x + y for x = 1, y = 3 on `stream`; the sum of out must be 5 n."""
    k.launch(stream, [n], [x, y, out, 2.0, n])
    stream.synchronize()
    assert float(out.sum()) == 5.0 * n


@PATHS
def test_cupy_or_torch_arrays_and_streams(tmp_path, path):
    n = 4096
    used = []
    with _kernel(tmp_path, path) as k:
        try:
            import cupy
            _saxpy_on(k, n, cupy.ones(n, cupy.float32), cupy.full(n, 3, cupy.float32), cupy.zeros(n, cupy.float32),
                      cupy.cuda.Stream())
            used.append("cupy")
        except ImportError:
            pass
        try:
            import torch
            _saxpy_on(k, n, torch.ones(n, device="cuda"), torch.full((n,), 3.0, device="cuda"),
                      torch.zeros(n, device="cuda"), torch.cuda.Stream())
            used.append("torch")
        except ImportError:
            pass
    if not used:
        pytest.skip("neither CuPy nor PyTorch is installed here")


def test_run_kernel_returns_outputs_as_kernel_tuner_does():
    from gpu_autotune import run_kernel
    n = 100003
    rng = numpy.random.default_rng(5)
    a = rng.standard_normal(n).astype(numpy.float32)
    b = rng.standard_normal(n).astype(numpy.float32)
    c = numpy.full(n, numpy.nan, numpy.float32)
    src = ("__global__ void vector_add(float *c, const float *a, const float *b, int n) {"
           " int i = blockIdx.x * block_size_x + threadIdx.x; if (i < n) c[i] = a[i] + SCALE * b[i]; }")
    out = run_kernel("vector_add", src, n, [c, a, b, numpy.int32(n)], {"block_size_x": 96},
                     defines={"SCALE": 2})
    assert len(out) == 4
    numpy.testing.assert_array_equal(out[0], a + numpy.float32(2) * b)
    numpy.testing.assert_array_equal(out[1], a)
    assert out[3] == n and numpy.isnan(c).all()  # the caller's arrays are not written
