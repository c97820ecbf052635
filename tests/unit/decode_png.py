#!/usr/bin/python3
"""An independent PNG decoder for tests/unit/test_png_writer.cpp: struct and zlib only.

    decode_png.py FILE   checks the signature, every chunk's CRC, IHDR (8-bit RGB, deflate,
                         no interlace), IDAT then IEND last; undoes all five row filters; prints
                         "WIDTH HEIGHT" and then the pixels as one line of hex (r g b, row by row).
Exits 1 with a message naming the first fault.
"""
import struct
import sys
import zlib


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def unfilter(raw, width, height, bpp=3):
    stride = width * bpp
    out, prior = bytearray(), bytearray(stride)
    for y in range(height):
        kind, row = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = row[i - bpp] if i >= bpp else 0
            b, c = prior[i], prior[i - bpp] if i >= bpp else 0
            row[i] = (row[i] + [0, a, b, (a + b) // 2, paeth(a, b, c)][kind]) & 0xff
        out += row
        prior = row
    return bytes(out)


def decode(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"signature {data[:8]!r}"
    pos, chunks = 8, []
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xffffffff, f"{kind!r}: CRC mismatch"
        chunks.append((kind, body))
        pos += 12 + length
    assert chunks[0][0] == b"IHDR" and chunks[-1] == (b"IEND", b""), [k for k, _ in chunks]
    width, height, depth, colour, compression, filtering, interlace = \
        struct.unpack(">IIBBBBB", chunks[0][1])
    assert (depth, colour, compression, filtering, interlace) == (8, 2, 0, 0, 0), chunks[0][1]
    raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    assert len(raw) == height * (width * 3 + 1), f"{len(raw)} bytes of rows for {width}x{height}"
    return width, height, unfilter(raw, width, height)


def main():
    try:
        width, height, pixels = decode(open(sys.argv[1], "rb").read())
    except (AssertionError, struct.error, zlib.error) as e:
        sys.exit(f"decode_png.py: {sys.argv[1]}: {e}")
    print(width, height)
    print(pixels.hex())


if __name__ == "__main__":
    main()
