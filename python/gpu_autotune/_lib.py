"""Loading libgpu_autotune.so with ctypes and calling its C interface (tuner/capi/gpu_autotune.h).

The library is looked for, in order: the path in the environment variable GPU_AUTOTUNE_LIB; gpu_autotune/lib/
libgpu_autotune.so next to this package (where the install puts it); the dynamic loader's search path
(ctypes.util.find_library("gpu_autotune"), then the bare name). It is loaded once per process.
"""
import ctypes
import ctypes.util
import json
import os
import sys
import threading

import numpy

from .errors import LibraryNotFoundError, UsageError, error_for_code

ABI_VERSION = 1
_LIB_NAME = "libgpu_autotune.so"

# numpy dtype -> the project's dtype names (docs/spec-format.md "Element types").
_DTYPE_NAMES = {
    numpy.dtype(numpy.int8): "int8", numpy.dtype(numpy.uint8): "uint8",
    numpy.dtype(numpy.int16): "int16", numpy.dtype(numpy.uint16): "uint16",
    numpy.dtype(numpy.int32): "int32", numpy.dtype(numpy.uint32): "uint32",
    numpy.dtype(numpy.int64): "int64", numpy.dtype(numpy.uint64): "uint64",
    numpy.dtype(numpy.float16): "float16", numpy.dtype(numpy.float32): "float32",
    numpy.dtype(numpy.float64): "float64",
}

_lock = threading.Lock()
_lib = None
# The arrays handed to gat_set_arrays (and their ctypes structs): the library reads their memory later.
_kept_arrays = []


class _GatArray(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_char_p), ("data", ctypes.c_void_p),
                ("bytes", ctypes.c_uint64)]


def dtype_name(dtype, what="array"):
    """The project's name of numpy `dtype` ("float32", ...); UsageError naming `what` for any other dtype."""
    dt = numpy.dtype(dtype)
    name = _DTYPE_NAMES.get(dt.newbyteorder("=") if dt.byteorder == ">" else dt)
    if name is None:
        raise UsageError("%s has dtype %s; supported: %s" % (what, dt, ", ".join(sorted(set(_DTYPE_NAMES.values())))))
    return name


def _candidates():
    env = os.environ.get("GPU_AUTOTUNE_LIB")
    if env:
        return [env]  # an explicit choice is the only one tried
    found = ctypes.util.find_library("gpu_autotune")
    return [os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", _LIB_NAME)] + \
        ([found] if found else []) + [_LIB_NAME]


def _declare(lib):
    lib.gat_abi_version.restype = ctypes.c_int
    lib.gat_abi_version.argtypes = []
    lib.gat_version.restype = ctypes.c_char_p
    lib.gat_version.argtypes = []
    lib.gat_set_arrays.restype = ctypes.c_int
    lib.gat_set_arrays.argtypes = [ctypes.POINTER(_GatArray), ctypes.c_size_t]
    lib.gat_main.restype = ctypes.c_int
    lib.gat_main.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    lib.gat_query.restype = ctypes.c_int
    lib.gat_query.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.gat_free.restype = None
    lib.gat_free.argtypes = [ctypes.c_void_p]
    lib.gat_last_error.restype = ctypes.c_char_p
    lib.gat_last_error.argtypes = []


def library():
    """The loaded library (ctypes.CDLL); LibraryNotFoundError saying where it looked, or on an ABI mismatch."""
    global _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            if os.sep in path and not os.path.exists(path):
                tried.append(path + " (no such file)")
                continue
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                tried.append("%s (%s)" % (path, e))
                continue
            _declare(lib)
            abi = lib.gat_abi_version()
            if abi != ABI_VERSION:
                raise LibraryNotFoundError("%s has interface version %d, this package needs %d" % (path, abi, ABI_VERSION))
            _lib = lib
            return lib
        raise LibraryNotFoundError("libgpu_autotune.so not found; set GPU_AUTOTUNE_LIB to its path. Tried: " +
                                   "; ".join(tried))


def _last_error(lib):
    msg = lib.gat_last_error()
    return msg.decode("utf-8", "replace") if msg else ""


def version():
    """The library's version string ("0.1.0")."""
    return library().gat_version().decode()


def set_arrays(arrays):
    """Registers the named in-memory arrays that specs name with {"memory": NAME}, replacing the earlier set.

    `arrays` is a list of (name, numpy array) pairs (an empty list clears the set). Each array must be C-contiguous
    and little-endian (or native on a little-endian machine), of a dtype in the project's list; references are
    kept until the next call, since the library reads their memory later. Raises UsageError (a wrong array, or
    the library refusing a name or dtype).
    """
    lib = library()
    keep, structs = [], (_GatArray * max(len(arrays), 1))()
    for i, (name, arr) in enumerate(arrays):
        if not isinstance(arr, numpy.ndarray):
            raise UsageError("array %r is a %s, not a numpy array" % (name, type(arr).__name__))
        dt = arr.dtype
        if dt.byteorder == ">" or (dt.byteorder == "=" and sys.byteorder != "little"):
            raise UsageError("array %r is big-endian (%s); convert it with .astype('<%s')" % (name, dt, dt.char))
        if not arr.flags["C_CONTIGUOUS"]:
            raise UsageError("array %r is not C-contiguous; pass numpy.ascontiguousarray(it)" % name)
        dname = dtype_name(dt, "array %r" % name)
        bname, bdtype = name.encode(), dname.encode()
        keep.append((arr, bname, bdtype))
        structs[i] = _GatArray(bname, bdtype, arr.ctypes.data if arr.size else None, arr.nbytes)
    rc = lib.gat_set_arrays(structs, len(arrays))
    if rc != 0:
        raise error_for_code(rc, _last_error(lib))
    _kept_arrays[:] = [keep, structs]


def main(argv):
    """Runs the command line `autotune ARGV...` in this process (argv[0] is ignored); returns its exit code."""
    lib = library()
    args = [str(a).encode() for a in argv]
    c_argv = (ctypes.c_char_p * (len(args) + 1))(*args, None)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()  # the library writes to the same file descriptors
    return lib.gat_main(len(args), c_argv)


def query(request):
    """Answers the query `request` (a dict {"op": ...}) as a dict; raises the exception of the library's code."""
    lib = library()
    reply = ctypes.c_void_p()
    rc = lib.gat_query(json.dumps(request).encode(), ctypes.byref(reply))
    if rc != 0:
        raise error_for_code(rc, _last_error(lib))
    try:
        return json.loads(ctypes.string_at(reply.value).decode())
    finally:
        lib.gat_free(reply)
