"""Running the benchmarks' processes: pinned to a core, their output, their last JSON line (scripts/bench-library,
scripts/bench-before-after)."""
import json
import subprocess


class Failure(Exception):
    """A process failed or did not print what was expected; the message has the end of its output."""


def pinned(core, argv):
    """argv run on `core` only (taskset)."""
    return ["taskset", "-c", str(core)] + argv


def run(argv, timeout=900):
    """Runs argv; its stdout and stderr, or Failure with the end of its output."""
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        tail = " | ".join((done.stdout + done.stderr).strip().splitlines()[-4:])
        raise Failure(f"`{' '.join(argv[:6])}` failed (status {done.returncode}): {tail}")
    return done.stdout, done.stderr


def json_line(argv):
    """The last line of argv's output that is a JSON object, parsed."""
    out, _ = run(argv)
    for line in reversed(out.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise Failure(f"`{' '.join(argv[:6])}` printed no JSON line: {out.strip()[-200:]!r}")
