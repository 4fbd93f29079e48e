"""Memory of the instances: VmRSS and its anonymous/file split from /proc, the result cache gauge from /metrics, and
the verdict on RSS growth."""

import http.client
import re
import urllib.parse

from .settings import RSS_TARGET


def rss_verdict(warm, end, target=RSS_TARGET):
    """(ratio, met) for one instance's RSS after warm-up and at the end."""
    if not warm:
        return None, False
    ratio = end / warm
    return ratio, ratio <= target


def rss_parts(pid):
    """(RssAnon, RssFile) in KiB: heap and other private memory, and file pages mapped in (the kernel can drop those)."""
    values = {}
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith(("RssAnon:", "RssFile:")):
                    values[line.split(":")[0]] = int(line.split()[1])
    except (OSError, ValueError):
        pass
    return values.get("RssAnon"), values.get("RssFile")


def vm_rss(pid):
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def cache_gauge(url):
    """magpie_server_memory_cache_bytes from an instance's /metrics (asked directly: nginx answers 404)."""
    parsed = urllib.parse.urlsplit(url)
    try:
        connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=10)
        connection.request("GET", "/metrics")
        text = connection.getresponse().read().decode(errors="replace")
        connection.close()
    except (OSError, http.client.HTTPException):
        return None
    match = re.search(r"^magpie_server_memory_cache_bytes(?:\{[^}]*\})? ([0-9.eE+]+)", text, re.M)
    return float(match.group(1)) if match else None
