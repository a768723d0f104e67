"""Image parts for the fake model servers (stdlib only): the checks the real APIs make on
an image a request carries, in each API's words, and --images-dir, where every image a
fake accepted is written so a test can compare it with a reference.

fake_anthropic.py, fake_openai.py and fake_responses.py call anthropic_source() and
data_url() while they validate a request; each accepted image is collected per request
thread (begin(), collected()), and Sink.save() writes them once the request passed all
its checks. A refusal is a Refused(message, param, code) the fake turns into its own
error body. See tests/fakes/README.md, "Images".
"""
import base64
import binascii
import hashlib
import math
import os
import re
import struct
import threading

MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
EXT = {"image/jpeg": "jpg", "image/png": "png", "image/gif": "gif", "image/webp": "webp"}
MAX_SIDE = 8000  # Anthropic: "At least one of the image dimensions exceed max allowed size"
MANY_IMAGES = 20  # Anthropic: over this many images in a request, 2000 px a side at most
MANY_SIDE = 2000
ANTHROPIC_MAX_B64 = 5 * 1024 * 1024  # 5 MB, measured on the base64 string
OPENAI_MAX_BYTES = 20 * 1024 * 1024  # 20 MB per image, decoded
OPENAI_DETAILS = ("low", "high", "auto")
B64_RE = re.compile(r"[A-Za-z0-9+/]*={0,2}")
DATA_URL_EXAMPLE = "(e.g. 'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU=')"
OPENAI_FORMATS = "['png', 'jpeg', 'gif', 'webp']"


class Refused(Exception):
    """An image the API would refuse: the message, and for OpenAI its param and code."""

    def __init__(self, message, param=None, code=None):
        super().__init__(message)
        self.message, self.param, self.code = message, param, code


# ---------------------------------------------------------------- bytes

def b64decode_strict(s):
    """Standard base64, padded, nothing else (no whitespace, no URL-safe letters): the
    bytes, or None."""
    if not isinstance(s, str) or len(s) % 4 or not B64_RE.fullmatch(s):
        return None
    try:
        return base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        return None


def sniff(data):
    """The media type the bytes' magic number says, or None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _jpeg_size(d):
    i = 2
    while i + 4 <= len(d):
        if d[i] != 0xFF:
            return None
        m = d[i + 1]
        if m == 0xFF:  # fill byte
            i += 1
            continue
        if m == 0x01 or 0xD0 <= m <= 0xD8:  # no length
            i += 2
            continue
        if m in (0xD9, 0xDA):  # end of image / start of scan before a frame header
            return None
        (n,) = struct.unpack(">H", d[i + 2:i + 4])
        if 0xC0 <= m <= 0xCF and m not in (0xC4, 0xC8, 0xCC):  # SOFn
            if i + 9 > len(d):
                return None
            h, w = struct.unpack(">HH", d[i + 5:i + 9])
            return w, h
        if n < 2:
            return None
        i += 2 + n
    return None


def _webp_size(d):
    chunk = d[12:16]
    if chunk == b"VP8 " and len(d) >= 30 and d[23:26] == b"\x9d\x01\x2a":
        w, h = struct.unpack("<HH", d[26:30])
        return w & 0x3FFF, h & 0x3FFF
    if chunk == b"VP8L" and len(d) >= 25 and d[20] == 0x2F:
        (bits,) = struct.unpack("<I", d[21:25])
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(d) >= 30:
        return (int.from_bytes(d[24:27], "little") + 1, int.from_bytes(d[27:30], "little") + 1)
    return None


def dimensions(data, media_type):
    """(width, height) from the image's header, or None when the header does not parse."""
    size = None
    if media_type == "image/png":
        if len(data) >= 24 and data[12:16] == b"IHDR":
            size = struct.unpack(">II", data[16:24])
    elif media_type == "image/gif":
        if len(data) >= 10:
            size = struct.unpack("<HH", data[6:10])
    elif media_type == "image/jpeg":
        size = _jpeg_size(data)
    elif media_type == "image/webp":
        size = _webp_size(data)
    if not size or not size[0] or not size[1]:
        return None
    return size


def image(data, media_type, where, detail=None):
    """What a fake keeps of an accepted image."""
    w, h = dimensions(data, media_type)
    return {"where": where, "media_type": media_type, "width": w, "height": h,
            "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
            "detail": detail, "data": data}


# ---------------------------------------------------------------- per request

_local = threading.local()


def begin():
    """Starts collecting the images of the request this thread handles."""
    _local.images = []


def collected():
    """The images accepted so far for this thread's request."""
    return list(getattr(_local, "images", []))


def _keep(img):
    if not hasattr(_local, "images"):
        _local.images = []
    _local.images.append(img)
    return img


# ---------------------------------------------------------------- Anthropic

def anthropic_source(path, src):
    """An image block's source at PATH (`messages.2.content.0.tool_result.content.1.image`,
    its `.source` a dict with type base64). Checks it as the Messages API does; raises
    Refused (a 400 invalid_request_error) or keeps the image."""
    sp = path + ".source"
    if src.get("type") != "base64":
        raise Refused(f"{sp}: fake_anthropic only takes base64 image sources (it fetches no "
                      f"URLs and has no Files API), got type {src.get('type')!r}")
    bp = sp + ".base64"
    for k in src:
        if k not in ("type", "media_type", "data"):
            raise Refused(f"{bp}.{k}: Extra inputs are not permitted")
    for k in ("media_type", "data"):
        if k not in src:
            raise Refused(f"{bp}.{k}: Field required")
    mt, b64 = src["media_type"], src["data"]
    if mt not in MEDIA_TYPES:
        raise Refused(f"{bp}.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' "
                      "or 'image/webp'")
    if not isinstance(b64, str):
        raise Refused(f"{bp}.data: Input should be a valid string")
    if len(b64) > ANTHROPIC_MAX_B64:
        raise Refused(f"{bp}: image exceeds 5 MB maximum: {len(b64)} bytes > "
                      f"{ANTHROPIC_MAX_B64} bytes")
    data = b64decode_strict(b64)
    if data is None:
        raise Refused(f"{bp}: invalid base64 data")
    found = sniff(data)
    if found is None or dimensions(data, found) is None:
        raise Refused("Could not process image")
    if found != mt:
        raise Refused(f"{bp}: The image was specified using the {mt} media type, but the image "
                      f"appears to be a {found} image")
    w, h = dimensions(data, found)
    if w > MAX_SIDE or h > MAX_SIDE:
        raise Refused(f"{bp}.data: At least one of the image dimensions exceed max allowed size: "
                      f"{MAX_SIDE} pixels")
    return _keep(image(data, mt, path))


def anthropic_many(images):
    """Over MANY_IMAGES images in one request, each side must be at most MANY_SIDE."""
    if len(images) <= MANY_IMAGES:
        return
    for img in images:
        if img["width"] > MANY_SIDE or img["height"] > MANY_SIDE:
            raise Refused(f"{img['where']}.source.base64.data: At least one of the image "
                          "dimensions exceed max allowed size for many-image requests: "
                          f"{MANY_SIDE} pixels")


# ---------------------------------------------------------------- OpenAI (Chat, Responses)

def data_url(param, url, detail=None, chat=False, fake="fake_openai"):
    """An image given as a data URL at PARAM (Chat: `messages[1].content[2].image_url.url`;
    Responses: `input[3].output[1].image_url`). Checks it as OpenAI does; raises Refused
    with OpenAI's param and code, or keeps the image."""
    head = f"Invalid image URL: '{param}'." if chat else f"Invalid '{param}'."

    def invalid(tail):
        raise Refused(f"{head} Expected a base64-encoded data URL with an image MIME type "
                      f"{DATA_URL_EXAMPLE}, but got {tail}.", param, "invalid_value")

    if url.startswith(("http://", "https://")):
        raise Refused(f"{head} {fake} fetches no remote images: send the image as a data URL "
                      f"{DATA_URL_EXAMPLE}.", param, "invalid_value")
    if not url.startswith("data:"):
        invalid("a value without the 'data:' prefix")
    meta, sep, b64 = url[5:].partition(",")
    if not sep or not meta.endswith(";base64"):
        invalid("a data URL that is not base64-encoded")
    mt = meta[:-len(";base64")].lower()
    if mt not in MEDIA_TYPES:
        invalid(f"unsupported MIME type {mt!r}")
    if not b64:
        invalid("empty base64-encoded bytes")
    data = b64decode_strict(b64)
    if data is None:
        invalid("an invalid base64-encoded value")
    if len(data) > OPENAI_MAX_BYTES:
        raise Refused("You uploaded an unsupported image. Please make sure your image is below "
                      f"20 MB in size and is of one the following formats: {OPENAI_FORMATS}.",
                      None, "sanitizer_server_error")
    found = sniff(data)
    if found is None:
        raise Refused("You uploaded an unsupported image. Please make sure your image has of one "
                      f"the following formats: {OPENAI_FORMATS}.", None, "invalid_image_format")
    size = dimensions(data, found)
    if size is None or size[0] > MAX_SIDE or size[1] > MAX_SIDE:
        raise Refused("You uploaded an unsupported image. Please make sure your image is valid.",
                      None, "invalid_image")
    if found != mt:  # this fake's own check: see README.md, "Images"
        raise Refused(f"{head} The data URL says {mt} but the bytes are a {found} image "
                      f"({fake} refuses a media type that does not match the bytes).", param,
                      "invalid_value")
    return _keep(image(data, mt, param, detail))


def check_detail(param, detail):
    """An image part's optional detail: low, high or auto (OpenAI's words)."""
    if detail is None:
        return None
    if detail not in OPENAI_DETAILS:
        shown = repr(detail) if isinstance(detail, str) else repr(str(detail))
        raise Refused(f"Invalid value: {shown}. Supported values are: 'low', 'high', and 'auto'.",
                      param, "invalid_value")
    return detail


# ---------------------------------------------------------------- tokens

def anthropic_tokens(w, h, detail=None):
    """Anthropic: scaled to fit 1568 px on the long side and 1.15 Mpixel, then w*h/750."""
    scale = min(1.0, 1568 / max(w, h), math.sqrt(1150000 / (w * h)))
    sw, sh = max(1, int(w * scale)), max(1, int(h * scale))
    return math.ceil(sw * sh / 750)


def openai_tokens(w, h, detail=None):
    """OpenAI (GPT-4o/4.1 family): low 85; else fit 2048x2048, the short side to 768, and
    85 + 170 per 512-px tile."""
    if detail == "low":
        return 85
    scale = min(1.0, 2048 / max(w, h))
    w, h = w * scale, h * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def _size_of(b64):
    """(width, height) of a base64 picture by its own magic number, or None."""
    data = b64decode_strict(b64)
    if data is None:
        return None
    return dimensions(data, sniff(data))


def weigh(obj, tokens_fn):
    """(a copy of OBJ with each base64 image's data emptied, the images' tokens): so a fake
    counts an image's tokens by its size, not by the length of its base64."""
    total = 0

    def walk(o):
        nonlocal total
        if isinstance(o, list):
            return [walk(x) for x in o]
        if not isinstance(o, dict):  # text, even text holding a data URL, is text
            return o
        src = o.get("source")
        if o.get("type") == "image" and isinstance(src, dict) and isinstance(src.get("data"), str):
            size = _size_of(src["data"])
            total += tokens_fn(*size, None) if size else 0
            return dict(o, source=dict(src, data=""))
        url = o.get("image_url")
        if isinstance(url, dict) and isinstance(url.get("url"), str):  # Chat: detail inside
            size = _size_of(url["url"].partition(",")[2]) if url["url"].startswith("data:") else None
            total += tokens_fn(*size, url.get("detail")) if size else 0
            return dict(o, image_url=dict(url, url=url["url"].partition(",")[0] + ","))
        if o.get("type") == "input_image" and isinstance(url, str):  # Responses
            size = _size_of(url.partition(",")[2]) if url.startswith("data:") else None
            total += tokens_fn(*size, o.get("detail")) if size else 0
            return dict(o, image_url=url.partition(",")[0] + ",")
        return {k: walk(v) for k, v in o.items()}

    light = walk(obj)
    return light, total


# ---------------------------------------------------------------- --images-dir

class Sink:
    """--images-dir DIR: each accepted image written decoded as NNNN-<request no>.<ext>
    (NNNN counts the images this server wrote, from 0001)."""

    def __init__(self, directory):
        self.dir = directory
        self.lock = threading.Lock()
        self.count = 0
        if directory:
            os.makedirs(directory, exist_ok=True)

    def save(self, n, images):
        """Writes the request's images (when --images-dir is set); returns the log's list."""
        out = []
        for img in images:
            rec = {k: v for k, v in img.items() if k != "data"}
            if self.dir:
                with self.lock:
                    self.count += 1
                    name = "%04d-%d.%s" % (self.count, n, EXT[img["media_type"]])
                tmp = os.path.join(self.dir, "." + name + ".tmp")
                with open(tmp, "wb") as f:
                    f.write(img["data"])
                os.replace(tmp, os.path.join(self.dir, name))
                rec["file"] = name
            out.append(rec)
        return out


def log_fields(saved):
    """The log line's image fields: images (each where, media_type, width, height, bytes,
    sha256, detail, file) and n_images."""
    return {"n_images": len(saved), "images": saved}
