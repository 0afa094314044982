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
export PYTHONPATH="$dest$site${PYTHONPATH:+:$PYTHONPATH}"
unset GPU_AUTOTUNE_LIB
cd "$here/tests"
python3 -c 'import gpu_autotune, sys; print("gpu_autotune from", gpu_autotune.__file__, file=sys.stderr)'
exec python3 -m pytest -q -p no:cacheprovider "$@"
