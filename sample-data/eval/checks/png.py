# output/daily.png is a real PNG of a sensible size.
import struct, sys
b = open("output/daily.png", "rb").read()
if b[:8] != b"\x89PNG\r\n\x1a\n" or b[12:16] != b"IHDR":
    print("not a PNG")
    sys.exit(1)
w, h = struct.unpack(">II", b[16:24])
print("a %dx%d PNG" % (w, h))
sys.exit(0 if 200 <= w <= 4000 and 100 <= h <= 4000 else 1)
