#!/usr/bin/env bash
# Installs the build dependencies from Debian's packages (CUDA 13 is expected at /usr/local/cuda).
# Usage: scripts/deps.sh [more packages]   (e.g. scripts/fuzz.sh adds clang and its runtime libraries)
set -euo pipefail
# libopenmpi-dev + openmpi-bin: the MPI scale-out of `tune` (-DAUTOTUNE_MPI=ON, tests/cpu/test_mpi.cpp).
# clang-tidy: scripts/tidy.sh (the .clang-tidy profile over the product sources); clang-format (with
# clang-format-diff): scripts/format_check.sh (the changed lines against .clang-format).
# chromium: the report's headless render check (tests/cpu/test_html_report.cpp); libstb-dev: decoding its PNG;
# libxml2-dev: the XML well-formedness check of the report's SVG/XHTML (tests/xml_check.hpp).
# python3: scripts/check_boundaries.py (the module boundaries of docs/ARCHITECTURE.md, in CI); python3-numpy and
# python3-pytest: the Python package (python/) and its tests; python3-dev: the headers of its launch extension
# (python/ext, on the stable ABI).
# zlib1g-dev: gzip-compressed cache and T4 files on import (tuner/interop).
pkgs=(cmake ninja-build g++ python3 libsqlite3-dev nlohmann-json3-dev catch2 libcli11-dev chromium libstb-dev libxml2-dev
      zlib1g-dev clang-tidy clang-format libopenmpi-dev openmpi-bin python3-dev python3-numpy python3-pytest "$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ ! -x /usr/local/cuda/bin/nvcc ] && [ ! -f /usr/local/cuda/include/nvrtc.h ]; then
  echo "error: the CUDA 13 toolkit is expected at /usr/local/cuda (NVRTC headers and library)" >&2
  exit 1
fi
