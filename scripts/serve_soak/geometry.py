"""The sizes Magpie makes: fitting and filling a box with its rounding, and the size a source decodes at when the
decoder shrinks it first (JPEG's DCT scaling, libwebp's scaler)."""

import math


def side(value):
    """Magpie's PixelSize.side: rounded half away from zero (value - floor is exact in binary floating point), at
    least 1."""
    whole = math.floor(value)
    return max(1, whole + 1 if value - whole >= 0.5 else whole)


def fitting(width, height, box_w, box_h):
    factor = min(box_w / width, box_h / height)
    return side(width * factor), side(height * factor)


def filling(width, height, box_w, box_h):
    factor = max(box_w / width, box_h / height)
    return side(width * factor), side(height * factor)


def required_size(width, height, box_w, box_h, fit):
    """ImageDecodingOptions.requiredSize: the smallest size a decoder may shrink to for a target `box` (rounded up)."""
    factor = min(1.0, min(box_w / width, box_h / height) if fit else max(box_w / width, box_h / height))
    return max(1, math.ceil(width * factor)), max(1, math.ceil(height * factor))


def decoded_dimensions(source, box, fit):
    """The display size the source decodes at when the first processor is a resize into `box`: JPEG shrinks by DCT
    scaling (the smallest n/8 whose output, ceil(side × n / 8), covers the required size: jpeg.c), a still WebP by
    libwebp's scaler straight to the required size (WebPCoder.scaledSize), other formats decode at full size."""
    width, height = source["width"], source["height"]
    if source["format"] == "jpeg":
        stored_w, stored_h = (height, width) if source["swap"] else (width, height)
        need_w, need_h = required_size(width, height, box[0], box[1], fit)
        if source["swap"]:
            need_w, need_h = need_h, need_w
        for n in range(1, 9):
            out_w, out_h = -(-stored_w * n // 8), -(-stored_h * n // 8)
            if out_w >= need_w and out_h >= need_h:
                break
        return (out_h, out_w) if source["swap"] else (out_w, out_h)
    if source["format"] == "webp":
        need = required_size(width, height, box[0], box[1], fit)
        if need[0] <= width and need[1] <= height and (need[0] < width or need[1] < height):
            return need
    return width, height
