#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, -fsanitize=fuzzer,address,undefined) into
# ./build-fuzz and runs each for a bounded time on a copy of its seed corpus.
# Usage: scripts/fuzz.sh [seconds per target]   (default 60; also FUZZ_SECONDS)
# Installs clang and its runtime libraries (libclang-rt-14-dev: libFuzzer, sanitizers) when missing.
# Exit status: 0 when no target found a problem; otherwise the failing target's status, with its
# reproducer (crash-*, leak-*, timeout-*) left in build-fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-${FUZZ_SECONDS:-60}}"
bash scripts/deps.sh clang libclang-rt-14-dev

export PATH=/usr/local/cuda/bin:$PATH
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCUDAToolkit_ROOT=/usr/local/cuda -DAUTOTUNE_FUZZ=ON >/dev/null
cmake --build build-fuzz --target fuzz_spec fuzz_expr fuzz_pyexpr -j"$(nproc)"

mkdir -p build-fuzz/artifacts
status=0
for target in fuzz_spec fuzz_expr fuzz_pyexpr; do
  corpus="build-fuzz/corpus_${target#fuzz_}"
  rm -rf "$corpus"
  cp -r "tests/fuzz/corpus_${target#fuzz_}" "$corpus"
  echo "== $target: ${seconds} s"
  # -timeout: one input taking longer than 10 s is reported as a hang; -rss_limit_mb: memory blow-up.
  if ! "build-fuzz/tests/fuzz/$target" "$corpus" -dict="tests/fuzz/${target#fuzz_}.dict" \
       -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
       -artifact_prefix=build-fuzz/artifacts/ 2>"build-fuzz/$target.log"; then
    status=1
    tail -n 60 "build-fuzz/$target.log"
    echo "FAILED: $target (reproducer in build-fuzz/artifacts/, log in build-fuzz/$target.log)" >&2
  else
    grep -E "stat::number_of_executed_units|stat::new_units_added|cov: " "build-fuzz/$target.log" | tail -n 3
  fi
done
exit "$status"
