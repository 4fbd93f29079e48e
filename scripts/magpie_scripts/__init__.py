"""Helpers shared by the Python scripts under scripts/. A script run from the repository reaches them by putting
the scripts folder on sys.path, relative to its own file:

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))                    # scripts/serve-soak
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # scripts/bench_serve/driver.py

- signing: Magpie's (imgproxy-style) URL signatures and base64url.
- pairs: the spread and verdict of alternated pairs (scripts/bench-serve, scripts/bench-library).
- commands: pinned processes, their output and last JSON line (scripts/bench-library, scripts/bench-before-after).
- procs: a process tree and its CPU time from /proc (scripts/bench-serve, scripts/bench-cluster).
"""
