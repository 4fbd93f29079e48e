#ifndef MAGPIE_MG_WEBP_H
#define MAGPIE_MG_WEBP_H

#include "mg_common.h"

/// What the container says about a WebP file, read without decoding any pixels.
typedef struct {
    uint32_t canvas_width;
    uint32_t canvas_height;
    uint32_t frame_count;   ///< 1 for still images
    uint32_t loop_count;    ///< ANIM chunk value (0 = forever); 0 for still images
    int32_t is_animated;    ///< VP8X animation flag set
    int32_t has_alpha;
} mg_webp_info;

/// Parses the container of a complete WebP file (a truncated file is an error) and
/// fills `info`. A VP8X canvas is checked against `limits` (may be NULL) before
/// anything else is parsed. When `exif` is not NULL it receives a malloc'd copy of
/// the first EXIF chunk's payload, or {NULL, 0} when there is none.
int mg_webp_probe(const uint8_t *data, size_t length, const mg_limits *limits, mg_webp_info *info, mg_buffer *exif,
                  mg_error *err);

/// How to decode.
typedef struct {
    /// Still images only: decode straight to this size with libwebp's scaler.
    /// 0 (either one) decodes at the stored size. Ignored for animations.
    uint32_t scaled_width;
    uint32_t scaled_height;
    /// Decode only the first (composited) frame of an animation.
    int32_t only_first_frame;
} mg_webp_decode_options;

/// A decoded WebP: canvas-sized straight-alpha RGBA frames with their durations.
/// Every array and pixel pointer is malloc'd; release with mg_webp_image_release,
/// which skips pixel pointers the caller has taken over and set to NULL.
typedef struct {
    mg_bitmap *frames;
    uint32_t *durations_ms;
    uint32_t frame_count;
    uint32_t loop_count;    ///< ANIM chunk value (0 = forever); 0 for still images
    int32_t is_animated;
} mg_webp_image;

/// Decodes a complete WebP file. Limits are checked against the container before
/// pixel memory is allocated. On failure `out` holds nothing that needs releasing.
int mg_webp_decode(const uint8_t *data, size_t length, const mg_limits *limits,
                   const mg_webp_decode_options *options, mg_webp_image *out, mg_error *err);

/// Frees what `mg_webp_decode` allocated and zeroes `image`.
void mg_webp_image_release(mg_webp_image *image);

/// How to encode.
typedef struct {
    int32_t lossless;      ///< 1: VP8L (exact colour under transparent pixels); 0: VP8 lossy
    float quality;         ///< lossy quality 0...100
    uint32_t loop_count;   ///< animations only: 0 = forever
} mg_webp_encode_options;

/// One animation frame: canvas-sized straight-alpha RGBA and how long it shows.
typedef struct {
    const uint8_t *rgba;
    uint32_t duration_ms;
} mg_webp_frame;

/// Encodes one straight-alpha RGBA image (`width * 4` bytes per row) into a malloc'd buffer.
int mg_webp_encode(const uint8_t *rgba, uint32_t width, uint32_t height, const mg_webp_encode_options *options,
                   mg_buffer *out, mg_error *err);

/// Encodes `count` frames of `width` x `height` as an animated WebP into a malloc'd buffer.
int mg_webp_encode_animation(const mg_webp_frame *frames, uint32_t count, uint32_t width, uint32_t height,
                             const mg_webp_encode_options *options, mg_buffer *out, mg_error *err);

/// Rewrites a WebP file with the given ICCP, EXIF and XMP chunks (each may be NULL/0: not written) through
/// libwebp's mux, which also sets the VP8X flags. The result is malloc'd into `out`.
int mg_webp_set_metadata(const uint8_t *data, size_t length, const uint8_t *icc, size_t icc_length,
                         const uint8_t *exif, size_t exif_length, const uint8_t *xmp, size_t xmp_length,
                         mg_buffer *out, mg_error *err);

#endif
