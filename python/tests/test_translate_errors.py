"""Arguments that tune_kernel refuses, each with an error naming the argument (no library needed)."""
import json
import os

import numpy
import pytest

from gpu_autotune import UnsupportedError, UsageError
from gpu_autotune.kernel_tuner import STRATEGIES, prepare_tune

KERNEL = "__global__ void k(float *y, const float *x, int n) { int i = blockIdx.x * block_size_x + threadIdx.x; " \
         "if (i < n) y[i] = 2 * x[i]; }"


def call(**kw):
    n = 1000
    base = dict(kernel_name="k", kernel_source=KERNEL, problem_size=n,
                arguments=[numpy.zeros(n, numpy.float32), numpy.ones(n, numpy.float32), numpy.int32(n)],
                tune_params={"block_size_x": [64, 128]})
    base.update(kw)
    return prepare_tune(**base)


@pytest.mark.parametrize("kw, error, words", [
    (dict(lang="OpenCL"), UnsupportedError, "lang"),
    (dict(verify="numpy.allclose"), UsageError, "verify: expected a function"),
    (dict(texmem_args={"t": numpy.zeros(4)}), UnsupportedError, "texmem_args"),
    (dict(strategy="nsga2"), UnsupportedError, "strategy: 'nsga2'"),
    (dict(objectives={"time": False, "energy": False}), UnsupportedError, "objectives"),
    (dict(objective="GFLOP/s"), UnsupportedError, "objective"),
    (dict(simulation_mode=True), UsageError, "simulation_mode: needs cache"),
    (dict(answer=[None, None]), UsageError, "answer"),
    (dict(answer=[numpy.zeros(10, numpy.float32), None, None]), UsageError, r"answer\[0\]: 10 elements"),
    (dict(answer=[numpy.zeros(1000, numpy.int8), None, None]), UsageError, r"answer\[0\]: dtype int8"),
    (dict(arguments=[numpy.zeros(4, numpy.complex64)]), UsageError, r"arguments\[0\] has dtype complex64"),
    (dict(arguments=[numpy.zeros(4, numpy.float32), 1000]), UsageError, r"arguments\[1\]: expected a numpy"),
    (dict(arguments=[numpy.float16(1)]), UnsupportedError, r"arguments\[0\]: a float16 scalar"),
    (dict(tune_params={"block_size_x": [64, 128.5]}), UsageError, None),
    (dict(tune_params={"mode": [1, "fast"]}), UnsupportedError, r"tune_params\['mode'\]: mixes"),
    (dict(tune_params={"p": [None]}), UnsupportedError, r"tune_params\['p'\]"),
    (dict(tune_params={"time": [1]}), UsageError, "forbidden"),
    (dict(problem_size=lambda p: (1000,)), UnsupportedError, "problem_size"),
    (dict(grid_div_x=[lambda p: 2]), UnsupportedError, r"grid_div_x\[0\]"),
    (dict(defines={"N": lambda p: 4}), UnsupportedError, r"defines\['N'\]"),
    (dict(defines={"N": "block_size_x * 2"}), UnsupportedError, r"defines\['N'\]"),
    (dict(smem_args={"size": 1024, "other": 1}), UnsupportedError, "smem_args"),
    (dict(kernel_source=KERNEL.replace("blockIdx.x * block_size_x", "grid_size_x * 0 + blockIdx.x * block_size_x")),
     UnsupportedError, "grid_size_x"),
    (dict(device="A100"), UnsupportedError, "device"),
    (dict(restrictions=[42]), UnsupportedError, r"restrictions\[0\]"),
])
def test_refused(kw, error, words):
    if words is None:  # an int among floats is a float parameter: accepted
        tr, _ = call(**kw)
        assert tr.spec["parameters"][0]["values"] == [64.0, 128.5]
        return
    with pytest.raises(error, match=words):
        call(**kw)


def test_answer_and_atol_become_expected_values():
    y = numpy.full(1000, 2, numpy.float32)
    tr, _ = call(answer=[y, None, None], atol=1e-3)
    assert tr.spec["verification"] == {"absolute": 1e-3, "relative": 1e-5}  # numpy.allclose's rtol
    y_arg, x_arg = tr.spec["arguments"][:2]
    assert y_arg["role"] == "inout" and y_arg["expected"] == {"memory": "answer0"}
    assert x_arg["role"] == "input" and "expected" not in x_arg
    arrays = dict(tr.arrays)
    assert arrays["answer0"] is not y and numpy.array_equal(arrays["answer0"], y)


def test_strategies_and_options():
    _, args = call(strategy="pso", strategy_options={"max_fevals": 50, "time_limit": 9})
    assert args[args.index("--strategy") + 1] == "particle_swarm"
    assert args[args.index("--budget") + 1] == "50" and args[args.index("--time-limit") + 1] == "9.0"
    tr, _ = call(strategy="random_sample", strategy_options={"fraction": 0.25})
    assert tr.spec["tuning"] == {"budget_fraction": 0.25}
    tr, _ = call(strategy="random_sample")
    assert tr.spec["tuning"] == {"budget_fraction": 0.1}  # Kernel Tuner's default fraction
    _, args = call(strategy="genetic_algorithm", strategy_options={"popsize": 10, "mutation_chance": 20})
    assert args[-4:] == ["--strategy-option", "population=10", "--strategy-option", "mutation_rate=0.05"]
    _, args = call(tune_params={"block_size_x": [64, 128], "t": [1, 2]}, strategy="diff_evo",
                   strategy_options={"popsize": 8})
    assert args[-2:] == ["--strategy-option", "population=16"]  # times the parameters, as Kernel Tuner
    with pytest.warns(UserWarning, match="maxiter"):
        call(strategy="genetic_algorithm", strategy_options={"maxiter": 10})
    assert set(STRATEGIES.values()) <= {"brute_force", "random_sample", "simulated_annealing", "genetic_algorithm",
                                         "particle_swarm", "differential_evolution", "greedy_local_search",
                                         "iterated_local_search", "basin_hopping", "bayesian_optimization"}


def test_iterations_map_to_samples_at_least_7():
    assert call(iterations=3)[1][3] == "7"
    assert call(iterations=40)[1][3] == "40"


def test_typed_parameters_user_defines_and_shared_memory():
    tr, _ = call(tune_params={"block_size_x": [64], "mode": ["fast", "exact"], "flag": [True, False]},
                 defines={"N": 4, "NAME": "x"}, smem_args={"size": "block_size_x * 4"}, compiler_options=["-O3"])
    spec = tr.spec
    assert spec["parameters"][1:] == [{"name": "mode", "values": ["fast", "exact"]},
                                      {"name": "flag", "values": [True, False]}]
    assert spec["defines"] == {"N": "4", "NAME": "x"}  # the user's defines only, as Kernel Tuner
    assert spec["launch"][0]["shared_mem"] == "int(block_size_x * 4)"
    assert spec["compile_options"] == ["-O3"]
    json.dumps(spec)


def test_block_size_names_and_problem_names():
    tr, _ = call(tune_params={"bx": [32, 64], "x": [1, 2]}, block_size_names=["bx"], problem_size=(1000, 10))
    spec = tr.spec
    assert tr.problem == "problem_x=1000,y=10"  # a parameter named x moves that problem dim aside
    assert spec["launch"][0]["block"] == ["bx", "1", "1"]
    assert spec["launch"][0]["grid"] == ["-(-(problem_x) // (bx))", "y", "1"]
    assert "bx <= max_threads_per_block" in spec["constraints"]
    assert spec["defines"]["block_size_y"] == "1" and spec["defines"]["grid_size_y"] == "10"


def test_same_source_same_folder(kernel_cache):
    a, _ = call()
    b, _ = call(tune_params={"block_size_x": [32]})
    c, _ = call(kernel_source=KERNEL + "\n")
    assert a.spec_dir == b.spec_dir != c.spec_dir
    assert a.spec_dir.startswith(str(kernel_cache))


def test_list_of_files_copied_beside_the_kernel(tmp_path):
    (tmp_path / "k.cu").write_text('#include "helper.h"\n' + KERNEL)
    (tmp_path / "helper.h").write_text("#define TWO 2\n")
    tr, _ = call(kernel_source=[str(tmp_path / "k.cu"), str(tmp_path / "helper.h")])
    assert tr.spec["source"] == "k.cu"
    with open(os.path.join(tr.spec_dir, "helper.h")) as f:
        assert f.read() == "#define TWO 2\n"
    with pytest.raises(UsageError, match="kernel_source: cannot read"):
        call(kernel_source=str(tmp_path / "missing.cu"))


@pytest.mark.parametrize("kw, error, words", [
    (dict(lang="OpenCL"), UnsupportedError, "lang"),
    (dict(device=1), UnsupportedError, "device: run_kernel runs on GPU 0 only"),
    (dict(texmem_args={"t": numpy.zeros(4)}), UnsupportedError, "texmem_args"),
    (dict(params=[("block_size_x", 64)]), UsageError, "params: expected a dict"),
    (dict(arguments=[numpy.zeros(4, numpy.float32), 1000]), UsageError, r"arguments\[1\]: expected a numpy"),
])
def test_run_kernel_refuses_by_name(kw, error, words):
    from gpu_autotune import run_kernel
    n = 1000
    base = dict(kernel_name="k", kernel_source=KERNEL, problem_size=n,
                arguments=[numpy.zeros(n, numpy.float32), numpy.ones(n, numpy.float32), numpy.int32(n)],
                params={"block_size_x": 64})
    base.update(kw)
    with pytest.raises(error, match=words):
        run_kernel(**base)


def test_kernel_tuner_strategy_modules_and_observers():
    import gpu_autotune
    from gpu_autotune.observers.nvml import NVMLObserver
    _, args = call(strategy=gpu_autotune.strategies.minimize)  # Kernel Tuner's module, by its name
    assert args[args.index("--strategy") + 1] == "greedy_local_search"
    with pytest.raises(UnsupportedError, match="custom Python strategies"):
        call(strategy=object())
    _, args = call(observers=[NVMLObserver(["nvml_energy", "temperature"])])  # served from what every trial records
    assert args[args.index("--energy-ms") + 1] == "100"  # energy needs the counter's window
    _, args = call(observers=[NVMLObserver(["nvml_power"])])
    assert "--energy-ms" not in args
    with pytest.raises(UnsupportedError, match="'gr_voltage' not recorded"):
        NVMLObserver(["nvml_power", "gr_voltage"])
    with pytest.raises(UnsupportedError, match="observers: object is not supported"):
        call(observers=[object()])


def test_an_empty_array_is_a_buffer_of_one_element():
    with pytest.warns(UserWarning, match=r"arguments\[1\] is empty"):
        tr, _ = call(arguments=[numpy.zeros(1000, numpy.float32), numpy.zeros(0, numpy.float32), numpy.int32(1000)])
    assert tr.spec["arguments"][1]["count"] == 1
    assert dict(tr.arrays)["arg1"].tolist() == [0.0]


def test_without_an_answer_large_arrays_are_inputs_not_compared():
    from gpu_autotune._translate import COMPARE_LIMIT_BYTES
    big = numpy.zeros(COMPARE_LIMIT_BYTES // 4 + 1, numpy.float32)  # calloc'd: not touched
    tr, _ = call(arguments=[numpy.zeros(1000, numpy.float32), big, numpy.int32(1000)])
    assert [a.get("role") for a in tr.spec["arguments"]] == ["inout", "input", None]
    tr, _ = call(arguments=[numpy.zeros(1000, numpy.float32), big, numpy.int32(1000)], verify=lambda a, b, atol: True)
    assert tr.spec["arguments"][1]["role"] == "inout"  # a verify function gets every array
