# Sourced by the bench scripts (bench/*.sh): the check of their one argument and the output, scratch and log
# places they share. Defines functions only; the caller keeps `set -uo pipefail`.

# bench_autotune_dir USAGE ARG...: sets AT to ARG/autotune. Exits 2 with "usage: USAGE" unless there is exactly
# one ARG, and with an error when ARG holds no autotune binary.
bench_autotune_dir() {
  local usage=$1
  shift
  if [ $# -ne 1 ]; then
    echo "usage: $usage" >&2
    exit 2
  fi
  AT=$1/autotune
  [ -x "$AT" ] || { echo "error: no autotune binary at $AT" >&2; exit 2; }
}

# bench_out_work_log NAME: creates $OUT and makes it absolute, sets WORK to a scratch folder removed on exit and
# LOG to $OUT/NAME.log, emptied.
bench_out_work_log() {
  mkdir -p "$OUT"
  OUT=$(cd "$OUT" && pwd)
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
  LOG=$OUT/$1.log
  : > "$LOG"
}
