// Internal to the C target: the 1/8-scale baseline decoder (jpeg_eighth.c). Include after jpeglib.h.
#ifndef MAGPIE_JPEG_EIGHTH_H
#define MAGPIE_JPEG_EIGHTH_H

#include <stddef.h>
#include <stdint.h>
#include "internal.h"

enum { MG_EIGHTH_UNSUPPORTED = 0, MG_EIGHTH_DONE = 1 };

/// Decodes the scan that `cinfo` has just read the header of (jpeg_read_header, then the output size
/// computed at scale 1/8 with out_color_space JCS_EXT_RGBA) into `rgba` (output_width x output_height x 4),
/// on up to `threads` threads (1 or 2). Returns MG_EIGHTH_DONE, or MG_EIGHTH_UNSUPPORTED when the file is
/// not a case it handles or its data is not clean; `rgba` then holds nothing useful and the caller decodes
/// with libjpeg. `in` is what libjpeg's source reads, and `scan_start` the offset in it of the scan's first byte
/// (libjpeg's next unread byte); a file is read through windows, never whole.
int mg_jpeg_decode_eighth(struct jpeg_decompress_struct *cinfo, const mg_input *in, uint64_t scan_start,
                          uint8_t *rgba, int threads);

#endif
