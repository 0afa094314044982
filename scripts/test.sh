#!/usr/bin/env bash
# Builds and runs the tests that need no GPU (tiers cpu and nvrtc). On a GPU machine, run the gpu tier
# with: ctest --test-dir build -L gpu
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir build -LE gpu --no-tests=error --output-on-failure -j"$(nproc)"
