#!/usr/bin/env bash
# clang-format (Debian's, with the checked-in .clang-format: Google style, 120 columns) over the C++ lines
# changed since a base commit: fails, showing the changes clang-format wants, when any of them is not formatted.
# Lines nobody changed are not checked. kernels_src/ (CUDA sources, data to this build) is left out.
# Usage: scripts/format_check.sh [BASE]   (also FORMAT_BASE=REV)
# The base: BASE, else where HEAD left origin/main (a branch), else HEAD~1 (on main itself: the last commit,
# or for a merge commit everything it merged). The working tree's uncommitted changes count as changed.
# To format the changed lines in place: git diff -U0 BASE -- '*.cpp' '*.hpp' '*.cc' '*.h' | clang-format-diff -p1 -i
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
format=$(command -v clang-format || true)
format_diff=$(command -v clang-format-diff || true)
if [ -z "$format" ] || [ -z "$format_diff" ]; then
  echo "error: clang-format / clang-format-diff not found (scripts/deps.sh installs the package clang-format)" >&2
  exit 1
fi

base=${1:-${FORMAT_BASE:-}}
if [ -z "$base" ] && git rev-parse -q --verify origin/main >/dev/null; then
  base=$(git merge-base HEAD origin/main)
  [ "$base" = "$(git rev-parse HEAD)" ] && base=""
fi
if [ -z "$base" ] && git rev-parse -q --verify HEAD~1 >/dev/null; then
  base=HEAD~1
fi
if [ -z "$base" ]; then
  echo "format check: no base commit (a shallow clone of depth 1?): nothing to compare with, nothing checked"
  exit 0
fi

changes=$(git diff -U0 --no-color "$base" -- '*.cpp' '*.hpp' '*.cc' '*.h' ':!kernels_src')
wanted=$(printf '%s\n' "$changes" | "$format_diff" -p1 -binary "$format")
if [ -n "$wanted" ]; then
  printf '%s\n' "$wanted"
  echo "format check: the lines above, changed since $(git rev-parse --short "$base"), are not formatted as" \
    "clang-format ($("$format" --version | grep -o 'version [0-9.]*')) wants them" >&2
  exit 1
fi
echo "format check: the C++ lines changed since $(git rev-parse --short "$base") are formatted"
