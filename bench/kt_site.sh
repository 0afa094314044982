#!/usr/bin/env bash
# Assembles a pure-Python site for Kernel Tuner 1.4.0 in simulation mode (bench/kt_strategy_scores.py), from source
# trees given on the command line; nothing is downloaded and nothing third-party is committed here.
#
#   bash bench/kt_site.sh KERNEL_TUNER_SRC CONSTRAINT_SRC SITE_DIR
#
# KERNEL_TUNER_SRC: a checkout of Kernel Tuner's tag 1.4.0 (the folder holding kernel_tuner/), e.g.
#   git -C KERNEL_TUNER_GIT archive 1.4.0 | tar x -C /tmp/kt
# CONSTRAINT_SRC: a checkout of python-constraint2 (tag 2.5.0, the newest before Kernel Tuner 1.4.0; the folder
#   holding constraint/). Only its .py files are copied: the .c files are Cython builds of the same modules.
# SITE_DIR: created (or refreshed); put it on PYTHONPATH.
# Besides, Kernel Tuner's strategies import numpy, scipy and jsonschema: Debian's python3-numpy, python3-scipy,
# python3-jsonschema (and python3-xmltodict, python3-packaging) for /usr/bin/python3.
set -euo pipefail
if [[ $# -ne 3 ]]; then
  sed -n '2,13p' "$0" >&2
  exit 2
fi
kt_src=$1 constraint_src=$2 site=$3
[[ -f $kt_src/kernel_tuner/interface.py ]] || { echo "no kernel_tuner/interface.py under $kt_src" >&2; exit 2; }
[[ -f $constraint_src/constraint/problem.py ]] || { echo "no constraint/problem.py under $constraint_src" >&2; exit 2; }
mkdir -p "$site"
rm -rf "$site/kernel_tuner" "$site/constraint"
cp -r "$kt_src/kernel_tuner" "$site/kernel_tuner"
mkdir -p "$site/constraint"
cp "$constraint_src"/constraint/*.py "$site/constraint/"
# kernel_tuner/__init__.py asks importlib.metadata for its version: a minimal dist-info answers it.
rm -rf "$site"/kernel_tuner-*.dist-info
mkdir -p "$site/kernel_tuner-1.4.0.dist-info"
printf 'Metadata-Version: 2.1\nName: kernel_tuner\nVersion: 1.4.0\n' >"$site/kernel_tuner-1.4.0.dist-info/METADATA"
/usr/bin/python3 - "$site" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import kernel_tuner, constraint
print("kernel_tuner", getattr(kernel_tuner, "__version__", "?"), "from", kernel_tuner.__file__)
PY
