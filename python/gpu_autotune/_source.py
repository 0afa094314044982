"""The kernel source of a Kernel Tuner call, written into a content-addressed cache folder.

Kernel Tuner takes the code as a string, a filename, or a list of filenames (the first the kernel, the others
files it includes); the tuner reads a file next to its spec. The folder is $GPU_AUTOTUNE_CACHE, else
~/.cache/gpu_autotune/kernels, then <name>-<hash>/ with the hash over every file's name and text: the same code
always lands in the same folder, and a changed one in a new folder.
"""
import hashlib
import os
import re

from .errors import UnsupportedError, UsageError

_CODE_MARKS = ("__global__ ", "__kernel ", "void ", "float ")

# `#pragma unroll loop_unroll_factor_N` lines: Kernel Tuner removes the line for a value of 0 and otherwise makes
# the name a constexpr (a pragma's argument is not macro-expanded); here the line becomes a macro that expands to
# nothing for 0 and to _Pragma("unroll N") otherwise, so one source serves every configuration.
_UNROLL_RE = re.compile(r"^([ \t]*)#pragma[ \t]+unroll[ \t]+(\w*loop_unroll_factor\w*)[ \t]*$", re.M)


def cache_root():
    """The folder kernel sources are written under ($GPU_AUTOTUNE_CACHE or ~/.cache/gpu_autotune/kernels)."""
    root = os.environ.get("GPU_AUTOTUNE_CACHE")
    return root if root else os.path.join(os.path.expanduser("~"), ".cache", "gpu_autotune", "kernels")


def looks_like_a_filename(text):
    """True where Kernel Tuner would read `text` as a filename rather than code (the same tests as its own)."""
    if not isinstance(text, str) or len(text) > 250:
        return False
    if any(c in text for c in "();{}\\") or any(s in text for s in _CODE_MARKS):
        return False
    return any(s in text for s in (".c", ".opencl", ".F"))


def _read(path):
    try:
        with open(path, "r") as f:
            return f.read()
    except OSError as e:
        raise UsageError("kernel_source: cannot read %s: %s" % (path, e))


def load_sources(kernel_source):
    """[(file name, text)...] of `kernel_source`, the kernel first. Errors name kernel_source."""
    if callable(kernel_source):
        raise UnsupportedError("kernel_source: a function that returns code is not supported; pass the code")
    if isinstance(kernel_source, os.PathLike):
        kernel_source = os.fspath(kernel_source)
    if isinstance(kernel_source, (list, tuple)):
        if not kernel_source:
            raise UsageError("kernel_source: an empty list")
        paths = [os.fspath(p) for p in kernel_source]
        return [(os.path.basename(p), _read(p)) for p in paths]
    if not isinstance(kernel_source, str):
        raise UsageError("kernel_source: expected code, a filename or a list of filenames, got %s"
                         % type(kernel_source).__name__)
    if looks_like_a_filename(kernel_source):
        return [(os.path.basename(kernel_source), _read(kernel_source))]
    return [(None, kernel_source)]


def uses_name(text, name):
    """True if identifier `name` occurs in `text` (whole identifiers only)."""
    return re.search(r"(?<![\w])" + re.escape(name) + r"(?![\w])", text) is not None


def rewrite_unroll_pragmas(text):
    """`text` with Kernel Tuner's `#pragma unroll loop_unroll_factor_N` lines made macros (see above)."""
    names = sorted(set(m.group(2) for m in _UNROLL_RE.finditer(text)))
    if not names:
        return text
    head = ["#define GAT_PRAGMA_(x) _Pragma(#x)", "#define GAT_UNROLL_(n) GAT_PRAGMA_(unroll n)"]
    for n in names:
        head += ["#if %s == 0" % n, "#define GAT_UNROLL_%s" % n, "#else",
                 "#define GAT_UNROLL_%s GAT_UNROLL_(%s)" % (n, n), "#endif"]
    body = _UNROLL_RE.sub(lambda m: "%sGAT_UNROLL_%s" % (m.group(1), m.group(2)), text)
    return "\n".join(head) + "\n#line 1\n" + body


def write_sources(name, files):
    """Writes `files` ([(file name or None, text)...], the kernel first) to the cache folder of their content.

    Returns (folder, kernel file name). The kernel's text gets rewrite_unroll_pragmas; the others are copied as
    they are, under their own names, so that the kernel's #include of them resolves.
    """
    first_name = files[0][0] or (re.sub(r"\W", "_", name) + ".cu")
    texts = [(first_name, rewrite_unroll_pragmas(files[0][1]))] + list(files[1:])
    h = hashlib.sha256()
    for fname, text in texts:
        h.update(fname.encode() + b"\0" + text.encode() + b"\0")
    folder = os.path.join(cache_root(), "%s-%s" % (re.sub(r"\W", "_", name), h.hexdigest()[:16]))
    os.makedirs(folder, exist_ok=True)
    for fname, text in texts:
        write_if_changed(os.path.join(folder, fname), text)
    return folder, first_name


def write_if_changed(path, text):
    """Writes `text` to `path` unless the file already holds it (through a temporary file and a rename)."""
    try:
        with open(path, "r") as f:
            if f.read() == text:
                return
    except OSError:
        pass
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
