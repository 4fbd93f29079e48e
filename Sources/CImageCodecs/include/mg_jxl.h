#ifndef MAGPIE_MG_JXL_H
#define MAGPIE_MG_JXL_H

#include "mg_common.h"

/// What a JPEG XL file's basic info declares, read without decoding pixels.
typedef struct {
    uint32_t width;             ///< stored width (SizeHeader, before orientation)
    uint32_t height;            ///< stored height
    uint32_t orientation;       ///< 1...8, the codestream's orientation
    uint32_t bits_per_sample;
    int32_t has_alpha;
    int32_t is_animated;
    uint32_t loop_count;        ///< num_loops as stored (0 = forever); 0 for stills
    uint32_t tps_numerator;     ///< ticks per second = numerator / denominator (animations)
    uint32_t tps_denominator;
} mg_jxl_info;

/// Reads the basic info (a codestream or a container). A file that ends before it is TRUNCATED.
int mg_jxl_probe(const uint8_t *data, size_t length, mg_jxl_info *info, mg_error *err);

/// A decoded JPEG XL: upright (unless asked to keep the stored orientation) straight-alpha RGBA8 frames, each the full
/// canvas (libjxl coalesces animation frames), with each frame's duration in ticks.
typedef struct {
    mg_bitmap *frames;
    uint32_t *ticks;
    uint32_t frame_count;
    mg_jxl_info info;
} mg_jxl_image;

/// Decodes a complete file. The stored size is checked against `limits` before any pixel memory exists, and the
/// frame count and total bytes as frames arrive. A file that ends early is TRUNCATED, even when earlier frames
/// decoded. `meta` receives the colour (no ICC when the encoded colour space is plain sRGB), the Exif and XML
/// boxes, the bit depth and alpha. `keep_orientation` 1 leaves the pixels as stored instead of upright.
int mg_jxl_decode(const uint8_t *data, size_t length, const mg_limits *limits, int32_t only_first_frame,
                  int32_t keep_orientation, mg_jxl_image *out, mg_image_meta *meta, mg_error *err);

/// Frees what mg_jxl_decode allocated, skipping pixel pointers set to NULL, and zeroes `image`.
void mg_jxl_image_release(mg_jxl_image *image);

/// How to encode.
typedef struct {
    int32_t lossless;           ///< 1: modular lossless (exact); 0: VarDCT at `distance`
    float distance;             ///< butteraugli distance for lossy (0.1 ... 25)
    int32_t effort;             ///< 1 (fastest) ... 9; 0 for libjxl's default (7)
    uint32_t loop_count;        ///< animations: num_loops (0 = forever)
    const uint8_t *icc;         ///< ICC profile to embed, or NULL for sRGB
    size_t icc_length;
    const uint8_t *exif;        ///< TIFF-structured EXIF for an Exif box, or NULL
    size_t exif_length;
    const uint8_t *xmp;         ///< XMP packet for an xml box, or NULL
    size_t xmp_length;
} mg_jxl_encode_options;

/// One frame: canvas-sized straight-alpha RGBA8 and its duration in milliseconds (animations).
typedef struct {
    const uint8_t *rgba;
    uint32_t duration_ms;
} mg_jxl_frame;

/// Encodes `count` frames of `width` x `height` (an animation when count > 1, ticks of 1 ms) into a malloc'd buffer.
/// `has_alpha` 0 writes no alpha channel.
int mg_jxl_encode(const mg_jxl_frame *frames, uint32_t count, uint32_t width, uint32_t height, int32_t has_alpha,
                  const mg_jxl_encode_options *options, mg_buffer *out, mg_error *err);

#endif
