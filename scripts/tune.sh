#!/usr/bin/env bash
# The main job: builds, then tunes the reduction on this machine's GPU and prints the best configurations.
# Without an NVIDIA GPU it says so and replays trials recorded on the GPU machine instead (simulation).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
n=${N:-67108864}
if ./build/autotune devices >/dev/null 2>&1; then
  ./build/autotune devices
  exec ./build/autotune tune reduction --n "$n" --dtype float32 --op sum --strategy brute_force "$@"
fi
./build/autotune devices || true
# The H100 recordings were measured with the current protocol (read-based L2 flush) for every family at two sizes.
echo "No NVIDIA GPU here: replaying the reduction trials recorded on an H100 (tests/data/recorded_h100.db," \
  "n = 268435456) instead."
tmp=$(mktemp -d)
exec ./build/autotune --db "$tmp/simulated.db" tune reduction --n 268435456 --dtype float32 --op sum \
  --strategy brute_force --simulate --from tests/data/recorded_h100.db "$@"
