"""Exceptions of the gpu_autotune package.

Every error the C library reports, and every Kernel Tuner argument this package cannot honour, is raised as a
subclass of GpuAutotuneError, with the library's (or the package's) message.
"""


class GpuAutotuneError(Exception):
    """Base of every error of this package; also the library's exit code 5 (anything else) and 1."""


class UsageError(GpuAutotuneError, ValueError):
    """Bad input: an invalid spec, an unknown option or parameter, an unknown query (the library's code 2)."""


class NoGpuError(GpuAutotuneError):
    """The command or query needs a GPU and there is none (the library's code 3)."""


class DatabaseError(GpuAutotuneError):
    """The SQLite database could not be opened, read or written (the library's code 4)."""


class LibraryNotFoundError(GpuAutotuneError):
    """libgpu_autotune.so was not found, or its interface version is not the one this package was written for."""


class UnsupportedError(GpuAutotuneError, NotImplementedError):
    """A Kernel Tuner argument (or value of one) that this package does not support; the message names it."""


def error_for_code(code, message):
    """The exception for a non-zero return `code` of the library with its `message`."""
    cls = {2: UsageError, 3: NoGpuError, 4: DatabaseError}.get(code, GpuAutotuneError)
    return cls(message or "gpu_autotune library call failed with code %d" % code)
