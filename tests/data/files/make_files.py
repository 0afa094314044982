#!/usr/bin/env python3
"""Writes the array-file fixtures of tests/data/files with the Python standard library alone: the .npy headers
are built by hand as NumPy writes them (magic, version, little-endian header length, the dictionary padded with
spaces to a multiple of 64 bytes and ended by a newline), independently of the tuner's own write_npy.

Run from anywhere: python3 tests/data/files/make_files.py. The files are checked in; this script says how they
were made."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def npy(name, descr, shape, values, fmt, version=(1, 0), fortran=False, growth_pad=0):
    """Writes values (already in the file's element order) packed with struct format fmt (with its byte order)."""
    shape_text = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, "True" if fortran else "False", shape_text)
    header += " " * growth_pad  # NumPy 1.24+ leaves room for the shape to grow
    field = 2 if version[0] == 1 else 4
    unpadded = 6 + 2 + field + len(header) + 1
    header += " " * ((64 - unpadded % 64) % 64) + "\n"
    out = b"\x93NUMPY" + bytes(version) + len(header).to_bytes(field, "little") + header.encode("latin1")
    out += b"".join(struct.pack(fmt, v) for v in values)
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(out)


def f32(v):
    """v rounded to float32, as a Python float."""
    return struct.unpack("<f", struct.pack("<f", v))[0]


# Format cases for tests/cpu/test_data_file.cpp.
npy("f32_3x4.npy", "<f4", (3, 4), [0.25 * i for i in range(12)], "<f")
npy("f64_be.npy", ">f8", (5,), [1.5, -2.25, 1e300, 0.0, -0.0], ">d")
npy("i32_v2.npy", "<i4", (2, 3), [-3, -2, -1, 0, 1, 2147483647], "<i", version=(2, 0))
npy("u16_v3.npy", "<u2", (4,), [0, 1, 65535, 4660], "<H", version=(3, 0), growth_pad=21)
npy("i64_be_2d.npy", ">i8", (2, 2), [-(2**62), 1, 2**40, -5], ">q")
npy("u8_fortran_1d.npy", "|u1", (4,), [1, 2, 254, 255], "<B", fortran=True)
npy("f32_fortran.npy", "<f4", (2, 3), [1, 4, 2, 5, 3, 6], "<f", fortran=True)
npy("bool.npy", "|b1", (3,), [1, 0, 1], "<B")
npy("f32_0d.npy", "<f4", (), [2.5], "<f")
with open(os.path.join(HERE, "i32_raw.bin"), "wb") as f:
    f.write(b"".join(struct.pack("<i", v) for v in [7, -7, 65536, -2147483648, 0]))

# The user kernel of filed.tune.json (tests/gpu/test_user_kernels_gpu.cpp): y[i] = x[i] * scale + bias[i % 16].
N = 4099
x = [f32(((i * 37) % 1000) / 64.0 - 7.5) for i in range(N)]  # a pattern no random fill makes
bias = [(i * 3) - 20 for i in range(16)]
scale = f32(1.25)
npy("x.npy", "<f4", (N,), x, "<f")
npy("scale.npy", "<f4", (), [scale], "<f")
with open(os.path.join(HERE, "bias.bin"), "wb") as f:
    f.write(b"".join(struct.pack("<i", b) for b in bias))
y = [f32(f32(x[i] * scale) + bias[i % 16]) for i in range(N)]
npy("y_expected.npy", "<f4", (N,), y, "<f")
