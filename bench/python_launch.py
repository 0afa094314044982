#!/usr/bin/env python3
"""Host cost per call of gpu_autotune.Kernel.launch (Python: its C path and its ctypes path) against
autotune::Kernel::launch (C++), on the same kernel, problem and database: the SAXPY example at n = 2^24, batches of
100 launches timed on the host then a synchronisation, median of 50 batches, as bench/launch_overhead.cpp measures
its steady state. Needs a GPU; device arrays come from gpu_autotune.cuda_memory (no CuPy needed), and also from
CuPy (--cupy) and PyTorch (--torch), each with its own stream object.

    python3 bench/python_launch.py [--db tune.db] [--launch-overhead build/bench/launch_overhead] [--n N] [--cupy] [--torch]
    python3 bench/python_launch.py --null-launch     # no GPU, no library: the Python side's cost alone

Each case is timed through the C path (gpu_autotune._fastlaunch, where it imports) and through ctypes (the same
Kernel with its C path set aside), in this order, in one process. GPU_AUTOTUNE_FASTLAUNCH=0 leaves the C path out.
Prints the Python figures, then runs the C++ benchmark (same n, spec) and prints its "Kernel::launch, per call"
line and each path's difference for each kind of array (the issue's target: under 5 us). --null-launch launches
through the extension's function that does nothing (the stand-in of gat_kernel_launch), on arrays that only have a
pointer and a dtype: what is left is the host cost of each path's Python and conversion.
"""
import argparse
import ctypes
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy

import gpu_autotune
from gpu_autotune import cuda_memory
from gpu_autotune import launch as _launch


def per_call_us(call, sync, batch=100, batches=50):
    us = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(batch):
            call()
        us.append((time.perf_counter() - t0) * 1e6 / batch)
        sync()
    return statistics.median(us)


def _null_kernel(spec):
    """A Kernel whose gat_kernel_launch is _fastlaunch's function that does nothing (no library, no GPU)."""
    if _launch._fastlaunch is None:
        raise SystemExit("--null-launch needs gpu_autotune._fastlaunch (its function that does nothing)")
    proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64, ctypes.POINTER(ctypes.c_int64),
                             ctypes.c_size_t, ctypes.POINTER(_launch._GatArg), ctypes.c_size_t)

    class NoLibrary:
        def gat_last_error(self):
            return b"the null launch failed"

        def gat_kernel_close(self, handle):
            pass

    k = _launch.Kernel.__new__(_launch.Kernel)
    k._attach(NoLibrary(), 1, spec, proto(_launch._fastlaunch.null_launch_address()))
    return k


def _pointer_only(ptr, dtype):
    """A cuda_memory.DeviceArray over no memory (--null-launch): a pointer and a dtype."""
    a = object.__new__(cuda_memory.DeviceArray)
    a.shape, a.dtype, a.nbytes, a.ptr = (1,), numpy.dtype(dtype), 0, ptr
    return a


def _cases(a, n):
    """(label, args, stream, sync) of each kind of array asked for."""
    cases = []
    if a.null_launch:
        own = [_pointer_only(0x7f0000000000 + (i << 20), numpy.float32) for i in range(3)]
        return [("cuda_memory arrays (no memory), stream 0", own + [2.0, n], 0, lambda: None)]
    own = [cuda_memory.DeviceArray.from_host(numpy.ones(n, numpy.float32)) for _ in range(3)]
    cases.append(("gpu_autotune.cuda_memory arrays, stream 0", own + [2.0, n], 0, cuda_memory.synchronize))
    if a.cupy:
        import cupy
        x, y, out = (cupy.ones(n, dtype=cupy.float32) for _ in range(3))
        sync = cupy.cuda.runtime.deviceSynchronize
        cases.append(("CuPy arrays, stream 0", [x, y, out, 2.0, n], 0, sync))
        cases.append(("CuPy arrays, CuPy stream object", [x, y, out, 2.0, n], cupy.cuda.Stream.null, sync))
    if a.torch:
        import torch
        x, y, out = (torch.ones(n, dtype=torch.float32, device="cuda") for _ in range(3))
        cases.append(("PyTorch tensors, torch stream object", [x, y, out, 2.0, n], torch.cuda.current_stream(),
                      torch.cuda.synchronize))
    return cases


def _steady(k, stream, n, args, sync):
    k.launch(stream, [n], args)
    sync()
    per_call_us(lambda: k.launch(stream, [n], args), sync)  # warm
    return per_call_us(lambda: k.launch(stream, [n], args), sync)


def _conversion_us(args):
    """Turning the arguments into the C interface's structs the ctypes path's way alone (no launch), per call."""
    slots = (_launch._GatArg * 8)()
    fs = [_launch._extractors.get(type(x)) or _launch._extractor_for(type(x), x, i + 1) for i, x in enumerate(args)]

    def convert():
        for i, x in enumerate(args):
            fs[i](slots[i], x, i + 1)
    return per_call_us(convert, lambda: None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--spec", default=os.path.join(root, "examples/saxpy/saxpy.tune.json"))
    ap.add_argument("--db", default="")
    ap.add_argument("--n", type=int, default=1 << 24)
    ap.add_argument("--launch-overhead", default=os.path.join(root, "build/bench/launch_overhead"))
    ap.add_argument("--cupy", action="store_true", help="also device arrays and streams from CuPy")
    ap.add_argument("--torch", action="store_true", help="also tensors and a stream from PyTorch")
    ap.add_argument("--null-launch", action="store_true",
                    help="no GPU: launch through a function that does nothing (the Python side's cost)")
    a = ap.parse_args()
    n = a.n
    if a.null_launch:
        k = _null_kernel(a.spec)
    else:
        k = gpu_autotune.Kernel(a.spec, a.db or os.path.join(tempfile.mkdtemp(prefix="pylaunch"), "launch.db"))
    cases = _cases(a, n)
    fast = k._fast
    print("python Kernel.launch: C path %s (%s)" % (
        "in use" if fast is not None else "not in use",
        _launch._fastlaunch.__file__ if _launch._fastlaunch is not None else
        "gpu_autotune._fastlaunch did not import, or GPU_AUTOTUNE_FASTLAUNCH=0"))
    results = []  # (label, path, us)
    for label, args, stream, sync in cases:
        if fast is not None:
            k._fast = fast
            if fast(stream, [n], args) != 0:  # the C path would hand this case to ctypes: its figure says nothing
                print("(the C path leaves %s to ctypes: not timed)" % label)
            else:
                sync()
                results.append((label, "C path", _steady(k, stream, n, args, sync)))
        k._fast = None  # the same Kernel through ctypes
        results.append((label, "ctypes", _steady(k, stream, n, args, sync)))
        k._fast = fast
    extract = [(label, _conversion_us(args)) for label, args, _, _ in cases]
    if not a.null_launch:
        choice = k.choice([n])
        print("saxpy n=%d, config %s (%s)" % (n, choice["config_text"], choice["match"]))
    for label, path, us in results:
        print("%-78s %9.2f us" % ("steady state: Kernel.launch (%s), %s" % (path, label), us))
    for label, us in extract:
        print("%-78s %9.2f us" % ("  the ctypes path's conversion of the arguments alone: " + label, us))
    if a.null_launch:
        return 0
    if not os.path.exists(a.launch_overhead):
        print("(no %s: C++ figure not measured)" % a.launch_overhead)
        return 0
    r = subprocess.run([a.launch_overhead, "--n", str(n), "--reps", "1", "--spec", a.spec], capture_output=True,
                       text=True, cwd=root)
    m = re.search(r"steady state: Kernel::launch, per call\s+([0-9.]+) us", r.stdout)
    if not m:
        print(r.stdout[-2000:], r.stderr[-2000:], file=sys.stderr)
        return 1
    cpp_us = float(m.group(1))
    print("%-78s %9.2f us" % ("steady state: autotune::Kernel::launch (C++), per call", cpp_us))
    for label, path, us in results:
        print("%-78s %9.2f us" % ("  overhead over C++ (%s): %s" % (path, label), us - cpp_us))
    return 0


if __name__ == "__main__":
    sys.exit(main())
