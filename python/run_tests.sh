#!/usr/bin/env bash
# The Python package's tests, from the installed package: installs the `python` component of BUILD_DIR under
# BUILD_DIR/python-install (DESTDIR: nothing outside the build directory is written), then runs pytest on
# python/tests with that site directory first on PYTHONPATH and the source tree's package out of the way.
# Usage: python/run_tests.sh BUILD_DIR [pytest arguments, e.g. -m "not gpu" or -m gpu]
set -euo pipefail
build=$(cd "${1:?usage: python/run_tests.sh BUILD_DIR [pytest args]}" && pwd)
shift
here=$(cd "$(dirname "$0")" && pwd)
site=$(sed -n 's/^AUTOTUNE_PYTHON_SITE:PATH=//p' "$build/CMakeCache.txt")
[ -n "$site" ] || { echo "error: $build was configured without the Python package (AUTOTUNE_PYTHON_SITE)" >&2; exit 2; }
dest="$build/python-install"
rm -rf "$dest"
DESTDIR="$dest" cmake --install "$build" --component python >/dev/null
export PYTHONPATH="$dest$site${PYTHONPATH:+:$PYTHONPATH}" GPU_AUTOTUNE_TEST_INSTALLED=1
# Where the build made the C launch path (gpu_autotune._fastlaunch), its tests require it installed and loading.
if grep -q '^AUTOTUNE_PYTHON_FASTLAUNCH:INTERNAL=ON' "$build/CMakeCache.txt"; then
  export GPU_AUTOTUNE_EXPECT_FASTLAUNCH=1
fi
unset GPU_AUTOTUNE_LIB
py=${PYTHON:-python3}
cd "$here/tests"
# The package must come from the installed site, not from this tree.
"$py" -c 'import gpu_autotune, sys; f = gpu_autotune.__file__; print("gpu_autotune from", f, file=sys.stderr);
sys.exit(0 if f.startswith(sys.argv[1]) else "gpu_autotune was not imported from the installed site")' "$dest$site"
exec "$py" -m pytest -q -p no:cacheprovider "$@"
