#!/usr/bin/env bash
# Writes kernels_src/source_history.json: the source hash and code identity (tuner/core/identity.hpp) of every
# version of every built-in kernel in the git history of kernels_src/. The built-in specs read it
# (tuner/specs/specs.cpp): trials recorded with an earlier text of the same code keep counting in databases made
# before the database recorded identities itself (docs/database.md "What invalidates trials").
# Run it after changing a kernel source, and after changing the identity rules (tests/cpu/test_identity.cpp
# checks that the file holds today's sources with today's identities).
#   scripts/source_history.sh [path/to/autotune]      (default: build/autotune)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
autotune=${1:-$root/build/autotune}
[ -x "$autotune" ] || { echo "error: $autotune is not built (bash scripts/build.sh)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
entries="$work/entries.jsonl"
: >"$entries"
add() {  # $1: a kernels_src folder, $2: the commit it is from
  local specs=("$1"/*/*.tune.json)
  "$autotune" --db "$work/none.db" identity --json "${specs[@]}" |
    python3 -c 'import json,sys; [print(json.dumps({"kernel": e["kernel"], "source_hash": e["source_hash"], "identity": e["identity"], "commit": sys.argv[1]})) for e in json.load(sys.stdin)]' "$2" >>"$entries"
}
for c in $(git log --reverse --format=%h -- kernels_src); do
  mkdir -p "$work/$c"
  git archive "$c" kernels_src | tar -x -C "$work/$c"
  add "$work/$c/kernels_src" "$c"
done
add "$root/kernels_src" "working tree"
python3 - "$entries" "$root/kernels_src/source_history.json" <<'PY'
import json, sys
seen, out = set(), []
for line in open(sys.argv[1]):
    e = json.loads(line)
    key = (e["kernel"], e["source_hash"])
    if key in seen:
        continue
    seen.add(key)
    out.append(e)
out.sort(key=lambda e: (e["kernel"], e["source_hash"]))
doc = {"about": "source hash and code identity of every version of the built-in kernels in the git history; "
                "written by scripts/source_history.sh",
       "sources": [{k: e[k] for k in ("kernel", "source_hash", "identity", "commit")} for e in out]}
with open(sys.argv[2], "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
print(f"{len(out)} kernel sources in {sys.argv[2]}")
PY
