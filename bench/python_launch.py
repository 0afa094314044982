#!/usr/bin/env python3
"""Host cost per call of gpu_autotune.Kernel.launch (Python, ctypes) against autotune::Kernel::launch (C++), on
the same kernel, problem and database: the SAXPY example at n = 2^24, batches of 100 launches timed on the host
then a synchronisation, median of 50 batches, as bench/launch_overhead.cpp measures its steady state. Needs a GPU;
device arrays come from gpu_autotune.cuda_memory (no CuPy needed), and also from CuPy (--cupy) and PyTorch
(--torch), each with its own stream object.

    python3 bench/python_launch.py [--db tune.db] [--launch-overhead build/bench/launch_overhead] [--n N] [--cupy] [--torch]

Prints the Python figures, then runs the C++ benchmark (same n, spec) and prints its "Kernel::launch, per call"
line and the difference for each kind of array (the issue's target: under 5 us).
"""
import argparse
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


def per_call_us(call, sync, batch=100, batches=50):
    us = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(batch):
            call()
        us.append((time.perf_counter() - t0) * 1e6 / batch)
        sync()
    return statistics.median(us)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--spec", default=os.path.join(root, "examples/saxpy/saxpy.tune.json"))
    ap.add_argument("--db", default="")
    ap.add_argument("--n", type=int, default=1 << 24)
    ap.add_argument("--launch-overhead", default=os.path.join(root, "build/bench/launch_overhead"))
    ap.add_argument("--cupy", action="store_true", help="also device arrays and streams from CuPy")
    ap.add_argument("--torch", action="store_true", help="also tensors and a stream from PyTorch")
    a = ap.parse_args()
    db = a.db or os.path.join(tempfile.mkdtemp(prefix="pylaunch"), "launch.db")
    n = a.n
    k = gpu_autotune.Kernel(a.spec, db)
    cases = []  # (label, args, stream, sync)
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
    results = []
    for label, args, stream, sync in cases:
        k.launch(stream, [n], args)
        sync()
        per_call_us(lambda: k.launch(stream, [n], args), sync)  # warm
        results.append((label, per_call_us(lambda: k.launch(stream, [n], args), sync)))
    # Where the host time goes: turning the arguments into the C interface's structs alone (no launch), per call.
    from gpu_autotune import launch as _launch
    slots = (_launch._GatArg * 8)()
    extract = []
    for label, args, stream, sync in cases:
        fs = [_launch._extractors.get(type(a)) or _launch._extractor_for(type(a), a, i + 1) for i, a in enumerate(args)]

        def convert():
            for i, a in enumerate(args):
                fs[i](slots[i], a, i + 1)
        extract.append((label, per_call_us(convert, lambda: None)))
    choice = k.choice([n])
    print("python Kernel.launch: saxpy n=%d, config %s (%s)" % (n, choice["config_text"], choice["match"]))
    for label, us in results:
        print("%-56s %9.2f us" % ("steady state: Kernel.launch, " + label, us))
    for label, us in extract:
        print("%-56s %9.2f us" % ("  of which the arguments' conversion: " + label, us))
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
    print("%-56s %9.2f us" % ("steady state: autotune::Kernel::launch (C++), per call", cpp_us))
    for label, us in results:
        print("%-56s %9.2f us" % ("  overhead over C++: " + label, us - cpp_us))
    return 0


if __name__ == "__main__":
    sys.exit(main())
