"""Image formats: which format bytes are (Magpie's sniffing rules, and a result's magic bytes), the sizes read from
headers or decoded by Pillow (when it is installed), and the MIME types and extensions of each format."""

import io
import struct
import zlib


try:
    from PIL import Image as PILImage
    PILImage.MAX_IMAGE_PIXELS = None  # our own bodies are small; never let Pillow's bomb check mask a size
    try:
        from PIL import features as _pil_features
        PIL_FORMATS = {name for name in ("webp", "avif") if _pil_features.check(name)} | {"jpeg", "png", "gif"}
    except Exception:  # noqa: BLE001 - an old Pillow without the features module
        PIL_FORMATS = {"jpeg", "png", "gif"}
except ImportError:
    PILImage = None
    PIL_FORMATS = set()


MIME = {"jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp", "avif": "image/avif"}
MIME_TO_FORMAT = {value: key for key, value in MIME.items()}
EXTENSION_FORMAT = {"jpg": "jpeg", "jpeg": "jpeg", "png": "png", "gif": "gif", "webp": "webp", "avif": "avif"}
CONTENT_TYPES = {
    "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp",
    "avif": "image/avif", "avifs": "image/avif", "heic": "image/heic", "hif": "image/heif", "jxl": "image/jxl",
    "bmp": "image/bmp", "tif": "image/tiff", "tiff": "image/tiff", "ico": "image/vnd.microsoft.icon",
    "svg": "image/svg+xml", "svgz": "image/svg+xml",
}


def sniff(data, inflated=False):
    """The format Magpie's ImageFormat(sniffing:) finds in `data` (a Python copy of its rules), or 'unknown'."""
    b = data[:1024]
    if b[:3] == b"\xff\xd8\xff":
        return "jpeg"
    if b[:8] == b"\x89PNG\r\n\x1a\n":
        return "png"
    if b[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    if b[:4] == b"RIFF" and b[8:12] == b"WEBP":
        return "webp"
    if b[4:8] == b"ftyp":
        brands = b[8:12] + b[16:max(16, min(len(b), int.from_bytes(b[:4], "big")))]
        for brand in (b"avif", b"avis"):
            if brand in brands:
                return "avif"
        return "heic"
    if b[:2] == b"\xff\x0a" or b[:12] == b"\x00\x00\x00\x0cJXL \r\n\x87\n":
        return "jxl"
    if b[:4] in (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"):
        return "tiff"
    if b[:2] == b"BM" and len(b) >= 18 and int.from_bytes(b[14:18], "little") in (12, 16, 40, 52, 56, 64, 108, 124):
        return "bmp"
    if b[:4] in (b"\x00\x00\x01\x00", b"\x00\x00\x02\x00") and len(b) >= 6 and (b[4] | b[5]) != 0:
        return "ico"
    text = b.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if text.startswith(b"<svg") or (text.startswith(b"<?xml") or text.startswith(b"<!doctype svg")) and b"<svg" in text:
        return "svg"
    # gzip: Magpie's sniffer inflates the first 1024 bytes once; a compressed SVG document (.svgz) is SVG.
    if b[:2] == b"\x1f\x8b" and not inflated:
        try:
            inner = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, 1024)
        except zlib.error:
            return "unknown"
        return "svg" if sniff(inner, inflated=True) == "svg" else "unknown"
    return "unknown"


def magic_format(body):
    """The format of an encoded result by its magic bytes: jpeg, png, gif, webp, avif, or None."""
    if body[:3] == b"\xff\xd8\xff":
        return "jpeg"
    if body[:8] == b"\x89PNG\r\n\x1a\n":
        return "png"
    if body[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    if body[:4] == b"RIFF" and body[8:12] == b"WEBP":
        return "webp"
    if body[4:8] == b"ftyp" and (body[8:12] in (b"avif", b"avis") or b"avif" in body[16:64]):
        return "avif"
    return None


def header_size(body, fmt):
    """(width, height) read from the header of a PNG, JPEG, GIF, WebP or AVIF, without decoding; None if unreadable."""
    try:
        if fmt == "png" and body[12:16] == b"IHDR":
            return struct.unpack(">II", body[16:24])
        if fmt == "gif":
            return struct.unpack("<HH", body[6:10])
        if fmt == "webp":
            chunk = body[12:16]
            if chunk == b"VP8 ":
                width, height = struct.unpack("<HH", body[26:30])
                return width & 0x3FFF, height & 0x3FFF
            if chunk == b"VP8L":
                bits = int.from_bytes(body[21:25], "little")
                return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
            if chunk == b"VP8X":
                return int.from_bytes(body[24:27], "little") + 1, int.from_bytes(body[27:30], "little") + 1
            return None
        if fmt == "jpeg":
            i = 2
            while i + 9 < len(body):
                if body[i] != 0xFF:
                    return None
                marker = body[i + 1]
                if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
                    i += 2
                    continue
                length = int.from_bytes(body[i + 2:i + 4], "big")
                if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                    height, width = struct.unpack(">HH", body[i + 5:i + 9])
                    return width, height
                i += 2 + length
            return None
        if fmt == "avif":
            at = body.find(b"ispe")
            if at < 0:
                return None
            return struct.unpack(">II", body[at + 8:at + 16])
    except (struct.error, IndexError):
        return None
    return None


def decoded_size(body, fmt, use_pillow=True):
    """(width, height, how) of an image body: decoded in full by Pillow when it can, else read from the header.
    Raises ValueError when the body does not decode."""
    if use_pillow and PILImage is not None and fmt in PIL_FORMATS:
        try:
            with PILImage.open(io.BytesIO(body)) as image:
                image.load()
                return image.size[0], image.size[1], "pillow"
        except Exception as error:  # noqa: BLE001 - any decoding failure is a corrupt body
            raise ValueError(f"Pillow cannot decode it: {error}") from None
    size = header_size(body, fmt)
    if size is None:
        raise ValueError("header unreadable")
    return size[0], size[1], "header"


def has_alpha(path):
    """True when the image has translucent pixels, False when not, None when Pillow cannot tell."""
    if PILImage is None:
        return None
    try:
        with PILImage.open(path) as image:
            image.load()
            if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
                alpha = image.convert("RGBA").getchannel("A")
                return alpha.getextrema()[0] < 255
            return False
    except Exception:  # noqa: BLE001
        return None
