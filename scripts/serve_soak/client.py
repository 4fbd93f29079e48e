"""The HTTP clients: a keep-alive connection per thread, and raw sockets for slow readers, clients that hang up,
HTTP/1.0 and heads that trickle in."""

import http.client
import re
import socket
import time

from .settings import DEADLINE


class Client:
    """One keep-alive connection to nginx per thread."""

    retries = 0  # requests sent again because nginx had closed an idle kept-alive connection

    def __init__(self, host, port):
        self.host, self.port = host, port
        self.connection = None
        self.reused = False

    def get(self, path, accept=None):
        """(status, headers dict lowercased, body, elapsed) or raises OSError/HTTPException on a transport failure."""
        headers = {"Accept": accept} if accept is not None else {}
        for attempt in range(2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection(self.host, self.port, timeout=DEADLINE)
                self.reused = False
            started = time.monotonic()
            try:
                self.connection.request("GET", path, headers=headers)
                response = self.connection.getresponse()
                body = response.read()
                elapsed = time.monotonic() - started
                answer = {name.lower(): value for name, value in response.getheaders()}
                if response.will_close:
                    self.close()
                else:
                    self.reused = True
                return response.status, answer, body, elapsed
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                reused = self.reused
                self.close()
                # A kept-alive connection nginx closed between two requests: once more on a new connection (counted).
                if attempt == 0 and reused and time.monotonic() - started < 1.0:
                    Client.retries += 1
                    continue
                raise
            except BaseException:
                self.close()
                raise
        raise OSError("unreachable")

    def close(self):
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def raw_request(host, port, path, accept, read_delay=0.0, chunk=16384, disconnect_after=None):
    """A GET on a raw socket. With `disconnect_after`, reads that many bytes and hangs up (returns the status line);
    otherwise reads everything `chunk` bytes at a time, sleeping `read_delay` between reads, and parses it."""
    started = time.monotonic()
    with socket.socket() as connection:
        if read_delay:  # a small receive window, so the slowness reaches nginx instead of our kernel's buffer
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
        connection.settimeout(DEADLINE)
        connection.connect((host, port))
        request = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n" + (f"Accept: {accept}\r\n" if accept else "") + \
            "Connection: close\r\n\r\n"
        connection.sendall(request.encode())
        data = b""
        while True:
            if time.monotonic() - started > DEADLINE:
                raise socket.timeout("deadline")
            piece = connection.recv(chunk if disconnect_after is None else disconnect_after - len(data))
            if not piece:
                break
            data += piece
            if disconnect_after is not None and len(data) >= disconnect_after:
                break
            if read_delay:
                time.sleep(read_delay)
    elapsed = time.monotonic() - started
    if disconnect_after is not None:
        match = re.match(rb"HTTP/1\.[01] (\d{3})", data)
        return (int(match.group(1)) if match else None), elapsed
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = dechunk(body)
    return status, headers, body, elapsed


def raw_exchange(port, request, timeout, trickle=None, trickle_every=0.5):
    """Sends `request` to 127.0.0.1:`port` (then `trickle` every `trickle_every` s, if given, until the server answers or
    closes) and reads until the server closes or `timeout` passes: (bytes received, whether it closed)."""
    deadline = time.monotonic() + timeout
    received = b""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        connection.sendall(request)
        connection.settimeout(trickle_every if trickle else timeout)
        while time.monotonic() < deadline:
            try:
                chunk = connection.recv(65536)
            except socket.timeout:
                if trickle:
                    try:
                        connection.sendall(trickle)
                    except OSError:
                        return received, True
                continue
            except OSError:
                return received, True
            if not chunk:
                return received, True
            received += chunk
    return received, False


def dechunk(data):
    out, i = b"", 0
    while True:
        end = data.index(b"\r\n", i)
        size = int(data[i:end].split(b";")[0], 16)
        if size == 0:
            return out
        out += data[end + 2:end + 2 + size]
        i = end + 2 + size + 2
