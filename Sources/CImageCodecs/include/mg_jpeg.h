#ifndef MAGPIE_MG_JPEG_H
#define MAGPIE_MG_JPEG_H

#include "mg_common.h"

/// What the JPEG header says, before any pixel is decoded.
typedef struct {
    uint32_t width;           ///< stored width (before EXIF orientation)
    uint32_t height;
    int32_t components;
    int32_t is_progressive;
    int32_t is_arithmetic;
    int32_t data_precision;   ///< 8 for the JPEGs we decode; 12 is reported as unsupported
} mg_jpeg_header;

/// Parses markers up to the first scan. No pixel memory is allocated.
int mg_jpeg_read_header(const uint8_t *data, size_t length, mg_jpeg_header *header, mg_error *err);

/// Flags of mg_jpeg_decode.
enum {
    MG_JPEG_FAST = 1,       ///< on the DCT-scaled path, trade a little accuracy (no fancy upsampling) for speed
    MG_JPEG_KEEP_CMYK = 2,  ///< leave CMYK/YCCK samples unconverted in the bitmap (4 bytes per pixel)
    MG_JPEG_TWO_THREADS = 4, ///< may use a second thread (same pixels): a baseline file decoded at 1/8 splits its
                             ///< Huffman decoding, a colour transform runs beside the decoding
    MG_JPEG_LIBJPEG_ONLY = 8 ///< never the 1/8 baseline decoder: libjpeg alone (what tests and benchmarks compare with)
};

/// Decodes to RGBA. When `min_width`/`min_height` are non-zero, libjpeg's DCT scaling
/// (N/8, N = 1...8) picks the smallest output that is still at least that large.
/// `limits` are checked against the stored size before allocation. Truncation and
/// entropy-data corruption, which libjpeg only warns about, are errors here.
/// `color_transform` (may be NULL) is an MG_COLOR_RGBA8 transform (mg_color_transform_create) applied to the RGBA
/// output as rows are decoded, beside the decoding when MG_JPEG_TWO_THREADS allows; it is not applied to CMYK
/// samples MG_JPEG_KEEP_CMYK leaves in the bitmap.
/// `raw_cmyk` (may be NULL) is set to 1 (straight) or 2 (Adobe-inverted) when MG_JPEG_KEEP_CMYK left CMYK
/// samples in the bitmap, else 0.
int mg_jpeg_decode(const uint8_t *data, size_t length, uint32_t min_width, uint32_t min_height, int32_t flags,
                   void *color_transform, const mg_limits *limits, mg_bitmap *out, int32_t *raw_cmyk, mg_error *err);

/// mg_jpeg_decode for a file of `length` bytes open for reading at `fd`, read as the decoder goes (pread, 64 KiB at
/// a time) instead of whole: a baseline file read at 1/8 never has more than a window per thread in memory. The same
/// pixels as mg_jpeg_decode on the file's bytes, or the same status, with one exception for damaged data:
/// libjpeg-turbo's fast Huffman decoder, which runs while a whole MCU's worth of input is buffered (always, for bytes
/// in memory), turns a code no table has into zero silently, and its slow one, near the end of a buffer, reports it;
/// so a file may fail with MG_ERR_CORRUPT ("bad Huffman code") where its bytes decode, as djpeg fails on it.
/// MG_ERR_IO when the file cannot be read. A progressive
/// file read at 1/8 with MG_JPEG_FAST is read whole (its DC scans are copied out first).
int mg_jpeg_decode_file(int fd, uint64_t length, uint32_t min_width, uint32_t min_height, int32_t flags,
                        void *color_transform, const mg_limits *limits, mg_bitmap *out, int32_t *raw_cmyk,
                        mg_error *err);

/// How many decodes so far on the calling thread used MG_JPEG_TWO_THREADS's second thread (the split met, was
/// verified, and the decode gave its pixels rather than handing the file to libjpeg).
uint64_t mg_jpeg_eighth_split_count(void);

/// Encodes RGBA (alpha ignored: flatten first) as a JPEG with quality 1...100.
int mg_jpeg_encode(const uint8_t *rgba, uint32_t width, uint32_t height, int32_t quality, int32_t progressive,
                   mg_buffer *out, mg_error *err);

#endif
