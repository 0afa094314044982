"""Launching a tuned kernel from Python: Kernel(spec, db).launch(stream, problem, args).

A thin layer over autotune::Kernel through the C interface (gat_kernel_open / gat_kernel_launch): the
configuration the database serves for this GPU and problem (down to the spec's default, docs/lookup.md), the
binary from the database's cache or NVRTC, every launch step of the spec. Device arrays are anything with
__cuda_array_interface__ (CuPy, PyTorch, Numba); host (numpy) arrays are refused. docs/python.md.

Two paths, one behaviour: the C extension _fastlaunch (python/ext/fastlaunch.c) where it imports, which reads the
common cases with the type and dtype caches below and calls gat_kernel_launch itself; and the ctypes path here,
which runs for everything the C path leaves (it returns None without launching: an unknown case or any error) and
where the extension is missing. Every error message comes from the ctypes path. GPU_AUTOTUNE_FASTLAUNCH=0 in the
environment (read at import) makes every Kernel use ctypes.
"""
import ctypes
import json
import os

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


# How one argument becomes a gat_arg, by its Python type: found once per type (_extractor_for), then a dict lookup
# per argument. CuPy arrays and PyTorch tensors have fast paths (their pointer without building the
# __cuda_array_interface__ dict); any other device array goes through __cuda_array_interface__.
_dtype_names = {}  # numpy dtype, typestr or torch dtype -> the project's dtype name (bytes)


def _dtype_bytes(key, numpy_dtype, index):
    name = _dtype_names.get(key)
    if name is None:
        name = _lib.dtype_name(numpy.dtype(numpy_dtype), "argument %d" % index).encode()
        _dtype_names[key] = name
    return name


def _set_int(slot, a, index):
    v = int(a)
    slot.kind = _INT if v < 0 else _UINT
    slot.bits = v & 0xFFFFFFFFFFFFFFFF
    slot.dtype = None


def _set_float(slot, a, index):
    slot.kind = _FLOAT
    slot.value = float(a)
    slot.dtype = None


def _set_interface(slot, a, index):
    cai = a.__cuda_array_interface__
    slot.kind = _POINTER
    slot.bits = cai["data"][0] or 0
    typestr = cai["typestr"]
    slot.dtype = _dtype_names.get(typestr) or _dtype_bytes(typestr, typestr, index)


def _set_cupy(slot, a, index):
    slot.kind = _POINTER
    slot.bits = a.data.ptr
    dt = a.dtype
    slot.dtype = _dtype_names.get(dt) or _dtype_bytes(dt, dt, index)


def _set_torch(slot, a, index):
    if not a.is_cuda:
        raise UsageError("argument %d is a PyTorch tensor on the %s: pass one on the GPU" % (index, a.device))
    slot.kind = _POINTER
    slot.bits = a.data_ptr()
    dt = a.dtype
    name = _dtype_names.get(dt)
    if name is None:
        name = _dtype_bytes(dt, str(dt).replace("torch.", ""), index)
    slot.dtype = name


def _set_own(slot, a, index):  # gpu_autotune.cuda_memory.DeviceArray
    slot.kind = _POINTER
    slot.bits = a.ptr
    dt = a.dtype
    slot.dtype = _dtype_names.get(dt) or _dtype_bytes(dt, dt, index)


def _refuse_host(slot, a, index):
    raise UsageError("argument %d is a numpy array, in host memory: pass a device array (CuPy, PyTorch, Numba: "
                     "anything with __cuda_array_interface__)" % index)


def _refuse_bool(slot, a, index):
    raise UsageError("argument %d is a bool: pass an int" % index)


_extractors = {int: _set_int, float: _set_float, bool: _refuse_bool, numpy.ndarray: _refuse_host,
               numpy.bool_: _refuse_bool}

try:
    from . import _fastlaunch
except ImportError:  # not built (no Python headers where the package was built) or not loadable here
    _fastlaunch = None
if os.environ.get("GPU_AUTOTUNE_FASTLAUNCH") == "0":
    _fastlaunch = None

# The C path's view of the same rules: the kind of each extractor it reads itself; the refusals have none (the
# Python path raises their errors).
_fast_codes = {} if _fastlaunch is None else {
    _set_int: _fastlaunch.KIND_INT, _set_float: _fastlaunch.KIND_FLOAT, _set_own: _fastlaunch.KIND_OWN,
    _set_cupy: _fastlaunch.KIND_CUPY, _set_torch: _fastlaunch.KIND_TORCH, _set_interface: _fastlaunch.KIND_INTERFACE}
_fast_kinds = {}  # Python type -> its kind for the C path, or None (the Python path's)


def _fast_kind(t, a, index):
    """The C path's kind of type t (remembered in _fast_kinds), found as the Python path finds its extractor; None
    for a refused type; UsageError (the C path then leaves the call to the Python path) for an unknown one."""
    f = _extractors.get(t) or _extractor_for(t, a, index)
    kind = _fast_codes.get(f)
    _fast_kinds[t] = kind
    return kind


def _fast_dtype(key, is_torch, index):
    """The dtype name of a dtype object or typestr (a torch dtype if is_torch), remembered in _dtype_names as the
    Python path does; UsageError for a dtype the project has no name for."""
    return _dtype_bytes(key, str(key).replace("torch.", "") if is_torch else key, index)


def _extractor_for(t, a, index):
    """The extractor for arguments of type t (remembered), or UsageError for a type that is none of them."""
    module = getattr(t, "__module__", "") or ""
    if issubclass(t, (bool, numpy.bool_)):
        f = _refuse_bool
    elif issubclass(t, numpy.ndarray):
        f = _refuse_host
    elif issubclass(t, (int, numpy.integer)):
        f = _set_int
    elif issubclass(t, (float, numpy.floating)):
        f = _set_float
    elif module == "gpu_autotune.cuda_memory" and t.__name__ == "DeviceArray":
        f = _set_own
    elif module.startswith("cupy") and hasattr(a, "data") and hasattr(a.data, "ptr"):
        f = _set_cupy
    elif module.startswith("torch") and hasattr(a, "data_ptr"):
        f = _set_torch
    elif hasattr(a, "__cuda_array_interface__"):
        f = _set_interface
    else:
        raise UsageError("argument %d is a %s: expected a device array or a number" % (index, t.__name__))
    _extractors[t] = f
    return f


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
        self._attach(self._lib, handle.value, str(spec), self._lib.gat_kernel_launch)

    def _attach(self, lib, handle, spec, launch_function, fast=True):
        """The state of an open kernel: `handle` (gat_kernel_open's), launched through `launch_function` (a ctypes
        function of gat_kernel_launch's signature: the library's, or a test's stand-in), from C where
        _fastlaunch imported and `fast`, else through ctypes."""
        self._lib = lib
        self._handle = handle
        self.spec = spec
        self._args = (_GatArg * 64)()
        self._problem = (ctypes.c_int64 * 8)()
        self._problem_dims = 0
        self._last_problem = None
        self._last_stream, self._last_handle = None, 0  # the last stream object and its handle
        self._launch = launch_function
        self._fast = None  # the C path's launch(stream, problem, args): a return code, or None for the Python path
        if fast and _fastlaunch is not None:
            self._fast = _fastlaunch.Launcher(ctypes.cast(launch_function, ctypes.c_void_p).value, handle,
                                              len(self._args), _fast_kinds, _fast_kind, _dtype_names, _fast_dtype,
                                              stream_handle).launch

    @property
    def fast_launch(self):
        """True where launch() runs in C (gpu_autotune._fastlaunch), False where it uses ctypes only."""
        return self._fast is not None

    def close(self):
        """Releases the kernel (its modules and plans); launching afterwards raises UsageError."""
        self._fast = None  # the C path holds the handle too
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
        out of range, a wrong count); NoGpuError for a failed launch. A device array's pointer and dtype are read
        at each call (the host cost per call: bench/python_launch.py)."""
        fast = self._fast
        if fast is not None:
            rc = fast(stream, problem, args)
            if rc == 0:
                return
            if rc is not None:
                raise error_for_code(rc, _lib._last_error(self._lib))
        self._launch_ctypes(stream, problem, args)

    def _launch_ctypes(self, stream, problem, args):
        """launch() through ctypes: every case, and every error's message."""
        if not self._handle:
            raise UsageError("the kernel was closed")
        out = self._args
        if len(args) > len(out):
            raise UsageError("args: at most %d arguments, got %d" % (len(out), len(args)))
        extractors = _extractors
        i = 0
        for a in args:
            t = type(a)
            f = extractors.get(t) or _extractor_for(t, a, i + 1)
            f(out[i], a, i + 1)
            i += 1
        if problem != self._last_problem:
            self._problem_dims = self._problem_array(problem)
            self._last_problem = problem if isinstance(problem, (int, tuple)) else tuple(problem)
        if type(stream) is int:
            s = stream
        elif stream is self._last_stream:  # a stream object's handle does not change while it lives (held here)
            s = self._last_handle
        else:
            s = stream_handle(stream)
            self._last_stream, self._last_handle = stream, s
        rc = self._launch(self._handle, s, self._problem, self._problem_dims, out, i)
        if rc != 0:
            raise error_for_code(rc, _lib._last_error(self._lib))

    def choice(self, problem):
        """The configuration a launch of `problem` uses, as a dict (config, match level, the measured problem and
        median, where the binary came from); prepares the launch."""
        if not self._handle:
            raise UsageError("the kernel was closed")
        n = self._problem_array(problem)
        self._last_problem = None  # the launch's problem array was overwritten
        reply = ctypes.c_void_p()
        rc = self._lib.gat_kernel_choice(self._handle, self._problem, n, ctypes.byref(reply))
        if rc != 0:
            raise error_for_code(rc, _lib._last_error(self._lib))
        try:
            return json.loads(ctypes.string_at(reply.value).decode())
        finally:
            self._lib.gat_free(reply)
