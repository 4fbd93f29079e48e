"""The soak's settings and tables: the limits the instances run with, timings, the valid sources, the Accept
spellings, the hostile routes and the results no resize may make; and what every module uses: say(), short(),
CannotRun."""

import os
import sys


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLUSTER = os.path.join(REPO, "scripts", "cluster")

DEADLINE = 60.0  # seconds any one request may take, whatever it is
DOWNLOAD_TIMEOUT = 2  # --download-timeout of the instances
PROCESSING_TIMEOUT = 10  # --processing-timeout: also the longest wait for a worker
SLOW_SECONDS = 6.0  # the slow and stalled routes wait this long: past DOWNLOAD_TIMEOUT
MAX_SOURCE_BYTES = 2_000_000  # --max-source-bytes: 200MP.heic and bombs/large.png are over it
MAX_PIXELS = 40_000_000
MAX_FRAMES = 20  # gif/chi.gif has 31 frames
WORKERS, QUEUE = 1, 4
WARMUP_SECONDS = 60.0
IDLE_BEFORE_END = 15.0
RSS_INTERVAL = 3.0
RSS_TARGET = 1.10
BURST_SIZE = 40
BURST_INTERVAL = 30.0
OVERLOAD = {429, 503}
HEADER_TIMEOUT = 2  # --header-timeout of the instances: a head trickling in longer than this gets 408
# Results no resize may make: a side over --max-result-dimension (16384), or more than --max-pixels. 422, checked
# before anything is allocated (a 1×49,000,000 resize once took a gigabyte of weight tables).
TALL_THIN = ["resize:1x49000000:none", "resize:49000000x1:none", "resize:1x20000000:none", "resize:16385x2:none",
             "resize:7000x7000:none"]
# Sources that leave --allow-source through a dot segment: spelled out or as %2e they are resolved (then outside the
# prefix: 403); hidden behind an encoded separator they are refused as such (400). Either way /secret is never asked.
DOT_SEGMENTS = [("file/../secret/a.jpg", 403), ("file/%2e%2e/secret/a.jpg", 403), ("file/jpeg/.%2E/../secret/a.jpg", 403),
                ("file/..%2fsecret/a.jpg", 400), ("file/jpeg/..%2F..%2Fsecret/a.jpg", 400), ("file/..%5csecret/a.jpg", 400)]

# The valid sources: (corpus path, format). Sizes come from REFERENCE*.tsv (display size: after EXIF orientation).
VALID_SOURCES = [
    ("jpeg/source.jpg", "jpeg"),
    ("jpeg/bug143608-comment.jpg", "jpeg"),
    ("large/Elephants.jpg", "jpeg"),
    ("derived/Elephants_orientation6.jpg", "jpeg"),
    ("png/yellow_rose.png", "png"),
    ("png/transparent.png", "png"),
    ("webp/tux.lossless.webp", "webp"),
    ("webp/sunset-lossy.webp", "webp"),
    ("avif/kif-unrotated.avif", "avif"),
    ("gif/porsche.gif", "gif"),
]
TOO_MANY_FRAMES = "gif/chi.gif"  # 31 frames > MAX_FRAMES: 422

# Accept spellings and the nginx token each maps to (checked against accept_token() by the self-test).
ACCEPTS = [
    (None, "other"),
    ("image/avif,image/webp,image/apng,image/*,*/*;q=0.8", "avif"),
    ("image/webp,*/*", "webp"),
    ("image/jpeg,image/png;q=0.9", "other"),
    ("*/*", "other"),
    ("image/webp;q=0.9, image/avif;q=0.8", "avif"),
    ("image/avif;q=0, image/webp", "webp"),
    ("IMAGE/AVIF", "avif"),
    ("image/avif;q=0.0,image/webp;q=0", "other"),
    ("text/html", "other"),
]

# The misbehaving origin routes: name -> (documented status, why, weight in the mix).
HOSTILE = {
    "slow-headers": (504, "origin timeout", 0.4),
    "stalled-body": (504, "origin timeout", 0.4),
    "truncated-body": (502, "cut body", 1.0),
    "empty-body": (502, "empty body (ServerFailure: emptyBody → 502)", 0.6),
    "origin-404": (404, "origin 404", 1.0),
    "origin-410": (404, "origin 410", 0.5),
    "origin-500": (502, "origin 5xx", 1.0),
    "origin-503": (502, "origin 5xx", 0.5),
    "html": (415, "not an image (Content-Type)", 1.0),
    "html-as-jpeg": (415, "not an image (sniffed)", 0.6),
    "redirect-loop": (502, "redirect loop", 1.0),
    "redirect-chain": (502, "too many redirects", 0.5),
    "redirect-metadata": (403, "refused address 169.254.169.254", 1.0),
    "redirect-127.0.0.2": (403, "refused address 127.0.0.2", 1.0),
    "direct-metadata": (403, "refused address 169.254.169.254", 0.5),
    "direct-127.0.0.2": (403, "refused address 127.0.0.2", 0.5),
    "direct-10.x": (403, "refused address 10.0.0.0/8", 0.5),
    "oversized": (413, "Content-Length over --max-source-bytes", 0.6),
    "oversized-stream": (413, "body grows past --max-source-bytes", 0.6),
}


def say(message):
    print(f"serve-soak: {message}", file=sys.stderr, flush=True)


class CannotRun(Exception):
    """The soak could not run (exit status 2)."""


def short(path, limit=150):
    return path if len(path) <= limit else path[:limit - 1] + "…"
