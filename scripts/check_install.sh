#!/usr/bin/env bash
# Packaging check (CI): configure, build and install gpu-autotune into a temporary prefix, then configure and
# build the external-style projects examples/lookup_only, examples/app, examples/user_kernel and examples/online
# against it with find_package(autotune), and run the lookup-only program on tests/data/recorded_h200.db (no GPU needed).
#
#   scripts/check_install.sh [--gpu] [--keep] [--build-dir DIR]
#     --gpu        also tune a small database with the installed CLI and run examples/app against it, and run
#                  the capture round trip of examples/user_kernel (scripts/capture_roundtrip.sh) (needs a GPU; the
#                  GPU machine's run of this is the "example against a tuned database" test)
#     --keep       keep the temporary directory (printed) instead of removing it
#     --build-dir  build and install this existing build tree instead of configuring a fresh one
# Environment: JOBS (default 2) parallel build jobs.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
gpu=0
keep=0
build_dir=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --gpu) gpu=1 ;;
    --keep) keep=1 ;;
    --build-dir) build_dir="$2"; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

work=$(mktemp -d "${TMPDIR:-/tmp}/autotune_install.XXXXXX")
if [[ $keep == 1 ]]; then echo "keeping $work"; else trap 'rm -rf "$work"' EXIT; fi
jobs=${JOBS:-2}
gen=()
if command -v ninja >/dev/null; then gen=(-G Ninja); fi
step() { echo; echo "== $*"; }

if [[ -z "$build_dir" ]]; then
  build_dir="$work/build"
  step "configure $build_dir"
  cmake -S "$root" -B "$build_dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
        -DAUTOTUNE_BUILD_TESTS=OFF -DAUTOTUNE_BUILD_BENCH=OFF
fi
step "build"
cmake --build "$build_dir" -j "$jobs"
prefix="$work/prefix"
step "install into $prefix"
cmake --install "$build_dir" --prefix "$prefix"

step "installed files"
test -x "$prefix/bin/autotune"
for f in include/tuner/lookup/lookup.hpp include/tuner/runtime/launch.hpp include/tuner/core/spec.hpp \
         include/db/database.hpp lib/cmake/autotune/autotuneConfig.cmake lib/cmake/autotune/autotuneTargets.cmake; do
  test -f "$prefix/$f" || { echo "missing $prefix/$f" >&2; exit 1; }
done
# The installed headers of the lookup library name no CUDA, NVRTC, SQLite or search header.
if grep -RlE '#\s*include\s*[<"](cuda\.h|nvrtc\.h|cudaTypedefs\.h|sqlite3\.h|search/)' "$prefix/include"; then
  echo "an installed header includes a CUDA/NVRTC/SQLite/search header" >&2
  exit 1
fi
echo "ok: CLI, headers, package config"

for ex in lookup_only app user_kernel online; do
  step "external project examples/$ex"
  cmake -S "$root/examples/$ex" -B "$work/$ex" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix"
  cmake --build "$work/$ex" -j "$jobs"
done

step "run lookup_only (no GPU)"
out=$("$work/lookup_only/lookup_only" "$root/tests/data/recorded_h200.db" reduction 67108864)
echo "$out"
grep -q "match: exact" <<<"$out"
out=$("$work/lookup_only/lookup_only" "$root/tests/data/recorded_h200.db" reduction 100000000 "NVIDIA H100 80GB HBM3" 90)
echo "$out"
grep -q "match: same_cc" <<<"$out"
if ldd "$work/lookup_only/lookup_only" | grep -Eq 'nvrtc|libcuda|cudart'; then
  echo "lookup_only depends on a CUDA library:" >&2
  ldd "$work/lookup_only/lookup_only" >&2
  exit 1
fi
echo "ok: lookup_only links no CUDA library"
# An application that only looks configurations up carries no family adapter (they stay in autotune_kernels).
if nm -C "$work/lookup_only/lookup_only" | grep -Eq 'autotune::kernels::|Adapter'; then
  echo "lookup_only contains family-adapter code:" >&2
  nm -C "$work/lookup_only/lookup_only" | grep -E 'autotune::kernels::|Adapter' | head >&2
  exit 1
fi
echo "ok: lookup_only contains no family-adapter code"
"$prefix/bin/autotune" --db "$root/tests/data/recorded_h200.db" best reduction --json | grep -q '"match": "exact"'
echo "ok: installed CLI answers"

if [[ $gpu == 1 ]]; then
  step "tune a small database with the installed CLI and run examples/app against it (GPU)"
  db="$work/tune.db"
  "$prefix/bin/autotune" --db "$db" tune reduction --n 1048576 --dtype float32 --op sum --strategy random_sample --budget 8
  "$prefix/bin/autotune" --db "$db" tune scan --n 1048576 --dtype float32 --op inclusive_sum --strategy random_sample --budget 8
  "$prefix/bin/autotune" --db "$db" tune "$root/examples/saxpy/saxpy.tune.json" --n 1048576
  "$work/app/sum_scan" "$db" 1048576 "$root/examples/saxpy/saxpy.tune.json"
  "$work/app/sum_scan" "$db" 10000000
  echo "ok: examples/app ran against a tuned database"
  step "capture round trip of examples/user_kernel with the installed CLI (GPU)"
  bash "$root/scripts/capture_roundtrip.sh" "$prefix/bin/autotune" "$work/user_kernel/saxpy_app" 1048576 "$work/capture"
  echo "ok: examples/user_kernel captured, tuned from the capture, launched tuned"
fi
echo
echo "check_install: all checks passed"
