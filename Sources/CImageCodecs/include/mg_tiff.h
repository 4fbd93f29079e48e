#ifndef MAGPIE_MG_TIFF_H
#define MAGPIE_MG_TIFF_H

#include "mg_common.h"

/// An open TIFF file read from memory (libtiff with per-open error handlers). The data must stay alive and
/// unchanged until mg_tiff_close. One handle is used by one thread at a time.
typedef struct mg_tiff_file mg_tiff_file;

/// What one page's directory declares, read without decoding pixels.
typedef struct {
    uint32_t width;         ///< stored width (before orientation)
    uint32_t height;        ///< stored height (before orientation)
    uint32_t bit_depth;     ///< BitsPerSample
    uint32_t orientation;   ///< the Orientation tag, 1...8 (anything else reads as 1)
    int32_t has_alpha;      ///< an extra sample is alpha (associated, unassociated, or libtiff's implied alpha)
} mg_tiff_page;

/// Opens a classic or BigTIFF file from memory and counts the pages of its main IFD chain (SubIFDs are not pages).
/// `max_single_alloc` (0: libtiff's default) bounds any one allocation libtiff makes. libtiff's own error
/// message becomes `err`'s message.
int mg_tiff_open(const uint8_t *data, size_t length, uint64_t max_single_alloc, mg_tiff_file **out, mg_error *err);

/// Pages in the main IFD chain (at least 1 for an open file).
uint32_t mg_tiff_page_count(const mg_tiff_file *file);

/// Reads page `index`'s directory into `page`.
int mg_tiff_page_info(mg_tiff_file *file, uint32_t index, mg_tiff_page *page, mg_error *err);

/// Copies the first page's ICC profile (tag 34675) and XMP packet (tag 700) into `meta`, with its bit depth and
/// alpha. EXIF is not copied: a TIFF's EXIF IFD is part of the file's own structure.
int mg_tiff_read_meta(mg_tiff_file *file, mg_image_meta *meta, mg_error *err);

/// Decodes page `index` in stored orientation into straight-alpha RGBA8 (malloc'd; the caller owns it). The page is
/// checked against `limits` (size, strip and tile sizes) before any pixel memory exists. CMYK pages use
/// R = (255-C)*(255-K)/255 rounded; when `cmyk` is not NULL they also hand back their C, M, Y, K samples
/// (4 bytes a pixel, malloc'd) so the caller can convert them through an ICC profile instead. Any error libtiff
/// reports while reading (a short strip, bad compressed data) fails the call: no partial image.
int mg_tiff_decode_page(mg_tiff_file *file, uint32_t index, const mg_limits *limits, mg_bitmap *out, mg_buffer *cmyk,
                        mg_error *err);

/// Closes the file and frees the handle (NULL is fine).
void mg_tiff_close(mg_tiff_file *file);

#endif
