#!/usr/bin/env python3
"""The module boundaries of docs/ARCHITECTURE.md, checked against the code.

Reads the module table of docs/ARCHITECTURE.md (target, folder, "depends on") and fails when a product source
(tuner/, db/, search/) includes a header of a module that its own module may not use: a module may include its
own headers and those of the modules it depends on, directly or through them (what CMake links through), and
the CLI ("everything") any. A module the table does not list, or a dependency that names no module, is an error
too, so the table cannot drift from the folders. Exit 0 when every include is allowed, 1 otherwise (each
violation printed as FILE:LINE: ...), 2 when the table cannot be read.
Usage: scripts/check_boundaries.py [REPO_ROOT]
"""
import os
import re
import sys

ROW = re.compile(r"^\|\s*`(autotune(?:_\w+)?)`\s*\|((?:\s*`[^`]+`,?)+)\s*\|([^|]*)\|")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
# Names in the "depends on" column that are libraries, not modules of the table.
EXTERNAL = {"nlohmann/json", "threads", "sqlite", "nvrtc", "libdl", "mpi", "-", "embedded data"}


def read_table(root):
    """({place: target}, {target: [dependency words]}) from the table of docs/ARCHITECTURE.md. A module's places are
    the folders and files of its row's second column; a file belongs to the module of the longest place it is in."""
    places, words_of = {}, {}
    with open(os.path.join(root, "docs", "ARCHITECTURE.md"), encoding="utf-8") as f:
        for line in f:
            m = ROW.match(line)
            if not m:
                continue
            target, deps = m.group(1), m.group(3)
            # Words before any parenthesis: "interop (spec files, T1)" depends on interop.
            deps = re.sub(r"\([^)]*\)", "", deps)
            words = [w.strip().lower() for w in deps.split(",") if w.strip()]
            # "core, MPI (only with ...)": the qualifier is gone, keep the first word of each item.
            words_of[target] = [w.split()[0] for w in words]
            for place in re.findall(r"`([^`]+)`", m.group(2)):
                places[place.strip().rstrip("/")] = target
    return places, words_of


def module_of(path, places):
    """The target of the longest place that holds path, or None."""
    best = None
    for place in places:
        if path == place or path.startswith(place + "/"):
            if best is None or len(place) > len(best):
                best = place
    return places[best] if best is not None else None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    try:
        places, words_of = read_table(root)
    except OSError as e:
        print(f"check_boundaries: cannot read docs/ARCHITECTURE.md: {e}", file=sys.stderr)
        return 2
    if not places:
        print("check_boundaries: no module table found in docs/ARCHITECTURE.md", file=sys.stderr)
        return 2
    targets = list(words_of)
    short = {t[len("autotune_"):] if t != "autotune" else "cli": t for t in targets}  # "core" -> "autotune_core"
    problems = []
    direct = {}
    for target, words in words_of.items():
        deps = set()
        for w in words:
            if w == "everything":
                deps.update(targets)
            elif w in short:
                deps.add(short[w])
            elif w not in EXTERNAL:
                problems.append(f"docs/ARCHITECTURE.md: {target} depends on '{w}', which is no module of the table")
        direct[target] = deps
    allowed = {}
    for target in targets:  # the closure over the dependencies
        seen, todo = {target}, list(direct[target])
        while todo:
            d = todo.pop()
            if d not in seen:
                seen.add(d)
                todo.extend(direct.get(d, ()))
        allowed[target] = seen

    checked = 0
    for top in ("tuner", "db", "search"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not re.search(r"\.(cpp|hpp|cc|h)$", name):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root)
                own = module_of(path, places)
                if own is None:
                    problems.append(f"{path}: in no module of docs/ARCHITECTURE.md's table")
                    continue
                checked += 1
                with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        used = module_of(m.group(1), places)
                        if used is not None and used not in allowed[own]:
                            problems.append(f"{path}:{number}: {own} includes {m.group(1)} of {used}, which "
                                            "docs/ARCHITECTURE.md does not let it use")
    for p in problems:
        print(p)
    print(f"check_boundaries: {checked} files of {len(targets)} modules, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
