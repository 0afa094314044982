"""The tune_kernel calls of Kernel Tuner 1.4.0's examples (tests/data/kernel_tuner), captured by running the
scripts with tune_kernel replaced by a recorder, and what Kernel Tuner makes of them.

VALID_CONFIGS: the number of configurations Kernel Tuner's search space keeps, read from its code
(searchspace.Searchspace: the cartesian product of tune_params, filtered by the restrictions and, where a default
block size name is a parameter, by MaxProdConstraint(max_threads) over those names; max_threads = 1024 on every
CUDA GPU this runs on):
- vector_add: block_size_x in 128 + 64 i, i < 15 (128..1024): all 15 <= 1024 -> 15.
- matmul: 3 x 6 x 4 x 4 = 288; block_size_x == block_size_y * tile_size_y keeps (bx, by, ty) = (16: 16,1 8,2
  4,4 2,8), (32: 32,1 16,2 8,4 4,8), (64: 16,4 8,8; 32,2 has 2048 threads): 10, times 4 tile_size_x -> 40.
- convolution: 16 x 16 x 8 x 6 x 8 x 8 x 2 x 2 = 3145728; (block_size_x, block_size_y) with a product <= 1024:
  bx 16: 6, 32: 6, 48: 5, 64: 5, 80: 4, 96: 4, 112: 4, 128: 4; use_padding 1 only where bx % 32 != 0
  (16, 48, 80, 112): 12 + 6 + 10 + 5 + 8 + 4 + 8 + 4 = 57, times 16 x 16 filter sizes, 8 x 8 tiles, 2 read_only
  -> 57 x 32768 = 1867776.
- reduction, second call (num_blocks fixed to [1]): 6 x 3 x 1 x 6 x 2 = 216, every block_size_x <= 1024 -> 216.
- reduction, first call without its verify function: 6 x 3 x 11 x 6 x 2 = 2376.
"""
import inspect
import os
import runpy

import numpy

import gpu_autotune
import gpu_autotune.file_utils
import gpu_autotune.kernel_tuner

VALID_CONFIGS = {"vector_add": 15, "matmul": 40, "convolution": 1867776, "reduction": 216, "reduction_first": 2376}


def capture_calls(script_dir, name, monkeypatch):
    """Runs tests/data/kernel_tuner/NAME.py's tune() in `script_dir` with tune_kernel recording its arguments
    (bound to Kernel Tuner's parameter names) and returning no results; returns the recorded calls."""
    calls = []
    sig = inspect.signature(gpu_autotune.kernel_tuner.tune_kernel)

    def recorder(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        calls.append(dict(bound.arguments))
        return [], {}

    monkeypatch.setattr(gpu_autotune, "tune_kernel", recorder)
    # matmul's answer is numpy.dot of two 4096 x 4096 matrices: only its shape and dtype matter here.
    monkeypatch.setattr(numpy, "dot", lambda a, b: numpy.zeros((a.shape[0], b.shape[1]), numpy.result_type(a, b)))
    monkeypatch.chdir(str(script_dir))
    runpy.run_path(os.path.join(str(script_dir), name + ".py"))["tune"]()
    return calls


def reduction_calls(script_dir, size=1000):
    """The tune_kernel calls of reduction.py, built as the script builds them but with `size` input elements
    (the script's 800000000 floats are 3.2 GB; the size changes only the arrays' counts)."""
    with open(os.path.join(str(script_dir), "reduction.cu")) as f:
        kernel_string = f.read()
    tune_params = {"block_size_x": [2 ** i for i in range(5, 11)], "vector": [2 ** i for i in range(3)],
                   "num_blocks": [2 ** i for i in range(5, 16)], "loop_unroll_factor_0": [0, 1, 8, 16, 32, 64],
                   "use_shuffle": [0, 1]}
    x = numpy.random.rand(size).astype(numpy.float32)
    sum_x = numpy.zeros(max(tune_params["num_blocks"])).astype(numpy.float32)

    def verify_partial_reduce(cpu_result, gpu_result, atol=None):
        return numpy.isclose(cpu_result[0], numpy.sum(gpu_result[0]), atol=atol)

    first = dict(kernel_name="sum_floats", kernel_source=kernel_string, problem_size="num_blocks",
                 arguments=[sum_x, x, numpy.int32(size)], tune_params=dict(tune_params), grid_div_x=[],
                 verbose=True, answer=[numpy.sum(x), None, None], verify=verify_partial_reduce)
    second_params = dict(tune_params, num_blocks=[1])
    second = dict(kernel_name="sum_floats", kernel_source=kernel_string, problem_size="num_blocks",
                  arguments=[sum_x, x, numpy.int32(32)], tune_params=second_params, grid_div_x=[], verbose=True)
    return first, second
