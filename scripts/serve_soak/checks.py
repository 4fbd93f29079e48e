"""The checkers: what one request must get (Expect), everything seen so far (Results), the checks of a status and of
a 200's body (Checker), and the crash lines of an instance's log."""

import collections
import hashlib
import re
import threading
import time

from .formats import MIME_TO_FORMAT, decoded_size, magic_format
from .nginx import nginx_variant
from .settings import OVERLOAD, short


class Expect:
    """What one request must get. `statuses`: the documented status(es); `job`: whether the request needs a worker
    (then 429/503 are allowed in the mixed phase); for 200s: `formats` per Accept token (a dict token -> set of
    formats) and `size` (width, height), or None when the size is not checked."""

    def __init__(self, kind, group, statuses, job=True, formats=None, size=None, note="", file=None):
        self.kind = kind
        self.file = file  # the corpus file of a bomb or corrupt request: its statuses are tracked per file
        self.group = group  # the row of the status table
        self.statuses = set(statuses)
        self.job = job
        self.formats = formats
        self.size = size
        self.note = note


class Results:
    """Everything the checkers saw; thread-safe."""

    def __init__(self):
        self.lock = threading.Lock()
        self.table = collections.defaultdict(lambda: {"expected": set(), "seen": collections.Counter(), "overload": 0,
                                                       "unexpected": 0, "requests": 0})
        self.failures = collections.defaultdict(list)  # check -> [text]
        self.failure_counts = collections.Counter()
        self.passes = collections.Counter()  # check -> number of checked items that passed
        self.bodies = {}  # (path, variant) -> (sha256, length, first kind)
        self.sizes = {}  # sha256 -> (w, h, how)
        self.latencies = []
        self.longest = (0.0, "")
        self.cache_status = collections.Counter()
        self.bursts = []  # per burst: Counter of statuses
        self.retry_after_missing = 0
        self.decoders = collections.Counter()
        self.disconnect_status = collections.Counter()
        self.file_statuses = collections.defaultdict(collections.Counter)  # bomb/corrupt kind -> statuses (no 429/503)
        self.status_events = []  # (when, expect, status, path) of each unexpected status

    def fail(self, check, text):
        with self.lock:
            self.failure_counts[check] += 1
            if len(self.failures[check]) < 40:
                self.failures[check].append(text)

    def ok(self, check, count=1):
        with self.lock:
            self.passes[check] += count


class Checker:
    """The checkers. Each takes what one response was, compares it with its Expect, and records passes and
    failures in `results`; `--self-test` drives the same methods with made-up data."""

    def __init__(self, results, use_pillow=True):
        self.results = results
        self.use_pillow = use_pillow

    def status(self, expect, status, headers, body, path, phase, status_only=False):
        """The status is the documented one; in the mixed phase, 429 (with Retry-After) or 503 for a job; error
        bodies are Magpie's (text/plain), not an nginx error page (not checked with `status_only`, for a client that
        read only the status line). True when it passed."""
        results = self.results
        allowed_overload = expect.job and phase == "mix"
        passed = True
        with results.lock:
            row = results.table[(expect.group, phase)]
            row["expected"] |= expect.statuses
            row["requests"] += 1
            row["seen"][status] += 1
            if expect.file and status not in OVERLOAD:
                results.file_statuses[expect.kind][status] += 1
            if status not in expect.statuses and status in OVERLOAD and allowed_overload:
                row["overload"] += 1
            elif status not in expect.statuses:
                row["unexpected"] += 1
                passed = False
        if not passed:
            with results.lock:
                results.status_events.append((time.monotonic(), expect, status, path))
            self.results.fail("status", f"{expect.kind}: got {status}, documented {sorted(expect.statuses)}"
                                        f"{' (+429/503 under load)' if allowed_overload else ''} ({phase}): "
                                        f"`{short(path)}` body {body[:80]!r}")
        else:
            self.results.ok("status")
        if status_only:
            return passed
        if status == 429:
            if not headers.get("retry-after"):
                self.results.fail("retry-after", f"429 without Retry-After: `{short(path)}`")
                passed = False
            else:
                self.results.ok("retry-after")
        if status >= 400:
            content_type = headers.get("content-type", "")
            if not content_type.startswith("text/plain") or body[:1] == b"<":
                self.results.fail("error-origin", f"{status} for {expect.kind} is not Magpie's text/plain "
                                                  f"(nginx's own page?): `{short(path)}` {content_type} {body[:80]!r}")
                passed = False
            else:
                self.results.ok("error-origin")
        return passed

    def body(self, expect, token, headers, body, path):
        """Checks a 200: length, magic vs Content-Type, format for the token, same bytes per cache key, size.
        Returns the list of problems (empty when it passed)."""
        problems = []
        declared = headers.get("content-length")
        if declared is None or not declared.isdigit() or int(declared) != len(body):
            problems.append(("length", f"Content-Length {declared} but {len(body)} bytes"))
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        magic = magic_format(body)
        declared_format = MIME_TO_FORMAT.get(content_type)
        if magic is None or magic != declared_format:
            problems.append(("magic", f"Content-Type {content_type!r} but magic bytes say {magic} ({body[:12]!r})"))
        if expect.formats is not None:
            wanted = expect.formats.get(token, expect.formats.get("*"))
            if wanted is not None and declared_format not in wanted:
                problems.append(("format", f"token {token}: {content_type}, expected one of {sorted(wanted)}"))
        digest = hashlib.sha256(body).hexdigest()
        key = (path.split("?", 1)[0], nginx_variant(path, token))
        with self.results.lock:
            first = self.results.bodies.setdefault(key, (digest, len(body), expect.kind))
        if first[0] != digest:
            problems.append(("identity", f"variant {key[1]}: {len(body)} bytes sha256 {digest[:16]}…, earlier "
                                         f"{first[1]} bytes sha256 {first[0][:16]}…"))
        if expect.size is not None and magic is not None:
            with self.results.lock:
                known = self.results.sizes.get(digest)
            if known is None:
                try:
                    known = decoded_size(body, magic, self.use_pillow)
                except ValueError as error:
                    problems.append(("size", f"{magic} body does not decode: {error}"))
                    known = None
                if known is not None:
                    with self.results.lock:
                        self.results.sizes[digest] = known
                        self.results.decoders[known[2]] += 1
            if known is not None and (known[0], known[1]) != tuple(expect.size):
                problems.append(("size", f"{known[0]}x{known[1]} ({known[2]}), expected {expect.size[0]}x{expect.size[1]}"))
        for check in ("length", "magic", "format", "identity", "size"):
            if not any(name == check for name, _ in problems):
                if check != "size" or expect.size is not None:
                    self.results.ok(check)
        for check, text in problems:
            self.results.fail(check, f"{expect.kind}: {text}: `{short(path)}`")
        return problems


CRASH_PATTERNS = re.compile(
    r"Fatal error|fatalError|Program crashed|Segmentation fault|SIGSEGV|SIGBUS|SIGILL|SIGABRT|SIGTRAP|Aborted|"
    r"Illegal instruction|Current stack trace|Crash(ed)? at|Thread \d+ crashed|panic:|double free|"
    r"AddressSanitizer|heap-use-after-free", re.I)


def crash_lines(text):
    return [line for line in text.splitlines() if CRASH_PATTERNS.search(line)]
