#!/usr/bin/env python3
"""Differential check of Magpie's HTTP caching decisions (RFC 9111, private cache) against hishel.

For every scenario (a set of response headers served by an origin in this process) each client fetches the
same URL twice, the second time right after the first, and the second fetch is classified as

    hit           served from the cache: no request reached the origin
    revalidation  a conditional request (If-None-Match / If-Modified-Since) reached the origin, answered 304
    miss          an unconditional request reached the origin (or a conditional one answered 200)
    stale         served stale from the cache (stale-while-revalidate / stale-if-error); Magpie only
    error         the client failed the fetch (e.g. hishel 0.1.5 raises on Cache-Control it cannot parse)

The classification comes from what the origin saw between the end of the first fetch and the end of the
second; what the client reports (Magpie's JSON `served`, hishel's `from_cache` / `revalidated` extensions) is a
cross-check, and a mismatch between the two is flagged in the notes.

Usage: http_cache_diff.py [--magpie PATH] [--markdown FILE] [--only ID[,ID...]]
Run it through scripts/http-cache-diff, which provides a venv with the pinned hishel.

Exit status: 0 when the comparison ran (disagreements are listed for humans, they do not fail the script),
2 on a harness error: the origin or a client could not be run, Magpie's output was unreadable, or Magpie failed
a first fetch (always a plain 200 with a valid PNG). A client report that contradicts the origin's log is marked
"?" and listed, but is a finding, not a harness error.
"""

from __future__ import annotations

import argparse
import email.utils
import json
import os
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Optional, Union

HISHEL_VERSION = "0.1.5"  # the version scripts/http-cache-diff installs; checked at start

# ---------------------------------------------------------------------------------------------------------------
# The body: a small valid PNG (Magpie decodes what it fetches and refuses non-images).


def make_png(width: int = 8, height: int = 8) -> bytes:
    """An 8-bit RGB PNG with a simple gradient, built with zlib and struct only."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = []
    for y in range(height):
        pixels = bytearray()
        for x in range(width):
            pixels += bytes((x * 255 // max(1, width - 1), y * 255 // max(1, height - 1), 128))
        rows.append(b"\x00" + bytes(pixels))  # filter type 0 (None) before each row
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # bit depth 8, colour type 2 (RGB)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"".join(rows))) + chunk(b"IEND", b"")


# ---------------------------------------------------------------------------------------------------------------
# Scenarios


WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def http_date(timestamp: float, form: str = "imf") -> str:
    """An HTTP date (RFC 9110 §5.6.7): IMF-fixdate, or one of the obsolete forms recipients must still accept."""
    if form == "imf":
        return email.utils.formatdate(timestamp, usegmt=True)
    t = time.gmtime(timestamp)
    clock = f"{t.tm_hour:02}:{t.tm_min:02}:{t.tm_sec:02}"
    if form == "rfc850":  # Sunday, 06-Nov-94 08:49:37 GMT
        return f"{WEEKDAYS[t.tm_wday]}, {t.tm_mday:02}-{MONTHS[t.tm_mon - 1]}-{t.tm_year % 100:02} {clock} GMT"
    if form == "asctime":  # Sun Nov  6 08:49:37 1994
        return f"{WEEKDAYS[t.tm_wday][:3]} {MONTHS[t.tm_mon - 1]} {t.tm_mday:2} {clock} {t.tm_year}"
    raise ValueError(form)


@dataclass(frozen=True)
class When:
    """A date header value computed when the origin answers.

    base "now" is the time of that response; base "start" is when the current client's run of the scenario began,
    for values that must not move between the first and the second response (a Last-Modified that moved would make
    every If-Modified-Since fail).
    """

    offset: float
    base: str = "now"
    label: str = ""
    form: str = "imf"  # see http_date

    def render(self, now: float, start: float) -> str:
        return http_date((now if self.base == "now" else start) + self.offset, self.form)

    def __str__(self) -> str:
        return self.label


HeaderValue = Union[str, When]
MINUTE, HOUR, DAY = 60, 3600, 86400


@dataclass
class Scenario:
    id: str
    headers: list[tuple[str, HeaderValue]]
    rfc: str  # what RFC 9111 asks of a private cache; "a|b" where it allows either
    etag: bool = True  # the origin adds a strong ETag (and answers If-None-Match with 304)
    note: str = ""  # why the expectation is what it is, for the report

    @property
    def path(self) -> str:
        return f"/s/{self.id}.png"

    @property
    def etag_value(self) -> str:
        return f'"{self.id}-v1"'

    def describe(self) -> str:
        """The headers as the table shows them (Cache-Control abbreviated CC)."""
        parts = [f"no {name}" if value == "" else f"{'CC' if name.lower() == 'cache-control' else name}: {value}"
                 for name, value in self.headers]
        if not self.etag:
            parts.append("no ETag")
        return "; ".join(parts) if parts else "(none)"

    def render(self, now: float, start: float) -> list[tuple[str, str]]:
        """The header lines of a response at `now`: Date (unless the scenario sets it), the ETag, the scenario's."""
        lines = [(n, v.render(now, start) if isinstance(v, When) else v) for n, v in self.headers]
        if not any(n.lower() == "date" for n, _ in lines):
            lines.insert(0, ("Date", http_date(now)))
        if self.etag:
            lines.append(("ETag", self.etag_value))
        return lines


def cc(value: str) -> tuple[str, HeaderValue]:
    return ("Cache-Control", value)


EXPIRES_FUTURE = ("Expires", When(HOUR, label="now+1h"))
EXPIRES_PAST = ("Expires", When(-HOUR, label="now-1h"))

SCENARIOS: list[Scenario] = [
    Scenario("max-age-60", [cc("max-age=60")], "hit"),
    Scenario("max-age-0", [cc("max-age=0")], "revalidation"),
    Scenario("no-cache", [cc("no-cache")], "revalidation", note="§5.2.2.4: may be stored, must be validated before reuse"),
    Scenario("no-cache-max-age-60", [cc("no-cache, max-age=60")], "revalidation"),
    Scenario("no-cache-no-etag", [cc("no-cache")], "miss", etag=False,
             note="§5.2.2.4: must be validated, but there is no validator: a full fetch"),
    Scenario("no-cache-last-modified", [cc("no-cache"), ("Last-Modified", When(-10 * DAY, "start", "start-10d"))],
             "revalidation", etag=False, note="§5.2.2.4, validated with If-Modified-Since"),
    Scenario("no-store", [cc("no-store")], "miss", etag=False),
    Scenario("no-store-etag", [cc("no-store")], "miss", note="§5.2.2.5: never stored, so nothing to revalidate"),
    Scenario("expires-future", [EXPIRES_FUTURE], "hit", note="§4.2.1: Expires − Date"),
    Scenario("expires-past", [EXPIRES_PAST], "revalidation"),
    Scenario("expires-invalid", [("Expires", "0")], "revalidation", note="§5.3: an invalid Expires means already expired"),
    Scenario("max-age-0-expires-future", [cc("max-age=0"), EXPIRES_FUTURE], "revalidation",
             note="§5.3: max-age overrides Expires"),
    Scenario("max-age-60-expires-past", [cc("max-age=60"), EXPIRES_PAST], "hit", note="§5.3: max-age overrides Expires"),
    Scenario("max-age-60-expires-invalid", [cc("max-age=60"), ("Expires", "0")], "hit",
             note="§5.3: with max-age, Expires MUST be ignored, even an invalid one"),
    Scenario("expires-past-last-modified", [EXPIRES_PAST, ("Last-Modified", When(-10 * DAY, "start", "start-10d"))],
             "revalidation", note="§4.2.2: a heuristic is only for responses without explicit expiration"),
    Scenario("age-100", [cc("max-age=60"), ("Age", "100")], "revalidation", note="§4.2.3: Age counts in current_age"),
    Scenario("age-10", [cc("max-age=60"), ("Age", "10")], "hit"),
    Scenario("date-2min-ago", [cc("max-age=60"), ("Date", When(-2 * MINUTE, label="now-2min"))], "revalidation",
             note="§4.2.3: apparent_age = response_time − Date = 120 s > 60 s"),
    Scenario("date-30s-ago", [cc("max-age=60"), ("Date", When(-30, label="now-30s"))], "hit"),
    Scenario("date-future", [cc("max-age=60"), ("Date", When(HOUR, label="now+1h"))], "hit",
             note="§4.2.3: apparent_age = max(0, response_time − Date) = 0"),
    Scenario("expires-rfc850", [("Expires", When(HOUR, label="now+1h (RFC 850 form)", form="rfc850"))], "hit",
             note="RFC 9110 §5.6.7: recipients accept the obsolete date forms"),
    Scenario("expires-asctime", [("Expires", When(HOUR, label="now+1h (asctime form)", form="asctime"))], "hit",
             note="RFC 9110 §5.6.7: recipients accept the obsolete date forms"),
    Scenario("expires-before-date", [("Date", When(2 * HOUR, label="now+2h")), ("Expires", When(HOUR, label="now+1h"))],
             "revalidation",
             note="§4.2.1: the lifetime is Expires − Date (here negative), not Expires − the cache's clock"),
    Scenario("age-list", [cc("max-age=60"), ("Age", "100, 5")], "revalidation",
             note="§5.1: a cache SHOULD use the first member of a list-valued Age (100 > 60)"),
    Scenario("age-two-lines", [cc("max-age=60"), ("Age", "100"), ("Age", "5")], "revalidation",
             note="§5.1: two Age lines make a list; a cache SHOULD use the first (100 > 60)"),
    Scenario("age-invalid", [cc("max-age=60"), ("Age", "abc")], "hit", note="§5.1: an invalid Age SHOULD be ignored"),
    Scenario("no-date", [cc("max-age=60"), ("Date", "")], "hit",
             note="RFC 9110 §6.6.1: a recipient adds the Date it received the response at; the empty value makes the "
                  "origin omit the header"),
    Scenario("last-modified-10d", [("Last-Modified", When(-10 * DAY, "start", "start-10d"))], "hit|miss", etag=False,
             note="§4.2.2: heuristic freshness is optional (10 % of 10 days, capped by the cache)"),
    Scenario("last-modified-10d-etag", [("Last-Modified", When(-10 * DAY, "start", "start-10d"))], "hit|miss",
             note="§4.2.2 as above, with an ETag as well"),
    Scenario("last-modified-1s", [("Last-Modified", When(-1, "start", "start-1s"))], "revalidation|hit|miss",
             etag=False,
             note="§4.2.2: 10 % of ~1 s is ~0.1 s, gone before the second fetch (a hit only if that is faster); "
                  "revalidated with If-Modified-Since"),
    Scenario("no-validators-no-freshness", [], "miss|hit", etag=False,
             note="nothing to revalidate with, no freshness: a full fetch (a cache MAY use a heuristic lifetime, §4.2.2)"),
    Scenario("etag-only", [], "revalidation|miss|hit",
             note="§3: storable (200 is heuristically cacheable), no freshness: revalidate (or not stored; or a "
                  "heuristic lifetime, §4.2.2)"),
    Scenario("s-maxage-60", [cc("s-maxage=60")], "revalidation|miss|hit",
             note="§5.2.2.10: s-maxage is for shared caches only; a private cache falls back to heuristics or none"),
    Scenario("private-max-age-60", [cc("private, max-age=60")], "hit", note="§5.2.2.7: a private cache may store it"),
    Scenario("public-max-age-60", [cc("public, max-age=60")], "hit"),
    Scenario("must-revalidate-max-age-60", [cc("must-revalidate, max-age=60")], "hit",
             note="§5.2.2.2: must-revalidate only applies once the response is stale"),
    Scenario("must-revalidate-max-age-0", [cc("must-revalidate, max-age=0")], "revalidation"),
    Scenario("proxy-revalidate-max-age-60", [cc("proxy-revalidate, max-age=60")], "hit",
             note="§5.2.2.8: for shared caches only"),
    Scenario("immutable-max-age-60", [cc("immutable, max-age=60")], "hit", note="RFC 8246"),
    Scenario("max-age-quoted", [cc('max-age="60"')], "hit",
             note="§5.2: recipients ought to accept both the token and the quoted-string form of an argument"),
    Scenario("max-age-abc", [cc("max-age=abc")], "revalidation",
             note="§4.2.1: an invalid freshness value means the response is stale"),
    Scenario("max-age-negative", [cc("max-age=-1")], "revalidation", note="§1.2.2 delta-seconds is digits only"),
    Scenario("max-age-duplicate", [cc("max-age=60, max-age=0")], "hit|revalidation",
             note="§4.2.1: with several values, use the first or consider the response stale"),
    Scenario("max-age-duplicate-reversed", [cc("max-age=0, max-age=60")], "revalidation",
             note="§4.2.1: the first value (0) or stale: both revalidate"),
    Scenario("max-age-huge", [cc("max-age=99999999999")], "hit",
             note="§1.2.2: a delta-seconds too large to represent counts as 2147483648"),
    Scenario("empty-list-elements", [cc(", max-age=60,,")], "hit",
             note="RFC 9110 §5.6.1: recipients accept and ignore empty list elements"),
    Scenario("two-cc-lines", [cc("max-age=60"), cc("no-cache")], "revalidation",
             note="RFC 9110 §5.3: two lines are one comma-separated list, so no-cache applies"),
    Scenario("max-age-uppercase", [cc("MAX-AGE=60")], "hit", note="§5.2: directive names are case-insensitive"),
    Scenario("unknown-extensions", [cc('x-foo, community="UCI", max-age=60, x-bar=1')], "hit",
             note="§5.2.3: unrecognised directives are ignored"),
    Scenario("no-cache-qualified", [cc('no-cache="Set-Cookie", max-age=60')], "hit|revalidation",
             note="§5.2.2.4: a qualified no-cache allows reuse without the named fields, or MAY be treated as unqualified"),
    Scenario("must-understand-no-store", [cc("must-understand, no-store, max-age=60")], "hit|miss",
             note="§5.2.2.3: a cache that implements must-understand and knows 200 SHOULD ignore no-store; "
                  "one that does not implement it obeys no-store"),
    Scenario("pragma-no-cache-max-age-60", [cc("max-age=60"), ("Pragma", "no-cache")], "hit",
             note="§5.4: Pragma is deprecated and has no meaning in responses"),
    Scenario("vary-star", [cc("max-age=60"), ("Vary", "*")], "miss", note="§4.1: Vary: * never matches"),
    Scenario("vary-accept", [cc("max-age=60"), ("Vary", "Accept")], "hit",
             note="§4.1: each client sends the same Accept both times"),
    Scenario("swr-max-age-0", [cc("max-age=0, stale-while-revalidate=60")], "stale|revalidation",
             note="RFC 5861 §3: optional; a cache without it revalidates"),
    Scenario("swr-max-age-60", [cc("max-age=60, stale-while-revalidate=60")], "hit"),
    Scenario("swr-must-revalidate", [cc("max-age=0, must-revalidate, stale-while-revalidate=60")], "revalidation",
             note="§5.2.2.2: must-revalidate forbids serving stale"),
    Scenario("sie-max-age-0", [cc("max-age=0, stale-if-error=60")], "revalidation",
             note="RFC 5861 §4: only when revalidation fails; the origin is fine"),
]


def rfc_allows(scenario: Scenario, outcome: str) -> bool:
    return outcome in scenario.rfc.split("|")


# ---------------------------------------------------------------------------------------------------------------
# The origin


@dataclass
class SeenRequest:
    at: float
    conditional: bool
    status: int
    if_none_match: Optional[str]
    if_modified_since: Optional[str]


class Origin:
    """An HTTP/1.1 origin on 127.0.0.1 serving each scenario at its own path, logging every request per path."""

    def __init__(self, scenarios: list[Scenario], body: bytes):
        self.by_path = {s.path: s for s in scenarios}
        self.body = body
        self.lock = threading.Lock()
        self.seen: dict[str, list[SeenRequest]] = {s.path: [] for s in scenarios}
        self.starts: dict[str, float] = {}
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name="origin", daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> "Origin":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def begin(self, path: str) -> int:
        """A client starts its run of a scenario: `start`-based dates count from now. Returns the log's length."""
        with self.lock:
            self.starts[path] = time.time()
            return len(self.seen[path])

    def count(self, path: str) -> int:
        with self.lock:
            return len(self.seen[path])

    def since(self, path: str, index: int) -> list[SeenRequest]:
        with self.lock:
            return list(self.seen[path][index:])

    def _respond(self, handler: BaseHTTPRequestHandler) -> None:
        path = handler.path.split("?", 1)[0]
        scenario = self.by_path.get(path)
        if scenario is None:
            handler.send_response_only(404)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        now = time.time()
        with self.lock:
            start = self.starts.get(path, now)
        lines = scenario.render(now, start)
        inm = handler.headers.get("If-None-Match")
        ims = handler.headers.get("If-Modified-Since")
        not_modified = False
        if inm is not None:
            # RFC 9110 §13.1.2: weak comparison; If-Modified-Since is ignored when If-None-Match is present.
            tags = [t.strip().removeprefix("W/") for t in inm.split(",")]
            not_modified = scenario.etag and ("*" in tags or scenario.etag_value in tags)
        elif ims is not None:
            last_modified = next((v for n, v in lines if n.lower() == "last-modified"), None)
            try:
                not_modified = bool(last_modified) and (email.utils.parsedate_to_datetime(last_modified)
                                                        <= email.utils.parsedate_to_datetime(ims))
            except (TypeError, ValueError):  # an unparsable If-Modified-Since is ignored (RFC 9110 §13.1.3)
                not_modified = False
        status = 304 if not_modified else 200
        with self.lock:
            self.seen[path].append(SeenRequest(now, inm is not None or ims is not None, status, inm, ims))
        # send_response_only: BaseHTTPRequestHandler.send_response would add its own Date and Server lines.
        handler.send_response_only(status)
        for name, value in lines:
            if value != "":  # an empty value leaves the header out (the no-Date scenario)
                handler.send_header(name, value)
        if status == 200:
            handler.send_header("Content-Type", "image/png")
            handler.send_header("Content-Length", str(len(self.body)))
        handler.end_headers()
        if status == 200:
            handler.wfile.write(self.body)

    def _handler_class(self):
        origin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                origin._respond(self)

            def log_message(self, *args) -> None:
                pass

        return Handler


# ---------------------------------------------------------------------------------------------------------------
# Classification


class HarnessError(Exception):
    pass


@dataclass
class Outcome:
    kind: str  # hit, revalidation, miss, stale, error
    notes: list[str] = field(default_factory=list)
    inconsistent: bool = False  # the client's report contradicts the origin's log


def origin_view(window: list[SeenRequest]) -> str:
    """What the origin saw during the second fetch, as a classification."""
    if not window:
        return "hit"
    if window[0].conditional and window[0].status == 304:
        return "revalidation"
    return "miss"


def describe_window(window: list[SeenRequest]) -> str:
    if not window:
        return "no request"
    return ", ".join(("conditional" if r.conditional else "unconditional") + f"→{r.status}" for r in window)


def reconcile(client: str, reported: str, window: list[SeenRequest], notes: Optional[list[str]] = None) -> Outcome:
    """The origin's view of the second fetch, cross-checked against what the client said it did."""
    outcome = Outcome(origin_view(window), list(notes or []))
    if reported == "stale":
        # Served from the cache; a background revalidation may have reached the origin before the process ended.
        outcome.kind = "stale"
        if window:
            outcome.notes.append(f"background request: {describe_window(window)}")
        return outcome
    seen = outcome.kind
    if len(window) > 1:
        outcome.notes.append(f"origin saw {len(window)} requests: {describe_window(window)}")
    if window and window[0].conditional and window[0].status != 304:
        outcome.notes.append("conditional request answered 200")
    if reported != seen:
        outcome.inconsistent = True
        outcome.notes.append(f"{client} reported {reported} but the origin saw {describe_window(window)}")
    return outcome


# ---------------------------------------------------------------------------------------------------------------
# Clients


def run_hishel(origin: Origin, scenario: Scenario, heuristics: bool) -> Outcome:
    import hishel

    url = origin.base_url + scenario.path
    # A private cache (cache_private=True is hishel's default). allow_heuristics lets hishel store responses
    # without explicit freshness (RFC 9111 §3, heuristically cacheable status) and give them a heuristic lifetime.
    controller = hishel.Controller(allow_heuristics=heuristics, cache_private=True)
    with hishel.CacheClient(storage=hishel.InMemoryStorage(), controller=controller, timeout=30) as client:
        base = origin.begin(scenario.path)
        try:
            client.get(url).read()
        except Exception as error:  # hishel raises on headers it cannot parse: an outcome, not a harness failure
            return Outcome("error", [f"first request: {type(error).__name__}: {error}"])
        before = origin.count(scenario.path)
        if before - base != 1:
            raise HarnessError(f"hishel {scenario.id}: origin saw {before - base} requests for the first fetch, not 1")
        try:
            response = client.get(url)
            response.read()
        except Exception as error:
            return Outcome("error", [f"second request: {type(error).__name__}: {error}"])
        window = origin.since(scenario.path, before)
    from_cache = bool(response.extensions.get("from_cache"))
    revalidated = bool(response.extensions.get("revalidated"))
    if from_cache:
        reported = "revalidation" if revalidated else "hit"
    else:
        reported = "miss"  # revalidated without from_cache: the revalidation got a full 200
    return reconcile("hishel", reported, window)


MAGPIE_SERVED = {"fresh": "hit", "revalidated": "revalidation", "stale": "stale", "downloaded": "miss"}


def magpie_fetch(binary: str, cache_dir: str, url: str) -> dict:
    """One `magpie fetch` run: its JSON object (which may carry `error`)."""
    command = [binary, "fetch", "--cache-dir", cache_dir, "--respect-cache-control", "--json", url]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise HarnessError(f"running {' '.join(command)}: {error}") from error
    for line in reversed(done.stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError as error:
                raise HarnessError(f"unreadable JSON from magpie: {line!r}: {error}") from error
    raise HarnessError(f"magpie printed no JSON (exit {done.returncode}) for {url}: {done.stderr.strip()[-500:]}")


def run_magpie(origin: Origin, scenario: Scenario, binary: str) -> Outcome:
    url = origin.base_url + scenario.path
    # A fresh cache folder per scenario; each run is a new process, so only the disk cache carries over.
    with tempfile.TemporaryDirectory(prefix="magpie-http-cache-diff-") as cache_dir:
        base = origin.begin(scenario.path)
        first = magpie_fetch(binary, cache_dir, url)
        if "error" in first:
            # The first response is always a plain 200 with a valid PNG: failing it is not a caching decision.
            raise HarnessError(f"magpie {scenario.id}: first fetch failed: {first['error']}")
        before = origin.count(scenario.path)
        if before - base != 1 or first.get("served") != "downloaded":
            raise HarnessError(f"magpie {scenario.id}: first fetch served {first.get('served')!r}, "
                               f"origin saw {before - base} requests")
        second = magpie_fetch(binary, cache_dir, url)
        window = origin.since(scenario.path, before)
    if "error" in second:
        return Outcome("error", [f"second fetch: {second['error']}"])
    served = second.get("served")
    if served not in MAGPIE_SERVED:
        raise HarnessError(f"magpie {scenario.id}: unknown served value {served!r} in {second}")
    notes = [f"staleReason={second.get('staleReason')}"] if served == "stale" else []
    return reconcile("magpie", MAGPIE_SERVED[served], window, notes)


# ---------------------------------------------------------------------------------------------------------------
# Report


@dataclass
class Row:
    scenario: Scenario
    hishel: Outcome
    hishel_strict: Outcome
    magpie: Outcome

    @property
    def agree(self) -> bool:
        return self.hishel.kind == self.magpie.kind


COLUMNS = ["id", "response headers", "RFC 9111", "hishel", "magpie", "agree", "hishel strict"]


def cells(row: Row) -> list[str]:
    def mark(outcome: Outcome) -> str:
        # "!" where the outcome is not one the RFC column allows; "?" where the client contradicted the origin.
        text = outcome.kind
        if not rfc_allows(row.scenario, outcome.kind):
            text += " !"
        if outcome.inconsistent:
            text += " ?"
        return text

    return [row.scenario.id, row.scenario.describe(), row.scenario.rfc, mark(row.hishel), mark(row.magpie),
            "yes" if row.agree else "NO", row.hishel_strict.kind]


def text_table(rows: list[Row]) -> str:
    table = [COLUMNS] + [cells(r) for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(COLUMNS))]
    out = []
    for index, line in enumerate(table):
        out.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(line)).rstrip())
        if index == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def markdown_table(rows: list[Row]) -> str:
    def escape(text: str) -> str:
        return text.replace("|", "\\|")

    out = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---" for _ in COLUMNS) + "|"]
    for row in rows:
        values = cells(row)
        values[1] = f"`{values[1]}`"
        out.append("| " + " | ".join(escape(v) for v in values) + " |")
    return "\n".join(out)


def findings(rows: list[Row]) -> list[str]:
    """One line per disagreement, outcome outside the RFC column, or note worth a human's look."""
    lines = []
    for row in rows:
        parts = []
        if not row.agree:
            parts.append(f"DISAGREE hishel={row.hishel.kind} magpie={row.magpie.kind}")
        for name, outcome in (("hishel", row.hishel), ("magpie", row.magpie)):
            if not rfc_allows(row.scenario, outcome.kind):
                parts.append(f"{name} outside RFC column ({row.scenario.rfc})")
            parts += [f"{name}: {note}" for note in outcome.notes]
        if row.hishel_strict.inconsistent:
            parts += [f"hishel strict: {note}" for note in row.hishel_strict.notes]
        if row.hishel_strict.kind != row.hishel.kind:
            # Worth knowing whether hishel's answer comes from its heuristic (one day without Last-Modified).
            parts.append(f"hishel without heuristics: {row.hishel_strict.kind}")
        if parts:
            if row.scenario.note:
                parts.append(f"why: {row.scenario.note}")
            lines.append(f"{row.scenario.id}: " + "; ".join(parts))
    return lines


LEGEND = (
    "Second fetch of the same URL, right after the first. hit: no request reached the origin; revalidation: a "
    "conditional request answered 304; miss: an unconditional request; stale: served stale (stale-while-revalidate). "
    "RFC 9111: what the RFC asks of a private cache (a|b: either is allowed). '!' marks an outcome outside that "
    "column, '?' a client report that contradicts the origin's log. hishel: hishel.Controller(allow_heuristics=True); "
    "hishel strict: its default Controller() (no heuristics), shown for information, not compared. CC = Cache-Control; "
    "start = when that client's run of the scenario began."
)


def main() -> int:
    parser = argparse.ArgumentParser(description="Compare Magpie's HTTP caching decisions with hishel's.")
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--magpie", default=os.path.join(repo, ".build/debug/magpie"), help="the magpie binary")
    parser.add_argument("--markdown", help="also write the table as Markdown to this file")
    parser.add_argument("--only", help="comma-separated scenario ids to run")
    args = parser.parse_args()

    try:
        import hishel
    except ImportError as error:
        print(f"http-cache-diff: cannot import hishel ({error}); run scripts/http-cache-diff", file=sys.stderr)
        return 2
    if hishel.__version__ != HISHEL_VERSION:
        print(f"http-cache-diff: hishel {hishel.__version__} found, {HISHEL_VERSION} expected", file=sys.stderr)
        return 2
    magpie = os.path.abspath(args.magpie)
    if not os.access(magpie, os.X_OK):
        print(f"http-cache-diff: no executable magpie at {magpie} (build it or pass --magpie)", file=sys.stderr)
        return 2

    scenarios = SCENARIOS
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {s.id for s in SCENARIOS}
        if unknown:
            print(f"http-cache-diff: unknown scenario ids: {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        scenarios = [s for s in SCENARIOS if s.id in wanted]

    rows: list[Row] = []
    errors: list[str] = []
    with Origin(SCENARIOS, make_png()) as origin:
        for scenario in scenarios:
            print(f"http-cache-diff: {scenario.id}", file=sys.stderr)
            try:
                # The origin's log is per path and the runs are sequential, so the clients can share the path.
                rows.append(Row(scenario,
                                run_hishel(origin, scenario, heuristics=True),
                                run_hishel(origin, scenario, heuristics=False),
                                run_magpie(origin, scenario, magpie)))
            except HarnessError as error:
                errors.append(str(error))

    agree = sum(r.agree for r in rows)
    summary = f"{len(rows)} scenarios, {agree} agree, {len(rows) - agree} disagree"
    notes = findings(rows)
    print(text_table(rows))
    print()
    for line in notes:
        print(line)
    if notes:
        print()
    print(f"hishel {hishel.__version__}, magpie {magpie}")
    print(summary)

    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write(markdown_table(rows) + "\n\n" + LEGEND + "\n\n")
            if notes:
                out.write("\n".join(f"- {line}" for line in notes) + "\n\n")
            out.write(f"hishel {hishel.__version__}. {summary}.\n")

    for problem in errors:
        print(f"http-cache-diff: harness error: {problem}", file=sys.stderr)
    return 2 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
