"""Kernel Tuner's NVMLObserver over the NVML observations every trial records (docs/energy.md): the observables
a script asks for become keys of each verified result, as Kernel Tuner's observer adds them, before the metrics
are computed. The tuner samples NVML itself (clocks and power on a thread, the energy counter around the timed
runs); it never locks clocks or sets limits, so the observer's clock options are refused."""
from ..errors import UnsupportedError

# Kernel Tuner's observable -> (the trials' field, what it is here).
OBSERVABLES = {
    "nvml_energy": ("energy_j", "board energy per run of the kernel, J"),
    "nvml_power": ("power_w", "mean board power while the kernel ran, W"),
    "core_freq": ("sm_clock_mhz", "median SM clock while measuring, MHz"),
    "mem_freq": ("mem_clock_mhz", "median memory clock while measuring, MHz"),
    "temperature": ("temperature_c", "highest GPU temperature while measuring, degrees C"),
}


class NVMLObserver(object):
    """Kernel Tuner 1.4's NVMLObserver(observables, device=0, save_all=False, nvidia_smi_fallback=None,
    use_locked_clocks=False, continous_duration=1). UnsupportedError naming an observable not recorded here
    (gr_voltage) or an option that would change the GPU's clocks."""

    def __init__(self, observables, device=0, save_all=False, nvidia_smi_fallback=None, use_locked_clocks=False,
                 continous_duration=1):
        unknown = [o for o in observables if o not in OBSERVABLES]
        if unknown:
            raise UnsupportedError("NVMLObserver: observable(s) %s not recorded here; supported: %s"
                                   % (", ".join(map(repr, unknown)), ", ".join(sorted(OBSERVABLES))))
        if use_locked_clocks or nvidia_smi_fallback:
            raise UnsupportedError("NVMLObserver: use_locked_clocks and nvidia_smi_fallback are not supported (the "
                                   "tuner never changes clocks)")
        self.observables = list(observables)
        self.device = device
        self.save_all = save_all

    def values(self, row):
        """The observables' values of a trials row (None where not observed)."""
        out = {}
        for o in self.observables:
            v = row.get(OBSERVABLES[o][0])
            out[o] = None if v is None or v != v else float(v)
        return out
