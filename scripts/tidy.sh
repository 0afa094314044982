#!/usr/bin/env bash
# clang-tidy over the product sources (tuner/, db/, search/; not tests/) with the checks of .clang-tidy.
# Fails on any finding (WarningsAsErrors). Uses build/compile_commands.json (configured like scripts/build.sh
# if it is missing). Usage: scripts/tidy.sh [files...]   (default: every product source)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
tidy=$(command -v clang-tidy-14 || command -v clang-tidy || true)
if [ -z "$tidy" ]; then
  echo "error: clang-tidy not found (scripts/deps.sh installs the package clang-tidy)" >&2
  exit 1
fi
if [ ! -f build/compile_commands.json ]; then
  export PATH=/usr/local/cuda/bin:$PATH
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDAToolkit_ROOT=/usr/local/cuda \
    -DAUTOTUNE_MPI=ON >/dev/null
fi
if (($#)); then
  files=("$@")
else
  mapfile -t files < <(git ls-files 'tuner/*.cpp' 'tuner/*.cc' 'db/*.cpp' 'search/*.cpp')
fi
# Sources in the compile database only (e.g. tuner/mpi/ without -DAUTOTUNE_MPI=ON is not built, so not checked).
checked=()
for f in "${files[@]}"; do
  grep -q "\"file\": \"$PWD/$f\"" build/compile_commands.json && checked+=("$f")
done
echo "clang-tidy ($("$tidy" --version | grep -o 'version [0-9.]*')): ${#checked[@]} files"
# xargs exits non-zero if any run reports a finding (all runs go on, so every finding is listed).
printf '%s\n' "${checked[@]}" | xargs -P"$(nproc)" -n 4 "$tidy" -p build --quiet
echo "clang-tidy: no findings"
