"""The phases of the soak, as methods of Soak (soak.py): the serial pass, the mix's client threads, the bursts, the
protocol checks of each instance, and the configuration checks."""

import collections
import os
import random
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.parse

from .client import Client, raw_exchange
from .settings import (ACCEPTS, BURST_INTERVAL, BURST_SIZE, DEADLINE, DOT_SEGMENTS, HEADER_TIMEOUT, HOSTILE, REPO,
                       TALL_THIN, say, short)


class Phases:
    """Mixed into Soak: uses its plan, front, instances, results and stop event, and run_one."""

    def serial_pass(self, plan):
        """Every fixed case once, one at a time: statuses must be exactly the documented ones."""
        client = Client(self.front_host, self.front_port)
        cases = []
        for source in plan.sources:
            for mode in ("fit", "fill", "stretch", "fit-rotate"):
                for fmt_kind in ("ext", "auto"):
                    path, expect = plan.valid(source, mode=mode, box=source["boxes"][0], fmt_kind=fmt_kind,
                                              group="valid image")
                    accepts = [a for a, _ in ACCEPTS[:4]] if fmt_kind == "auto" else [None]
                    for accept in accepts:
                        cases.append((path, expect, accept))
        for _ in range(6):
            cases.append(plan.bad_signature() + (None,))
        for _ in range(3):
            cases.append(plan.bad_option() + (None,))
        for entry in plan.bombs:
            cases.append(plan.bomb(entry, box=(64, 64), resize=True) + (None,))
            cases.append(plan.bomb(entry, resize=False) + (None,))
        for entry in plan.corrupt:
            cases.append(plan.corrupt_file(entry, box=(64, 48)) + (None,))
        for route in HOSTILE:
            cases.append(plan.hostile(route) + (None,))
        for option in TALL_THIN:
            cases.append(plan.tall_thin(option) + (None,))
        for entry in DOT_SEGMENTS:
            cases.append(plan.dot_segment(entry) + (None,))
        say(f"serial pass: {len(cases)} requests, one at a time")
        for number, (path, expect, accept) in enumerate(cases, 1):
            if self.stop.is_set():
                return
            self.run_one(client, path, expect, "serial", accept)
            if number % 100 == 0:
                say(f"  {number}/{len(cases)}")
        client.close()

    def worker(self, number):
        rng = random.Random(self.rng_seed * 1000 + number)
        plan = self.plan_for(rng)
        client = Client(self.front_host, self.front_port)
        kinds = ["valid", "valid-cold", "bad-signature", "bad-option", "bomb", "corrupt", "hostile", "slow-reader",
                 "disconnect", "tall-thin", "dot-segment"]
        weights = [40, 6, 8, 2, 6, 8, 10, 3, 4, 3, 2]
        while not self.stop.is_set():
            kind = rng.choices(kinds, weights)[0]
            accept = rng.choice(ACCEPTS)[0]
            if kind == "valid":
                self.run_one(client, *plan.valid_random(), "mix", accept)
            elif kind == "valid-cold":
                self.run_one(client, *plan.valid_random(kind="valid (cold)", group="valid image (cold)", cold=True),
                             "mix", accept)
            elif kind == "bad-signature":
                self.run_one(client, *plan.bad_signature(), "mix", accept)
            elif kind == "bad-option":
                self.run_one(client, *plan.bad_option(), "mix", accept)
            elif kind == "bomb":
                self.run_one(client, *plan.bomb(), "mix", accept)
            elif kind == "corrupt":
                self.run_one(client, *plan.corrupt_file(), "mix", accept)
            elif kind == "hostile":
                self.run_one(client, *plan.hostile(), "mix", accept)
            elif kind == "slow-reader":
                self.run_slow_reader(plan, "mix")
            elif kind == "tall-thin":
                self.run_one(client, *plan.tall_thin(), "mix", accept)
            elif kind == "dot-segment":
                self.run_one(client, *plan.dot_segment(), "mix", accept)
            else:
                self.run_disconnect(plan, "mix")
            self.stop.wait(rng.uniform(0.05, self.arguments.think * 2))
        client.close()

    def burster(self):
        rng = random.Random(self.rng_seed * 1000 + 999)
        plan = self.plan_for(rng)
        number = 0
        while not self.stop.wait(BURST_INTERVAL):
            number += 1
            cases = [plan.valid_random(kind="burst (cold)", group="burst: 40 simultaneous cold requests", cold=True)
                     for _ in range(BURST_SIZE)]
            barrier = threading.Barrier(BURST_SIZE)
            seen = collections.Counter()
            lock = threading.Lock()

            def one(case):
                path, expect = case
                client = Client(self.front_host, self.front_port)
                accept = rng.choice(ACCEPTS)[0]
                expect.statuses = {200}
                try:
                    barrier.wait(timeout=10)
                except threading.BrokenBarrierError:
                    pass
                status = self.run_one(client, path, expect, "mix", accept)
                client.close()
                with lock:
                    seen[status] += 1

            threads = [threading.Thread(target=one, args=(case,), daemon=True) for case in cases]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(DEADLINE + 10)
            with self.results.lock:
                self.results.bursts.append(seen)
            say(f"burst {number}: " + ", ".join(f"{status}×{count}" for status, count in sorted(seen.items(), key=str)))

    def protocol_checks(self):
        """Each instance asked directly: HTTP/1.0 without keep-alive is answered and closed; a head trickling in past
        --header-timeout gets 408 and a close. Recorded as the `http/1.0` and `slow head` checks."""
        signed = self.plan.valid(self.plan.sources[0], mode="fit", box=(64, 64), fmt_kind="ext", extension="png")[0]
        for instance in self.instances:
            port = urllib.parse.urlsplit(instance["url"]).port
            for path in ("/health", signed):
                started = time.monotonic()
                answer, closed = raw_exchange(port, f"GET {path} HTTP/1.0\r\n\r\n".encode(), 15)
                status = answer.split(b" ", 2)[1] if answer.startswith(b"HTTP/1.") else b"?"
                if status in (b"200", b"429", b"503") and closed and time.monotonic() - started < 15:
                    self.results.ok("http/1.0")
                else:
                    self.results.fail("http/1.0", f"instance {instance['index']} {short(path, 60)}: status {status!r}, "
                                                  f"closed {closed} after {time.monotonic() - started:.1f} s")
            started = time.monotonic()
            answer, closed = raw_exchange(port, b"GET /health HTTP/1.1\r\nHost: soak\r\nX-Slow: ", HEADER_TIMEOUT + 15,
                                          trickle=b"a", trickle_every=0.5)
            waited = time.monotonic() - started
            if answer.startswith(b"HTTP/1.1 408") and closed and waited < HEADER_TIMEOUT + 10:
                self.results.ok("slow head")
            else:
                self.results.fail("slow head", f"instance {instance['index']}: {answer[:40]!r}, closed {closed} "
                                               f"after {waited:.1f} s (--header-timeout {HEADER_TIMEOUT})")

    def prober(self):
        """The protocol checks every 20 s during the mix."""
        while not self.stop.wait(20):
            self.protocol_checks()

    def config_checks(self):
        """`magpie serve` must refuse each bad setting at start, exit status 2, naming the setting and the nearest one."""
        magpie = self.arguments.magpie or os.path.join(REPO, ".build", "release", "magpie")
        folder = tempfile.mkdtemp(prefix="magpie-serve-soak-config-")
        cases = [
            ('{"maxSourceByte": "1MB"}', None, [], 'unknown setting "maxSourceByte"', '"maxSourceBytes"'),
            ('{"max_source_bytes": "1MB"}', None, [], 'unknown setting "max_source_bytes"', '"maxSourceBytes"'),
            ('{"max-pixels": 10}', None, [], 'unknown setting "max-pixels"', '"maxPixels"'),
            ('{"maxSourceBytes": "1MB"', None, [], "is not valid JSON", "serve.json"),
            (None, ("MAGPIE_ALLOW_SOURCES", "http://a/"), [], "MAGPIE_ALLOW_SOURCES", "MAGPIE_ALLOW_SOURCE"),
            (None, None, ["--port", "99999"], "is not a port", "65535"),
        ]
        try:
            for contents, variable, flags, problem, hint in cases:
                arguments = [magpie, "serve", "--port", "0"] + flags
                if contents is not None:
                    with open(os.path.join(folder, "serve.json"), "w") as handle:
                        handle.write(contents)
                    arguments += ["--config", os.path.join(folder, "serve.json")]
                environment = {k: v for k, v in os.environ.items() if not k.startswith("MAGPIE_")}
                if variable:
                    environment[variable[0]] = variable[1]
                try:
                    run = subprocess.run(arguments, capture_output=True, text=True, timeout=30, env=environment)
                except subprocess.TimeoutExpired:
                    self.results.fail("config", f"{contents or variable or flags}: still running after 30 s (started?)")
                    continue
                if run.returncode == 2 and problem in run.stderr and hint in run.stderr:
                    self.results.ok("config")
                else:
                    self.results.fail("config", f"{contents or variable or flags}: exit {run.returncode}, "
                                                f"{run.stderr.strip()[-200:]!r}")
        finally:
            shutil.rmtree(folder, ignore_errors=True)
