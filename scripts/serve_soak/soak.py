"""The soak runner: starts the origin, the trap and the cluster, sends the requests (the phases are in phases.py),
samples the instances' memory, and collects what the report (report.py) needs."""

import collections
import http.client
import json
import multiprocessing
import os
import random
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

from magpie_scripts.signing import Signer

from .checks import Checker, Expect, Results
from .client import raw_request
from .formats import PILImage
from .memory import cache_gauge, rss_parts, vm_rss
from .nginx import accept_token
from .origin import Trap, origin_stats, run_origin
from .phases import Phases
from .plan import Plan
from .report import Report
from .settings import (ACCEPTS, BURST_INTERVAL, BURST_SIZE, CLUSTER, DEADLINE, DOWNLOAD_TIMEOUT, HEADER_TIMEOUT,
                       HOSTILE, IDLE_BEFORE_END, MAX_FRAMES, MAX_PIXELS, MAX_SOURCE_BYTES, PROCESSING_TIMEOUT, QUEUE,
                       RSS_INTERVAL, WARMUP_SECONDS, WORKERS, CannotRun, say, short)


class Soak(Phases, Report):
    """One soak: its origin, trap and cluster, the requests it sent and all it saw. The phases come from Phases
    (phases.py), the report from Report (report.py)."""

    def __init__(self, arguments):
        self.arguments = arguments
        self.results = Results()
        self.checker = Checker(self.results)
        self.stop = threading.Event()
        self.state_dir = None
        self.cluster_up = False
        self.instances = []
        self.rss = {}  # index -> [(t, kib)]
        self.parts = {}  # index -> [(t, RssAnon kib, RssFile kib)]
        self.metrics = {}  # (index, moment) -> cache bytes
        self.mix_started = None
        self.counts = collections.Counter()
        self.transport_errors = []
        self.hangs = []
        self.rng_seed = arguments.seed if arguments.seed is not None else random.randrange(1 << 30)

    # Cluster

    def allowed_sources(self):
        """Every origin route but /secret, and the refused addresses (so the address guard, not the prefix, meets them)."""
        routes = ["file", "loop-a", "loop-b", "chain", "to-metadata", "to-127.0.0.2"] + list(HOSTILE)
        return ([f"{self.origin_base}/{route}/" for route in routes]
                + ["http://169.254.169.254/", f"http://127.0.0.2:{self.trap.port}/", "http://10.23.45.67/"])

    def up(self):
        key, salt = secrets.token_hex(32), secrets.token_hex(16)
        self.signer = Signer.from_hex(key, salt)
        self.state_dir = tempfile.mkdtemp(prefix="magpie-serve-soak-")
        self.serve_flags = [
            "--allow-network", "127.0.0.1/32", "--header-timeout", str(HEADER_TIMEOUT), "--download-timeout", str(DOWNLOAD_TIMEOUT),
            "--processing-timeout", str(PROCESSING_TIMEOUT), "--workers", str(WORKERS), "--queue", str(QUEUE),
            "--max-source-bytes", str(MAX_SOURCE_BYTES), "--max-pixels", str(MAX_PIXELS),
            "--max-frames", str(MAX_FRAMES), "--no-access-log",
        ]
        for prefix in self.allowed_sources():
            self.serve_flags += ["--allow-source", prefix]
        command = [sys.executable, CLUSTER, "up", "--instances", str(self.arguments.instances), "--port", "0",
                   "--state-dir", self.state_dir]
        if self.arguments.magpie:
            command += ["--magpie", self.arguments.magpie]
        say(f"cluster up: {self.arguments.instances} instances, state in {self.state_dir}")
        self.cluster_up = True
        # The keys go through the environment: scripts/cluster writes them to a mode-600 file for the instances.
        result = subprocess.run(command + ["--"] + self.serve_flags, capture_output=True, text=True,
                                env=dict(os.environ, MAGPIE_KEY=key, MAGPIE_SALT=salt))
        if result.returncode != 0:
            raise CannotRun("scripts/cluster up failed:\n" + result.stderr[-3000:])
        self.front = result.stdout.strip().splitlines()[-1]
        parsed = urllib.parse.urlsplit(self.front)
        self.front_host, self.front_port = parsed.hostname, parsed.port
        status = self.status()
        self.instances = status["instances"]
        say(f"front {self.front}; instances " + ", ".join(f"{i['url']} pid {i['pid']}" for i in self.instances))

    def status(self):
        result = subprocess.run([sys.executable, CLUSTER, "status", "--json", "--state-dir", self.state_dir],
                                capture_output=True, text=True)
        try:
            return json.loads(result.stdout)
        except json.JSONDecodeError:
            return {"up": False, "instances": []}

    def down(self):
        if not self.cluster_up:
            return
        self.cluster_up = False
        say("cluster down")
        subprocess.run([sys.executable, CLUSTER, "down", "--state-dir", self.state_dir], capture_output=True, text=True)
        # Keep the logs, drop the caches.
        for folder in [os.path.join(self.state_dir, "cache")] + [
                os.path.join(self.state_dir, "instances", str(i["index"]), "cache") for i in self.instances]:
            shutil.rmtree(folder, ignore_errors=True)

    # Requests

    def run_one(self, client, path, expect, phase, accept=None):
        token = accept_token(accept)
        self.counts[phase] += 1
        started = time.monotonic()
        try:
            status, headers, body, elapsed = client.get(path, accept)
        except (socket.timeout, TimeoutError) as error:
            elapsed = time.monotonic() - started
            self.hang(expect, path, f"no answer within {DEADLINE:.0f} s ({error})", elapsed)
            return None
        except (OSError, http.client.HTTPException) as error:
            self.transport(expect, path, error, time.monotonic() - started)
            return None
        self.record(expect, path, token, status, headers, body, elapsed, phase)
        return status

    def record(self, expect, path, token, status, headers, body, elapsed, phase):
        with self.results.lock:
            self.results.latencies.append(elapsed)
            if elapsed > self.results.longest[0]:
                self.results.longest = (elapsed, f"{expect.kind} {status}")
            self.results.cache_status[headers.get("x-cache-status", "-")] += 1
        if elapsed > DEADLINE:
            self.hang(expect, path, f"answered after {elapsed:.1f} s", elapsed)
        self.checker.status(expect, status, headers, body, path, phase)
        if status == 200:
            self.checker.body(expect, token, headers, body, path)

    def hang(self, expect, path, text, elapsed):
        self.results.fail("hang", f"{expect.kind}: {text}: `{short(path)}`")
        with self.results.lock:
            self.hangs.append((elapsed, expect.kind, path))

    def transport(self, expect, path, error, elapsed):
        self.results.fail("transport", f"{expect.kind}: {type(error).__name__}: {error} after {elapsed:.1f} s: "
                                       f"`{short(path)}`")

    def run_slow_reader(self, plan, phase):
        path, expect = plan.slow_reader()
        accept = plan.rng.choice(ACCEPTS)[0]
        self.counts[phase] += 1
        started = time.monotonic()
        try:
            status, headers, body, elapsed = raw_request(self.front_host, self.front_port, path, accept,
                                                         read_delay=0.02, chunk=4096)
        except (socket.timeout, TimeoutError) as error:
            self.hang(expect, path, f"slow reader: {error}", time.monotonic() - started)
            return
        except (OSError, ValueError, IndexError) as error:
            self.transport(expect, path, error, time.monotonic() - started)
            return
        self.record(expect, path, accept_token(accept), status, headers, body, elapsed, phase)

    def run_disconnect(self, plan, phase):
        path, expect = plan.valid_random(kind="disconnecting client", group="disconnecting client (status line)")
        self.counts[phase] += 1
        try:
            status, elapsed = raw_request(self.front_host, self.front_port, path, None,
                                          disconnect_after=plan.rng.choice([1, 12, 40, 200, 600]))
        except (socket.timeout, TimeoutError) as error:
            self.hang(expect, path, f"disconnecting client: {error}", DEADLINE)
            return
        except OSError as error:
            self.transport(expect, path, error, 0)
            return
        with self.results.lock:
            self.results.disconnect_status[status] += 1
            self.results.latencies.append(elapsed)
        if status is not None:  # with 1 or 12 bytes read there may be no whole status yet
            row_expect = Expect("disconnecting client", "disconnecting client (status line)", {200}, job=True)
            self.checker.status(row_expect, status, {}, b"", path, phase, status_only=True)

    # Phases

    def plan_for(self, rng):
        plan = Plan.__new__(Plan)
        plan.__dict__.update(self.plan.__dict__)
        plan.rng = rng
        return plan

    def sampler(self):
        """VmRSS of every instance every RSS_INTERVAL s from the start of the mix; the cache gauge at warm-up."""
        warmup_taken = False
        while not self.sampling_done.is_set():
            now = time.monotonic()
            for instance in self.instances:
                kib = vm_rss(instance["pid"])
                if kib:
                    self.rss.setdefault(instance["index"], []).append((now - self.mix_started, kib))
                    anon, mapped = rss_parts(instance["pid"])
                    self.parts.setdefault(instance["index"], []).append((now - self.mix_started, anon, mapped))
            if not warmup_taken and now - self.mix_started >= self.warmup:
                warmup_taken = True
                for instance in self.instances:
                    self.metrics[(instance["index"], "warm-up")] = cache_gauge(instance["url"])
            self.sampling_done.wait(RSS_INTERVAL)

    def run(self):
        arguments = self.arguments
        say(f"seed {self.rng_seed}; Pillow {'available' if PILImage else 'missing: sizes from headers'}")
        self.trap = Trap()
        # The origin forks before this process starts any thread.
        context = multiprocessing.get_context("fork")
        receiving, sending = context.Pipe(duplex=False)
        self.origin_process = context.Process(target=run_origin, args=(arguments.corpus, self.trap.port, sending),
                                              daemon=True)
        self.origin_process.start()
        if not receiving.poll(30):
            raise CannotRun("the origin process did not start")
        self.origin_base = f"http://127.0.0.1:{receiving.recv()}"
        self.trap.start()
        self.plan = Plan(arguments.corpus, self.origin_base, self.trap.port, None, random.Random(self.rng_seed))
        self.up()
        self.plan.signer = self.signer
        started_pids = {i["index"]: i["pid"] for i in self.instances}
        self.config_checks()
        self.serial_pass(self.plan)
        self.protocol_checks()
        duration = arguments.minutes * 60
        self.warmup = WARMUP_SECONDS if duration >= 2 * WARMUP_SECONDS else duration / 2
        self.sampling_done = threading.Event()
        self.mix_started = time.monotonic()
        sampler = threading.Thread(target=self.sampler, daemon=True)
        sampler.start()
        threads = [threading.Thread(target=self.worker, args=(n,), daemon=True) for n in range(arguments.concurrency)]
        threads.append(threading.Thread(target=self.burster, daemon=True))
        threads.append(threading.Thread(target=self.prober, daemon=True))
        say(f"mix: {arguments.minutes:g} min, {arguments.concurrency} clients, a burst of {BURST_SIZE} every "
            f"{BURST_INTERVAL:.0f} s")
        for thread in threads:
            thread.start()
        end = self.mix_started + duration
        last_note = time.monotonic()
        while time.monotonic() < end:
            time.sleep(1)
            if time.monotonic() - last_note >= 30:
                last_note = time.monotonic()
                say(f"  {time.monotonic() - self.mix_started:.0f} s: {self.counts['mix']} requests, "
                    f"{sum(self.results.failure_counts.values())} check failures")
        self.stop.set()
        for thread in threads:
            thread.join(DEADLINE + 15)
        self.mix_seconds = time.monotonic() - self.mix_started
        say(f"mix done ({self.counts['mix']} requests); {IDLE_BEFORE_END:.0f} s idle before the last RSS samples")
        time.sleep(IDLE_BEFORE_END)
        self.end_time = time.monotonic() - self.mix_started
        for instance in self.instances:
            self.metrics[(instance["index"], "end")] = cache_gauge(instance["url"])
        self.sampling_done.set()
        sampler.join(RSS_INTERVAL + 2)
        for instance in self.instances:
            kib = vm_rss(instance["pid"])
            if kib:
                self.rss.setdefault(instance["index"], []).append((time.monotonic() - self.mix_started, kib))
                anon, mapped = rss_parts(instance["pid"])
                self.parts.setdefault(instance["index"], []).append((time.monotonic() - self.mix_started, anon, mapped))
        self.final_status = self.status()
        self.origin_stats = origin_stats(self.origin_base)
        self.started_pids = started_pids
        self.logs = {}
        for instance in self.instances:
            path = os.path.join(self.state_dir, "instances", str(instance["index"]), "serve.log")
            try:
                with open(path, errors="replace") as handle:
                    self.logs[instance["index"]] = handle.read()
            except OSError:
                self.logs[instance["index"]] = ""
        try:
            with open(os.path.join(self.state_dir, "logs", "error.log"), errors="replace") as handle:
                self.nginx_errors = handle.read()
        except OSError:
            self.nginx_errors = ""
