#!/usr/bin/env python3
"""Kernel Tuner's brute force of bench/tuning_throughput.sh's 270-configuration reduction space.

The same kernel (kernels_src/reduction/reduction.cu, reduce_pass, grid-stride variant, float32 sum, n = 2^26)
and the same space: BLOCK_SIZE 64..1024 x BLOCKS_PER_SM {1,2,4,8,16,32} x ITEMS_PER_THREAD {1,2,4} x VEC {1,2,4}.
Kernel Tuner compiles each configuration with NVRTC, runs it once to verify (here: the block partials must add
up to the sum of the input) and times it (its default 7 iterations). Only the first pass is tuned: the partials'
second pass, which autotune also runs and verifies, is left out, which favours Kernel Tuner.

Usage: python3 bench/kt_reduction.py [--lang nvcuda|cupy] [--device 0] [--json FILE]
Needs kernel_tuner importable (pip install kernel_tuner, or its sources on PYTHONPATH) and, for --lang nvcuda,
the cuda-python bindings (cuda.bindings). Exit status 0 when all 270 configurations verified, 1 otherwise.
"""
import argparse
import json
import os
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lang", default="nvcuda", help="Kernel Tuner backend: nvcuda (cuda-python) or cupy")
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--json", help="write the session's figures here")
    ap.add_argument("--log2n", type=int, default=26)
    args = ap.parse_args()

    t_start = time.perf_counter()
    import numpy as np
    import kernel_tuner
    from cuda.bindings import driver

    def check(result):
        err = result[0]
        if err != driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"CUDA driver error {err}")
        return result[1] if len(result) > 1 else None

    check(driver.cuInit(0))
    dev = check(driver.cuDeviceGet(args.device))
    sms = check(driver.cuDeviceGetAttribute(driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev))
    name = check(driver.cuDeviceGetName(64, dev)).split(b"\0")[0].decode()

    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "kernels_src", "reduction", "reduction.cu")) as f:
        source = f.read()

    n = 1 << args.log2n
    rng = np.random.default_rng(7)
    x = rng.uniform(0.5, 1.5, n).astype(np.float32)  # non-zero inputs
    total = float(np.sum(x, dtype=np.float64))
    partials = np.zeros(32 * sms, dtype=np.float32)
    kernel_args = [x, partials, np.uint64(n)]

    tune_params = {
        "VARIANT": [6],  # grid_stride
        "FINAL": [0],  # second_pass: block b writes dst[b]
        "KAHAN": [0],
        "DTYPE_ID": [1],  # float32
        "OP_ID": [0],  # sum
        "BLOCK_SIZE": [64, 128, 256, 512, 1024],
        "BLOCKS_PER_SM": [1, 2, 4, 8, 16, 32],
        "ITEMS_PER_THREAD": [1, 2, 4],
        "VEC": [1, 2, 4],
    }

    def grid(p):  # the spec's launch rule: BLOCKS_PER_SM * SMs blocks, none of them empty
        per_block = p["BLOCK_SIZE"] * p["ITEMS_PER_THREAD"] * p["VEC"]
        return min(p["BLOCKS_PER_SM"] * sms, (n + per_block - 1) // per_block)

    def verify(answer, result, atol=None):
        got = float(np.sum(result[1], dtype=np.float64))
        return abs(got - total) <= 1e-5 * abs(total)

    t_tune = time.perf_counter()
    results, env = kernel_tuner.tune_kernel(
        "reduce_pass", source, grid, kernel_args, tune_params,
        grid_div_x=[], block_size_names=["BLOCK_SIZE"], smem_args={"size": lambda p: 4 * p["BLOCK_SIZE"]},
        answer=[None, partials, None], verify=verify, lang=args.lang, device=args.device,
        compiler_options=["--std=c++17"], strategy="brute_force", quiet=True)
    t_end = time.perf_counter()

    ok = [r for r in results if isinstance(r.get("time"), float)]
    best = min(ok, key=lambda r: r["time"]) if ok else None
    summed = {k: sum(r.get(k, 0) or 0 for r in results) / 1e3
              for k in ("compile_time", "verification_time", "benchmark_time", "framework_time", "strategy_time")}
    out = {
        "tool": f"Kernel Tuner {kernel_tuner.__version__} ({args.lang})",
        "device": name,
        "configs": len(results),
        "verified": len(ok),
        "session_s": t_end - t_tune,
        "script_s": t_end - t_start,
        "configs_per_s": len(results) / (t_end - t_tune) if t_end > t_tune else 0,
        "summed_s": summed,
        "best": {"params": {k: best[k] for k in tune_params}, "time_ms": best["time"]} if best else None,
    }
    print(json.dumps(out, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0 if len(ok) == 270 and len(results) == 270 else 1


if __name__ == "__main__":
    sys.exit(main())
