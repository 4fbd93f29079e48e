"""Magpie's URL signatures, as `magpie serve` checks them (imgproxy's scheme): the first path segment is the
base64url (no padding) HMAC-SHA256, under the key, of the salt followed by the rest of the path. The server takes
key and salt as hex (MAGPIE_KEY, MAGPIE_SALT); here they are bytes (`Signer.from_hex` reads the hex)."""

import base64
import hashlib
import hmac
import urllib.parse


def base64url(data):
    """`data` (bytes) in base64url without padding, as text."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def signature(key, salt, path):
    """The signature segment for `path` (everything after the signature, starting with '/')."""
    return base64url(hmac.new(key, salt + path.encode(), hashlib.sha256).digest())


class Signer:
    """Signs paths with one key and salt (bytes)."""

    def __init__(self, key, salt):
        self.key = key
        self.salt = salt

    @classmethod
    def from_hex(cls, key_hex, salt_hex):
        return cls(bytes.fromhex(key_hex), bytes.fromhex(salt_hex))

    def sign(self, path, key=None, salt=None):
        """The signature of `path`; `key` or `salt` replace this signer's (to make a wrong signature)."""
        return signature(key or self.key, salt if salt is not None else self.salt, path)

    def url(self, options, source, extension=None, base64_source=False):
        """The signed path for `options` (a list of segments) and `source`, plain (`plain/` + the percent-encoded
        URL, `@extension`) or base64url (`.extension`)."""
        if base64_source:
            tail = base64url(source.encode()) + (f".{extension}" if extension else "")
        else:
            tail = "plain/" + urllib.parse.quote(source, safe="") + (f"@{extension}" if extension else "")
        path = "/" + "/".join(list(options) + [tail])
        return "/" + self.sign(path) + path
