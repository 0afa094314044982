"""Device memory without CuPy or PyTorch: a minimal DeviceArray over the CUDA driver (libcuda.so.1 through ctypes)
with __cuda_array_interface__, for programs and tests that have only numpy. Uses the device's primary context
(the one the runtime API and gpu_autotune.Kernel use). Errors are NoGpuError naming the driver call.
"""
import ctypes

import numpy

from .errors import NoGpuError

_driver = None


def driver():
    """libcuda.so.1, initialised, with the primary context of GPU 0 current on this thread."""
    global _driver
    if _driver is None:
        try:
            d = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise NoGpuError("no NVIDIA driver (libcuda.so.1): %s" % e)
        _check(d, d.cuInit(0), "cuInit")
        dev = ctypes.c_int()
        _check(d, d.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
        ctx = ctypes.c_void_p()
        _check(d, d.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
        _check(d, d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        d.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
        d.cuMemFree_v2.argtypes = [ctypes.c_uint64]
        d.cuMemcpyHtoD_v2.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t]
        d.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t]
        _driver = d
    return _driver


def _check(d, rc, what):
    if rc != 0:
        name = ctypes.c_char_p()
        d.cuGetErrorName(rc, ctypes.byref(name))
        raise NoGpuError("%s failed: %s (%d)" % (what, name.value.decode() if name.value else "?", rc))


def copy_to_host(ptr, shape, typestr):
    """A numpy array of `shape` and `typestr` with the contents of contiguous device memory at `ptr`."""
    out = numpy.empty(shape, numpy.dtype(typestr))
    if out.nbytes:
        d = driver()
        _check(d, d.cuMemcpyDtoH_v2(out.ctypes.data, ptr, out.nbytes), "cuMemcpyDtoH")
    return out


def synchronize():
    """Waits for all work of the current context."""
    d = driver()
    _check(d, d.cuCtxSynchronize(), "cuCtxSynchronize")


class DeviceArray:
    """`shape` elements of `dtype` in device memory, freed with the object; .copy_from(host) / .to_host()."""

    def __init__(self, shape, dtype):
        self.shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.dtype = numpy.dtype(dtype)
        self.nbytes = int(numpy.prod(self.shape)) * self.dtype.itemsize
        self.ptr = 0
        d = driver()
        ptr = ctypes.c_uint64()
        _check(d, d.cuMemAlloc_v2(ctypes.byref(ptr), max(self.nbytes, 1)), "cuMemAlloc")
        self.ptr = ptr.value

    @classmethod
    def from_host(cls, host):
        a = cls(host.shape, host.dtype)
        a.copy_from(host)
        return a

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False), "version": 3,
                "strides": None}

    def copy_from(self, host):
        host = numpy.ascontiguousarray(host, dtype=self.dtype)
        if host.nbytes != self.nbytes:
            raise ValueError("copy_from: %d bytes into an array of %d" % (host.nbytes, self.nbytes))
        d = driver()
        _check(d, d.cuMemcpyHtoD_v2(self.ptr, host.ctypes.data, self.nbytes), "cuMemcpyHtoD")

    def to_host(self):
        out = numpy.empty(self.shape, self.dtype)
        d = driver()
        _check(d, d.cuMemcpyDtoH_v2(out.ctypes.data, self.ptr, self.nbytes), "cuMemcpyDtoH")
        return out

    def __del__(self):
        if self.ptr and _driver is not None:
            _driver.cuMemFree_v2(self.ptr)
            self.ptr = 0
