"""Helpers that Kernel Tuner's example scripts import from kernel_tuner.util (same names and meaning)."""


class ErrorConfig(str):
    """The value of "time" and "__error__" of a configuration that has no time; prints as its class name."""

    def __new__(cls):
        return str.__new__(cls, cls.__name__)

    def __str__(self):
        return self.__class__.__name__

    __repr__ = __str__


class InvalidConfig(ErrorConfig):
    """Not launched: too many threads or too much shared memory for the compiled kernel."""


class CompilationFailedConfig(ErrorConfig):
    """The compile failed."""


class RuntimeFailedConfig(ErrorConfig):
    """The launch failed, the kernel faulted or timed out."""


class VerificationFailedConfig(ErrorConfig):
    """The outputs did not match (Kernel Tuner stops the whole tune with a RuntimeError instead)."""


def get_config_string(params, keys=None, units=None):
    """A compact one-line string of `params` ("block_size_x=128, time=0.123"), floats to 3 decimals; only `keys`
    when given, with `units` ({key: "ms"}) appended where given."""
    def compact(v):
        return "{:.3f}".format(round(v, 3)) if isinstance(v, float) else str(v)

    keys = keys or params.keys()
    items = []
    for k, v in params.items():
        if k in keys:
            unit = units.get(k, "") if isinstance(units, dict) and not isinstance(v, ErrorConfig) else ""
            items.append(k + "=" + compact(v) + unit)
    return ", ".join(items)


def process_metrics(params, metrics):
    """`params` with each of `metrics` ({name: function of params, or an expression string of params and earlier
    metrics}) computed into it, in order (a later metric may use an earlier one). ValueError for other values."""
    if metrics is None:
        return params
    if not isinstance(metrics, dict):
        raise ValueError("metrics should be a dictionary to preserve order and support composability")
    for k, v in metrics.items():
        if isinstance(v, str):
            params[k] = eval(v, {"__builtins__": __builtins__}, dict(params))
        elif callable(v):
            params[k] = v(params)
        else:
            raise ValueError("metric dicts values should be strings or callable")
    return params
