"""Launching a tuned kernel from Python: Kernel(spec, db).launch(stream, problem, args).

A thin layer over autotune::Kernel through the C interface (gat_kernel_open / gat_kernel_launch): the
configuration the database serves for this GPU and problem (down to the spec's default, docs/lookup.md), the
binary from the database's cache or NVRTC, every launch step of the spec. Device arrays are anything with
__cuda_array_interface__ (CuPy, PyTorch, Numba); host (numpy) arrays are refused. docs/python.md.
"""
import ctypes
import json

import numpy

from . import _lib
from .errors import UsageError, error_for_code

_POINTER, _INT, _UINT, _FLOAT = 0, 1, 2, 3


class _GatArg(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("dtype", ctypes.c_char_p), ("bits", ctypes.c_uint64),
                ("value", ctypes.c_double)]


_declared = set()


def _kernel_library():
    lib = _lib.library()
    if id(lib) not in _declared:
        lib.gat_kernel_open.restype = ctypes.c_int
        lib.gat_kernel_open.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
        lib.gat_kernel_launch.restype = ctypes.c_int
        lib.gat_kernel_launch.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.POINTER(ctypes.c_int64),
                                          ctypes.c_size_t, ctypes.POINTER(_GatArg), ctypes.c_size_t]
        lib.gat_kernel_choice.restype = ctypes.c_int
        lib.gat_kernel_choice.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t,
                                          ctypes.POINTER(ctypes.c_void_p)]
        lib.gat_kernel_close.restype = None
        lib.gat_kernel_close.argtypes = [ctypes.c_void_p]
        _declared.add(id(lib))
    return lib


# typestr of __cuda_array_interface__ -> the project's dtype name, cached (the typestr repeats call after call).
_typestr_names = {}


def _dtype_of_typestr(typestr, index):
    name = _typestr_names.get(typestr)
    if name is None:
        name = _lib.dtype_name(numpy.dtype(typestr), "argument %d" % index).encode()
        _typestr_names[typestr] = name
    return name


def stream_handle(stream):
    """The CUstream handle (an int) of `stream`: None or 0 (the default stream), an int, or an object of CuPy
    (.ptr), PyTorch (.cuda_stream) or one with __cuda_stream__ (the CUDA stream protocol). UsageError otherwise."""
    if stream is None:
        return 0
    if isinstance(stream, int):
        return stream
    proto = getattr(stream, "__cuda_stream__", None)
    if proto is not None:
        value = proto() if callable(proto) else proto
        return int(value[1])
    for attr in ("ptr", "cuda_stream", "handle"):
        value = getattr(stream, attr, None)
        if isinstance(value, int):
            return value
    raise UsageError("stream: expected None, an int (a CUstream handle) or a CuPy/PyTorch stream, got %s"
                     % type(stream).__name__)


class Kernel:
    """A kernel of a spec (a *.tune.json of family "user", or a Kernel Tuner T1 file) launched with its tuned
    configuration from the database at `db` (a path). Raises UsageError for a bad spec, DatabaseError, NoGpuError.
    """

    def __init__(self, spec, db):
        self._lib = _kernel_library()
        self._handle = None
        handle = ctypes.c_void_p()
        rc = self._lib.gat_kernel_open(str(spec).encode(), str(db).encode(), ctypes.byref(handle))
        if rc != 0:
            raise error_for_code(rc, _lib._last_error(self._lib))
        self._handle = handle.value
        self.spec = str(spec)
        self._args = (_GatArg * 64)()
        self._problem = (ctypes.c_int64 * 8)()

    def close(self):
        """Releases the kernel (its modules and plans); launching afterwards raises UsageError."""
        if self._handle:
            self._lib.gat_kernel_close(self._handle)
            self._handle = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - never raise from a finaliser
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _problem_array(self, problem):
        dims = (problem,) if isinstance(problem, int) else tuple(problem)
        if len(dims) > len(self._problem):
            raise UsageError("problem: at most %d dims, got %d" % (len(self._problem), len(dims)))
        for i, d in enumerate(dims):
            self._problem[i] = int(d)
        return len(dims)

    def launch(self, stream, problem, args):
        """Launches on `stream` (see stream_handle): `problem` the spec's problem dims in its order (an int or a
        sequence), `args` one per spec argument: device arrays for buffers and constants, numbers for scalars.
        Asynchronous. UsageError naming the argument that does not match (a host array, a wrong dtype, a number
        out of range, a wrong count); NoGpuError for a failed launch."""
        if not self._handle:
            raise UsageError("the kernel was closed")
        if len(args) > len(self._args):
            raise UsageError("args: at most %d arguments, got %d" % (len(self._args), len(args)))
        out = self._args
        for i, a in enumerate(args):
            slot = out[i]
            cai = getattr(a, "__cuda_array_interface__", None)
            if cai is not None:
                slot.kind = _POINTER
                slot.bits = cai["data"][0] or 0
                slot.dtype = _dtype_of_typestr(cai["typestr"], i + 1)
            elif isinstance(a, numpy.ndarray):
                raise UsageError("argument %d is a numpy array, in host memory: pass a device array (CuPy, PyTorch, "
                                 "Numba: anything with __cuda_array_interface__)" % (i + 1))
            elif isinstance(a, (bool, numpy.bool_)):
                raise UsageError("argument %d is a bool: pass an int" % (i + 1))
            elif isinstance(a, (int, numpy.integer)):
                v = int(a)
                slot.kind = _INT if v < 0 else _UINT
                slot.bits = v & 0xFFFFFFFFFFFFFFFF
                slot.dtype = None
            elif isinstance(a, (float, numpy.floating)):
                slot.kind = _FLOAT
                slot.value = float(a)
                slot.dtype = None
            else:
                raise UsageError("argument %d is a %s: expected a device array or a number" % (i + 1, type(a).__name__))
        n = self._problem_array(problem)
        rc = self._lib.gat_kernel_launch(self._handle, stream_handle(stream), self._problem, n, out, len(args))
        if rc != 0:
            raise error_for_code(rc, _lib._last_error(self._lib))

    def choice(self, problem):
        """The configuration a launch of `problem` uses, as a dict (config, match level, the measured problem and
        median, where the binary came from); prepares the launch."""
        if not self._handle:
            raise UsageError("the kernel was closed")
        n = self._problem_array(problem)
        reply = ctypes.c_void_p()
        rc = self._lib.gat_kernel_choice(self._handle, self._problem, n, ctypes.byref(reply))
        if rc != 0:
            raise error_for_code(rc, _lib._last_error(self._lib))
        try:
            return json.loads(ctypes.string_at(reply.value).decode())
        finally:
            self._lib.gat_free(reply)
