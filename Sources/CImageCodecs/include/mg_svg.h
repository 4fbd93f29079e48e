#ifndef MAGPIE_MG_SVG_H
#define MAGPIE_MG_SVG_H

#include "mg_common.h"

/// How to render an SVG document.
typedef struct {
    /// 0 (either one): render at the intrinsic size. Otherwise render the whole document, vector-scaled, to the
    /// smallest size that fits inside (`fill` 0) or covers (`fill` 1) this size, aspect ratio kept.
    uint32_t target_width;
    uint32_t target_height;
    int32_t fill;
} mg_svg_options;

/// The document's size.
typedef struct {
    double intrinsic_width;   ///< CSS pixels at 96 dpi (width/height, else the viewBox, else the drawing's extent)
    double intrinsic_height;
    uint32_t width;           ///< the pixel size the render has (or would have)
    uint32_t height;
} mg_svg_info;

/// Parses an SVG (or gzip-compressed SVG) document from memory with librsvg and fills `info`. When `out` is not
/// NULL it is then rendered onto a transparent straight-alpha RGBA bitmap of `info->width` x `info->height`, which
/// is checked against `limits` (may be NULL only when `out` is NULL) before it is allocated. No external resource
/// (file, URL, sibling file) is ever loaded: the handle has no base URI. libxml2's safety limits stay on, so
/// entity-expansion bombs and absurdly deep or large documents fail fast with MG_ERR_CORRUPT.
int mg_svg_decode(const uint8_t *data, size_t length, const mg_svg_options *options, const mg_limits *limits,
                  mg_svg_info *info, mg_bitmap *out, mg_error *err);

/// Inflates the start of gzip data into `out` (at most `capacity` bytes) and returns how many bytes it produced
/// (0 when `data` is not gzip or is broken before any output), so a sniffer can look inside a `.svgz`.
size_t mg_svg_gunzip_prefix(const uint8_t *data, size_t length, uint8_t *out, size_t capacity);

#endif
