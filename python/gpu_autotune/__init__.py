"""gpu_autotune: Python bindings of the gpu-autotune CUDA kernel tuner (docs/python.md).

Kernel Tuner 1.4 compatible: tune_kernel, run_kernel, util.get_config_string, file_utils.store_output_file and
store_metadata_file. The tuner's own: tune, Database, Kernel (a tuned kernel launched on device arrays). Errors: GpuAutotuneError and its subclasses.
"""
from .api import Database, tune
from .errors import (DatabaseError, GpuAutotuneError, LibraryNotFoundError, NoGpuError, UnsupportedError,
                     UsageError)
from .kernel_tuner import run_kernel, tune_kernel
from .launch import Kernel
from . import observers, strategies  # noqa: E402 - Kernel Tuner's kernel_tuner.strategies.NAME, observers.nvml

__all__ = ["Database", "tune", "Kernel", "tune_kernel", "run_kernel", "GpuAutotuneError", "UsageError", "NoGpuError",
           "DatabaseError", "LibraryNotFoundError", "UnsupportedError"]
