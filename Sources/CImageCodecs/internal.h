// Helpers shared by the codec wrappers; not part of the public C API.
#ifndef MAGPIE_INTERNAL_H
#define MAGPIE_INTERNAL_H

#include <stddef.h>
#include "mg_common.h"

/// Where a decoder reads its encoded bytes: a buffer in memory, or a file read on demand (pread), so that a large
/// file is never held whole (input.c).
typedef struct {
    const uint8_t *data;  ///< the whole input, or NULL when it is read from `fd`
    int fd;
    uint64_t length;      ///< bytes in the input
} mg_input;

/// Copies up to `count` bytes at `offset` into `buffer`; returns how many (fewer only at the end of the input), or -1
/// when the file cannot be read.
ptrdiff_t mg_input_read(const mg_input *in, uint64_t offset, uint8_t *buffer, size_t count);

/// `count` bytes at `offset`: in place for a buffer in memory, else read into `scratch` (`count` bytes). NULL when
/// the input ends before them or cannot be read.
const uint8_t *mg_input_view(const mg_input *in, uint64_t offset, size_t count, uint8_t *scratch);

/// Fills `err` (when not NULL) and returns `status`.
int mg_fail(mg_error *err, int status, const char *format, ...) __attribute__((format(printf, 3, 4)));

/// MG_OK, or MG_ERR_TOO_LARGE / MG_ERR_CORRUPT with a message, for a frame of
/// width x height checked against `limits` before its pixels are allocated.
int mg_check_frame_size(mg_error *err, const mg_limits *limits, uint64_t width, uint64_t height,
                        const char *what);

/// MG_OK, or an error when a derived image (grid or overlay) of a HEIF file declares a canvas over `limits`, or
/// cannot be described (heif_derived.c).
int mg_heif_check_derived(const uint8_t *data, size_t length, const mg_limits *limits, mg_error *err);

/// A colour conversion that runs beside a decoder (color_stream.c): the decoder reports finished rows of its RGBA8
/// output, which are converted in place through an RGBA8 transform (mg_color_transform_create), on a second
/// thread when `may_thread` and the image is large, else right away on the calling thread.
typedef struct mg_color_stream mg_color_stream;

/// A new stream over `pixels` (`width` x `height` RGBA8, rows packed), or NULL when out of memory.
mg_color_stream *mg_color_stream_start(void *transform, uint8_t *pixels, uint32_t width, uint32_t height,
                                       int may_thread);

/// Rows [first, end) are final (and every row before them was reported before).
void mg_color_stream_rows_ready(mg_color_stream *stream, uint32_t first, uint32_t end);

/// Converts what is left, waits for the second thread and frees the stream (NULL: nothing).
void mg_color_stream_finish(mg_color_stream *stream);

/// Waits for the second thread without converting the rest, and frees the stream (NULL: nothing): for a decode that
/// failed, before its pixels are freed.
void mg_color_stream_abandon(mg_color_stream *stream);

#endif
