"""Small images for the fakes' self-tests (stdlib only): a real PNG, headers of the other
formats, and pictures whose header lies. `python3 imgdata.py png W H > f.png` writes one."""
import base64
import random
import struct
import sys
import zlib


def _chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def png(w, h, seed=0, noisy=False):
    """A real RGB PNG of w x h: a gradient, or noise (which does not compress)."""
    rnd = random.Random(seed)
    rows = b"".join(b"\x00" + (rnd.randbytes(w * 3) if noisy else bytes(
        ((x * 7 + y * 3 + seed) & 255) for x in range(w * 3))) for y in range(h))
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + _chunk(b"IDAT", zlib.compress(rows)) + _chunk(b"IEND", b""))


def png_claiming(w, h):
    """A PNG whose IHDR says w x h over a 1x1 picture's data (a header that lies)."""
    good = png(1, 1)
    return good[:8] + _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + good[33:]


def jpeg(w, h):
    """A baseline JPEG's markers up to its frame header (SOF0 with w x h), then EOI."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, h, w, 3) + b"\x01\x22\x00\x02\x11\x01\x03\x11\x01"
    return b"\xff\xd8" + app0 + sof + b"\xff\xd9"


def gif(w, h):
    """A 1-colour GIF89a of w x h (header, screen descriptor, trailer)."""
    return b"GIF89a" + struct.pack("<HHBBB", w, h, 0x80, 0, 0) + b"\0\0\0\xff\xff\xff" + b";"


def webp(w, h):
    """A lossless WebP header (RIFF, VP8L) of w x h."""
    bits = (w - 1) | ((h - 1) << 14)
    body = b"VP8L" + struct.pack("<I", 5) + b"\x2f" + struct.pack("<I", bits) + b"\0"
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WEBP" + body


def b64(data):
    return base64.b64encode(data).decode()


if __name__ == "__main__":
    kind, w, h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    sys.stdout.buffer.write({"png": png, "jpeg": jpeg, "gif": gif, "webp": webp,
                             "png_claiming": png_claiming}[kind](w, h))
