"""Kernel Tuner's strategy modules by name, for scripts that pass one (`strategy=kernel_tuner.strategies.minimize`):
each is the strategy's name, which tune_kernel maps to this tuner's strategy as it maps the name given as a string
(kernel_tuner.STRATEGIES, docs/python.md). A strategy module of the user's own is refused by tune_kernel."""
from .kernel_tuner import STRATEGIES

globals().update({name: name for name in STRATEGIES})
__all__ = sorted(STRATEGIES)
