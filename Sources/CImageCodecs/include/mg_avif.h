#ifndef MAGPIE_MG_AVIF_H
#define MAGPIE_MG_AVIF_H

#include "mg_common.h"

/// What an AVIF file's container says, read without decoding any AV1 data.
typedef struct {
    uint32_t width;        ///< displayed width (after clap and irot)
    uint32_t height;       ///< displayed height (after clap and irot)
    uint32_t frame_count;  ///< 1 for still images
    int32_t is_sequence;   ///< an image sequence (`avis`, `.avifs`)
    int32_t has_alpha;
    uint32_t bit_depth;
} mg_avif_info;

/// Parses the container of a complete AVIF file (libavif, strict checks off) without decoding pixels or
/// checking limits beyond libavif's own. When libavif refuses an item as too large, the status is
/// MG_ERR_TOO_LARGE and `info` still holds the declared size when the message names it.
int mg_avif_probe(const uint8_t *data, size_t length, mg_avif_info *info, mg_error *err);

/// How to decode.
typedef struct {
    int32_t only_first_frame;  ///< decode only the first image of a sequence
} mg_avif_decode_options;

/// A decoded AVIF: straight-alpha RGBA8 frames with clap, irot and imir applied, and their durations.
/// Arrays and pixels are malloc'd; release with mg_avif_image_release, which skips pixel pointers the
/// caller took over and set to NULL, and frees `meta` unless the caller adopted it.
typedef struct {
    mg_bitmap *frames;
    uint64_t *durations_us;  ///< per frame, microseconds (sequences only)
    uint32_t frame_count;
    int32_t is_sequence;
    mg_image_meta meta;
} mg_avif_image;

/// Decodes a complete AVIF file. Every limit is checked against the parsed header before pixel memory
/// is allocated. On failure `out` holds nothing that needs releasing.
int mg_avif_decode(const uint8_t *data, size_t length, const mg_limits *limits,
                   const mg_avif_decode_options *options, mg_avif_image *out, mg_error *err);

/// Frees what `mg_avif_decode` allocated and zeroes `image`.
void mg_avif_image_release(mg_avif_image *image);

/// How to encode.
typedef struct {
    int32_t quality;       ///< 1...100, mapped to AV1 quantizers (ignored when lossless)
    int32_t lossless;      ///< quantizer 0, identity matrix, 4:4:4
    int32_t speed;         ///< 0 (slowest) ... 10 (fastest)
    const uint8_t *icc;    ///< ICC profile to embed, or NULL
    size_t icc_length;
    int32_t has_cicp;      ///< write these code points in an nclx box (used when there is no ICC)
    uint16_t cicp_primaries;
    uint16_t cicp_transfer;
    const uint8_t *exif;   ///< EXIF TIFF payload to embed, or NULL
    size_t exif_length;
    const uint8_t *xmp;    ///< XMP packet to embed, or NULL
    size_t xmp_length;
} mg_avif_encode_options;

/// One frame: straight-alpha RGBA8 (`width * 4` bytes per row) and how long it shows.
typedef struct {
    const uint8_t *rgba;
    uint32_t duration_ms;
} mg_avif_frame;

/// Encodes one frame as a still AVIF, or several as an image sequence, into a malloc'd buffer.
int mg_avif_encode(const mg_avif_frame *frames, uint32_t count, uint32_t width, uint32_t height,
                   const mg_avif_encode_options *options, mg_buffer *out, mg_error *err);

#endif
