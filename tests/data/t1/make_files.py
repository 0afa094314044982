#!/usr/bin/env python3
"""Writes the data files of blur.json (tests of T1 files): the input image (raw little-endian float32, padded by the
filter width - 1 in each dimension) and the expected output, computed here in double precision and stored as
float32. Python's standard library only."""
import struct

NX, NY, W = 256, 192, 5
stride, rows = NX + W - 1, NY + W - 1
image = [((x * 37 + y * 101) % 97) / 97.0 - 0.25 for y in range(rows) for x in range(stride)]
filt = [((i * 7) % 5 - 2) * 0.125 for i in range(W * W)]
out = []
for y in range(NY):
    for x in range(NX):
        s = 0.0
        for j in range(W):
            for i in range(W):
                s += struct.unpack("<f", struct.pack("<f", image[(y + j) * stride + x + i]))[0] * filt[j * W + i]
        out.append(s)
with open("blur_image.bin", "wb") as f:
    f.write(struct.pack("<%df" % len(image), *image))
with open("blur_expected.bin", "wb") as f:
    f.write(struct.pack("<%df" % len(out), *out))
