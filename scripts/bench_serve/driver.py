#!/usr/bin/env python3
"""The measuring half of scripts/bench-serve (which installs the peers, prepares the images and builds magpie, then
runs this with absolute paths). Standard library only.

Starts the servers (an nginx origin for the sources, thumbor, magpie serve, an nginx serving magpie's results
statically), checks that each answers every format with an image of the right kind and size, runs wrk cells side by
side (cold: every request a distinct source URL; cached: a few URLs again and again), times libvips' vipsthumbnail as
the floor, soaks a fresh magpie with mixed load, samples every server's RSS twice a second, and prints a Markdown
section to stdout. Progress goes to stderr. Exit status 1 when a server fails to start, dies, answers a check wrongly,
or answers anything but 2xx (or a socket error) during a measured run.
"""
import argparse
import http.client
import json
import os
import re
import resource
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import bench_log  # beside this file: rows for scripts/bench's targets table and chart

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # scripts/: magpie_scripts
from magpie_scripts.commands import pinned  # noqa: E402
from magpie_scripts.signing import Signer  # noqa: E402
from magpie_scripts.pairs import (DISTURBED, EXTRA_PAIRS, IO_STALLED, REMEASURES, RULE,  # noqa: E402
                                  extra_pairs, spread, spread_text, verdict)
from magpie_scripts.procs import cpu_seconds, io_stall_seconds, process_tree  # noqa: E402

FORMATS = {  # name: (magpie format option, thumbor format filter, file extension, magic test)
    "jpeg": ("jpeg", "jpeg", "jpg", lambda b: b[:3] == b"\xff\xd8\xff"),
    "webp": ("webp", "webp", "webp", lambda b: b[:4] == b"RIFF" and b[8:12] == b"WEBP"),
    "avif": ("avif", "avif", "avif", lambda b: b[4:8] == b"ftyp" and b[8:12] in (b"avif", b"avis")),
}
LABEL = {"jpeg": "JPEG", "webp": "WebP", "avif": "AVIF"}
SIZE = 512
SMART_SIZE = 300  # the smart-against-centre cells: a 12 MP JPEG cropped to fill this square
QUALITY = 80
# Before a mode's measured pairs, every server gets one unmeasured cell per format, a quarter of a measured cell's length
# (5 s of 20; at least 2 s): the cached cells' magpie, just started, answered its first measured cell a quarter slower
# than its later ones (31.8k against 37-43k req/s), which alone put the cached JPEG pairs 28 % apart.
WARM_UP_SHARE = 4
WARM_UP_MINIMUM_SECONDS = 2
# A pair is measured again when, during either of its cells, processes other than the servers, the origin and wrk (or
# the hypervisor's stolen time) took DISTURBED % of a core or more (magpie_scripts.pairs, shared with bench-library).
# A pair's cells are cut into slices of at least this many seconds, alternated (magpie, peer, magpie, peer, …): in runs
# of whole 10 s cells, nginx's CPU per cached answer moved 17–21 µs and magpie's cold JPEG 61.9–69.6 req/s from one
# cell to the next with no other process running, so one cell decided a pair. Cold slices are longer: a slice
# ends with up to 8 requests unanswered, a few per cent of a cold slice's answers.
SLICE_SECONDS = {"cold": 10, "cached": 5}
# After each wrk run the server under test is given time to finish what it still has in hand (settle()): idle when it
# used at most SETTLE_BUSY of a core over SETTLE_WINDOW seconds, waited for at most SETTLE_SECONDS.
SETTLE_WINDOW = 0.2
SETTLE_BUSY = 0.05
SETTLE_SECONDS = 15


def say(message):
    print(f"bench-serve: {message}", file=sys.stderr, flush=True)


class Failure(Exception):
    pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, process, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            time.sleep(0.1)
    return False


# ---------------------------------------------------------------------------------------------------- processes


def status_kib(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def server_cpu_seconds(server):
    """User + system seconds of a started server's whole process tree (workers and children included)."""
    return cpu_seconds(process_tree(server.process.pid))


def busy_seconds():
    """CPU time the machine's processes have used (user, nice, system) plus time stolen by the hypervisor, from
    /proc/stat; interrupts are left out (loopback traffic is ours)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]] + [0] * 8
    return (fields[0] + fields[1] + fields[2] + fields[7]) / os.sysconf("SC_CLK_TCK")


class RSSSampler(threading.Thread):
    """Every 0.5 s, the summed VmRSS of each watched server's process tree (MiB), its peak over the whole run and per
    phase, and (for the soak) every sample with its time."""

    def __init__(self):
        super().__init__(daemon=True)
        self.lock = threading.Lock()
        self.watched = {}  # name -> pid
        self.peak = {}
        self.peak_anon = {}  # RssAnon: the process's own memory, without the shared libraries' file pages
        self.phase_peak = {}  # (name, phase) -> MiB
        self.phase_peak_anon = {}  # (name, phase) -> MiB of RssAnon
        self.phase = "start"
        self.timeline = {}  # name -> [(t, MiB)]
        self.stopping = threading.Event()

    def watch(self, name, pid, timeline=False):
        with self.lock:
            self.watched[name] = pid
            if timeline:
                self.timeline[name] = []

    def unwatch(self, name):
        with self.lock:
            self.watched.pop(name, None)

    def sample(self):
        now = time.monotonic()
        with self.lock:
            watched = dict(self.watched)
        for name, pid in watched.items():
            tree = process_tree(pid)
            rss = sum(status_kib(p, "VmRSS") for p in tree) / 1024
            anon = sum(status_kib(p, "RssAnon") for p in tree) / 1024
            if rss <= 0:
                continue
            with self.lock:
                self.peak[name] = max(self.peak.get(name, 0), rss)
                self.peak_anon[name] = max(self.peak_anon.get(name, 0), anon)
                key = (name, self.phase)
                self.phase_peak[key] = max(self.phase_peak.get(key, 0), rss)
                self.phase_peak_anon[key] = max(self.phase_peak_anon.get(key, 0), anon)
                if name in self.timeline:
                    self.timeline[name].append((now, rss, anon))

    def run(self):
        while not self.stopping.wait(0.5):
            self.sample()


class Server:
    def __init__(self, name, argv, log, env=None, ready_line=None, port=None, cwd=None):
        self.name = name
        self.log_path = log
        self.log = open(log, "wb")
        self.process = subprocess.Popen(
            argv, stdout=subprocess.PIPE if ready_line else self.log, stderr=self.log, env=env, cwd=cwd,
            start_new_session=True)
        self.port = port
        self.ready_line = ready_line
        self.argv = argv

    def wait_ready(self, seconds=90):
        if self.ready_line:
            deadline = time.monotonic() + seconds
            result = {}

            def reader():  # goes on draining stdout into the log after the line (the pipe must not fill up)
                for raw in self.process.stdout:
                    match = re.search(self.ready_line, raw.decode(errors="replace"))
                    if match and "port" not in result:
                        result["port"] = int(match.group(1))
                    try:
                        self.log.write(raw)
                        self.log.flush()
                    except ValueError:  # the log was closed: the server has been stopped
                        return

            threading.Thread(target=reader, daemon=True).start()
            while time.monotonic() < deadline and "port" not in result and self.process.poll() is None:
                time.sleep(0.05)
            if "port" not in result:
                return False
            self.port = result["port"]
        elif not wait_for_port(self.port, self.process, seconds):
            return False
        return self.process.poll() is None

    def alive(self):
        return self.process.poll() is None

    def tail(self, lines=15):
        try:
            with open(self.log_path, "rb") as f:
                return "\n".join(f.read().decode(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def hwm_mib(self):
        return sum(status_kib(p, "VmHWM") for p in [self.process.pid]) / 1024

    def stop(self, timeout=40):
        self.stop_seconds = 0
        if self.process.poll() is None:
            try:
                started = time.monotonic()
                self.process.send_signal(signal.SIGTERM)
                self.process.wait(timeout)
                self.stop_seconds = time.monotonic() - started
            except subprocess.TimeoutExpired:
                say(f"{self.name} did not stop within {timeout} s of SIGTERM: killing it")
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.close()
        return self.process.returncode


# ---------------------------------------------------------------------------------------------------- URLs


class Magpie:
    def __init__(self, key, salt, style="magpie"):
        self.signer = Signer(key, salt)
        self.style = style

    def path(self, fmt, source, size=SIZE):
        # The same request in either grammar: Magpie's own options, or imgproxy's (wave 3 part 1: same cost).
        options = ([f"rs:fit:{size}:{size}", f"q:{QUALITY}", f"f:{FORMATS[fmt][0]}"] if self.style == "imgproxy"
                   else [f"resize:{size}x{size}:fit", f"quality:{QUALITY}", f"format:{FORMATS[fmt][0]}"])
        return self.signer.url(options, source)


def thumbor_path(fmt, source, size=SIZE):
    return f"/unsafe/fit-in/{size}x{size}/filters:quality({QUALITY}):format({FORMATS[fmt][1]})/" + \
        urllib.parse.quote(source, safe=":/")


def fetch(url, timeout=120):
    request = urllib.request.Request(url, headers={"User-Agent": "bench-serve"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()
    except (OSError, http.client.HTTPException) as error:
        raise Failure(f"GET {url} failed: {error!r}")


def image_size(data, work):
    """(width, height) of an encoded image, from vipsheader."""
    probe = os.path.join(work, "probe.bin")
    with open(probe, "wb") as f:
        f.write(data)
    out = subprocess.run(["vipsheader", "-f", "width", probe], capture_output=True, text=True)
    out2 = subprocess.run(["vipsheader", "-f", "height", probe], capture_output=True, text=True)
    try:
        return int(out.stdout.strip()), int(out2.stdout.strip())
    except ValueError:
        return None


# ---------------------------------------------------------------------------------------------------- wrk


class WrkResult:
    def __init__(self, data, server_cpu, output):
        self.data = data
        self.requests = data["requests"]
        self.seconds = data["duration_us"] / 1e6
        self.rps = self.requests / self.seconds if self.seconds else 0
        self.p50 = data["p50_us"] / 1000
        self.p99 = data["p99_us"] / 1000
        self.non2xx = data["status"]
        self.socket_errors = data["connect"] + data["read"] + data["write"] + data["timeout"]
        self.repeated = data["repeated"]
        self.statuses = data.get("statuses", {})
        self.cpu = server_cpu / self.seconds * 100 if self.seconds else 0
        # The server's user + system time per answer (/proc/PID/stat over the measured window): unlike req/s, this
        # does not move when wrk or a neighbour takes the server's core for a while.
        self.cpu_per_answer_us = server_cpu / self.requests * 1e6 if self.requests else 0
        self.server_cpu = server_cpu
        self.output = output
        self.other = self.client = 0.0  # % of one core, set by Bench.wrk
        self.io_stall = 0.0  # seconds the machine's tasks all waited for I/O meanwhile, set by Bench.wrk

    @staticmethod
    def combined(slices):
        """One side's figure for a pair from its slices: requests, time, errors and CPU summed, p50 weighted by
        requests, p99 the largest slice's."""
        if len(slices) == 1:
            return slices[0]
        data = {key: sum(r.data[key] for r in slices)
                for key in ("requests", "duration_us", "status", "connect", "read", "write", "timeout", "repeated")}
        data["statuses"] = {}
        for r in slices:
            for status, count in r.statuses.items():
                data["statuses"][status] = data["statuses"].get(status, 0) + count
        data["p50_us"] = sum(r.data["p50_us"] * r.requests for r in slices) / max(1, data["requests"])
        data["p99_us"] = max(r.data["p99_us"] for r in slices)
        result = WrkResult(data, sum(r.server_cpu for r in slices), "".join(r.output for r in slices))
        if result.seconds:
            result.other = sum(r.other * r.seconds for r in slices) / result.seconds
            result.client = sum(r.client * r.seconds for r in slices) / result.seconds
        result.io_stall = sum(r.io_stall for r in slices)
        return result

    def problems(self):
        found = []
        if self.non2xx:
            bad = {k: v for k, v in self.statuses.items() if not k.startswith("2")}
            found.append(f"{self.non2xx} non-2xx answers" + (f" {bad}" if bad else ""))
        if self.socket_errors:
            d = self.data
            found.append(f"socket errors: connect {d['connect']}, read {d['read']}, write {d['write']}, "
                         f"timeout {d['timeout']}")
        if self.requests == 0:
            found.append("no request completed")
        return found


class Bench:
    def __init__(self, args):
        self.args = args
        self.work = args.work
        # Pinned (--pin): the server under test alone on one core, wrk and the origin on the other, so that neither
        # side's share of the machine changes from cell to cell; every server then gets one core's worth of workers.
        self.pinned = args.pin
        self.server_core, self.client_core = "0", str(max(1, (os.cpu_count() or 2) - 1))
        self.cores = 1 if self.pinned else args.cores
        self.connections = args.connections
        self.threads = 1 if self.pinned else max(1, min(self.cores, self.connections))
        self.sampler = RSSSampler()
        self.servers = []
        self.failures = []
        self.notes = []
        self.results = {}  # (fmt, mode, server) -> [WrkResult]
        self.set_aside = []  # (fmt, mode, run, [(server, WrkResult)]): pairs measured again, see DISTURBED
        self.extended = []  # the cells whose first pairs spread by NOISY or more: each measured EXTRA_PAIRS more
        self.floor = {}  # fmt -> images/s
        self.serial = 0
        self.images = sorted(f for f in os.listdir(args.images) if f.lower().endswith((".jpg", ".jpeg")))
        if len(self.images) < 4:
            raise Failure(f"fewer than 4 images in {args.images}")
        self.magpie_url = None
        self.thumbor_url = None
        self.static_url = None
        self.magpie_server = None
        self.formats = args.formats
        self.thumbor_formats = [f for f in args.formats if f not in args.thumbor_skip.split(",")]
        for fmt in args.formats:
            if fmt not in self.thumbor_formats:
                self.notes.append(f"thumbor's Pillow cannot write {LABEL[fmt]}: its {LABEL[fmt]} cells were skipped")
        self.paths_dir = os.path.join(self.work, "paths")
        shutil.rmtree(self.paths_dir, ignore_errors=True)
        os.makedirs(self.paths_dir)
        self.key = secrets.token_bytes(32)
        self.salt = secrets.token_bytes(16)
        self.magpie = Magpie(self.key, self.salt, args.url_style)
        self.hwm = {}
        self.cold_rate_hint = 0
        self.sizes = {}
        self.soak = None
        self.memory_cache = {}
        self.origin_url = None
        self.origin = None

    # --- servers

    def on_core(self, side, argv):
        """argv under `taskset -c CORE` when pinned: `side` is "server" (the server under test, the floor) or "client"
        (wrk, the origin). taskset execs the program, so the PID (and its /proc CPU time) stays the program's own."""
        if not self.pinned:
            return list(argv)
        return pinned(self.server_core if side == "server" else self.client_core, list(argv))

    def start(self, server, watch=None, timeline=False):
        self.servers.append(server)
        say(f"starting {server.name}")
        if not server.wait_ready():
            self.failures.append(f"{server.name} did not start (exit status {server.process.poll()}); "
                                 f"log {server.log_path}:\n{server.tail()}")
            server.stop(5)
            return False
        self.sampler.watch(watch or server.name, server.process.pid, timeline)
        return True

    def stop(self, server, name=None):
        name = name or server.name
        self.hwm[name] = max(self.hwm.get(name, 0), server.hwm_mib())
        self.sampler.sample()
        self.sampler.unwatch(name)
        alive = server.alive()
        status = server.stop()
        if not alive:
            self.failures.append(f"{server.name} had died (exit status {status}) before it was stopped; log "
                                 f"{server.log_path}:\n{server.tail()}")
        elif server.name.startswith("magpie"):
            if status not in (0, -signal.SIGTERM, 143):
                self.failures.append(f"{server.name} exited with status {status} on SIGTERM; log {server.log_path}:\n"
                                     f"{server.tail()}")
            if server.stop_seconds > 5:
                self.notes.append(f"{server.name} took {server.stop_seconds:.1f} s to stop after SIGTERM (idle)")

    def nginx_conf(self, name, port, root, workers):
        folder = os.path.join(self.work, name)
        os.makedirs(os.path.join(folder, "tmp"), exist_ok=True)
        conf = os.path.join(folder, "nginx.conf")
        with open(conf, "w") as f:
            f.write(f"""# made by scripts/bench-serve
worker_processes {workers};
daemon off;
master_process on;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    keepalive_timeout 75s;
    open_file_cache max=1000 inactive=60s;
    open_file_cache_valid 60s;
    types {{ image/jpeg jpg; image/webp webp; image/avif avif; }}
    default_type application/octet-stream;
    client_body_temp_path {folder}/tmp; proxy_temp_path {folder}/tmp; fastcgi_temp_path {folder}/tmp;
    uwsgi_temp_path {folder}/tmp; scgi_temp_path {folder}/tmp;
    server {{
        listen 127.0.0.1:{port};
        root {root};
    }}
}}
""")
        return conf

    def start_nginx(self, name, root, workers, side="server"):
        port = free_port()
        conf = self.nginx_conf(name, port, root, workers)
        server = Server(name, self.on_core(side, [self.args.nginx, "-c", conf, "-p", os.path.dirname(conf)]),
                        os.path.join(self.work, f"{name}.log"), port=port)
        return server if self.start(server) else None

    def start_magpie(self, name, cache, extra=()):
        shutil.rmtree(cache, ignore_errors=True)
        os.makedirs(cache)
        argv = [self.args.magpie, "serve", "--host", "127.0.0.1", "--port", "0",
                "--allow-network", "127.0.0.0/8", "--cache-dir", cache,
                "--workers", str(self.cores), "--local-root", self.args.images,
                # Room in the queue for every connection: one worker's default queue (8) is the pinned cells' whole
                # concurrency, and a 429 would count as a (cheap) answer.
                "--queue", str(max(8 * self.cores, 2 * self.connections)),
                # Like every server here (nginx has access_log off, thumbor runs with `-l warning`: warnings
                # only): no line per request.
                "--no-access-log"] + list(extra) + self.args.magpie_arg
        # The keys through the environment, as docs/DEPLOYMENT.md says, never on a command line.
        environment = dict(os.environ, MAGPIE_KEY=self.key.hex(), MAGPIE_SALT=self.salt.hex())
        server = Server(name, self.on_core("server", argv), os.path.join(self.work, f"{name}.log"), env=environment,
                        ready_line=r"listening on http://127\.0\.0\.1:(\d+)")
        return server if self.start(server, timeline=(name == "magpie-soak")) else None

    # --- checks

    def check(self, server_name, base, path, fmt, save_as=None):
        status, headers, body = fetch(base + path)
        lower = {k.lower(): v for k, v in headers.items()}
        if status != 200:
            raise Failure(f"{server_name} answered {status} for {fmt} ({base}{path}): {body[:300]!r}")
        if not FORMATS[fmt][3](body):
            raise Failure(f"{server_name} answered a {fmt} request with other bytes (Content-Type "
                          f"{lower.get('content-type')}, starting {body[:16]!r}): {base}{path}")
        size = image_size(body, self.work)
        if not size or max(size) != SIZE:
            raise Failure(f"{server_name} answered a {fmt} request with an image of {size}, not fit in "
                          f"{SIZE}x{SIZE}: {base}{path}")
        if save_as:
            os.makedirs(os.path.dirname(save_as), exist_ok=True)
            with open(save_as, "wb") as f:
                f.write(body)
        return len(body), lower

    def cold_memory_cap(self):
        """The cold cells' --memory-cache-size: 0 (none, as thumbor) unless a --magpie-arg gave another."""
        given = [arg.split("=", 1)[1] for arg in self.args.magpie_arg if arg.startswith("--memory-cache-size=")]
        given += [v for k, v in zip(self.args.magpie_arg, self.args.magpie_arg[1:]) if k == "--memory-cache-size"]
        return given[-1] if given else "0 (none)"

    def memory_cache_mib(self, base):
        """What magpie's result memory cache says it holds (its /metrics gauge), in MiB; None when not exposed."""
        try:
            status, _, body = fetch(base + "/metrics", timeout=10)
        except Failure:
            return None
        match = re.search(rb"^magpie_server_memory_cache_bytes\s+([0-9.e+]+)", body, re.M)
        return float(match.group(1)) / 2**20 if status == 200 and match else None

    def cache_layers(self, base):
        """magpie's answers so far by the layer they came from (its /metrics counter); empty when not exposed."""
        try:
            status, _, body = fetch(base + "/metrics", timeout=10)
        except Failure:
            return {}
        if status != 200:
            return {}
        found = re.findall(rb'^magpie_server_cache_hits_total\{layer="([a-z]+)"\}\s+([0-9.e+]+)', body, re.M)
        return {layer.decode(): float(count) for layer, count in found}

    # --- wrk

    def write_paths(self, name, paths):
        file = os.path.join(self.paths_dir, name + ".txt")
        with open(file, "w") as f:
            f.write("\n".join(paths) + "\n")
        return file

    def cold_paths(self, label, fmt, make, seconds):
        """A path file for a cold cell of `seconds`: a new source per request (more than the server could ask for in
        that time), each made a path for `fmt` by `make`."""
        sources = self.cold_sources(seconds * self.args.max_rate + 200)
        return self.write_paths(label, [make(fmt, s) for s in sources])

    def cold_sources(self, count):
        sources = []
        for _ in range(count):
            self.serial += 1
            image = self.images[self.serial % len(self.images)]
            sources.append(f"{self.origin_url}/{image}?n={self.serial}")
        return sources

    def wrk(self, base, files, seconds, server, count_statuses):
        env = dict(os.environ, BENCH_COUNT_STATUSES="1" if count_statuses else "0")
        argv = [self.args.wrk, "-t", str(self.threads), "-c", str(self.connections), "-d", f"{seconds}s",
                "--timeout", "30s", "-s", self.args.lua, base, "--", str(self.threads)] + files
        ours = lambda: server_cpu_seconds(server)
        origin = lambda: server_cpu_seconds(self.origin) if self.origin else 0
        children = lambda: sum(resource.getrusage(resource.RUSAGE_CHILDREN)[:2])
        cpu0, origin0, wrk0, busy0, io0 = ours(), origin(), children(), busy_seconds(), io_stall_seconds()
        out = subprocess.run(self.on_core("client", argv), capture_output=True, text=True, env=env)
        cpu1, origin1, wrk1, busy1, io1 = ours(), origin(), children(), busy_seconds(), io_stall_seconds()
        # Whatever else ran on the machine meanwhile (neither the server, the origin nor wrk), in % of one core.
        other = (busy1 - busy0) - (cpu1 - cpu0) - (origin1 - origin0) - (wrk1 - wrk0)
        line = next((l for l in out.stdout.splitlines() if l.startswith("BENCH ")), None)
        if out.returncode != 0 or not line:
            raise Failure(f"wrk failed (status {out.returncode}): {out.stdout[-500:]} {out.stderr[-500:]}")
        result = WrkResult(json.loads(line[6:]), cpu1 - cpu0, out.stdout)
        result.other = max(0.0, other) / result.seconds * 100 if result.seconds else 0
        result.client = (wrk1 - wrk0) / result.seconds * 100 if result.seconds else 0
        result.io_stall = io1 - io0 if io0 is not None and io1 is not None else 0.0
        self.settle(server)
        return result

    def settle(self, server):
        """Waits until `server` is idle after a wrk run (at most SETTLE_SECONDS): when wrk stops, up to one request a
        connection is still being answered, and on the shared server core that work would fall into the next cell,
        the peer's (8 cold AVIF requests are about a second of CPU; as 8-9 % "other processes" in 10 s slices)."""
        ours = lambda: server_cpu_seconds(server)
        deadline = time.monotonic() + SETTLE_SECONDS
        before = ours()
        while time.monotonic() < deadline:
            time.sleep(SETTLE_WINDOW)
            now = ours()
            if now - before <= SETTLE_WINDOW * SETTLE_BUSY:
                return
            before = now
        note = f"{server.name} was still busy {SETTLE_SECONDS} s after a cell"
        if note not in self.notes:
            self.notes.append(note)

    def warm_up_seconds(self):
        return max(WARM_UP_MINIMUM_SECONDS, round(self.args.duration / WARM_UP_SHARE))

    def warm_up(self, mode, cells):
        """One unmeasured cell of warm_up_seconds() per (format, server, base URL, path file) before a mode's pairs.
        Its answers are checked like a measured cell's; its memory counts in the "warm-up" phase, not the mode's."""
        seconds = self.warm_up_seconds()
        for fmt, name, server, base, paths in cells:
            say(f"{mode} {fmt}: {name} warming up for {seconds} s (not measured)")
            self.sampler.phase = "warm-up"
            result = self.wrk(base, [paths], seconds, server, mode == "cold")
            self.sampler.phase = "idle"
            for problem in result.problems():
                self.failures.append(f"{name}, {mode} {fmt} warm-up: {problem}")
            say(f"  warm-up: {result.rps:.1f} req/s, server CPU {result.cpu:.0f} %")

    def cell(self, fmt, mode, name, server, base, files, seconds, count_statuses):
        """One measured wrk run of `seconds`, recorded as a cell."""
        say(f"{mode} {fmt}: {name} for {seconds} s")
        return self.record(fmt, mode, name, self.measure_slice(fmt, mode, name, server, base, files, seconds,
                                                                count_statuses))

    def measure_slice(self, fmt, mode, name, server, base, files, seconds, count_statuses):
        """One wrk run, its memory in the mode's phase; the server must still be alive after it."""
        # Which of magpie's layers answered a cached cell (a memory hit never leaves the event loop; anything else
        # goes through the router), so that a slow cell can be told from one that missed.
        layers = self.cache_layers(base) if mode == "cached" and name == "magpie" else None
        self.sampler.phase = mode
        result = self.wrk(base, files, seconds, server, count_statuses)
        self.sampler.phase = "idle"
        if layers is not None:
            after = self.cache_layers(base)
            answered = {k: after.get(k, 0) - layers.get(k, 0) for k in after}
            total = sum(answered.values())
            if total and answered.get("memory", 0) < total:
                self.notes.append(f"{name}, {mode} {fmt}: {total - answered.get('memory', 0)} of {total} answers "
                                  f"did not come from the memory cache ({answered})")
        if not server.alive():
            raise Failure(f"{name} died during the {mode} {fmt} run (exit status {server.process.poll()}); log "
                          f"{server.log_path}:\n{server.tail()}")
        return result

    def record(self, fmt, mode, name, result):
        """A cell's result (one run, or a pair's side summed over its slices) among the results, its problems
        among the failures."""
        self.results.setdefault((fmt, mode, name), []).append(result)
        for problem in result.problems():
            self.failures.append(f"{name}, {mode} {fmt}: {problem}")
        if result.repeated and mode != "cached":
            self.notes.append(f"{name}, {mode} {fmt}: the path list ran out, {result.repeated} requests repeated a "
                              "path (those may have been cache hits)")
        say(f"  {result.rps:.1f} req/s, p50 {result.p50:.1f} ms, p99 {result.p99:.1f} ms, server CPU "
            f"{result.cpu:.0f} %, wrk CPU {result.client:.0f} %, other processes {result.other:.0f} %"
            + (f", I/O stalled {result.io_stall:.1f} s" if result.io_stall >= 0.05 else ""))
        return result

    def slicing(self, mode):
        """How a pair's cells are cut: (slices, seconds each). Each side's --duration is run as slices alternated
        with the other side's (magpie, peer, magpie, peer, …), so a drift of the host over a pair's minute
        weighs on both sides alike; at least SLICE_SECONDS[mode] a slice."""
        total = self.cell_seconds(mode)
        count = max(1, total // SLICE_SECONDS[mode])
        return count, total // count

    def cell_seconds(self, mode):
        """A side's measured seconds in one pair: --cached-duration for the cached cells, else --duration."""
        return (self.args.cached_duration or self.args.duration) if mode == "cached" else self.args.duration

    def slicing_text(self, mode):
        count, seconds = self.slicing(mode)
        return f"{count} × {seconds} s"

    def pair(self, fmt, mode, run, sides, count_statuses):
        """One alternated pair of a cell: each side's cell in turn, magpie's first, cut into slices (slicing()).
        sides: (name, server, base URL, path files for an attempt and a slice). A pair whose cells saw other
        processes take DISTURBED % of a core or more is set aside (reported, left out of the medians) and measured
        again, at most REMEASURES times. Returns the results that stand, as (name, WrkResult)."""
        count, seconds = self.slicing(mode)
        for attempt in range(REMEASURES + 1):
            slices = {name: [] for name, _, _, _ in sides}
            for part in range(count):
                for name, server, base, files in sides:
                    say(f"{mode} {fmt}: {name} for {seconds:g} s (pair {run + 1}, slice {part + 1} of {count})")
                    slices[name].append(self.measure_slice(fmt, mode, name, server, base, files(attempt, part),
                                                           seconds, count_statuses))
            results = [(name, self.record(fmt, mode, name, WrkResult.combined(slices[name])))
                       for name, _, _, _ in sides]
            busiest = max((r.other for _, r in results), default=0)
            stalled = max((r.io_stall for _, r in results), default=0)
            if (busiest < DISTURBED and stalled < IO_STALLED) or attempt == REMEASURES:
                return results
            for name, result in results:
                self.results[(fmt, mode, name)].remove(result)
            self.set_aside.append((fmt, mode, run, results))
            say(f"  {mode} {fmt}, pair {run + 1}: other processes took {busiest:.0f} % of a core, the machine's I/O "
                f"stalled {stalled:.1f} s, measuring it again")
        return results

    def alternated_pairs(self, mode, peer, one_pair):
        """--runs pairs of each format's cell in `mode` (one_pair(run, fmt)), formats by turns; then, for each cell
        whose pairs spread by NOISY or more on its judged ratio, EXTRA_PAIRS more (magpie_scripts.pairs)."""
        for run in range(self.args.runs):
            for fmt in self.formats:
                one_pair(run, fmt)
        for fmt in self.formats:
            row = self.cell_verdict(fmt, mode, peer)
            more = extra_pairs(row["pair_ratios"]) if row else 0
            if more:
                say(f"{mode} {fmt}: the first {row['pairs']} pairs spread by {spread_text(spread(row['pair_ratios']))}, "
                    f"measuring {more} more")
                self.extended.append(f"{mode} {LABEL[fmt]}")
            for run in range(self.args.runs, self.args.runs + more):
                one_pair(run, fmt)

    # --- libvips floor

    def side_seconds(self):
        """Seconds of the libvips floor per format and of each smart cell: --side-duration, else --duration."""
        return self.args.side_duration or self.args.duration

    def vips_floor(self, fmt):
        seconds = self.side_seconds()
        out_dir = os.path.join(self.work, "vips-out")
        links = os.path.join(self.work, "vips-in")
        shutil.rmtree(out_dir, ignore_errors=True)
        shutil.rmtree(links, ignore_errors=True)
        os.makedirs(out_dir)
        os.makedirs(links)
        suffix = {"jpeg": f"jpg[Q={QUALITY},strip]", "webp": f"webp[Q={QUALITY},strip]",
                  # heifsave effort = 9 - speed: effort 1 is aom speed 8, what magpie serve and thumbor use here.
                  "avif": f"avif[Q={QUALITY},effort=1,strip]"}[fmt]
        env = dict(os.environ, VIPS_CONCURRENCY="1")
        serial = [0]

        def inputs(count):
            names = []
            for _ in range(count):
                serial[0] += 1
                image = self.images[serial[0] % len(self.images)]
                link = os.path.join(links, f"{serial[0]}-{image}")
                os.link(os.path.join(self.args.images, image), link)
                names.append(link)
            return names

        def run(batches):
            shutil.rmtree(out_dir, ignore_errors=True)
            os.makedirs(out_dir)
            started = time.monotonic()
            procs = [subprocess.Popen(self.on_core("server", [self.args.vipsthumbnail, "--vips-cache-max", "0", "-s",
                                                              f"{SIZE}x{SIZE}", "-o", os.path.join(out_dir, "%s." + suffix)]
                                                 + batch), env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                     for batch in batches]
            for p in procs:
                _, err = p.communicate()
                if p.returncode != 0:
                    raise Failure(f"vipsthumbnail failed for {fmt}: {err.decode(errors='replace')[-300:]}")
            return time.monotonic() - started

        # Calibrate with each image once per process, then size each process's batch for `seconds` (again if the
        # estimate fell well short).
        calibration = len(self.images)
        rate = calibration / max(run([inputs(calibration) for _ in range(self.cores)]), 0.01)
        for _ in range(3):
            per_process = max(calibration, int(seconds * rate))
            count = per_process * self.cores
            elapsed = run([inputs(per_process) for _ in range(self.cores)])
            rate = per_process / max(elapsed, 0.01)
            if elapsed >= 0.7 * seconds:
                break
        produced = [n for n in os.listdir(out_dir) if n.endswith("." + FORMATS[fmt][2])]
        if len(produced) < count:
            raise Failure(f"vipsthumbnail made {len(produced)} of {count} {fmt} files")
        self.floor[fmt] = count / elapsed
        say(f"vips floor {fmt}: {count} images in {elapsed:.1f} s, {self.floor[fmt]:.1f} images/s")
        shutil.rmtree(links, ignore_errors=True)

    # --- the run

    def run(self):
        a = self.args
        self.sampler.start()
        load_start = open("/proc/loadavg").read().split()[:3]
        try:
            self.measure()
        except Failure as failure:
            self.failures.append(str(failure))
        finally:
            for server in reversed(self.servers):
                if server.process.poll() is None:
                    self.hwm[server.name] = max(self.hwm.get(server.name, 0), server.hwm_mib())
                    server.stop()
            self.sampler.stopping.set()
            # The servers' caches and the path lists can reach gigabytes; the logs and nginx's files stay.
            for folder in ("magpie-cache", "magpie-cached-cache", "magpie-soak-cache", "vips-out", "vips-in", "paths"):
                shutil.rmtree(os.path.join(self.work, folder), ignore_errors=True)
        load_end = open("/proc/loadavg").read().split()[:3]
        self.report(load_start, load_end)
        return 1 if self.failures else 0

    def measure(self):
        a = self.args
        if a.vipsthumbnail:
            for fmt in self.formats:
                self.vips_floor(fmt)
        else:
            self.notes.append("vipsthumbnail unavailable: the libvips floor was skipped")

        origin = self.origin = self.start_nginx("nginx-origin", a.images, 1, side="client")
        if not origin:
            raise Failure("the nginx origin did not start: nothing to measure")
        self.origin_url = f"http://127.0.0.1:{origin.port}"
        for image in self.images:
            status, _, _ = fetch(f"{self.origin_url}/{image}?n=0")
            if status != 200:
                raise Failure(f"the nginx origin answered {status} for {image} (can its workers read {a.images}?)")

        thumbor = None
        if a.thumbor:
            port = free_port()
            env = dict(os.environ, BENCH_THREADS=str(self.cores))
            thumbor = Server("thumbor", self.on_core("server", [a.thumbor, "--ip", "127.0.0.1", "--port", str(port),
                                                                "--conf", a.thumbor_conf, "-l", "warning"]),
                             os.path.join(self.work, "thumbor.log"), env=env, port=port)
            if not self.start(thumbor):
                thumbor = None
            else:
                self.thumbor_url = f"http://127.0.0.1:{port}"
        else:
            self.notes.append("thumbor unavailable: its cells were skipped")

        magpie = None
        if a.magpie:
            # The cold cells compare each server's own memory, so both keep the same budget of results in memory:
            # thumbor keeps none, and neither does this instance (--memory-cache-size 0; a --magpie-arg setting it wins).
            # The cached cells get an instance with the default cap of their own.
            magpie = self.start_magpie("magpie", os.path.join(self.work, "magpie-cache"), extra=("--memory-cache-size", "0"))
            if magpie:
                self.magpie_url = f"http://127.0.0.1:{magpie.port}"
        else:
            self.notes.append("magpie not built (--peers-only): its cells were skipped")

        # One check per server and format (also the servers' warm-up), before anything is measured.
        static_root = os.path.join(self.work, "static")
        shutil.rmtree(static_root, ignore_errors=True)
        for fmt in self.formats:
            for i in range(2):
                source = f"{self.origin_url}/{self.images[i]}?n=check{i}"
                if thumbor and fmt in self.thumbor_formats:
                    n, _ = self.check("thumbor", self.thumbor_url, thumbor_path(fmt, source), fmt)
                    self.sizes.setdefault(("thumbor", fmt), []).append(n)
                if magpie:
                    n, _ = self.check("magpie", self.magpie_url, self.magpie.path(fmt, source), fmt)
                    self.sizes.setdefault(("magpie", fmt), []).append(n)

        # Cold: each request its own source URL (a distinct ?n= on the origin), so neither server has anything
        # cached; magpie and thumbor alternate, format by format.
        cold_cells = [(fmt, name, server, base, make) for fmt in self.formats
                      for name, server, base, make in (("magpie", magpie, self.magpie_url, self.magpie.path),
                                                       ("thumbor", thumbor, self.thumbor_url, thumbor_path))
                      if server and (name == "magpie" or fmt in self.thumbor_formats)]
        warm_up = self.warm_up_seconds()
        self.warm_up("cold", [(fmt, name, server, base, self.cold_paths(f"warm-up-{name}-{fmt}", fmt, make, warm_up))
                              for fmt, name, server, base, make in cold_cells])

        def cold_pair(run, fmt):
            sides = [(name, server, base,
                      lambda attempt, part, name=name, make=make, fmt=fmt, run=run:
                      [self.cold_paths(f"cold-{name}-{fmt}-{run}-{attempt}-{part}", fmt, make,
                                       self.slicing("cold")[1])])
                     for f, name, server, base, make in cold_cells if f == fmt]
            for name, result in self.pair(fmt, "cold", run, sides, True):
                if name == "magpie":
                    self.cold_rate_hint = max(self.cold_rate_hint, result.rps)
        self.alternated_pairs("cold", "thumbor", cold_pair)
        # Cached: every image once per format (the warm-up pass, whose answers nginx then serves as files), then
        # the same URLs again and again, magpie and nginx alternating. Without magpie (--peers-only) nginx serves
        # thumbor's answers instead, so that its cells still run.
        if magpie:
            self.stop(magpie)
            magpie = self.start_magpie("magpie-cached", os.path.join(self.work, "magpie-cached-cache"))
            if magpie:
                self.magpie_url = f"http://127.0.0.1:{magpie.port}"
        cached = {}
        for fmt in self.formats:
            ext = FORMATS[fmt][2]
            paths = []
            for image in self.images:
                save_as = os.path.join(static_root, fmt, f"{image.rsplit('.', 1)[0]}.{ext}")
                source = f"{self.origin_url}/{image}"
                if magpie:
                    paths.append(self.magpie.path(fmt, source))
                    self.check("magpie", self.magpie_url, paths[-1], fmt, save_as=save_as)
                elif thumbor and fmt in self.thumbor_formats:
                    self.check("thumbor", self.thumbor_url, thumbor_path(fmt, source), fmt, save_as=save_as)
            if magpie:
                cached[("magpie", fmt)] = self.write_paths(f"cached-magpie-{fmt}", paths)
        if not magpie and thumbor:
            self.notes.append("without magpie, nginx served thumbor's results in the cached cells")
        if thumbor:
            self.stop(thumbor)
        static = None
        if os.path.isdir(static_root):
            static = self.start_nginx("nginx-static", static_root, self.cores)
        if static:
            self.static_url = f"http://127.0.0.1:{static.port}"
            for fmt in self.formats:
                if not os.path.isdir(os.path.join(static_root, fmt)):
                    continue
                paths = [f"/{fmt}/{image.rsplit('.', 1)[0]}.{FORMATS[fmt][2]}" for image in self.images]
                for path in paths[:1]:
                    self.check("nginx", self.static_url, path, fmt)
                cached[("nginx", fmt)] = self.write_paths(f"cached-nginx-{fmt}", paths)
        self.warm_up("cached", [(fmt, name, server, base, cached[(name, fmt)]) for fmt in self.formats
                                for name, server, base in (("magpie", magpie, self.magpie_url),
                                                           ("nginx", static, self.static_url))
                                if server and (name, fmt) in cached])

        def cached_pair(run, fmt):
            self.pair(fmt, "cached", run, [(name, server, base, lambda attempt, part, files=[cached[(name, fmt)]]: files)
                                           for name, server, base in (("magpie", magpie, self.magpie_url),
                                                                      ("nginx", static, self.static_url))
                                           if server and (name, fmt) in cached], False)
        self.alternated_pairs("cached", "nginx", cached_pair)
        if static:
            self.stop(static)
        if magpie:
            self.memory_cache["magpie-cached"] = self.memory_cache_mib(self.magpie_url)
            self.stop(magpie)

        if a.smart_image:
            self.smart_cells()

        # Soak: a fresh magpie, mixed load (every other request a new source, the others the cached URLs of every
        # format) for --soak-minutes, RSS sampled all along.
        if magpie and a.soak_minutes > 0:
            self.run_soak()
        self.stop(origin)

    # --- smart crop against the centre crop (wave 3, part 2)

    def smart_cells(self):
        """Cold `smart` requests against the same requests' centre crop, in thumbor's URL grammar, on one 12 MP JPEG
        (every request a new ?n=, so nothing is cached and every smart request detects again) → 300×300: a magpie
        and a thumbor of their own (thumbor with its face and feature detectors, which the other cells' thumbor does
        without, so its RSS there is not the detectors'; magpie with --insecure-unsigned for the /unsafe/ paths)."""
        a = self.args
        folder, image = os.path.split(os.path.abspath(a.smart_image))
        origin = self.start_nginx("nginx-smart-origin", folder, 1, side="client")
        if not origin:
            self.failures.append("the smart cells' origin did not start")
            return
        origin_url = f"http://127.0.0.1:{origin.port}"
        servers = []
        if a.thumbor:
            port = free_port()
            env = dict(os.environ, BENCH_THREADS=str(self.cores), BENCH_DETECTORS="1")
            thumbor = Server("thumbor-smart", self.on_core("server", [a.thumbor, "--ip", "127.0.0.1", "--port", str(port),
                                                                      "--conf", a.thumbor_conf, "-l", "warning"]),
                             os.path.join(self.work, "thumbor-smart.log"), env=env, port=port)
            if self.start(thumbor):
                servers.append(("thumbor", thumbor, f"http://127.0.0.1:{port}"))
        if a.magpie:
            magpie = self.start_magpie("magpie-smart", os.path.join(self.work, "magpie-smart-cache"),
                                       extra=["--insecure-unsigned"])
            if magpie:
                servers.append(("magpie", magpie, f"http://127.0.0.1:{magpie.port}"))
        size = SMART_SIZE

        def path(mode, n):
            source = urllib.parse.quote(f"{origin_url}/{image}?n={mode}{n}", safe=":/")
            return f"/unsafe/{size}x{size}/{'smart/' if mode == 'smart' else ''}filters:quality({QUALITY})/{source}"

        per_cell = self.side_seconds() * 100 + 100  # far more than either server answers per second at 12 MP
        try:
            for name, server, base in servers:
                for mode in ("centre", "smart"):
                    status, headers, body = fetch(base + path(mode, "check"))
                    got = image_size(body, self.work) if status == 200 else None
                    if status != 200 or not FORMATS["jpeg"][3](body) or got != (size, size):
                        raise Failure(f"{name} answered {status} with {got} for {mode} {base}{path(mode, 'check')}: "
                                      f"{body[:200]!r}")
            for run in range(a.runs):
                for name, server, base in servers:
                    for mode in ("centre", "smart"):
                        self.serial += 1
                        paths = [path(mode, f"{self.serial}-{i}") for i in range(per_cell)]
                        file = self.write_paths(f"smart-{name}-{mode}-{run}", paths)
                        self.cell("jpeg", mode, name, server, base, [file], self.side_seconds(), True)
        except Failure as failure:
            self.failures.append(str(failure))
        finally:
            for _, server, _ in servers:
                self.stop(server)
            self.stop(origin)
            shutil.rmtree(os.path.join(self.work, "magpie-smart-cache"), ignore_errors=True)

    def smart_report(self, w):
        rows = []
        for name in ("magpie", "thumbor"):
            centre, smart = self.best("jpeg", "centre", name), self.best("jpeg", "smart", name)
            if centre and smart and smart.rps:
                rows.append((name, centre, smart, centre.rps / smart.rps))
        if not rows:
            return
        w("### Smart crop against the centre crop (wave 3, part 2)")
        w("")
        w(f"Cold (a new `?n=` per request: fetched, decoded, detected, cropped, encoded every time), thumbor's URL "
          f"grammar on both servers: `/unsafe/{SMART_SIZE}x{SMART_SIZE}/[smart/]filters:quality({QUALITY})/SOURCE` "
          f"with SOURCE {os.path.basename(self.args.smart_image)} ({self.args.smart_note}); thumbor with "
          f"DETECTORS = face, then feature detector. Cost = the centre crop's req/s over the smart one's, with the same "
          f"{self.connections} connections, {self.side_seconds()} s a cell.")
        w("")
        w("| Server | centre req/s | smart req/s | smart / centre cost | p50 centre / smart | Target | Met |")
        w("| --- | ---: | ---: | ---: | ---: | --- | --- |")
        for name, centre, smart, cost in rows:
            met = ("met" if cost <= 1.3 else "**not met**") if name == "magpie" else "–"
            w(f"| {name} | {centre.rps:,.1f} | {smart.rps:,.1f} | {cost:.2f}× | {centre.p50:.1f} / {smart.p50:.1f} ms | "
              f"{'≤ 1.3×' if name == 'magpie' else '(for scale)'} | {met} |")
        w("")

    def run_soak(self):
        a = self.args
        seconds = max(10, int(round(a.soak_minutes * 60)))
        server = self.start_magpie("magpie-soak", os.path.join(self.work, "magpie-soak-cache"))
        if not server:
            return
        base = f"http://127.0.0.1:{server.port}"
        cached = []
        for fmt in self.formats:
            for image in self.images:
                path = self.magpie.path(fmt, f"{self.origin_url}/{image}")
                self.check("magpie-soak", base, path, fmt)
                cached.append(path)
        rate = self.cold_rate_hint or a.max_rate
        count = int(rate * seconds * 1.5) + 500
        cold = []
        for i, source in enumerate(self.cold_sources(count)):
            cold.append(self.magpie.path(self.formats[i % len(self.formats)], source))
        cold_file = self.write_paths("soak-cold", cold)
        cached_file = self.write_paths("soak-cached", cached)
        with self.sampler.lock:
            self.sampler.timeline["magpie-soak"] = []
        started = time.monotonic()
        # The result memory cache fills towards its configured size during the soak: that is bounded growth by
        # design, so its gauge is polled too and the verdict also looks at RSS net of it.
        cache_timeline, polling = [], threading.Event()

        def poll_cache():
            while not polling.wait(2.0):
                mib = self.memory_cache_mib(base)
                if mib is not None:
                    cache_timeline.append((time.monotonic() - started, mib))

        poller = threading.Thread(target=poll_cache, daemon=True)
        poller.start()
        result = self.cell("mixed", "soak", "magpie-soak", server, base, [cold_file, cached_file], seconds, True)
        polling.set()
        poller.join()
        self.memory_cache["magpie-soak"] = self.memory_cache_mib(base)
        samples = self.sampler.timeline.get("magpie-soak", [])
        timeline = [(t - started, rss) for t, rss, _ in samples]
        anon_timeline = [(t - started, anon) for t, _, anon in samples]
        self.stop(server)
        # Every sample, for a closer look than the per-minute means (seconds from the start, MiB).
        with open(os.path.join(self.work, "magpie-soak-rss.tsv"), "w") as f:
            f.write("seconds\trss_mib\trss_anon_mib\n" + "".join(f"{t:.1f}\t{rss:.1f}\t{anon:.1f}\n" for t, rss, anon in
                                                           ((t - started, rss, anon) for t, rss, anon in samples)))
            f.write("# result memory cache (seconds, MiB): " + ", ".join(f"{t:.0f} {m:.1f}" for t, m in cache_timeline) + "\n")
        # RSS at a moment moves with the requests in hand (their pixels) and the allocator's freed pages not handed
        # back yet (jemalloc's 2 s decay): in a soak of this load by hand, RssAnon read 37-56 MiB in samples 2 s
        # apart while jemalloc's live heap stayed at 34-39 MiB. So the soak compares the median of the minute that
        # starts at 1:00 with the median of the last minute, not two instants.
        window = min(60.0, seconds / 4)
        reference = window  # the first window starts one window in: the minute from 1:00 in a full soak

        def around(start, timeline=timeline, width=window):
            samples = [rss for t, rss in timeline if start <= t < start + width]
            if not samples:
                samples = [min(timeline, key=lambda s: abs(s[0] - start))[1]] if timeline else [0]
            return statistics.median(samples)

        def cache_at(start):
            at = start + window / 2
            return min(cache_timeline, key=lambda s: abs(s[0] - at))[1] if cache_timeline else 0.0

        end = min(seconds, max((t for t, _ in timeline), default=0))
        last = max(reference, end - window)
        minutes = [(m, around((m - 1) * 60, width=60.0)) for m in range(2, int(end // 60) + 1)]
        self.soak = {"seconds": seconds, "reference": reference, "end": end, "first": around(reference),
                     "last": around(last), "last_start": last, "window": window, "result": result, "minutes": minutes,
                     "peak": max((r for _, r in timeline), default=0),
                     "cache_first": cache_at(reference), "cache_last": cache_at(last),
                     "anon_first": around(reference, anon_timeline), "anon_last": around(last, anon_timeline)}

    # --- report

    def best(self, fmt, mode, name):
        runs = self.results.get((fmt, mode, name))
        if not runs:
            return None
        return sorted(runs, key=lambda r: r.rps)[len(runs) // 2]  # the median run (the upper one of two)

    def pairs(self, fmt, mode, peer):
        """The cell's alternated pairs in run order, (magpie's run i, the peer's run i), both with answers."""
        ours = self.results.get((fmt, mode, "magpie"), [])
        theirs = self.results.get((fmt, mode, peer), [])
        return [(m, p) for m, p in zip(ours, theirs) if m.requests and p.requests]

    def cell_verdict(self, fmt, mode, peer):
        """One row of the serve table: the pairs' median req/s, both ratios with their spread, the target's verdict.
        Cold cells are judged on req/s (magpie ÷ thumbor); cached ones on CPU per answer (magpie ÷ nginx), with
        the req/s ratio beside it. None when the cell has no pair."""
        pairs = self.pairs(fmt, mode, peer)
        if not pairs:
            return None
        rps = [m.rps / p.rps for m, p in pairs]
        cpu = [m.cpu_per_answer_us / p.cpu_per_answer_us for m, p in pairs if p.cpu_per_answer_us]
        row = {
            "pairs": len(pairs),
            "magpie_rps": statistics.median(m.rps for m, _ in pairs),
            "peer_rps": statistics.median(p.rps for _, p in pairs),
            "magpie_cpu": statistics.median(m.cpu_per_answer_us for m, _ in pairs),
            "peer_cpu": statistics.median(p.cpu_per_answer_us for _, p in pairs),
            "rps_ratio": statistics.median(rps), "rps_spread": spread(rps),
            "cpu_ratio": statistics.median(cpu) if cpu else None, "cpu_spread": spread(cpu),
            "pair_ratios": rps if mode == "cold" else cpu,
        }
        if mode == "cold":
            limit = 2.0 if fmt == "jpeg" else 1.3
            row.update(key="w3p4-cold-jpeg" if fmt == "jpeg" else "w3p4-cold-webp-avif", limit=f"≥ {limit:.1f}× thumbor",
                       verdict=verdict(row["rps_ratio"] >= limit, row["rps_spread"]),
                       measured=f"{row['rps_ratio']:.2f}× thumbor req/s")
        else:
            row.update(key="w3p4-cached-cpu", limit="CPU per answer ≤ 2.0× nginx")
            if row["cpu_ratio"] is None:
                row.update(verdict="not measured", measured="no CPU figure for nginx")
            else:
                row.update(verdict=verdict(row["cpu_ratio"] <= 2.0, row["cpu_spread"]),
                           measured=f"CPU per answer {row['cpu_ratio']:.2f}× nginx (req/s {row['rps_ratio']:.2f}×)")
        return row

    def set_aside_text(self):
        """The report's line on the pairs measured again because a neighbour took part of the machine (DISTURBED)."""
        if not self.set_aside:
            return (f"No pair was measured again: in every cell, other processes took less than {DISTURBED:.0f} % of "
                    f"a core, and the machine's I/O stalled less than {IO_STALLED:g} s.")
        parts = []
        for fmt, mode, run, results in self.set_aside:
            cells = ", ".join(f"{name} {r.rps:,.1f} req/s, {r.cpu_per_answer_us:.0f} µs per answer, other processes "
                              f"{r.other:.0f} %" + (f", I/O stalled {r.io_stall:.1f} s" if r.io_stall >= 0.05 else "")
                              for name, r in results)
            ratio = ""
            if len(results) == 2 and results[1][1].rps and results[1][1].cpu_per_answer_us:
                m, p = results[0][1], results[1][1]
                ratio = (f": ratio {m.rps / p.rps:.2f}" if mode == "cold" else
                         f": ratio {m.cpu_per_answer_us / p.cpu_per_answer_us:.2f}")
            parts.append(f"{mode} {LABEL[fmt]} pair {run + 1} ({cells}){ratio}")
        return (f"Pairs set aside and measured again, because other processes took {DISTURBED:.0f} % of a core or more, "
                f"or the machine's I/O stalled {IO_STALLED:g} s or more (/proc/pressure/io, \"full\"), during one of "
                f"their cells (at most {REMEASURES} times a pair; the last attempt stands): "
                + "; ".join(parts) + ".")

    def log_cell(self, fmt, mode, row):
        """The cell's chart bar (time per request: the peer's req/s over magpie's) and its target row."""
        label = LABEL[fmt]
        judged = row["rps_spread"] if mode == "cold" else row["cpu_spread"]
        pairs = f"{row['pairs']} pair{'s' if row['pairs'] != 1 else ''}" + (
            f", spread {judged * 100:.0f} %" if judged is not None else "")
        if mode == "cold":
            bench_log.ratio("server", f"cold {label} vs thumbor", 1 / row["rps_ratio"])
            subject = f"cold {label}: magpie {row['magpie_rps']:,.1f} vs thumbor {row['peer_rps']:,.1f} req/s ({pairs})"
        else:
            bench_log.ratio("server", f"cached {label} vs nginx static", 1 / row["rps_ratio"])
            subject = (f"cached {label}: magpie {row['magpie_cpu']:.0f} vs nginx {row['peer_cpu']:.0f} µs CPU per answer "
                       f"({pairs})")
        bench_log.target(row["key"], subject, row["measured"], row["limit"], row["verdict"])

    def report(self, load_start, load_end):
        a = self.args
        out = []
        w = out.append
        w("## Image server (wave 3, part 4: pinned cells, alternated pairs)" if self.pinned else "## Image server (wave 2, part 5)")
        w("")
        w(f"`scripts/bench-serve`: `magpie serve` against thumbor {a.thumbor_version or '(not installed)'} "
          f"(PIL engine, Pillow {a.pillow_version or '?'}, {self.cores} engine threads), nginx "
          f"{a.nginx_version or '?'} and libvips {a.vips_version or '?'}, with wrk on the same machine "
          + (f"(pinned: the server under test alone on core {self.server_core} with one worker — magpie "
             f"`--workers 1`, thumbor one process and one engine thread, nginx one worker — and wrk and the origin "
             f"on core {self.client_core}; CPU per answer is the server's user + system time from /proc over the "
             f"measured window): " if self.pinned else
             f"({self.cores} cores, shared by wrk, the origin and the server under test): ")
          + f"{self.connections} connections, {self.threads} wrk threads, {a.duration} s per cold cell and "
          f"{self.cell_seconds('cached')} s per cached cell, {a.runs} "
          f"alternated pair(s) per cell (magpie, peer, magpie, peer, …; the medians shown), each side of a pair cut "
          f"into slices alternated with the other's (cold {self.slicing_text('cold')}, cached "
          f"{self.slicing_text('cached')}), after one unmeasured "
          f"{self.warm_up_seconds()} s cell per server and format. Inputs: {len(self.images)} real photos of about 2K "
          f"({', '.join(self.images)}), fit into {SIZE}×{SIZE}, quality {QUALITY}; AVIF at aom speed 8 for "
          f"all (magpie serve's own setting; thumbor's AVIF_SPEED, libvips' effort 1)."
          + (f" magpie serve ran with `{' '.join(a.magpie_arg)}` added." if a.magpie_arg else ""))
        w("")
        w("- **cold**: every request is a new source URL (`?n=` differs; served by an nginx origin on loopback), so "
          "each one is fetched over HTTP, decoded, resized and encoded; thumbor keeps no source or result storage.")
        w("- **cached**: the same "
          f"{len(self.images)} URLs per format again and again after one warm-up pass; nginx serves the very "
          f"files magpie answered (sendfile, open_file_cache, {self.cores} workers).")
        w("- No server writes a line per request: nginx with `access_log off`, magpie serve with `--no-access-log`, "
          "thumbor with `-l warning`.")
        w("")
        w("| Format | Mode | Pairs | Magpie req/s | Peer | Peer req/s | req/s ratio (spread) "
          "| CPU per answer magpie / peer | CPU ratio (spread) | Target | Verdict |")
        w("| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- | --- |")
        verdicts = []
        pct = lambda s: f" ({s * 100:.0f} %)" if s is not None else ""
        for mode, peer in (("cold", "thumbor"), ("cached", "nginx")):
            for fmt in self.formats:
                row = self.cell_verdict(fmt, mode, peer)
                if row is None:
                    w(f"| {LABEL[fmt]} | {mode} | 0 | – | {peer} | – | – | – | – | – | skipped |")
                    continue
                verdicts.append(row["verdict"])
                self.log_cell(fmt, mode, row)
                cpu = f"{row['cpu_ratio']:.2f}×{pct(row['cpu_spread'])}" if row["cpu_ratio"] is not None else "–"
                shown = "**not met**" if row["verdict"] == "not met" else row["verdict"]
                w(f"| {LABEL[fmt]} | {mode} | {row['pairs']} | {row['magpie_rps']:,.1f} | {peer} | "
                  f"{row['peer_rps']:,.1f} | {row['rps_ratio']:.2f}×{pct(row['rps_spread'])} | "
                  f"{row['magpie_cpu']:.0f} / {row['peer_cpu']:.0f} µs | {cpu} | {row['limit']} | {shown} |")
        w("")
        w("Each pair's ratio, in run order (cold: req/s; cached: CPU per answer): " + "; ".join(
            f"{mode} {LABEL[fmt]} " + ", ".join(f"{r:.2f}" for r in row["pair_ratios"])
            for mode, peer in (("cold", "thumbor"), ("cached", "nginx")) for fmt in self.formats
            for row in [self.cell_verdict(fmt, mode, peer)] if row) + f". {RULE[0].upper()}{RULE[1:]}. "
          + (f"Cells that measured {EXTRA_PAIRS} more pairs in this run: {', '.join(self.extended)}."
             if self.extended else "No cell needed more pairs in this run."))
        w("")
        w(self.set_aside_text())
        w("")
        if self.floor:
            w("libvips floor (no HTTP: `vipsthumbnail -s 512x512` on the same files, "
              f"{self.cores} processes at once with VIPS_CONCURRENCY=1, output written to disk), against the cold "
              "cells:")
            w("")
            w("| Format | vips images/s | Magpie cold req/s | Magpie / floor | thumbor / floor |")
            w("| --- | ---: | ---: | ---: | ---: |")
            for fmt in self.formats:
                if fmt not in self.floor:
                    continue
                m = self.best(fmt, "cold", "magpie")
                t = self.best(fmt, "cold", "thumbor")
                f = self.floor[fmt]
                if m and m.rps:  # 0 req/s when magpie died during the cell: no ratio to chart
                    bench_log.ratio("server", f"cold {LABEL[fmt]} vs the libvips floor (no HTTP)", f / m.rps,
                                    note="floor: vipsthumbnail alone, no HTTP")
                w(f"| {LABEL[fmt]} | {f:.1f} | {f'{m.rps:.1f}' if m else 'skipped'} | "
                  f"{f'{m.rps / f:.2f}' if m else '–'} | {f'{t.rps / f:.2f}' if t else '–'} |")
            w("")
        # Output sizes, so speed is not bought with bigger files.
        if self.sizes:
            parts = []
            for fmt in self.formats:
                cells = []
                for name in ("magpie", "thumbor"):
                    sizes = self.sizes.get((name, fmt))
                    if sizes:
                        cells.append(f"{name} {statistics.mean(sizes) / 1024:.1f} KiB")
                if cells:
                    parts.append(f"{LABEL[fmt]}: " + ", ".join(cells))
            w("Mean output size of the check requests: " + "; ".join(parts) + ".")
            w("")
        cpu = []
        for (fmt, mode, name), runs in sorted(self.results.items()):
            if mode == "soak":
                continue
            cpu.append(f"{name} {mode} {fmt} {statistics.mean(r.cpu for r in runs):.0f} % "
                       f"(wrk {statistics.mean(r.client for r in runs):.0f} %)")
        if cpu:
            w("Server CPU during the cells, and wrk's beside it (100 % = one core): " + ", ".join(cpu) + ".")
            w("")
        w("Peak RSS (VmRSS of the server and its child processes, sampled every 0.5 s, or the kernel's VmHWM of its "
          "main process when higher):")
        w("")
        w("| Server | Peak RSS | during the cold cells | peak anonymous (RssAnon) | result memory cache at the end "
          "(magpie's /metrics) |")
        w("| --- | ---: | ---: | ---: | ---: |")
        peaks = {}
        for name in ("magpie", "magpie-cached", "thumbor", "nginx-static", "nginx-origin", "magpie-soak"):
            peak = max(self.sampler.peak.get(name, 0), self.hwm.get(name, 0))
            if not peak:
                continue
            peaks[name] = peak
            cold = self.sampler.phase_peak.get((name, "cold"))
            held = self.memory_cache.get(name)
            anon = self.sampler.peak_anon.get(name)
            w(f"| {name} | {peak:.1f} MiB | {f'{cold:.1f} MiB' if cold else '–'} | "
              f"{f'{anon:.1f} MiB' if anon else '–'} | {f'{held:.1f} MiB' if held is not None else '–'} |")
        w("")
        # Each server's own memory at the same concurrency: RssAnon (no shared libraries' file pages) during the cold
        # cells, where both decode and encode for every request, with the same budget of results in memory: thumbor
        # keeps none, and the cold cells' magpie none either (0 unless --magpie-arg sets --memory-cache-size), stated
        # in the line.
        anon = (self.sampler.phase_peak_anon.get(("magpie", "cold")), self.sampler.phase_peak_anon.get(("thumbor", "cold")))
        if all(anon):
            ratio = anon[0] / anon[1]
            met = "met" if ratio <= 0.75 else "not met"
            verdicts.append(met)
            bench_log.ratio("memory", "magpie serve peak anonymous memory (cold cells) vs thumbor", ratio)
            bench_log.target("w3p4-anon", f"RssAnon during the cold cells, {self.connections} connections: magpie "
                             f"{anon[0]:.1f} MiB, thumbor {anon[1]:.1f} MiB (peak RSS {peaks.get('magpie', 0):.1f} vs "
                             f"{peaks.get('thumbor', 0):.1f} MiB)", f"{ratio:.2f}× thumbor", "≤ 0.75×", met)
            w(f"Peak anonymous memory during the cold cells ({self.connections} concurrent requests), magpie / thumbor: "
              f"{anon[0]:.1f} / {anon[1]:.1f} MiB = {ratio:.2f} (target ≤ 0.75): {met}; the same budget of results in "
              f"memory on both sides: magpie's result memory cache capped at {self.cold_memory_cap()} during the cold "
              f"cells, thumbor keeps none (the cached cells ran on a second magpie, `magpie-cached`, with its default "
              f"cap). Peak RSS, for scale: "
              f"{peaks.get('magpie', 0) / peaks['thumbor']:.2f}." if peaks.get("thumbor") else ".")
            w("")
        if self.soak:
            s = self.soak
            r = s["result"]
            change = (s["last"] - s["first"]) / s["first"] * 100 if s["first"] else 0
            met = "met" if abs(change) <= 10 else "**not met**"
            verdicts.append(met)
            fmt_t = lambda sec: f"{int(sec // 60)}:{int(sec % 60):02d}"
            first_at = f"{fmt_t(s['reference'])}–{fmt_t(s['reference'] + s['window'])}"
            last_at = f"{fmt_t(s['last_start'])}–{fmt_t(s['end'])}"
            w(f"Soak ({s['seconds'] / 60:g} min, a fresh magpie, every other request a new source in turn "
              f"{'/'.join(LABEL[f] for f in self.formats)}, the others the cached URLs; {r.requests:,} requests, "
              f"{r.rps:.1f} req/s, p99 {r.p99:.1f} ms): "
              f"RSS (the median of the samples, every 0.5 s, in each window) {s['first']:.1f} MiB over {first_at}, "
              f"{s['last']:.1f} MiB over {last_at} ({change:+.1f} %; target within 10 %): {met}. Peak "
              f"{s['peak']:.1f} MiB."
              + (" Each minute from the second, its median: "
                 + ", ".join(f"{m}: {v:.1f}" for m, v in s["minutes"]) + " MiB." if len(s["minutes"]) > 1 else ""))
            net_first, net_last = s["first"] - s["cache_first"], s["last"] - s["cache_last"]
            net_change = (net_last - net_first) / net_first * 100 if net_first else 0
            net_met = "met" if abs(net_change) <= 10 else "**not met**"
            shortened = " (shortened: the target's is 10 min)" if s["seconds"] < 600 else ""
            bench_log.target("w3p4-soak-rss", f"{s['seconds'] / 60:g}-min mixed soak{shortened}; net of the result "
                             f"memory cache {net_change:+.1f} %; medians of a minute",
                             f"{s['first']:.1f} MiB over {first_at} → "
                             f"{s['last']:.1f} MiB over {last_at} ({change:+.1f} %)", "within ±10 %", abs(change) <= 10)
            w(f"The result memory cache held {s['cache_first']:.1f} MiB over {first_at} and "
              f"{s['cache_last']:.1f} MiB over {last_at} (bounded by --memory-cache-size); RSS net of it: "
              f"{net_first:.1f} → {net_last:.1f} MiB ({net_change:+.1f} %; target within 10 %): {net_met}. Of RSS, the "
              f"process's own (RssAnon, the rest being file pages of its libraries): {s['anon_first']:.1f} → "
              f"{s['anon_last']:.1f} MiB; every sample in `magpie-soak-rss.tsv`.")
            w("")
        elif self.args.magpie and self.args.soak_minutes > 0:
            w("Soak: not run (magpie failed earlier).")
            w("")
        self.smart_report(w)
        for note in self.notes:
            w(f"Note: {note}.")
        if self.notes:
            w("")
        others = [r.other for runs in self.results.values() for r in runs] + [
            r.other for _, _, _, results in self.set_aside for _, r in results]
        busiest = max(others, default=0)
        w(f"Load average at the start {' '.join(load_start)}, at the end {' '.join(load_end)}. Processes other than "
          f"the servers, the origin and wrk used {statistics.mean(others) if others else 0:.0f} % of a core on "
          f"average during the cells, {busiest:.0f} % at most"
          + (" — **the machine was busy: these numbers are skewed**." if busiest > 20 else "."))
        w("")
        w(f"Command: `{a.command}`")
        w("")
        if self.failures:
            w("**Failures:**")
            w("")
            for failure in self.failures:
                w("- " + failure.replace("\n", "\n  "))
            w("")
        print("\n".join(out))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--work", required=True)
    parser.add_argument("--images", required=True)
    parser.add_argument("--lua", required=True)
    parser.add_argument("--wrk", required=True)
    parser.add_argument("--nginx", required=True)
    parser.add_argument("--vipsthumbnail", default="")
    parser.add_argument("--thumbor", default="")
    parser.add_argument("--thumbor-conf", default="")
    parser.add_argument("--magpie-arg", action="append", default=[], help="one more argument for magpie serve")
    parser.add_argument("--thumbor-skip", default="", help="formats thumbor cannot write, comma-separated")
    parser.add_argument("--magpie", default="")
    parser.add_argument("--url-style", choices=["magpie", "imgproxy"], default="magpie",
                        help="magpie serve's URLs in Magpie's option grammar or in imgproxy's")
    parser.add_argument("--cores", type=int, default=os.cpu_count())
    parser.add_argument("--connections", type=int, default=0)
    parser.add_argument("--duration", type=int, default=20)
    parser.add_argument("--side-duration", type=int, default=0,
                        help="seconds of the libvips floor per format and of each smart cell (default: --duration)")
    parser.add_argument("--cached-duration", type=int, default=0,
                        help="seconds per cached cell (default: --duration)")
    parser.add_argument("--runs", type=int, default=1, help="alternated pairs per cell (magpie, peer, magpie, peer, …)")
    parser.add_argument("--pin", action="store_true",
                        help="the server under test on core 0 with one core's workers, wrk and the origin on the last core")
    parser.add_argument("--soak-minutes", type=float, default=10)
    parser.add_argument("--formats", default="jpeg,webp,avif")
    parser.add_argument("--max-rate", type=int, default=600,
                        help="cold requests per second a server could possibly reach (sizes the path lists)")
    parser.add_argument("--command", default="scripts/bench-serve")
    parser.add_argument("--smart-image", default="", help="a 12 MP JPEG for the smart-against-centre cells (none: skipped)")
    parser.add_argument("--smart-note", default="", help="what the smart image is, for the report")
    parser.add_argument("--thumbor-version", default="")
    parser.add_argument("--pillow-version", default="")
    parser.add_argument("--nginx-version", default="")
    parser.add_argument("--vips-version", default="")
    args = parser.parse_args()
    # Pinned, 8 connections: the concurrency the memory target names (8 cold requests at once).
    args.connections = args.connections or (8 if args.pin else 2 * args.cores)
    args.formats = [f for f in args.formats.split(",") if f]
    for f in args.formats:
        if f not in FORMATS:
            parser.error(f"unknown format {f}")
    args.work = os.path.abspath(args.work)
    args.images = os.path.abspath(args.images)
    os.makedirs(args.work, exist_ok=True)
    try:
        bench = Bench(args)
    except Failure as failure:
        say(str(failure))
        return 1
    return bench.run()


if __name__ == "__main__":
    sys.exit(main())
