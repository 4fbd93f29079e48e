"""The self-test: feeds every checker right and wrong made-up data (`scripts/serve-soak --self-test`, and before every
soak)."""

import io
import struct
import zlib

from .checks import Checker, Expect, Results, crash_lines
from .formats import MIME, PIL_FORMATS, PILImage
from .geometry import decoded_dimensions, filling, fitting
from .memory import rss_verdict
from .nginx import accept_token, nginx_variant
from .settings import ACCEPTS


def png_bytes(width, height):
    """A small grey PNG made with zlib alone."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + bytes([128]) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def self_test():
    """Feeds every checker right and wrong made-up data; returns the list of checkers that misjudged."""
    wrong = []

    def expect_result(label, accepted, should_accept):
        if accepted != should_accept:
            wrong.append(f"{label}: {'accepted' if accepted else 'refused'}, should {'accept' if should_accept else 'refuse'}")

    for use_pillow in ([True, False] if PILImage else [False]):
        mode = "pillow" if use_pillow else "headers"
        results = Results()
        checker = Checker(results, use_pillow=use_pillow)
        plain = {"content-type": "text/plain; charset=utf-8"}
        # Statuses
        bad_sig = Expect("bad signature", "bad signature", {403}, job=False)
        expect_result(f"{mode} status 403 for a bad signature", checker.status(bad_sig, 403, plain, b"x\n", "/a", "mix"), True)
        expect_result(f"{mode} status 200 for a bad signature", checker.status(bad_sig, 200, plain, b"x\n", "/a", "mix"), False)
        expect_result(f"{mode} status 429 for a bad signature (no job)",
                      checker.status(bad_sig, 429, dict(plain, **{"retry-after": "1"}), b"x\n", "/a", "mix"), False)
        bomb = Expect("bomb", "bomb", {422})
        expect_result(f"{mode} any 4xx for a bomb (413 instead of 422)", checker.status(bomb, 413, plain, b"x\n", "/b", "mix"), False)
        expect_result(f"{mode} 429 in the serial pass", checker.status(bomb, 429, dict(plain, **{"retry-after": "1"}), b"x\n", "/b", "serial"), False)
        expect_result(f"{mode} 429 with Retry-After under load", checker.status(bomb, 429, dict(plain, **{"retry-after": "1"}), b"x\n", "/b", "mix"), True)
        expect_result(f"{mode} 429 without Retry-After", checker.status(bomb, 429, plain, b"x\n", "/b", "mix"), False)
        expect_result(f"{mode} nginx's HTML 502 page", checker.status(
            Expect("t", "t", {502}), 502, {"content-type": "text/html"}, b"<html><head><title>502 Bad Gateway", "/c", "mix"), False)
        # Bodies
        png = png_bytes(10, 7)
        formats = {"avif": {"avif"}, "webp": {"webp"}, "other": {"png"}}
        good = Expect("valid", "valid", {200}, formats=formats, size=(10, 7))

        def headers(body, content_type="image/png", length=None):
            return {"content-type": content_type, "content-length": str(len(body) if length is None else length)}

        expect_result(f"{mode} a right PNG", not checker.body(good, "other", headers(png), png, "/p/1"), True)
        expect_result(f"{mode} a PNG body sent as image/jpeg (magic)",
                      not checker.body(good, "other", headers(png, "image/jpeg"), png, "/p/2"), False)
        zeros = bytes(len(png))
        expect_result(f"{mode} zeros sent as image/png (magic)",
                      not checker.body(good, "other", headers(zeros), zeros, "/p/2b"), False)
        expect_result(f"{mode} a body shorter than Content-Length",
                      not checker.body(good, "other", headers(png, length=len(png) + 5), png, "/p/3"), False)
        expect_result(f"{mode} a 10x8 PNG where 10x7 is expected",
                      not checker.body(good, "other", headers(png_bytes(10, 8)), png_bytes(10, 8), "/p/4"), False)
        expect_result(f"{mode} a PNG for the avif token",
                      not checker.body(good, "avif", headers(png), png, "/p/5"), False)
        expect_result(f"{mode} two different bodies for one URL and token (first)",
                      not checker.body(Expect("v", "v", {200}, formats=formats, size=(10, 7)), "other", headers(png), png, "/p/6"), True)
        other_png = png_bytes(10, 7)[:-12] + png_bytes(10, 7)[-12:]  # same bytes: must pass
        expect_result(f"{mode} the same body again", not checker.body(good, "other", headers(other_png), other_png, "/p/6"), True)
        changed = png[:33] + zlib_chunk_variant(10, 7)
        expect_result(f"{mode} two different bodies for one URL and token (second)",
                      not checker.body(Expect("v", "v", {200}, formats=formats, size=(10, 7)), "other", headers(changed), changed, "/p/6"), False)
        expect_result(f"{mode} a PNG for the webp token",
                      not checker.body(good, "webp", headers(changed), changed, "/p/6"), False)
        if use_pillow:
            expect_result(f"{mode} a PNG cut inside its IDAT",
                          not checker.body(Expect("v", "v", {200}, formats=formats, size=(10, 7)), "other",
                                           headers(png[:45]), png[:45], "/p/7"), False)
        if PILImage is not None:
            for fmt, pil_name in (("jpeg", "JPEG"), ("webp", "WEBP"), ("gif", "GIF"), ("avif", "AVIF")):
                if fmt not in PIL_FORMATS:
                    continue
                buffer = io.BytesIO()
                PILImage.new("RGB", (33, 21), (200, 10, 10)).save(buffer, pil_name)
                body = buffer.getvalue()
                right = Expect(fmt, fmt, {200}, formats={"*": {fmt}}, size=(33, 21))
                expect_result(f"{mode} a right {fmt}", not checker.body(right, "other", headers(body, MIME[fmt]), body, f"/{fmt}/1"), True)
                wrong_size = Expect(fmt, fmt, {200}, formats={"*": {fmt}}, size=(33, 22))
                expect_result(f"{mode} a {fmt} of another size",
                              not checker.body(wrong_size, "other", headers(body, MIME[fmt]), body, f"/{fmt}/2"), False)
    # Tokens, sizes, RSS, logs
    for accept, token in ACCEPTS + [("image/jxl,*/*", "jxl"), ("image/jxl;q=0,*/*", "other"),
                                     ("image/jxl,image/webp", "webp")]:
        expect_result(f"token of Accept {accept!r} is {token}", accept_token(accept) == token, True)
    expect_result("fit 1920x1080 in 200x200 is 200x113", fitting(1920, 1080, 200, 200) == (200, 113), True)
    # Sizes seen from magpie serve, where decode-time shrinking changes the last pixel.
    for fmt, width, height, box, fit, want in (("webp", 386, 395, (156, 128), True, (126, 128)),
                                               ("jpeg", 428, 640, (652, 530), True, (355, 530)),
                                               ("jpeg", 428, 640, (109, 93), False, (109, 162)),
                                               ("jpeg", 900, 562, (215, 302), False, (483, 302))):
        source = {"format": fmt, "width": width, "height": height, "swap": False}
        got = (fitting if fit else filling)(*decoded_dimensions(source, box, fit), *box)
        expect_result(f"{fmt} {width}x{height} {'fit' if fit else 'fill'} {box} is {want}", got == want, True)
    expect_result("RSS +5 % meets the target", rss_verdict(100_000, 105_000)[1], True)
    expect_result("RSS +20 % meets the target", rss_verdict(100_000, 120_000)[1], False)
    expect_result("a crash line is seen", bool(crash_lines("ok\nFatal error: Unexpectedly found nil\n")), True)
    expect_result("a normal log has no crash line", bool(crash_lines("listening on http://127.0.0.1:1\n")), False)
    expect_result("nginx variant of an @ext URL is any", nginx_variant("/s/x:1/plain/http%3A%2F%2Fa%2Fb.jpg@png", "avif") == "any", True)
    expect_result("nginx variant of an auto URL is the token", nginx_variant("/s/x:1/plain/http%3A%2F%2Fa%2Fb.jpg", "avif") == "avif", True)
    expect_result("nginx variant of a base64 .ext URL is any", nginx_variant("/s/x:1/aHR0cDovL2EvYi5qcGc.webp", "webp") == "any", True)
    return wrong


def zlib_chunk_variant(width, height):
    """The IDAT and IEND chunks of a PNG like png_bytes(width, height) but one pixel lighter: same size, other bytes."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = bytearray(b"".join(b"\x00" + bytes([128]) * width for _ in range(height)))
    raw[1] = 200
    return chunk(b"IDAT", zlib.compress(bytes(raw))) + chunk(b"IEND", b"")
