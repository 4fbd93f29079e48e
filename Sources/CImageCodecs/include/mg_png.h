#ifndef MAGPIE_MG_PNG_H
#define MAGPIE_MG_PNG_H

#include "mg_common.h"

/// Decodes a (still) PNG to RGBA: every colour type, bit depths 1-16 (16-bit scaled to
/// 8 by rounding, as png_set_scale_16 does), palette and tRNS to alpha, Adam7.
/// `limits` are checked against IHDR before allocation.
int mg_png_decode(const uint8_t *data, size_t length, const mg_limits *limits, mg_bitmap *out, mg_error *err);

/// Encodes RGBA as an 8-bit PNG: RGBA, or RGB when `drop_alpha` (the image is opaque).
/// `compression_level` is zlib's 0-9.
int mg_png_encode(const uint8_t *rgba, uint32_t width, uint32_t height, int32_t drop_alpha,
                  int32_t compression_level, mg_buffer *out, mg_error *err);

#endif
