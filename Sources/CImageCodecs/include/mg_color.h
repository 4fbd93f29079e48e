#ifndef MAGPIE_MG_COLOR_H
#define MAGPIE_MG_COLOR_H

#include "mg_common.h"

/// How the pixels handed to a colour transform are laid out. The output is always RGBA8.
typedef enum {
    MG_COLOR_RGBA8 = 0,            ///< RGBA8; alpha copied through untouched (may transform in place)
    MG_COLOR_GRAY_IN_RGBA8 = 1,    ///< RGBA8 whose R holds the gray sample; alpha copied (may transform in place)
    MG_COLOR_CMYK8 = 2,            ///< 4 bytes per pixel, 0 = no ink; output alpha 255
    MG_COLOR_CMYK8_INVERTED = 3,   ///< Adobe's inverted CMYK (255 = no ink); output alpha 255
    MG_COLOR_EXACT_LCMS = 0x100    ///< or'ed in: always evaluate with lcms2 (tests compare the fast path against it)
} mg_color_layout;

/// Transfer functions a synthetic RGB space (CICP, PNG gAMA) can have.
typedef enum {
    MG_TRANSFER_SRGB = 0,
    MG_TRANSFER_BT709 = 1,
    MG_TRANSFER_GAMMA = 2,   ///< decoded value = encoded ^ gamma
    MG_TRANSFER_LINEAR = 3
} mg_transfer;

/// An RGB colour space given by chromaticities and a transfer function (what CICP and PNG gAMA/cHRM state).
typedef struct {
    double white_x, white_y, red_x, red_y, green_x, green_y, blue_x, blue_y;
    int32_t transfer;        ///< mg_transfer
    double gamma;            ///< for MG_TRANSFER_GAMMA
} mg_rgb_space;

/// A transform to sRGB (perceptual intent) from an ICC profile (`icc`, when not NULL) or from `space`.
/// Safe to use from many threads at once (no pixel cache). NULL on failure with `err` filled; free it with
/// mg_color_transform_free.
void *mg_color_transform_create(const uint8_t *icc, size_t icc_length, const mg_rgb_space *space, int32_t layout,
                                mg_error *err);

/// Transforms `pixel_count` pixels of the transform's layout from `input` into RGBA8 `output` (which may equal
/// `input` for the RGBA layouts).
void mg_color_transform_apply(void *transform, const uint8_t *input, uint8_t *output, size_t pixel_count);

void mg_color_transform_free(void *transform);

/// An ICC profile (malloc'd into `out`) describing `space`, for embedding the colours a CICP or gAMA/cHRM file stated.
int mg_color_profile_from_space(const mg_rgb_space *space, mg_buffer *out, mg_error *err);

#endif
