#!/usr/bin/env bash
# Space construction (docs/performance.md, "Space construction"): wall time and peak memory of `autotune space`
# for the GEMM-like user specs in tests/data/specs: gemm_like (8 parameters of 10 values, 10^8 Cartesian, six
# constraints, one group) and gemm_like_wide (two more parameters tied only to each other by SA + SB <= 9:
# 10^10 Cartesian, two groups, stored factorised). No GPU needed (the space is built for the assumed device
# when there is none). Each spec is built REPS times; the table gives the median and the largest of the wall
# times and peak resident set sizes (GNU time), and the construction time the command itself reports.
#
# Usage: bash bench/space_construction.sh <dir with the autotune binary>
#   REPS  runs per spec (default 5)
# Prints a Markdown table. Exit status: 0; 1 when a run failed; 2 for bad usage.
set -uo pipefail
if [ $# -ne 1 ]; then
  echo "usage: bash bench/space_construction.sh <dir with the autotune binary>" >&2
  exit 2
fi
AT=$1/autotune
REPS=${REPS:-5}
SPECS="$(cd "$(dirname "$0")/.." && pwd)/tests/data/specs"
[ -x "$AT" ] || { echo "error: no autotune binary at $AT" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "error: GNU time (/usr/bin/time) is needed" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
echo "| spec | cartesian | valid | groups (sizes) | built in (reported, median) | wall median / max | peak RSS median / max |"
echo "|---|---|---|---|---|---|---|"
for spec in gemm_like gemm_like_wide; do
  walls=() rss=() built=()
  for ((r = 0; r < REPS; r++)); do
    if ! /usr/bin/time -f "%e %M" -o "$tmp/time" "$AT" space "$SPECS/$spec.tune.json" >"$tmp/out" 2>"$tmp/err"; then
      echo "error: autotune space $spec failed:" >&2
      cat "$tmp/err" >&2
      status=1
      continue
    fi
    read -r wall kb <"$tmp/time"
    walls+=("$wall")
    rss+=("$kb")
    built+=("$(awk '/^built in:/ {print $3}' "$tmp/out")")
  done
  [ ${#walls[@]} -gt 0 ] || continue
  cart=$(awk '/^cartesian:/ {print $2}' "$tmp/out")
  valid=$(awk '/^valid:/ {print $2}' "$tmp/out")
  groups=$(awk '/^groups:/ {n=$2} /^  +[0-9]+  / {s = s (s ? " x " : "") $1} END {print n " (" s ")"}' "$tmp/out")
  median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
  largest() { printf '%s\n' "$@" | sort -g | tail -1; }
  printf '| %s | %s | %s | %s | %s ms | %s s / %s s | %.1f MB / %.1f MB |\n' "$spec" "$cart" "$valid" "$groups" \
    "$(median "${built[@]}")" "$(median "${walls[@]}")" "$(largest "${walls[@]}")" \
    "$(echo "$(median "${rss[@]}") / 1024" | bc -l)" "$(echo "$(largest "${rss[@]}") / 1024" | bc -l)"
done
exit $status
