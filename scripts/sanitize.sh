#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer run of the cpu test tier: builds test_cpu and what it runs
# (the autotune binary, the crash_session helper) into ./build-asan with -DAUTOTUNE_SANITIZE=ON, then
# runs the cpu tier (less two statistical sweeps, see below). Any sanitizer report fails the test that
# triggered it (UBSan does not recover; ASan's leak checker is on).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
export PATH=/usr/local/cuda/bin:$PATH
# Debian's gcc links with --as-needed except when sanitizing; without it the binaries would need the
# driver stub's libcuda.so.1 at load time (the driver is dlopen'ed, CI machines have none).
# -O1 -g1 (line tables: reports still name file and line) instead of RelWithDebInfo's -O2 -g: with both sanitizers
# instrumenting, a test source took half the time to compile (tests/cpu/test_reduction.cpp: 72 s against 134 s on
# the 2-core development machine); AddressSanitizer's documentation asks for -O1 or higher for reasonable speed.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDAToolkit_ROOT=/usr/local/cuda \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DAUTOTUNE_SANITIZE=ON -DCMAKE_EXE_LINKER_FLAGS=-Wl,--as-needed >/dev/null
cmake --build build-asan --target test_cpu autotune crash_session -j"$(nproc)"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# Two cpu tests run in scripts/test.sh only: they replay 8000 limited tunes on the shipped recordings, and ask the
# compiled export and lookup::best every question of three databases' grids, over code that the other cpu tests run
# under the sanitizers on smaller inputs; they took 410 s each instrumented (122 s and 62 s plain) on the 2-core
# development machine.
heavy='^cpu:(the shipped H100 recordings: every family at two sizes|export: the compiled header answers every question)'
ctest --test-dir build-asan -L cpu -E "$heavy" --no-tests=error --output-on-failure -j"$(nproc)"
