#ifndef MAGPIE_MG_HEIF_H
#define MAGPIE_MG_HEIF_H

#include "mg_common.h"

/// What a HEIF file's primary image declares, read without decoding any pixels.
typedef struct {
    uint32_t width;        ///< displayed width (after clap and irot)
    uint32_t height;       ///< displayed height (after clap and irot)
    uint32_t ispe_width;   ///< coded width (`ispe`, or the grid's output size)
    uint32_t ispe_height;
    int32_t has_alpha;
    uint32_t bit_depth;    ///< luma bits per sample (0: undefined)
} mg_heif_info;

/// Reads the container of a complete HEIF file with libheif and describes its primary image,
/// without decoding pixels or checking limits beyond libheif's own.
int mg_heif_probe(const uint8_t *data, size_t length, mg_heif_info *info, mg_error *err);

/// Decodes the primary image of a complete HEIF file to straight-alpha RGBA8, with libheif applying
/// clap, irot and imir. Limits are checked against the primary image's size before decoding.
/// `meta` receives the colour description, EXIF and XMP (release with mg_image_meta_release).
/// On failure neither `out` nor `meta` holds anything that needs releasing.
int mg_heif_decode(const uint8_t *data, size_t length, const mg_limits *limits, mg_bitmap *out,
                   mg_image_meta *meta, mg_error *err);

#endif
