"""The translation of Kernel Tuner 1.4.0's example scripts' tune_kernel calls into specs (no library needed)."""
import math
import os

import numpy
import pytest

from gpu_autotune import UnsupportedError, UsageError
from gpu_autotune.kernel_tuner import prepare_tune

from kt_examples import VALID_CONFIGS, capture_calls, reduction_calls
from spec_eval import count_valid, launch_at, valid


def spec_params(spec):
    return dict((p["name"], p["values"]) for p in spec["parameters"])


def test_vector_add(kt_dir, monkeypatch):
    (call,) = capture_calls(kt_dir, "vector_add", monkeypatch)
    tr, args = prepare_tune(**call)
    spec = tr.spec
    assert spec["family"] == "user" and spec["expressions"] == "python" and spec["kernels"] == ["vector_add"]
    assert spec_params(spec) == {"block_size_x": [128 + 64 * i for i in range(15)]}
    assert tr.problem == "x=10000000"
    for bx in (128, 320, 1024):
        grid, block = launch_at(spec, {"block_size_x": bx})
        assert grid == (math.ceil(10000000 / bx), 1, 1) and block == (bx, 1, 1)
    # Kernel Tuner's macros: the block sizes not tuned, the grid where it is one for every config, kernel_tuner.
    assert spec["defines"] == {"block_size_y": "1", "block_size_z": "1", "grid_size_y": "1", "grid_size_z": "1",
                               "kernel_tuner": "1"}
    assert spec["constraints"] == ["block_size_x <= max_threads_per_block"]
    assert [a["kind"] for a in spec["arguments"]] == ["buffer", "buffer", "buffer", "scalar"]
    assert [a["role"] for a in spec["arguments"][:3]] == ["inout"] * 3  # no answer: compared with the default
    assert spec["arguments"][3] == {"name": "arg3", "kind": "scalar", "dtype": "int32", "value": "10000000"}
    # No answer: compared with the default configuration, never failed on it (Kernel Tuner checks nothing).
    assert spec["verification"] == {"absolute": 1e-6, "relative": 1e-5, "max_mismatch_fraction": 1.0}
    assert args[:4] == ["--problem", "x=10000000", "--samples", "7"]
    # One warm-up after the verification run; no final pick (Kernel Tuner's best is the lowest time of the results).
    assert args[args.index("--warmup") + 1] == "1" and args[args.index("--final-k") + 1] == "0"
    assert args[-2:] == ["--strategy", "brute_force"]
    assert count_valid(spec) == VALID_CONFIGS["vector_add"]


def test_matmul(kt_dir, monkeypatch):
    (call,) = capture_calls(kt_dir, "matmul", monkeypatch)
    tr, args = prepare_tune(**call)
    spec = tr.spec
    assert spec_params(spec) == {"block_size_x": [16, 32, 64], "block_size_y": [1, 2, 4, 8, 16, 32],
                                 "tile_size_x": [1, 2, 4, 8], "tile_size_y": [1, 2, 4, 8]}
    assert tr.problem == "x=4096,y=4096"
    cfg = {"block_size_x": 32, "block_size_y": 8, "tile_size_x": 2, "tile_size_y": 4}
    assert launch_at(spec, cfg) == ((4096 // 64, 4096 // 32, 1), (32, 8, 1))
    assert spec["defines"] == {"block_size_z": "1", "grid_size_z": "1", "kernel_tuner": "1"}
    assert valid(spec, cfg)
    assert not valid(spec, dict(cfg, tile_size_y=2))                      # the restriction
    assert not valid(spec, {"block_size_x": 64, "block_size_y": 32, "tile_size_x": 1, "tile_size_y": 2})  # 2048
    assert "--samples" in args and args[args.index("--samples") + 1] == "32"  # iterations=32
    assert count_valid(spec) == VALID_CONFIGS["matmul"]
    assert spec["source"] == "matmul.cu" and os.path.isfile(os.path.join(tr.spec_dir, "matmul.cu"))


def test_convolution(kt_dir, monkeypatch):
    (call,) = capture_calls(kt_dir, "convolution", monkeypatch)
    tr, _ = prepare_tune(**call)
    spec = tr.spec
    params = spec_params(spec)
    assert list(params) == ["filter_height", "filter_width", "block_size_x", "block_size_y", "tile_size_x",
                            "tile_size_y", "use_padding", "read_only"]
    cfg = {"filter_height": 15, "filter_width": 7, "block_size_x": 48, "block_size_y": 4, "tile_size_x": 3,
           "tile_size_y": 5, "use_padding": 1, "read_only": 0}
    assert launch_at(spec, cfg) == ((math.ceil(4096 / 144), math.ceil(4096 / 20), 1), (48, 4, 1))
    assert valid(spec, cfg) and not valid(spec, dict(cfg, block_size_x=64))
    const = [a for a in spec["arguments"] if a["kind"] == "constant"]
    assert const == [{"name": "d_filter", "kind": "constant", "symbol": "d_filter", "dtype": "float32",
                      "count": 33 * 33, "init": {"memory": "cmem_d_filter"}}]
    assert dict(tr.arrays)["cmem_d_filter"].size == 33 * 33
    assert count_valid(spec) == VALID_CONFIGS["convolution"]


def test_reduction(kt_dir):
    first, second = reduction_calls(kt_dir)
    # The first call's verify function decides on the host: sum_x (its answer is a scalar) is an output without
    # expected values, the spec's verification the callback.
    first_spec = prepare_tune(**first)[0].spec
    assert first_spec["verification"] == {"callback": True}
    assert first_spec["arguments"][0]["role"] == "inout" and "expected" not in first_spec["arguments"][0]
    assert [a["role"] for a in first_spec["arguments"] if a["kind"] == "buffer"] == ["inout", "input"]
    tr, _ = prepare_tune(**second)
    spec = tr.spec
    # problem_size "num_blocks" with grid_div_x=[]: the grid is num_blocks blocks; block_size_x the block.
    assert spec["launch"][0]["grid"][0] == "int(num_blocks)"
    cfg = {"block_size_x": 256, "vector": 2, "num_blocks": 1, "loop_unroll_factor_0": 8, "use_shuffle": 1}
    assert launch_at(spec, cfg) == ((1, 1, 1), (256, 1, 1))
    assert "grid_size_x" not in spec["defines"]
    assert count_valid(spec) == VALID_CONFIGS["reduction"]
    first_plain = dict(first, verify=None, answer=None)
    assert count_valid(prepare_tune(**first_plain)[0].spec) == VALID_CONFIGS["reduction_first"]


def test_reduction_unroll_pragma_rewritten(kt_dir, kernel_cache):
    _, second = reduction_calls(kt_dir)
    tr, _ = prepare_tune(**second)
    with open(os.path.join(tr.spec_dir, tr.spec["source"])) as f:
        text = f.read()
    assert "#pragma unroll loop_unroll_factor_0" not in text
    assert "GAT_UNROLL_loop_unroll_factor_0" in text and "#if loop_unroll_factor_0 == 0" in text
