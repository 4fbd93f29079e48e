"""What nginx in front (deploy/nginx/magpie.conf) makes of a request: the token its map gives the Accept header,
and the variant of its cache key."""

import re


ACCEPT_AVIF = re.compile(r"image/avif(?!\s*;\s*q\s*=\s*0(?:\.0{0,3})?\s*(?:[,;]|$))", re.I)
ACCEPT_WEBP = re.compile(r"image/webp(?!\s*;\s*q\s*=\s*0(?:\.0{0,3})?\s*(?:[,;]|$))", re.I)
ACCEPT_JXL = re.compile(r"image/jxl(?!\s*;\s*q\s*=\s*0(?:\.0{0,3})?\s*(?:[,;]|$))", re.I)


def accept_token(accept):
    """The token nginx's `map $http_accept $magpie_accept` gives (deploy/nginx/magpie.conf)."""
    if accept and ACCEPT_AVIF.search(accept):
        return "avif"
    if accept and ACCEPT_WEBP.search(accept):
        return "webp"
    if accept and ACCEPT_JXL.search(accept):
        return "jxl"
    return "other"


def nginx_variant(path, token):
    """nginx's cache key variant: `any` when the URL has an extension (format fixed), else the Accept token."""
    raw = path.split("?", 1)[0]
    if re.search(r"/plain/[^?]*@[A-Za-z0-9]{1,10}$", raw):
        return "any"
    if "/plain/" not in raw and re.search(r"/[^/:]*\.[A-Za-z0-9]{1,10}$", raw):
        return "any"
    return token
