#ifndef MAGPIE_MG_GIF_H
#define MAGPIE_MG_GIF_H

#include "mg_common.h"

// ---------------------------------------------------------------------------------------------
// Decoding: an opaque decoder walks the GIF's records one image block at a time and composites
// each block onto the canvas, so the caller receives fully composited RGBA frames.
// ---------------------------------------------------------------------------------------------

/// An in-progress GIF decode. Not thread-safe itself; use one per decode (any number in parallel).
typedef struct mg_gif_decoder mg_gif_decoder;

/// Opens a decoder over `data` (which must stay valid and unchanged until mg_gif_decoder_close).
/// Reads the header and checks the logical screen against `limits` before allocating pixels.
/// Returns NULL and fills `err` on failure.
mg_gif_decoder *mg_gif_decoder_open(const uint8_t *data, size_t length, const mg_limits *limits,
                                    mg_error *err);

/// Logical screen (canvas) size of an open decoder.
void mg_gif_decoder_canvas_size(const mg_gif_decoder *decoder, uint32_t *width, uint32_t *height);

/// Decodes the next image block and returns the composited canvas as a new malloc'd bitmap
/// (owned by the caller) with the block's delay in milliseconds. At the end of the file it
/// returns MG_OK with `frame->pixels == NULL`. Any other status is an error described in `err`;
/// the decoder must not be used again after an error, except to close it.
int mg_gif_decoder_next_frame(mg_gif_decoder *decoder, mg_bitmap *frame, uint32_t *delay_ms,
                              mg_error *err);

/// Loop count from the first NETSCAPE2.0/ANIMEXTS1.0 block seen so far (0 = forever), or -1
/// when none has been seen. Final once mg_gif_decoder_next_frame has reported the end.
int32_t mg_gif_decoder_loop_count(const mg_gif_decoder *decoder);

/// Releases the decoder (frames already returned stay valid). NULL is ignored.
void mg_gif_decoder_close(mg_gif_decoder *decoder);

// ---------------------------------------------------------------------------------------------
// Encoding: the caller supplies already-indexed full-canvas frames.
// ---------------------------------------------------------------------------------------------

/// One full-canvas frame to encode: `width * height` palette indices, rows top to bottom.
typedef struct {
    const uint8_t *indices;
    const uint8_t *palette;     ///< `palette_size` RGB triples
    uint32_t palette_size;      ///< 1...256
    int32_t transparent_index;  ///< -1 for none
    uint32_t delay_cs;          ///< centiseconds, at most 65535
} mg_gif_frame;

/// Writes a GIF89a of `frame_count` frames of `width x height` into a new malloc'd buffer.
/// `loop_count` < 0 writes no NETSCAPE2.0 block; otherwise it is the stored count (0 = forever).
/// `restore_to_transparent` makes each frame dispose to transparent, which frames that contain
/// transparent pixels need so that earlier frames do not show through them.
int mg_gif_encode(uint32_t width, uint32_t height, const mg_gif_frame *frames, uint32_t frame_count,
                  int32_t loop_count, int32_t restore_to_transparent, mg_buffer *out, mg_error *err);

#endif
