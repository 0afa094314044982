"""Kernel.launch's C path (gpu_autotune._fastlaunch) against its ctypes path, without a GPU or the library.

A stand-in for gat_kernel_launch (a ctypes callback of its signature) records what each path passes; the kernel is
opened on it with Kernel._attach. The C path must pass exactly what the ctypes path passes wherever it launches,
and leave every error to the ctypes path (returning None), so the messages are the ctypes path's.
"""
import ctypes
import gc
import math
import os
import shutil
import struct
import subprocess
import sys

import numpy
import pytest

import gpu_autotune
from gpu_autotune import cuda_memory, launch

# python/run_tests.sh says the build made the extension (AUTOTUNE_PYTHON_FASTLAUNCH): then it must be installed
# and load; run from the source tree, there is none (it is built, not copied there).
EXPECTED = os.environ.get("GPU_AUTOTUNE_EXPECT_FASTLAUNCH") == "1"
needs_ext = pytest.mark.skipif(launch._fastlaunch is None and not EXPECTED,
                               reason="gpu_autotune._fastlaunch was not built (no python3-dev) or is not installed")

LAUNCH_FUNCTION = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64, ctypes.POINTER(ctypes.c_int64),
                                   ctypes.c_size_t, ctypes.POINTER(launch._GatArg), ctypes.c_size_t)
HANDLE = 0xC0FFEE
POINTER, INT, UINT, FLOAT = 0, 1, 2, 3


def _seen(a):
    """What the library reads of one gat_arg: a number's bits or value (the float bit-exact), a pointer's dtype."""
    if a.kind == FLOAT:
        return (FLOAT, a.dtype, struct.pack("<d", a.value))
    return (a.kind, a.dtype, a.bits)


class StandIn:
    """gat_kernel_launch's stand-in: records each call, returns `rc`."""

    def __init__(self, rc=0):
        self.rc = rc
        self.calls = []
        self.function = LAUNCH_FUNCTION(self._record)

    def _record(self, kernel, stream, problem, dims, args, count):
        self.calls.append({"kernel": kernel, "stream": stream, "problem": [problem[i] for i in range(dims)],
                           "count": count, "args": [_seen(args[i]) for i in range(count)]})
        return self.rc


class FakeLib:
    """What Kernel asks of the library besides the launch: the last error, and closing."""

    def __init__(self, error=b""):
        self.error = error
        self.closed = []

    def gat_last_error(self):
        return self.error

    def gat_kernel_close(self, handle):
        self.closed.append(handle)


def _kernel(stand_in, fast, lib=None):
    k = launch.Kernel.__new__(launch.Kernel)
    k._attach(lib or FakeLib(), HANDLE, "stand-in.tune.json", stand_in.function, fast=fast)
    assert k.fast_launch == (fast and launch._fastlaunch is not None)
    return k


# Device arrays of each family, as launch.py tells them apart (module and attribute names).
class _CupyMemoryPointer:
    def __init__(self, ptr):
        self.ptr = ptr


class CupyArray:
    def __init__(self, ptr, dtype):
        self.data, self.dtype = _CupyMemoryPointer(ptr), numpy.dtype(dtype)


CupyArray.__module__ = "cupy._core.core"


class _TorchDtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return "torch." + self.name


_TorchDtype.__module__ = "torch"
TORCH_FLOAT32, TORCH_INT64, TORCH_BOOL = _TorchDtype("float32"), _TorchDtype("int64"), _TorchDtype("bool")


class TorchTensor:
    def __init__(self, ptr, dtype, is_cuda=True):
        self._ptr, self.dtype, self.is_cuda = ptr, dtype, is_cuda
        self.device = "cuda:0" if is_cuda else "cpu"

    def data_ptr(self):
        return self._ptr


TorchTensor.__module__ = "torch"


class NumbaLike:
    """Anything else with __cuda_array_interface__ (Numba's device arrays)."""

    def __init__(self, ptr, typestr):
        self.__cuda_array_interface__ = {"shape": (4,), "typestr": typestr, "data": (ptr, False), "version": 3}


def _own(ptr, dtype):
    """A gpu_autotune.cuda_memory.DeviceArray over no memory (no driver here): its pointer and dtype only."""
    a = object.__new__(cuda_memory.DeviceArray)
    a.shape, a.dtype, a.nbytes, a.ptr = (4,), numpy.dtype(dtype), 0, ptr
    return a


class CupyStream:
    ptr = 0x5151


class ProtocolStream:
    def __cuda_stream__(self):
        return (0, 0x7272)


CASES = {
    "ints": [0, 1, 5, 2 ** 31, 2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1],
    "negative ints": [-1, -5, -2 ** 31, -2 ** 63],
    "floats": [0.0, -0.0, 2.5, -1e300, 5e-324, math.inf, -math.inf, math.nan],
    "numpy scalars": [numpy.int8(-7), numpy.uint8(200), numpy.int32(-2 ** 31), numpy.uint32(2 ** 32 - 1),
                      numpy.int64(-3), numpy.uint64(2 ** 64 - 1), numpy.float16(0.5), numpy.float32(1.25),
                      numpy.float64(-2.75)],
    "cuda_memory arrays": [_own(0x7f0000001000, numpy.float32), _own(0x7f0000002000, numpy.int64),
                           _own(0, numpy.uint8)],
    "cupy-like arrays": [CupyArray(0x7f0000003000, numpy.float32), CupyArray(0x7f0000004000, numpy.float64),
                         CupyArray(2 ** 64 - 256, numpy.int16)],
    "torch-like tensors": [TorchTensor(0x7f0000005000, TORCH_FLOAT32), TorchTensor(0x7f0000006000, TORCH_INT64)],
    "__cuda_array_interface__": [NumbaLike(0x7f0000007000, "<f4"), NumbaLike(0, "<i8"), NumbaLike(None, "|u1")],
    "mixed": [_own(0x1000, numpy.float32), CupyArray(0x2000, numpy.float32), TorchTensor(0x3000, TORCH_FLOAT32),
              NumbaLike(0x4000, "<f8"), 2.0, -3, numpy.int32(7), 2 ** 40],
}
STREAMS = {"0": 0, "None": None, "an int": 0x1234, "a CuPy-like stream": CupyStream(),
           "a __cuda_stream__ object": ProtocolStream()}
PROBLEMS = {"an int": 1 << 24, "a list": [1 << 24], "a tuple": (7, 9, 11), "numpy ints": [numpy.int64(33), 5],
            "eight dims": list(range(1, 9)), "none": []}


def _through_ctypes(stream, problem, args, rc=0, error=b""):
    s = StandIn(rc)
    k = _kernel(s, fast=False, lib=FakeLib(error))
    k.launch(stream, problem, args)
    assert k._fast is None and len(s.calls) == 1
    return s.calls[0]


def test_extension_is_installed_and_imported_from_the_package():
    if launch._fastlaunch is None:
        assert not EXPECTED, "the build made gpu_autotune._fastlaunch, but it did not import from %s" % \
            os.path.dirname(gpu_autotune.__file__)
        pytest.skip("gpu_autotune._fastlaunch was not built (no python3-dev) or is not installed")
    f = launch._fastlaunch.__file__
    assert os.path.dirname(f) == os.path.dirname(gpu_autotune.__file__)
    assert os.path.basename(f) == "_fastlaunch.abi3.so"
    if os.environ.get("GPU_AUTOTUNE_TEST_INSTALLED") == "1":
        assert "python-install" in f  # python/run_tests.sh's installed site, not the build tree


@needs_ext
def test_extension_links_neither_libpython_nor_the_library():
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("no readelf here")
    out = subprocess.run([readelf, "-d", launch._fastlaunch.__file__], capture_output=True, text=True,
                         check=True).stdout
    needed = [line for line in out.splitlines() if "(NEEDED)" in line]
    assert not [n for n in needed if "libgpu_autotune" in n or "libpython" in n], needed


@needs_ext
@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_path_passes_what_the_ctypes_path_passes(case):
    args = CASES[case]
    s = StandIn()
    k = _kernel(s, fast=True)
    assert k._fast(0, [1 << 20], args) == 0  # the C path launched, not the Python one
    assert len(s.calls) == 1
    assert s.calls[0] == _through_ctypes(0, [1 << 20], args)
    assert s.calls[0]["kernel"] == HANDLE and s.calls[0]["count"] == len(args)


@needs_ext
def test_what_the_paths_pass_is_what_the_library_expects():
    s = StandIn()
    k = _kernel(s, fast=True)
    k.launch(0x99, (3, 4), [-1, 2 ** 64 - 1, 2.5, numpy.float32(0.5), _own(0x1000, numpy.float32),
                            TorchTensor(0x2000, TORCH_INT64), NumbaLike(None, "<f8")])
    call = s.calls[0]
    assert call["stream"] == 0x99 and call["problem"] == [3, 4] and call["count"] == 7
    assert call["args"] == [(INT, None, 2 ** 64 - 1), (UINT, None, 2 ** 64 - 1), (FLOAT, None, struct.pack("<d", 2.5)),
                            (FLOAT, None, struct.pack("<d", 0.5)), (POINTER, b"float32", 0x1000),
                            (POINTER, b"int64", 0x2000), (POINTER, b"float64", 0)]


@needs_ext
@pytest.mark.parametrize("stream", sorted(STREAMS))
@pytest.mark.parametrize("problem", sorted(PROBLEMS))
def test_streams_and_problems_as_the_ctypes_path(stream, problem):
    s = StandIn()
    k = _kernel(s, fast=True)
    args = [_own(0x1000, numpy.float32), 2.0]
    for _ in range(2):  # the second call takes the stream object's remembered handle
        assert k._fast(STREAMS[stream], PROBLEMS[problem], args) == 0
    assert s.calls[0] == s.calls[1] == _through_ctypes(STREAMS[stream], PROBLEMS[problem], args)


@needs_ext
def test_a_new_stream_object_is_asked_for_its_handle():
    s = StandIn()
    k = _kernel(s, fast=True)
    a, b = CupyStream(), CupyStream()
    b.ptr = 0x6161
    for stream in (a, a, b, a, 0, None, b):
        assert k._fast(stream, 8, [1]) == 0
    assert [c["stream"] for c in s.calls] == [0x5151, 0x5151, 0x6161, 0x5151, 0, 0, 0x6161]


# Cases the C path leaves to the Python path (it returns None and launches nothing): the same error, or the same
# launch where the Python path accepts them.
def _bad_dtype_cupy():
    return CupyArray(0x1000, numpy.complex64)


FALLBACK_ERRORS = {
    "a bool": (0, 8, [1, True], "argument 2 is a bool: pass an int"),
    "a numpy bool": (0, 8, [numpy.bool_(False)], "argument 1 is a bool: pass an int"),
    "a host numpy array": (0, 8, [numpy.ones(4, numpy.float32), 1], "argument 1 is a numpy array, in host memory"),
    "a tensor on the CPU": (0, 8, [TorchTensor(0x1000, TORCH_FLOAT32, is_cuda=False)],
                            "argument 1 is a PyTorch tensor on the cpu: pass one on the GPU"),
    "an unknown type": (0, 8, [1, "x"], "argument 2 is a str: expected a device array or a number"),
    "a dtype without a name": (0, 8, [_bad_dtype_cupy()], "argument 1 has dtype complex64; supported: "),
    "a torch dtype without a name": (0, 8, [TorchTensor(0x1000, TORCH_BOOL)], "argument 1 has dtype bool; supported"),
    "too many arguments": (0, 8, [1] * 65, "args: at most 64 arguments, got 65"),
    "too many dims": (0, list(range(9)), [1], "problem: at most 8 dims, got 9"),
    "a stream of no kind": ("default", 8, [1], "stream: expected None, an int"),
}


@needs_ext
@pytest.mark.parametrize("case", sorted(FALLBACK_ERRORS))
def test_errors_are_the_ctypes_paths(case):
    stream, problem, args, message = FALLBACK_ERRORS[case]
    s = StandIn()
    k = _kernel(s, fast=True)
    assert k._fast(stream, problem, args) is None
    with pytest.raises(gpu_autotune.UsageError) as fast_error:
        k.launch(stream, problem, args)
    ck = _kernel(StandIn(), fast=False)
    with pytest.raises(gpu_autotune.UsageError) as ctypes_error:
        ck.launch(stream, problem, args)
    assert str(fast_error.value) == str(ctypes_error.value)
    assert str(fast_error.value).startswith(message)
    assert s.calls == []  # nothing launched


class _BrokenInterface:
    def __init__(self, cai):
        self.__cuda_array_interface__ = cai


@needs_ext
@pytest.mark.parametrize("cai", [{"typestr": "<f4"}, {"data": (16, False)}, {"data": (), "typestr": "<f4"}],
                         ids=["no data", "no typestr", "empty data"])
def test_a_broken_array_interface_fails_as_in_python(cai):
    s = StandIn()
    k = _kernel(s, fast=True)
    args = [_BrokenInterface(cai)]
    assert k._fast(0, 8, args) is None
    with pytest.raises(Exception) as fast_error:
        k.launch(0, 8, args)
    with pytest.raises(Exception) as ctypes_error:
        _kernel(StandIn(), fast=False).launch(0, 8, args)
    assert type(fast_error.value) is type(ctypes_error.value) and str(fast_error.value) == str(ctypes_error.value)
    assert s.calls == []


@needs_ext
@pytest.mark.parametrize("args", [[2 ** 64 + 5], [-2 ** 63 - 1], [_own(-16, numpy.float32)],
                                  [_own(2 ** 64, numpy.float32)]], ids=["int > 64 bits", "int < -2^63",
                                                                        "negative pointer", "pointer of 65 bits"])
def test_numbers_beyond_64_bits_go_the_python_way(args):
    """ctypes masks them to 64 bits (and the library checks the scalar's range); the C path leaves them to it."""
    s = StandIn()
    k = _kernel(s, fast=True)
    assert k._fast(0, 8, args) is None and s.calls == []
    k.launch(0, 8, args)
    assert s.calls == [_through_ctypes(0, 8, args)]


@needs_ext
def test_the_librarys_error_is_raised_with_its_message():
    message = b"argument count: saxpy takes 5 arguments, 4 were given"
    s = StandIn(rc=2)
    k = _kernel(s, fast=True, lib=FakeLib(message))
    args = [_own(0x1000, numpy.float32)] * 3 + [2.0]
    assert k._fast(0, [1024], args) == 2
    with pytest.raises(gpu_autotune.UsageError) as fast_error:
        k.launch(0, [1024], args)
    ck = _kernel(StandIn(rc=2), fast=False, lib=FakeLib(message))
    with pytest.raises(gpu_autotune.UsageError) as ctypes_error:
        ck.launch(0, [1024], args)
    assert str(fast_error.value) == str(ctypes_error.value) == message.decode()
    assert [c["count"] for c in s.calls] == [4, 4]


@needs_ext
def test_a_closed_kernel_launches_nothing():
    s = StandIn()
    lib = FakeLib()
    k = _kernel(s, fast=True, lib=lib)
    k.close()
    assert lib.closed == [HANDLE] and not k.fast_launch
    with pytest.raises(gpu_autotune.UsageError, match="the kernel was closed"):
        k.launch(0, 8, [1])
    assert s.calls == []


class _Interrupting:
    """A DeviceArray-like whose pointer read is interrupted (Ctrl-C)."""

    @property
    def ptr(self):
        raise KeyboardInterrupt


_Interrupting.__module__ = "gpu_autotune.cuda_memory"
_Interrupting.__name__ = "DeviceArray"


@needs_ext
def test_an_interrupt_goes_on_up():
    s = StandIn()
    k = _kernel(s, fast=True)
    with pytest.raises(KeyboardInterrupt):
        k._fast(0, 8, [_Interrupting()])
    assert s.calls == []


@needs_ext
def test_no_reference_is_leaked():
    s = StandIn()
    k = _kernel(s, fast=True)
    stream = CupyStream()
    args = CASES["mixed"]
    k._fast(stream, [8], args)  # fills the caches
    s.calls.clear()
    gc.collect()
    watched = [stream] + args + [numpy.dtype(numpy.float32), launch._dtype_names[numpy.dtype(numpy.float32)]]
    before = [sys.getrefcount(o) for o in watched]
    for _ in range(1000):
        k._fast(stream, [8], args)
        k._fast(stream, [8], [True])  # the Python path's case too
    s.calls.clear()
    gc.collect()
    assert [sys.getrefcount(o) for o in watched] == before


@needs_ext
def test_a_cycle_through_the_remembered_stream_is_collected():
    """Kernel -> its C path -> the stream it remembers -> the Kernel: the garbage collector sees the C path's part."""
    import weakref
    s = StandIn()
    k = _kernel(s, fast=True)
    stream = CupyStream()
    stream.kernel = k
    assert k._fast(stream, 8, [1]) == 0
    gone = weakref.ref(stream)
    del k, stream
    gc.collect()
    assert gone() is None


@needs_ext
def test_launcher_refuses_a_null_address_and_too_many_arguments():
    L = launch._fastlaunch.Launcher
    helpers = ({}, launch._fast_kind, {}, launch._fast_dtype, launch.stream_handle)
    with pytest.raises(ValueError, match="launch_address is 0"):
        L(0, HANDLE, 64, *helpers)
    with pytest.raises(ValueError, match="max_args must be 0 .. 64, got 65"):
        L(launch._fastlaunch.null_launch_address(), HANDLE, 65, *helpers)
    with pytest.raises(TypeError, match="stream_handle is not callable"):
        L(launch._fastlaunch.null_launch_address(), HANDLE, 64, *helpers[:4], None)
    ok = L(launch._fastlaunch.null_launch_address(), HANDLE, 2, *helpers)
    assert ok.launch(0, 8, [1, 2]) == 0
    assert ok.launch(0, 8, [1, 2, 3]) is None  # beyond its max_args: the Python path's


def test_without_the_extension_launch_uses_ctypes():
    s = StandIn()
    k = _kernel(s, fast=False)
    assert not k.fast_launch
    k.launch(0, [16], [1, 2.0])
    assert s.calls[0]["args"] == [(UINT, None, 1), (FLOAT, None, struct.pack("<d", 2.0))]


@pytest.mark.parametrize("how", ["GPU_AUTOTUNE_FASTLAUNCH=0", "an extension that does not import"])
def test_the_package_works_without_the_extension(how):
    """In a fresh interpreter: no C path, and Kernel launches through ctypes."""
    block = "sys.modules['gpu_autotune._fastlaunch'] = None\n" if how.startswith("an") else ""
    code = ("import sys\n" + block + "sys.path[:0] = %r\n" % [os.path.dirname(os.path.dirname(gpu_autotune.__file__))] +
            "import test_fastlaunch as t\nfrom gpu_autotune import launch\nassert launch._fastlaunch is None\n"
            "s = t.StandIn()\nk = t._kernel(s, fast=True)\nassert not k.fast_launch\nk.launch(0, 8, [3])\n"
            "assert s.calls[0]['args'] == [(t.UINT, None, 3)], s.calls\n")
    env = dict(os.environ, GPU_AUTOTUNE_FASTLAUNCH="0" if how.startswith("GPU") else "1")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       cwd=os.path.dirname(os.path.abspath(__file__)))
    assert r.returncode == 0, r.stderr
