"""Kernel Tuner's observers that this tuner serves from what it records with every trial (docs/python.md):
observers.nvml.NVMLObserver. Other observers (NCU, PMT, Tegra, custom ones) are refused by tune_kernel."""
