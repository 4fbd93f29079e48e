"""The hostile origin (corpus files and the misbehaving routes, in a process of its own) and the trap listener on
127.0.0.2."""

import collections
import http.client
import http.server
import json
import os
import signal
import socket
import threading
import time
import urllib.parse

from .formats import CONTENT_TYPES
from .settings import MAX_SOURCE_BYTES, SLOW_SECONDS


class Origin:
    """The origin: corpus files by path, plus the misbehaving routes. It runs in a process of its own (run_origin),
    so the clients' work in this one never delays its answers. `hits` counts requests per route, `log` keeps when
    each request arrived and was answered (CLOCK_MONOTONIC, shared by both processes); GET /__stats returns both."""

    def __init__(self, corpus, trap_port):
        self.corpus = corpus
        self.trap_port = trap_port
        self.hits = collections.Counter()
        self.log = []  # (route, rest, arrived, answered)
        self.lock = threading.Lock()
        self.files = {}
        origin = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            server_version = "soak-origin"

            def log_message(self, *args):
                pass

            def do_GET(self):
                arrived = time.monotonic()
                try:
                    origin.handle(self)
                except (BrokenPipeError, ConnectionResetError, socket.timeout, OSError):
                    self.close_connection = True
                path = urllib.parse.urlsplit(self.path).path.strip("/").split("/", 1)
                with origin.lock:
                    origin.log.append((path[0], path[1] if len(path) > 1 else "", arrived, time.monotonic()))

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256  # socketserver's default backlog (5) would drop SYNs under bursts

            def handle_error(self, request, client_address):
                pass  # a client (an instance) that hung up mid-answer is part of the game

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]

    def file(self, relative):
        data = self.files.get(relative)
        if data is None:
            with open(os.path.join(self.corpus, relative), "rb") as handle:
                data = handle.read()
            self.files[relative] = data
        return data

    @staticmethod
    def send(handler, status, body=b"", content_type="image/jpeg", extra=(), length=None):
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body) if length is None else length))
        for name, value in extra:
            handler.send_header(name, value)
        handler.end_headers()
        if body:
            handler.wfile.write(body)

    def handle(self, handler):
        path = urllib.parse.urlsplit(handler.path).path
        parts = path.strip("/").split("/", 1)
        route, rest = parts[0], (parts[1] if len(parts) > 1 else "")
        with self.lock:
            self.hits[route] += 1
        sample = self.file("jpeg/source.jpg")
        if route == "__stats":
            with self.lock:
                body = json.dumps({"hits": dict(self.hits), "log": self.log}).encode()
            return self.send(handler, 200, body, "application/json")
        if route == "file":
            relative = urllib.parse.unquote(rest)
            full = os.path.realpath(os.path.join(self.corpus, relative))
            if not full.startswith(os.path.realpath(self.corpus) + os.sep) or not os.path.isfile(full):
                return self.send(handler, 404, b"no such file", "text/plain")
            extension = relative.rsplit(".", 1)[-1].lower()
            return self.send(handler, 200, self.file(relative), CONTENT_TYPES.get(extension, "application/octet-stream"),
                             extra=[("Cache-Control", "max-age=3600")])
        if route == "slow-headers":
            time.sleep(SLOW_SECONDS)
            return self.send(handler, 200, sample)
        if route == "stalled-body":
            self.send_head(handler, 200, "image/jpeg", len(sample))
            handler.wfile.write(sample[:len(sample) // 4])
            handler.wfile.flush()
            time.sleep(SLOW_SECONDS)
            handler.close_connection = True
            return None
        if route == "truncated-body":
            self.send_head(handler, 200, "image/jpeg", len(sample), close=True)
            handler.wfile.write(sample[:len(sample) // 2])
            handler.wfile.flush()
            handler.close_connection = True
            try:
                handler.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return None
        if route == "empty-body":
            return self.send(handler, 200, b"", "image/png")
        if route == "secret":  # outside --allow-source: any request here is an escape
            return self.send(handler, 200, sample)
        if route in ("origin-404", "origin-410", "origin-500", "origin-503"):
            return self.send(handler, int(route[-3:]), b"<html><body>error</body></html>", "text/html")
        if route == "html":
            return self.send(handler, 200, b"<!doctype html><html><body><img src=x></body></html>", "text/html; charset=utf-8")
        if route == "html-as-jpeg":
            return self.send(handler, 200, b"<!doctype html><html><body>Not found</body></html>\n", "image/jpeg")
        if route == "loop-a":
            return self.send(handler, 302, b"", "text/plain", extra=[("Location", f"/loop-b/{rest}")])
        if route == "loop-b":
            return self.send(handler, 302, b"", "text/plain", extra=[("Location", f"/loop-a/{rest}")])
        if route == "chain":
            step, _, tag = rest.partition("/")
            return self.send(handler, 302, b"", "text/plain", extra=[("Location", f"/chain/{int(step) + 1}/{tag}")])
        if route == "to-metadata":
            return self.send(handler, 302, b"", "text/plain", extra=[("Location", "http://169.254.169.254/latest/meta-data/")])
        if route == "to-127.0.0.2":
            return self.send(handler, 302, b"", "text/plain",
                             extra=[("Location", f"http://127.0.0.2:{self.trap_port}/file/jpeg/source.jpg")])
        if route == "oversized":
            size = MAX_SOURCE_BYTES + 500_000
            self.send_head(handler, 200, "image/png", size)
            self.stream(handler, size)
            return None
        if route == "oversized-stream":
            handler.send_response(200)
            handler.send_header("Content-Type", "image/png")
            handler.send_header("Connection", "close")
            handler.end_headers()
            handler.close_connection = True
            self.stream(handler, MAX_SOURCE_BYTES + 500_000)
            return None
        return self.send(handler, 404, b"unknown route", "text/plain")

    @staticmethod
    def send_head(handler, status, content_type, length, close=False):
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(length))
        if close:
            handler.send_header("Connection", "close")
        handler.end_headers()

    @staticmethod
    def stream(handler, size):
        chunk = b"\x89PNG\r\n\x1a\n" + bytes(65536 - 8)
        sent = 0
        while sent < size:
            piece = chunk[:min(len(chunk), size - sent)]
            handler.wfile.write(piece)
            sent += len(piece)
        handler.wfile.flush()


def run_origin(corpus, trap_port, connection):
    """The origin process: sends its port up the pipe, then serves until terminated."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops it (SIGTERM), not a Ctrl-C
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    origin = Origin(corpus, trap_port)
    connection.send(origin.port)
    origin.server.serve_forever()


def origin_stats(base):
    """The origin's hits per route and request log (GET /__stats)."""
    parsed = urllib.parse.urlsplit(base)
    try:
        connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
        connection.request("GET", "/__stats")
        stats = json.loads(connection.getresponse().read())
        connection.close()
        return stats
    except (OSError, http.client.HTTPException, ValueError):
        return {"hits": {}, "log": []}


class Trap:
    """A listener on 127.0.0.2: any connection means a refused address was reached (the SSRF guard failed)."""

    def __init__(self):
        self.hits = 0
        self.socket = None
        try:
            self.socket = socket.socket()
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.socket.bind(("127.0.0.2", 0))
            self.socket.listen(64)
            self.port = self.socket.getsockname()[1]
        except OSError:
            self.socket = None
            self.port = 9  # nothing listens: a guard failure then shows as a 502/504 instead of 403
        self.thread = threading.Thread(target=self.run, daemon=True)

    def start(self):
        if self.socket:
            self.thread.start()

    def run(self):
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.hits += 1
            connection.close()

    def stop(self):
        if self.socket:
            try:
                self.socket.close()
            except OSError:
                pass
