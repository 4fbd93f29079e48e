"""The requests and what each must get: every valid source, bomb, corrupt file and hostile route of the corpus and
the origin, as fixed cases (the serial pass) and random ones (the mix)."""

import os
import secrets
import urllib.parse

from magpie_scripts.signing import base64url

from .checks import Expect
from .formats import EXTENSION_FORMAT, has_alpha, header_size, sniff
from .geometry import decoded_dimensions, filling, fitting
from .settings import (DOT_SEGMENTS, HOSTILE, MAX_FRAMES, MAX_SOURCE_BYTES, TALL_THIN, TOO_MANY_FRAMES, VALID_SOURCES,
                       CannotRun)


class Plan:
    """Builds the requests: fixed cases (every file and route once) and random ones for the mix."""

    def __init__(self, corpus, origin_base, trap_port, signer, rng):
        self.corpus = corpus
        self.origin = origin_base
        self.trap_port = trap_port
        self.signer = signer
        self.rng = rng
        self.reference = load_reference(corpus)
        self.sources = []
        for index, (relative, fmt) in enumerate(VALID_SOURCES):
            row = self.reference.get(relative)
            if not row or not os.path.isfile(os.path.join(corpus, relative)):
                raise CannotRun(f"valid source {relative} missing from the corpus or REFERENCE*.tsv")
            width, height = int(row["display_width"]), int(row["display_height"])
            alpha = has_alpha(os.path.join(corpus, relative))
            with open(os.path.join(corpus, relative), "rb") as handle:
                stored = header_size(handle.read(), fmt) if fmt == "jpeg" else (width, height)
            swap = stored is not None and (stored[0], stored[1]) == (height, width) and width != height
            # Boxes of this source only (a body of another source then has another size).
            boxes = [(96 + 10 * index + 3 * k, 80 + 8 * index + 5 * k) for k in range(4)]
            big_box = (640 + 12 * index, 520 + 10 * index)
            self.sources.append({"path": relative, "format": fmt, "width": width, "height": height, "alpha": alpha,
                                 "swap": swap, "boxes": boxes, "big": big_box, "index": index})
        self.bombs = []
        for folder in ("bombs", "bombs-formats"):
            for name in sorted(os.listdir(os.path.join(corpus, folder))):
                relative = f"{folder}/{name}"
                size = os.path.getsize(os.path.join(corpus, relative))
                if size > MAX_SOURCE_BYTES:
                    self.bombs.append((relative, 413, 413, "larger than --max-source-bytes"))
                elif name.endswith((".svg", ".svgz")):
                    # SVGCoder renders a vector at the target size: only its intrinsic size is a bomb.
                    self.bombs.append((relative, 422, 200, "too many pixels at its intrinsic size; a resize renders "
                                                           "the vector at the target size"))
                else:
                    self.bombs.append((relative, 422, 422, "too many pixels"))
        self.bombs.append((TOO_MANY_FRAMES, 422, 422, f"more than --max-frames {MAX_FRAMES} frames"))
        self.corrupt = []
        names = []
        for folder in sorted(os.listdir(corpus)):
            if folder.endswith("-corrupt") and os.path.isdir(os.path.join(corpus, folder)):
                for root, _, files in os.walk(os.path.join(corpus, folder)):
                    names += [os.path.relpath(os.path.join(root, f), corpus) for f in files]
        names += [path for path, row in self.reference.items() if path.startswith("derived/") and row["expect"] == "error"]
        for relative in sorted(set(names)):
            expectation = corrupt_expectation(corpus, relative, self.reference.get(relative))
            if expectation:
                self.corrupt.append((relative,) + expectation)

    # Valid requests

    def source_url(self, source):
        return f"{self.origin}/file/{urllib.parse.quote(source['path'])}"

    def expected_formats(self, source, fixed):
        """token -> allowed output formats, following OutputFormatChoice.negotiate."""
        if fixed:
            return {"*": {fixed}}
        fmt = source["format"]
        if fmt in ("jpeg", "png"):
            other = {fmt}
        elif fmt == "gif":
            other = {"png"}  # a still GIF becomes PNG
        else:
            other = {"png"} if source["alpha"] is True else {"jpeg"} if source["alpha"] is False else {"jpeg", "png"}
        # JPEG XL is negotiated for a JPEG XL source only; any other source answers a jxl client as an `other` one.
        return {"avif": {"avif"}, "webp": {"webp"}, "jxl": {"jxl"} if fmt == "jxl" else other, "other": other}

    def valid(self, source, mode=None, box=None, fmt_kind=None, quality=None, kind="valid", group=None, base64_form=None,
              extension=None):
        rng = self.rng
        mode = mode or rng.choice(["fit", "fill", "stretch", "fit-rotate", "fit-quality"])
        box = box or rng.choice(source["boxes"])
        options = []
        if mode in ("fit", "fit-rotate", "fit-quality"):
            options.append(f"resize:{box[0]}x{box[1]}:fit")
            size = fitting(*decoded_dimensions(source, box, fit=True), *box)
        elif mode == "fill":
            options.append(f"resize:{box[0]}x{box[1]}:fill")
            size = filling(*decoded_dimensions(source, box, fit=False), *box)
        else:
            options.append(f"resize:{box[0]}x{box[1]}")
            size = box
        if mode == "fit-rotate":
            options.append("rotate:90")
            size = (size[1], size[0])
        if mode == "fit-quality" or quality:
            options.append(f"quality:{quality or rng.choice([55, 70, 85])}")
        fmt_kind = fmt_kind or rng.choice(["ext", "ext", "option", "auto", "auto", "auto"])
        fixed = None
        if fmt_kind == "ext":
            extension = extension or rng.choice(["jpg", "png", "webp", "avif", "webp", "jpg", "gif"])
            fixed = EXTENSION_FORMAT[extension]
        else:
            extension = None
        if fmt_kind == "option":
            fixed = rng.choice(["jpeg", "png", "webp", "avif"])
            options.append(f"format:{fixed}")
        if base64_form is None:
            base64_form = rng.random() < 0.25
        path = self.signer.url(options, self.source_url(source), extension, base64_source=base64_form)
        formats = self.expected_formats(source, fixed)
        return path, Expect(kind, group or "valid image", {200}, job=True, formats=formats, size=size)

    def valid_random(self, kind="valid", group=None, cold=False):
        source = self.rng.choice(self.sources)
        box = None
        quality = None
        if cold:  # a box and quality no one asked for yet: a miss at nginx and at the instance
            box = (self.rng.randrange(40, 700), self.rng.randrange(40, 700))
            quality = self.rng.randrange(40, 96)
        return self.valid(source, box=box, quality=quality, kind=kind, group=group)

    def slow_reader(self):
        source = self.rng.choice(self.sources)
        return self.valid(source, mode="fit", box=source["big"], fmt_kind="ext", kind="slow-reading client",
                          group="slow-reading client", base64_form=False, extension="png")

    # Failures

    def bad_signature(self):
        rng = self.rng
        source = rng.choice(self.sources)
        good, _ = self.valid(source, fmt_kind="ext")
        signature, rest = good[1:].split("/", 1)
        variant = rng.randrange(7)
        if variant == 0:
            bad = "/" + base64url(secrets.token_bytes(32)) + "/" + rest
        elif variant == 1:  # the signature of another path
            other, _ = self.valid(rng.choice(self.sources), fmt_kind="ext")
            bad = "/" + other[1:].split("/", 1)[0] + "/" + rest
        elif variant == 2:  # signed, then the path changed
            bad = "/" + signature + "/" + rest.replace("resize:", "resize:1", 1)
        elif variant == 3:
            bad = "/" + rng.choice(["_", "insecure"]) + "/" + rest
        elif variant == 4:
            bad = "/" + signature[:-1] + "/" + rest
        elif variant == 5:  # the right HMAC with another salt
            bad = "/" + self.signer.sign("/" + rest, salt=secrets.token_bytes(16)) + "/" + rest
        else:  # signed with another key
            bad = "/" + self.signer.sign("/" + rest, key=secrets.token_bytes(32)) + "/" + rest
        return bad, Expect("bad signature", "bad signature", {403}, job=False)

    def bad_option(self):
        source = self.rng.choice(self.sources)
        variant = self.rng.randrange(3)
        if variant == 0:
            path = self.signer.url(["resize:abc"], self.source_url(source), "png")
        elif variant == 1:
            path = self.signer.url(["nosuchoption:1"], self.source_url(source), "png")
        else:
            path = self.signer.url(["resize:100x100", "format:png"], self.source_url(source), "jpg")
        return path, Expect("malformed option", "malformed option (signed)", {400}, job=False)

    def file_request(self, relative, statuses, kind, group, box=None, resize=True):
        """A request for a corpus file: stretched to `box` (random when None) as PNG, or (resize False) converted to
        PNG at its own size (whose size is then not checked)."""
        options = []
        if resize:
            box = box or (self.rng.randrange(30, 400), self.rng.randrange(30, 400))
            options = [f"resize:{box[0]}x{box[1]}"]
        else:
            options = [f"quality:{self.rng.randrange(50, 100)}"]
        path = self.signer.url(options, f"{self.origin}/file/{urllib.parse.quote(relative)}", "png")
        size = box if 200 in statuses and resize else None
        return path, Expect(kind, group, statuses, job=True, formats={"*": {"png"}}, size=size, file=relative)

    def bomb(self, entry=None, box=None, resize=None):
        relative, plain_status, resized_status, why = entry or self.rng.choice(self.bombs)
        if resize is None:
            resize = self.rng.random() < 0.5
        status = resized_status if resize else plain_status
        shape = "resized" if resize else "own size"
        return self.file_request(relative, {status}, f"bomb {relative} ({shape})", f"bomb, {shape} → {status} ({why})",
                                 box=box, resize=resize)

    def corrupt_file(self, entry=None, box=None):
        relative, statuses, why = entry or self.rng.choice(self.corrupt)
        label = "/".join(str(s) for s in sorted(statuses))
        return self.file_request(relative, statuses, f"corrupt {relative}", f"corrupt → {label} ({why})", box=box)

    def tall_thin(self, option=None):
        source = self.rng.choice(self.sources)
        option = option or self.rng.choice(TALL_THIN)
        path = self.signer.url([option], self.source_url(source), "png", base64_source=self.rng.random() < 0.3)
        return path, Expect(f"result too large ({option})", "result too tall, thin or large → 422", {422}, job=True)

    def dot_segment(self, entry=None):
        relative, status = entry or self.rng.choice(DOT_SEGMENTS)
        path = self.signer.url(["resize:64x64:fit"], f"{self.origin}/{relative}", "png",
                               base64_source=self.rng.random() < 0.3)
        return path, Expect(f"dot segment {relative}", f"source escaping --allow-source → {status}", {status}, job=False)

    def hostile(self, route=None):
        route = route or self.rng.choices(list(HOSTILE), weights=[w for _, _, w in HOSTILE.values()])[0]
        status, why, _ = HOSTILE[route]
        tag = secrets.token_hex(6)
        source = {
            "redirect-loop": f"{self.origin}/loop-a/{tag}",
            "redirect-chain": f"{self.origin}/chain/0/{tag}",
            "redirect-metadata": f"{self.origin}/to-metadata/{tag}",
            "redirect-127.0.0.2": f"{self.origin}/to-127.0.0.2/{tag}",
            "direct-metadata": "http://169.254.169.254/latest/meta-data/iam",
            "direct-127.0.0.2": f"http://127.0.0.2:{self.trap_port}/file/jpeg/source.jpg?{tag}",
            "direct-10.x": f"http://10.23.45.67/{tag}.jpg",
        }.get(route, f"{self.origin}/{route}/{tag}.jpg")
        box = (self.rng.randrange(30, 300), self.rng.randrange(30, 300))
        path = self.signer.url([f"resize:{box[0]}x{box[1]}:fit"], source, "jpg")
        return path, Expect(f"origin {route}", f"origin {route} → {status} ({why})", {status}, job=True)


def load_reference(corpus):
    rows = {}
    for name in ("REFERENCE.tsv", "REFERENCE-FORMATS.tsv"):
        path = os.path.join(corpus, name)
        if not os.path.isfile(path):
            continue
        header = None
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("#") or not line.strip():
                    continue
                fields = line.rstrip("\n").split("\t")
                if header is None:
                    header = fields
                    continue
                row = dict(zip(header, fields + [""] * (len(header) - len(fields))))
                rows[row["path"]] = row  # REFERENCE-FORMATS.tsv comes second and replaces
    return rows


def corrupt_expectation(corpus, relative, row):
    """(statuses, why) for a file of a *-corrupt folder, from the sources' mapping: an empty body → 502 (emptyBody),
    bytes no sniffer recognises → 415 (notAnImage), a recognised format that fails to decode → 422, a file the
    reference decodes → 200 (also 422 when its notes say a typed error is acceptable, and 200 for an error row
    whose notes say decoding is acceptable)."""
    with open(os.path.join(corpus, relative), "rb") as handle:
        data = handle.read(4096)
    size = os.path.getsize(os.path.join(corpus, relative))
    if size == 0:
        return {502}, "empty body"
    if size > MAX_SOURCE_BYTES:
        return {413}, "larger than --max-source-bytes"
    found = sniff(data)
    if found == "unknown":
        return {415}, "not an image"
    expect = row["expect"] if row else "error"
    notes = row["notes"] if row else ""
    if expect == "decode":
        return ({200, 422} if "[error-acceptable]" in notes else {200}), "the reference decodes it"
    if expect == "unsupported":
        return {415}, "unsupported"
    return ({422, 200} if "[decode-acceptable]" in notes else {422}), "undecodable"
