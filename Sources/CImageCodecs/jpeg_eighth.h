// Internal to the C target: the 1/8-scale baseline decoder (jpeg_eighth.c). Include after jpeglib.h.
#ifndef MAGPIE_JPEG_EIGHTH_H
#define MAGPIE_JPEG_EIGHTH_H

#include <stddef.h>
#include <stdint.h>

enum { MG_EIGHTH_UNSUPPORTED = 0, MG_EIGHTH_DONE = 1 };

/// Decodes the scan that `cinfo` has just read the header of (jpeg_read_header, then the output size
/// computed at scale 1/8 with out_color_space JCS_EXT_RGBA) into `rgba` (output_width x output_height x 4),
/// on up to `threads` threads (1 or 2). Returns MG_EIGHTH_DONE, or MG_EIGHTH_UNSUPPORTED when the file is
/// not a case it handles or its data is not clean; `rgba` then holds nothing useful and the caller decodes
/// with libjpeg. `data` is the buffer given to jpeg_mem_src.
int mg_jpeg_decode_eighth(struct jpeg_decompress_struct *cinfo, const uint8_t *data, size_t length, uint8_t *rgba,
                          int threads);

#endif
