#ifndef MAGPIE_MG_COMMON_H
#define MAGPIE_MG_COMMON_H

#include <stddef.h>
#include <stdint.h>

/// Result of every codec call. Swift maps each to a MagpieError reason.
typedef enum {
    MG_OK = 0,
    MG_ERR_CORRUPT = 1,       ///< malformed data; message says what the codec saw
    MG_ERR_TRUNCATED = 2,     ///< data ends before the image does
    MG_ERR_TOO_LARGE = 3,     ///< header declares more pixels/bytes than the caller's limit
    MG_ERR_UNSUPPORTED = 4,   ///< valid file using a feature we do not decode (e.g. 12-bit JPEG)
    MG_ERR_NO_MEMORY = 5,     ///< allocation failed
    MG_ERR_ENCODE = 6,        ///< encoder failed
    MG_ERR_INVALID_ARGUMENT = 7,
    MG_ERR_IO = 8,            ///< the input file could not be read
    MG_ERR_CANCELLED = 9      ///< the thread's cancellation check asked the encoder to stop (mg_set_cancel_check)
} mg_status;

/// Asked by the encoders between rows (or through a codec's own progress hook) while they run on the thread that set
/// it: a non-zero answer stops them with MG_ERR_CANCELLED. It must be cheap and must not call back into a codec.
typedef int (*mg_cancel_check)(void *context);

/// Sets (or, with NULL, clears) the calling thread's cancellation check. Per thread, so one check never reaches an
/// encoder another job runs.
void mg_set_cancel_check(mg_cancel_check check, void *context);

/// Non-zero when the calling thread's cancellation check asks to stop; 0 when none is set.
int mg_cancel_requested(void);

/// Error detail filled by a failing call: the status and the codec's own message.
typedef struct {
    int32_t status;
    char message[240];
} mg_error;

/// Limits checked against the header before any pixel memory is allocated.
typedef struct {
    uint64_t max_pixels;       ///< per frame (canvas) width*height
    uint64_t max_total_bytes;  ///< all decoded frames, 4 bytes per pixel
    uint32_t max_frames;
} mg_limits;

/// A straight-alpha RGBA8 bitmap whose pixels were allocated with malloc.
/// Ownership passes to the caller, who releases it with mg_free.
typedef struct {
    uint8_t *pixels;
    uint32_t width;
    uint32_t height;
} mg_bitmap;

/// A byte buffer allocated with malloc by an encoder; release with mg_free.
typedef struct {
    uint8_t *bytes;
    size_t length;
} mg_buffer;

/// What a decoder read besides pixels: colour description, metadata payloads, stored bit depth and alpha.
/// Buffers are malloc'd copies ({NULL, 0} when absent); release with mg_image_meta_release unless Swift adopted them.
typedef struct {
    mg_buffer icc;            ///< embedded ICC profile
    mg_buffer exif;           ///< EXIF payload (TIFF structure; a leading "Exif\0\0" is tolerated)
    mg_buffer xmp;            ///< XMP packet
    int32_t has_cicp;         ///< 1 when the four fields below were stated by the file
    uint16_t cicp_primaries;
    uint16_t cicp_transfer;
    uint16_t cicp_matrix;
    uint8_t cicp_full_range;
    uint32_t bit_depth;       ///< bits per sample as stored (0: unknown)
    int32_t has_alpha;        ///< the file stores alpha (channel, key or mask)
} mg_image_meta;

/// Frees the buffers of `meta` and zeroes it.
void mg_image_meta_release(mg_image_meta *meta);

/// Copies `length` bytes into a new malloc'd buffer (`{NULL, 0}` for none or when allocation fails).
mg_buffer mg_buffer_copy(const uint8_t *bytes, size_t length);

void mg_free(void *pointer);

/// The CPUs this process may run on (its affinity mask, as taskset or a cpuset sets it); 0 when unknown.
int mg_usable_cpu_count(void);

/// Inflates a zlib stream (PNG iCCP, zTXt) into a malloc'd buffer of at most `max_output` bytes.
int mg_zlib_inflate(const uint8_t *data, size_t length, size_t max_output, mg_buffer *out, mg_error *err);

/// Compresses `data` as a zlib stream at level 9 into a malloc'd buffer.
int mg_zlib_deflate(const uint8_t *data, size_t length, mg_buffer *out, mg_error *err);

/// CRC-32 with zlib's polynomial and result (PNG chunks, cache entry checksums), by carry-less multiplication where
/// the CPU has it; pass 0 as `crc` to start, or an earlier result to continue.
uint32_t mg_crc32(uint32_t crc, const uint8_t *bytes, size_t length);

/// Allocates pixel memory (huge-page friendly when large); release with mg_free/free.
void *mg_alloc_pixels(size_t size);

#endif
