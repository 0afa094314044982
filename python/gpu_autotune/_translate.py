"""Kernel Tuner's tune_kernel arguments as a native spec (docs/spec-format.md, family "user", Python expressions).

The C++ tuner enumerates, constrains, launches and verifies; this module only writes what Kernel Tuner 1.4 would
do for a CUDA kernel as spec fields: parameters, constraints (the strings as Python expressions, and the implicit
`block_size_x * block_size_y * block_size_z <= max_threads`), the launch (grid from problem_size and the grid
divisors, block from the block size names), the macros, and the arguments with their in-memory data.
"""
import json
import numbers
import re
import warnings

import numpy

from . import _source
from ._lib import dtype_name
from .errors import UnsupportedError, UsageError

DEFAULT_BLOCK_SIZE_NAMES = ("block_size_x", "block_size_y", "block_size_z")
_BLOCK_DEFAULTS = (256, 1, 1)
_FORBIDDEN_PARAMS = ("grid_size_x", "grid_size_y", "grid_size_z", "time")
# Without an answer, arrays up to this size are compared with the reference configuration's outputs (docs/python.md).
COMPARE_LIMIT_BYTES = 256 << 20
_SCALAR_DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64")


class Translation(object):
    """A translated call: `spec` (dict), `arrays` [(memory name, ndarray)...], `problem` ("x=4096,y=4096"),
    `spec_dir` (the folder the spec is written to), `callables` (restrictions that are Python functions, applied
    by the caller to the space) and `tune_params` (the parameters as Kernel Tuner has them)."""

    def __init__(self, spec, arrays, problem, spec_dir, callables, tune_params):
        self.spec, self.arrays, self.problem = spec, arrays, problem
        self.spec_dir, self.callables, self.tune_params = spec_dir, callables, tune_params


def _param_values(name, values):
    """The JSON values of parameter `name`: integers, or one typed kind (floats, strings, booleans)."""
    try:
        vals = list(values)
    except TypeError:
        raise UsageError("tune_params[%r]: expected a list of values, got %r" % (name, values))
    if not vals:
        raise UsageError("tune_params[%r]: an empty list of values" % name)
    out = []
    for v in vals:
        if isinstance(v, (bool, numpy.bool_)):
            out.append(bool(v))
        elif isinstance(v, numbers.Integral):
            out.append(int(v))
        elif isinstance(v, numbers.Real) and numpy.isfinite(v):
            out.append(float(v))
        elif isinstance(v, str) and v:
            out.append(v)
        else:
            raise UnsupportedError("tune_params[%r]: value %r cannot be a parameter value here (integers, finite "
                                   "floats, non-empty strings and booleans can)" % (name, v))
    kinds = set("b" if isinstance(v, bool) else "i" if isinstance(v, int) else "f" if isinstance(v, float) else "s"
                for v in out)
    if kinds == {"i", "f"}:
        out = [float(v) for v in out]  # integers among floats are floats, as Python compares them
    elif len(kinds) > 1:
        raise UnsupportedError("tune_params[%r]: mixes kinds of values (%s); one kind per parameter"
                               % (name, ", ".join(repr(v) for v in out)))
    if len(set(out)) != len(out):
        raise UsageError("tune_params[%r]: a value is listed twice" % name)
    return out


def json_value(v):
    """A parameter value as the spec's JSON has it (numpy scalars as Python's)."""
    if isinstance(v, (bool, numpy.bool_)):
        return bool(v)
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        return float(v)
    return v


def _expr_int(x, what):
    """A Python expression for an int or a string expression (as Kernel Tuner's int(eval(...)))."""
    if isinstance(x, (bool, numpy.bool_)):
        raise UsageError("%s: expected an integer or an expression string, got %r" % (what, x))
    if isinstance(x, numbers.Integral):
        return str(int(x))
    if isinstance(x, str):
        return "int(%s)" % x
    if callable(x):
        raise UnsupportedError("%s: a function is not supported; give an expression string of the parameters" % what)
    raise UsageError("%s: expected an integer or an expression string, got %r" % (what, x))


def _divisor(div, default_name, tune_params, what):
    if div is None:
        return default_name if default_name in tune_params else "1"
    if isinstance(div, (str, numbers.Integral)) or callable(div):
        return _expr_int(div, what)
    try:
        parts = list(div)
    except TypeError:
        raise UsageError("%s: expected an integer, a string, or a list of them, got %r" % (what, div))
    return " * ".join("(%s)" % _expr_int(d, "%s[%d]" % (what, i)) for i, d in enumerate(parts)) or "1"


def _problem(problem_size, tune_params):
    """(dims, sizes, per-dimension expression): Kernel Tuner's problem_size as problem dims and expressions."""
    if callable(problem_size):
        raise UnsupportedError("problem_size: a function is not supported; give integers or expression strings")
    ps = problem_size if isinstance(problem_size, (list, tuple)) else (problem_size,)
    if not 1 <= len(ps) <= 3:
        raise UsageError("problem_size: expected 1 to 3 dimensions, got %r" % (problem_size,))
    names = [("problem_" + d) if d in tune_params else d for d in ("x", "y", "z")]
    dims, sizes, exprs = [], {}, []
    for i, s in enumerate(ps):
        if isinstance(s, numbers.Integral) and not isinstance(s, (bool, numpy.bool_)):
            if int(s) < 1:
                raise UsageError("problem_size[%d]: %d is not a size (at least 1)" % (i, s))
            dims.append(names[i])
            sizes[names[i]] = int(s)
            exprs.append(names[i])
        elif isinstance(s, str):
            exprs.append("int(%s)" % s)
        else:
            raise UsageError("problem_size[%d]: expected an integer or an expression string, got %r" % (i, s))
    exprs += ["1"] * (3 - len(exprs))
    if not dims:  # every dimension an expression of the parameters: the spec still needs one problem dim
        dims, sizes = [names[0]], {names[0]: 1}
    return dims, sizes, exprs


def _block_names(block_size_names, tune_params):
    if block_size_names is None:
        # Kernel Tuner takes other spellings of the default names too (BLOCK_SIZE_X), sorted case-insensitively.
        other = sorted((k for k in tune_params if k.lower() in DEFAULT_BLOCK_SIZE_NAMES
                        and k not in DEFAULT_BLOCK_SIZE_NAMES), key=str.casefold)
        names = other or list(DEFAULT_BLOCK_SIZE_NAMES)
    else:
        if not isinstance(block_size_names, list) or len(block_size_names) > 3 or \
                not all(isinstance(n, str) for n in block_size_names):
            raise UsageError("block_size_names: expected a list of at most 3 strings, got %r" % (block_size_names,))
        names = list(block_size_names)
    return names + list(DEFAULT_BLOCK_SIZE_NAMES[len(names):])


def _uses_params(expr, tune_params):
    return any(_source.uses_name(expr, p) for p in tune_params)


def _defines(defines, tune_params, block_names, grid_exprs, problem_sizes, kernel_text):
    """The spec's constant macros: Kernel Tuner's own set (defines=None) or the user's dict."""
    out = {}
    if defines is None:
        for i, g in enumerate(grid_exprs):
            name = "grid_size_" + "xyz"[i]
            if not _uses_params(g, tune_params):
                out[name] = str(eval(g, {"__builtins__": {"int": int}}, dict(problem_sizes)))
            elif _source.uses_name(kernel_text, name):
                raise UnsupportedError("the kernel uses %s, which Kernel Tuner defines per configuration (%s); "
                                       "this tuner defines it only where it is the same for every configuration: "
                                       "use gridDim.%s instead" % (name, g, "xyz"[i]))
        for name, default in zip(block_names, _BLOCK_DEFAULTS):
            if name not in tune_params:
                out[name] = str(default)
        out["kernel_tuner"] = "1"
        return out
    if not isinstance(defines, dict):
        raise UsageError("defines: expected a dict of name -> value, got %s" % type(defines).__name__)
    for k, v in defines.items():
        if not isinstance(k, str) or not k.isidentifier():
            raise UsageError("defines: name is not a valid identifier: %r" % (k,))
        if callable(v):
            raise UnsupportedError("defines[%r]: a function of the parameters is not supported; the parameters "
                                   "are macros already" % k)
        if isinstance(v, str) and _uses_params(v, tune_params):
            raise UnsupportedError("defines[%r]: %r depends on the parameters, which is not supported; the "
                                   "parameters are macros already" % (k, v))
        out[k] = str(v).replace("\n", "\\\n")
    return out


def _check_numpy_scalar(i, arg):
    name = dtype_name(arg.dtype, "arguments[%d]" % i)
    if name not in _SCALAR_DTYPES:
        raise UnsupportedError("arguments[%d]: a %s scalar is not supported (integer types, float32, float64)"
                               % (i, name))
    return name


def host_array(a, what):
    """`a` as a numpy array: itself, or a host copy of a device array (CuPy, PyTorch, anything with
    __cuda_array_interface__: Kernel Tuner's cupy backend takes CuPy arrays as arguments and answers). Anything
    else is returned as it is (the caller refuses it)."""
    if isinstance(a, numpy.ndarray) or not hasattr(a, "__cuda_array_interface__"):
        return a
    if hasattr(a, "get") and type(a).__module__.startswith("cupy"):
        return a.get()
    if hasattr(a, "detach") and hasattr(a, "cpu"):
        return a.detach().cpu().numpy()
    from . import cuda_memory
    cai = a.__cuda_array_interface__
    if cai.get("strides") is not None:
        raise UsageError("%s: a strided device array; pass a contiguous one" % what)
    return cuda_memory.copy_to_host(cai["data"][0], cai["shape"], cai["typestr"])


def _arguments(arguments, answer, verify=None):
    """(spec arguments, [(memory name, array)...]); buffers and scalars in order, answers as expected values (with
    a `verify` function the answers are its own business: the arrays it checks become outputs without expected
    values, and the spec's verification is the callback)."""
    if not isinstance(arguments, (list, tuple)):
        raise UsageError("arguments: expected a list of numpy arrays and numpy scalars")
    if answer is not None and (not isinstance(answer, (list, tuple)) or len(answer) != len(arguments)):
        raise UsageError("answer: expected a list as long as arguments (%d), with None for arguments not checked, "
                         "got %s" % (len(arguments), "%d elements" % len(answer) if isinstance(answer, (list, tuple))
                                     else type(answer).__name__))
    specs, arrays = [], []
    for i, arg in enumerate(arguments):
        name = "arg%d" % i
        arg = host_array(arg, "arguments[%d]" % i)
        expected = None if answer is None else host_array(answer[i], "answer[%d]" % i)
        if isinstance(arg, numpy.ndarray) and arg.size == 0:
            # Kernel Tuner allocates an empty array as it is; a buffer here holds at least one element.
            warnings.warn("arguments[%d] is empty: passed as a buffer of one zero element" % i)
            arg = numpy.zeros(1, arg.dtype)
        if isinstance(arg, numpy.ndarray):
            dname = dtype_name(arg.dtype, "arguments[%d]" % i)
            if answer is None:
                # Nothing to check against (Kernel Tuner checks nothing then): each array is compared with the
                # reference configuration's, as an output, where that is cheap; a larger one is an input, not
                # compared, since comparing moves it through host memory several times per call.
                role = "inout" if verify is not None or arg.nbytes <= COMPARE_LIMIT_BYTES else "input"
            else:
                role = "inout" if expected is not None else "input"
            a = {"name": name, "kind": "buffer", "dtype": dname, "count": int(arg.size), "role": role,
                 "init": {"memory": name}}
            arrays.append((name, numpy.ascontiguousarray(arg).reshape(-1)))
            if expected is not None and verify is None:
                if not isinstance(expected, numpy.ndarray):
                    raise UsageError("answer[%d]: expected a numpy array like arguments[%d], got %s"
                                     % (i, i, type(expected).__name__))
                if expected.size != arg.size:
                    raise UsageError("answer[%d]: %d elements, but arguments[%d] has %d" % (i, expected.size, i, arg.size))
                if not numpy.can_cast(arg.dtype, expected.dtype):
                    raise UsageError("answer[%d]: dtype %s is not compatible with arguments[%d]'s %s"
                                     % (i, expected.dtype, i, arg.dtype))
                a["expected"] = {"memory": "answer%d" % i}
                arrays.append(("answer%d" % i, numpy.ascontiguousarray(expected.astype(arg.dtype)).reshape(-1)))
        elif isinstance(arg, numpy.generic):
            dname = _check_numpy_scalar(i, arg)
            if expected is not None and verify is None:
                raise UnsupportedError("answer[%d]: a scalar argument cannot be checked" % i)
            value = float(arg) if dname.startswith("float") else str(int(arg))
            a = {"name": name, "kind": "scalar", "dtype": dname, "value": value}
        else:
            raise UsageError("arguments[%d]: expected a numpy array or a numpy scalar (numpy.int32(n)), got %s"
                             % (i, type(arg).__name__))
        specs.append(a)
    return specs, arrays


def _cmem(cmem_args):
    specs, arrays = [], []
    if cmem_args is None:
        return specs, arrays
    if not isinstance(cmem_args, dict):
        raise UsageError("cmem_args: expected a dict of symbol -> numpy array")
    for sym, arr in cmem_args.items():
        if isinstance(arr, numpy.generic):
            arr = numpy.array([arr])
        if not isinstance(arr, numpy.ndarray):
            raise UsageError("cmem_args[%r]: expected a numpy array, got %s" % (sym, type(arr).__name__))
        mem = "cmem_" + sym
        specs.append({"name": sym, "kind": "constant", "symbol": sym,
                      "dtype": dtype_name(arr.dtype, "cmem_args[%r]" % sym), "count": int(arr.size),
                      "init": {"memory": mem}})
        arrays.append((mem, numpy.ascontiguousarray(arr).reshape(-1)))
    return specs, arrays


def _restrictions(restrictions, tune_params):
    """(constraint strings, callables): Kernel Tuner's restrictions split into what the spec takes and the rest."""
    if restrictions is None:
        return [], []
    items = restrictions if isinstance(restrictions, list) else [restrictions]
    strings, funcs = [], []
    for i, r in enumerate(items):
        if isinstance(r, str):
            strings.append(r)
        elif callable(r) or (isinstance(r, tuple) and len(r) in (2, 3) and callable(r[0])):
            funcs.append(r)
        else:
            raise UnsupportedError("restrictions[%d]: %r is not supported (strings and functions are)" % (i, r))
    return strings, funcs


def translate(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x=None, grid_div_y=None,
              grid_div_z=None, restrictions=None, answer=None, atol=1e-6, smem_args=None, cmem_args=None,
              compiler_options=None, defines=None, block_size_names=None, verify=None):
    """A Translation of these tune_kernel arguments (their meaning as in Kernel Tuner 1.4's tune_kernel).

    Writes the kernel source to its cache folder (module _source). Raises UsageError for an argument Kernel Tuner
    also refuses, UnsupportedError for one this package does not support; both name the argument.
    """
    if not isinstance(kernel_name, str) or not kernel_name:
        raise UsageError("kernel_name: expected the kernel's name, got %r" % (kernel_name,))
    if not isinstance(tune_params, dict) or not tune_params:
        raise UsageError("tune_params: expected a non-empty dict of name -> list of values")
    params = []
    for name, values in tune_params.items():
        if name in _FORBIDDEN_PARAMS:
            raise UsageError("tune_params: %r is a forbidden name" % name)
        if not isinstance(name, str) or not re.match(r"^[A-Za-z_]\w*$", name):
            raise UsageError("tune_params: %r is not a valid macro name" % (name,))
        params.append({"name": name, "values": _param_values(name, values)})

    files = _source.load_sources(kernel_source)
    block_names = _block_names(block_size_names, tune_params)
    dims, sizes, prob = _problem(problem_size, tune_params)
    divs = [_divisor(d, block_names[i], tune_params, "grid_div_" + "xyz"[i])
            for i, d in enumerate((grid_div_x, grid_div_y, grid_div_z))]
    grid = ["-(-(%s) // (%s))" % (p, d) if d != "1" else p for p, d in zip(prob, divs)]
    block = [n if n in tune_params else str(b) for n, b in zip(block_names, _BLOCK_DEFAULTS)]
    launch = {"kernel": kernel_name, "grid": grid, "block": block}
    if smem_args is not None:
        if not isinstance(smem_args, dict) or set(smem_args) - {"size"}:
            raise UnsupportedError("smem_args: only {'size': bytes or expression} is supported, got %r" % (smem_args,))
        if "size" in smem_args:
            launch["shared_mem"] = _expr_int(smem_args["size"], "smem_args['size']")

    strings, funcs = _restrictions(restrictions, tune_params)
    # Kernel Tuner's search space limits the product of the default block size names that are parameters.
    tuned_blocks = [n for n in DEFAULT_BLOCK_SIZE_NAMES if n in tune_params]
    if tuned_blocks:
        strings.append(" * ".join(tuned_blocks) + " <= max_threads_per_block")
    # Its runner skips a configuration whose block (by block_size_names) has too many threads as well.
    used = [n for n in block_names if n in tune_params]
    if used and set(used) != set(tuned_blocks):
        strings.append(" * ".join(used) + " <= max_threads_per_block")

    args, arrays = _arguments(arguments, answer, verify)
    cargs, carrays = _cmem(cmem_args)
    first_dtype = next((a["dtype"] for a in args if a["kind"] == "buffer"), "float32")
    kernel_text = files[0][1]
    folder, source_name = _source.write_sources(kernel_name, files)
    spec = {
        "name": re.sub(r"\W", "_", kernel_name),
        "description": "Kernel Tuner tune_kernel call of %s (gpu_autotune.tune_kernel)" % kernel_name,
        "family": "user",
        "expressions": "python",
        "source": source_name,
        "kernels": [kernel_name],
        "parameters": params,
        "launch": [launch],
        "problem": {"dims": dims, "sizes": [sizes]},
        "workloads": [first_dtype],
        "arguments": args + cargs,
        "defines": _defines(defines, tune_params, block_names, grid, sizes, kernel_text),
    }
    if strings:
        spec["constraints"] = strings
    if compiler_options:
        if not isinstance(compiler_options, (list, tuple)) or not all(isinstance(o, str) for o in compiler_options):
            raise UsageError("compiler_options: expected a list of strings, got %r" % (compiler_options,))
        spec["compile_options"] = list(compiler_options)
    if verify is not None:
        if not callable(verify):
            raise UsageError("verify: expected a function verify(answer, result_host, atol=None), got %s"
                             % type(verify).__name__)
        spec["verification"] = {"callback": True}  # the function decides, on the host (kernel_tuner.py)
    elif answer is None:
        # Kernel Tuner checks nothing without an answer, so no configuration fails on its outputs here either; each is
        # still compared with the reference (the default) configuration, and one that differs by more than
        # Kernel Tuner's own test would allow says so in its trial's log ("accepted: ...", results'
        # "reference_mismatch"): outputs may depend on the parameters (convolution.py tunes the filter's size).
        spec["verification"] = {"absolute": float(atol), "relative": 1e-5, "max_mismatch_fraction": 1.0}
    else:
        # Kernel Tuner checks with numpy.allclose(expected, got, atol=atol): |got - expected| <= atol + 1e-5 |expected|.
        spec["verification"] = {"absolute": float(atol), "relative": 1e-5}
    problem = ",".join("%s=%d" % (d, sizes[d]) for d in dims)
    return Translation(spec, arrays + carrays, problem, folder, funcs, tune_params)


def spec_json(spec):
    """The spec as the JSON text written to disk (sorted keys: the same spec, the same text)."""
    return json.dumps(spec, indent=1, sort_keys=True)
