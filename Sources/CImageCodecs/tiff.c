// TIFF through libtiff 4.5, read from memory with per-open error handlers (TIFFClientOpenExt): decoding runs on
// many threads, so the process-wide TIFFSetErrorHandler is never used. Pixels come from libtiff's RGBA interface
// (every photometric, bit depth, compression and layout it knows), asked for the stored row order so the caller
// applies the Orientation tag itself, with two exceptions it gets wrong for us: unassociated alpha (the RGBA
// interface premultiplies it) and CMYK (it truncates; the corpus rule rounds, and an ICC conversion needs the
// samples), which are read as raw samples.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tiffio.h>

#include "mg_tiff.h"
#include "internal.h"
#include "lazy_library.h"

// Opened on first use (lazy_library.h says why): every function of the library this file calls.
#define TIFF_FUNCTIONS(X) \
    X(TIFFClientOpenExt) \
    X(TIFFClose) \
    X(TIFFComputeStrip) \
    X(TIFFComputeTile) \
    X(TIFFCurrentDirectory) \
    X(TIFFGetField) \
    X(TIFFGetFieldDefaulted) \
    X(TIFFIsTiled) \
    X(TIFFNumberOfDirectories) \
    X(TIFFOpenOptionsAlloc) \
    X(TIFFOpenOptionsFree) \
    X(TIFFOpenOptionsSetErrorHandlerExtR) \
    X(TIFFOpenOptionsSetMaxSingleMemAlloc) \
    X(TIFFOpenOptionsSetWarningHandlerExtR) \
    X(TIFFRGBAImageBegin) \
    X(TIFFRGBAImageEnd) \
    X(TIFFRGBAImageGet) \
    X(TIFFRGBAImageOK) \
    X(TIFFReadEncodedStrip) \
    X(TIFFReadEncodedTile) \
    X(TIFFSetDirectory) \
    X(TIFFSetField) \
    X(TIFFStripSize) \
    X(TIFFStripSize64) \
    X(TIFFTileSize) \
    X(TIFFTileSize64)
MG_LAZY_LIBRARY(tiff_library, TIFF_FUNCTIONS, "libtiff", MG_LAZY_FILES("libtiff.so", "libtiff.so.6"))

struct mg_tiff_file {
    TIFF *tif;
    const uint8_t *data;
    uint64_t length;
    uint64_t position;
    uint32_t pages;
    int dirty;              // the current directory was changed in memory (decode_rgba): read it again
    int has_error;          // libtiff reported an error since the last reset
    char error[200];        // its first message
};

// MARK: - In-memory client procedures

static tmsize_t mem_read(thandle_t handle, void *buffer, tmsize_t size) {
    struct mg_tiff_file *f = handle;
    if (size <= 0 || f->position >= f->length) return 0;
    uint64_t available = f->length - f->position;
    uint64_t count = (uint64_t)size < available ? (uint64_t)size : available;
    memcpy(buffer, f->data + f->position, (size_t)count);
    f->position += count;
    return (tmsize_t)count;
}

static tmsize_t mem_write(thandle_t handle, void *buffer, tmsize_t size) {
    (void)handle, (void)buffer, (void)size;
    return -1;
}

static toff_t mem_seek(thandle_t handle, toff_t offset, int whence) {
    struct mg_tiff_file *f = handle;
    uint64_t base = whence == SEEK_CUR ? f->position : whence == SEEK_END ? f->length : 0;
    if (offset > UINT64_MAX - base) return (toff_t)-1;
    f->position = base + offset;  // past the end is allowed; reads there return 0 bytes
    return f->position;
}

static int mem_close(thandle_t handle) {
    (void)handle;
    return 0;
}

static toff_t mem_size(thandle_t handle) { return ((struct mg_tiff_file *)handle)->length; }

static int mem_map(thandle_t handle, void **base, toff_t *size) {
    struct mg_tiff_file *f = handle;
    *base = (void *)f->data;
    *size = f->length;
    return 1;
}

static void mem_unmap(thandle_t handle, void *base, toff_t size) { (void)handle, (void)base, (void)size; }

// MARK: - Errors

static int on_error(TIFF *tif, void *user_data, const char *module, const char *format, va_list args) {
    (void)tif, (void)module;
    struct mg_tiff_file *f = user_data;
    if (!f->has_error) {
        vsnprintf(f->error, sizeof f->error, format, args);
        f->has_error = 1;
    }
    return 1;  // handled: libtiff's default handler must not print to stderr
}

// Most warnings (unknown tags, assumed defaults) do not change the image. But libjpeg's truncation and
// corrupt-data reports inside JPEG-compressed TIFFs, and the fax codecs' premature end and bad lines, arrive as
// warnings while libtiff pads the picture with grey or white: those are errors here, as they are in jpeg.c.
static int on_warning(TIFF *tif, void *user_data, const char *module, const char *format, va_list args) {
    (void)tif, (void)module;
    struct mg_tiff_file *f = user_data;
    char message[sizeof f->error];
    vsnprintf(message, sizeof message, format, args);
    static const char *damage[] = {"Premature end", "Corrupt JPEG", "Premature EOF", "Premature EOL",
                                   "Bad code word", "Line length mismatch", "ran out of"};
    for (size_t i = 0; i < sizeof damage / sizeof *damage; i++) {
        if (strstr(message, damage[i]) && !f->has_error) {
            memcpy(f->error, message, sizeof f->error);
            f->has_error = 1;
        }
    }
    return 1;
}

// libtiff has no error codes, only messages: sort them by what they say.
static int status_for_message(const char *message) {
    static const char *truncated[] = {"Read error", "Not enough data", "Premature", "past end", "beyond the end",
                                      "Cannot read", "Seek error", "Incorrect count", "truncated"};
    for (size_t i = 0; i < sizeof truncated / sizeof *truncated; i++)
        if (strstr(message, truncated[i])) return MG_ERR_TRUNCATED;
    if (strstr(message, "memory limit") || strstr(message, "Maximum allowed")) return MG_ERR_TOO_LARGE;
    if (strstr(message, "Out of memory") || strstr(message, "No space")) return MG_ERR_NO_MEMORY;
    return MG_ERR_CORRUPT;
}

// Fails with libtiff's own message when it gave one, else with `fallback`.
static int fail_tiff(struct mg_tiff_file *f, mg_error *err, const char *fallback) {
    if (f->has_error) return mg_fail(err, status_for_message(f->error), "libtiff: %s", f->error);
    return mg_fail(err, MG_ERR_CORRUPT, "%s", fallback);
}

// MARK: - Opening

int mg_tiff_open(const uint8_t *data, size_t length, uint64_t max_single_alloc, mg_tiff_file **out, mg_error *err) {
    if (!out) return mg_fail(err, MG_ERR_INVALID_ARGUMENT, "NULL argument");
    if (!mg_lazy_load(&tiff_library, err)) return MG_ERR_UNSUPPORTED;
    *out = NULL;
    if (!data || length == 0) return mg_fail(err, MG_ERR_TRUNCATED, "no data");
    if (length < 8) return mg_fail(err, MG_ERR_TRUNCATED, "data ends inside the TIFF header (%zu bytes)", length);
    struct mg_tiff_file *f = calloc(1, sizeof *f);
    if (!f) return mg_fail(err, MG_ERR_NO_MEMORY, "could not allocate the TIFF handle");
    f->data = data;
    f->length = length;

    TIFFOpenOptions *options = p_TIFFOpenOptionsAlloc();
    if (!options) {
        free(f);
        return mg_fail(err, MG_ERR_NO_MEMORY, "could not allocate TIFF open options");
    }
    p_TIFFOpenOptionsSetErrorHandlerExtR(options, on_error, f);
    p_TIFFOpenOptionsSetWarningHandlerExtR(options, on_warning, f);
    if (max_single_alloc) p_TIFFOpenOptionsSetMaxSingleMemAlloc(options, (tmsize_t)max_single_alloc);
    // "r": read-only; memory mapping ("m" is not given) lets libtiff read uncompressed strips in place.
    f->tif = p_TIFFClientOpenExt("memory", "r", (thandle_t)f, mem_read, mem_write, mem_seek, mem_close, mem_size,
                               mem_map, mem_unmap, options);
    p_TIFFOpenOptionsFree(options);
    if (!f->tif) {
        int status = fail_tiff(f, err, "libtiff could not open the file");
        free(f);
        return status;
    }
    tdir_t count = p_TIFFNumberOfDirectories(f->tif);
    f->pages = count > 0 ? (uint32_t)count : 1;
    f->has_error = 0;  // a broken link further down the chain only shortens the page count
    if (!p_TIFFSetDirectory(f->tif, 0)) {
        int status = fail_tiff(f, err, "the first directory cannot be read");
        mg_tiff_close(f);
        return status;
    }
    *out = f;
    return MG_OK;
}

uint32_t mg_tiff_page_count(const mg_tiff_file *file) { return file ? file->pages : 0; }

void mg_tiff_close(mg_tiff_file *file) {
    if (!file) return;
    if (file->tif) p_TIFFClose(file->tif);
    free(file);
}

static int select_page(mg_tiff_file *f, uint32_t index, mg_error *err) {
    f->has_error = 0;
    if (index >= f->pages) return mg_fail(err, MG_ERR_INVALID_ARGUMENT, "page %u of %u", index + 1, f->pages);
    if (p_TIFFCurrentDirectory(f->tif) == index && !f->dirty) return MG_OK;
    f->dirty = 0;
    if (!p_TIFFSetDirectory(f->tif, (tdir_t)index)) return fail_tiff(f, err, "the page's directory cannot be read");
    return MG_OK;
}

// The alpha kind of the current directory as libtiff's RGBA interface sees it (0: none).
static uint16_t alpha_kind(TIFF *tif) {
    uint16_t count = 0, *info = NULL, spp = 1, photometric = 0;
    p_TIFFGetFieldDefaulted(tif, TIFFTAG_EXTRASAMPLES, &count, &info);
    p_TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
    if (count >= 1 && info) {
        if (info[0] == EXTRASAMPLE_ASSOCALPHA || info[0] == EXTRASAMPLE_UNASSALPHA) return info[0];
        if (info[0] == EXTRASAMPLE_UNSPECIFIED && spp > 3) return EXTRASAMPLE_ASSOCALPHA;
    }
    // An RGB page with a fourth sample and no ExtraSamples tag: libtiff takes it as associated alpha.
    if (count == 0 && spp == 4 && p_TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric) &&
        photometric == PHOTOMETRIC_RGB)
        return EXTRASAMPLE_ASSOCALPHA;
    return 0;
}

int mg_tiff_page_info(mg_tiff_file *f, uint32_t index, mg_tiff_page *page, mg_error *err) {
    if (!f || !page) return mg_fail(err, MG_ERR_INVALID_ARGUMENT, "NULL argument");
    memset(page, 0, sizeof *page);
    int status = select_page(f, index, err);
    if (status != MG_OK) return status;
    uint32_t width = 0, height = 0;
    uint16_t bps = 1, orientation = ORIENTATION_TOPLEFT;
    p_TIFFGetField(f->tif, TIFFTAG_IMAGEWIDTH, &width);
    p_TIFFGetField(f->tif, TIFFTAG_IMAGELENGTH, &height);
    p_TIFFGetFieldDefaulted(f->tif, TIFFTAG_BITSPERSAMPLE, &bps);
    p_TIFFGetFieldDefaulted(f->tif, TIFFTAG_ORIENTATION, &orientation);
    page->width = width;
    page->height = height;
    page->bit_depth = bps;
    page->orientation = orientation >= 1 && orientation <= 8 ? orientation : 1;
    page->has_alpha = alpha_kind(f->tif) != 0;
    return MG_OK;
}

int mg_tiff_read_meta(mg_tiff_file *f, mg_image_meta *meta, mg_error *err) {
    if (!f || !meta) return mg_fail(err, MG_ERR_INVALID_ARGUMENT, "NULL argument");
    memset(meta, 0, sizeof *meta);
    mg_tiff_page page;
    int status = mg_tiff_page_info(f, 0, &page, err);
    if (status != MG_OK) return status;
    uint32_t length = 0;
    void *bytes = NULL;
    if (p_TIFFGetField(f->tif, TIFFTAG_ICCPROFILE, &length, &bytes) && bytes && length)
        meta->icc = mg_buffer_copy(bytes, length);
    length = 0;
    bytes = NULL;
    if (p_TIFFGetField(f->tif, TIFFTAG_XMLPACKET, &length, &bytes) && bytes && length)
        meta->xmp = mg_buffer_copy(bytes, length);
    meta->bit_depth = page.bit_depth;
    meta->has_alpha = page.has_alpha;
    return MG_OK;
}

// MARK: - Decoding

static uint8_t scale16(uint16_t v) { return (uint8_t)(((uint32_t)v * 255 + 32767) / 65535); }

// min(255, c*255/a) on every colour sample of a premultiplied pixel (integer division, the corpus rule).
static void unpremultiply(uint8_t *pixels, size_t count) {
    for (size_t i = 0; i < count; i++, pixels += 4) {
        uint32_t a = pixels[3];
        if (a == 255) continue;
        for (int c = 0; c < 3; c++) {
            uint32_t v = a ? (uint32_t)pixels[c] * 255 / a : 0;
            pixels[c] = (uint8_t)(v > 255 ? 255 : v);
        }
    }
}

static int decode_rgba(struct mg_tiff_file *f, uint32_t width, uint32_t height, uint8_t *pixels, mg_error *err) {
    TIFF *tif = f->tif;
    uint16_t kind = alpha_kind(tif);
    f->dirty = 1;  // both the rewrite below and p_TIFFRGBAImageBegin (JPEGCOLORMODE) change the directory
    if (kind == EXTRASAMPLE_UNASSALPHA) {
        // Declared associated, the RGBA interface copies alpha and colour as stored instead of premultiplying.
        uint16_t count = 0, *info = NULL;
        p_TIFFGetField(tif, TIFFTAG_EXTRASAMPLES, &count, &info);
        uint16_t *copy = malloc((size_t)count * sizeof *copy);
        if (!copy) return mg_fail(err, MG_ERR_NO_MEMORY, "could not copy ExtraSamples");
        memcpy(copy, info, (size_t)count * sizeof *copy);
        copy[0] = EXTRASAMPLE_ASSOCALPHA;
        int set = p_TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, count, copy);
        free(copy);
        if (!set) return fail_tiff(f, err, "ExtraSamples could not be read");
    }
    char message[1024] = "";
    if (!p_TIFFRGBAImageOK(tif, message))
        return mg_fail(err, MG_ERR_UNSUPPORTED, "libtiff: %s", message[0] ? message : "unsupported layout");
    TIFFRGBAImage image;
    if (!p_TIFFRGBAImageBegin(&image, tif, 1, message)) {
        if (f->has_error) return fail_tiff(f, err, message);
        return mg_fail(err, MG_ERR_UNSUPPORTED, "libtiff: %s", message[0] ? message : "unsupported layout");
    }
    // Asking for the stored orientation makes libtiff flip nothing: rows come out as stored, top first.
    image.req_orientation = image.orientation;
    int ok = p_TIFFRGBAImageGet(&image, (uint32_t *)(void *)pixels, width, height);
    p_TIFFRGBAImageEnd(&image);
    if (!ok || f->has_error) return fail_tiff(f, err, "libtiff could not read the pixels");
    // The raster holds ABGR words (R in the low byte); on a big-endian machine turn them into R, G, B, A bytes.
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    for (size_t i = 0; i < (size_t)width * height; i++) {
        uint32_t v = ((uint32_t *)(void *)pixels)[i];
        uint8_t *p = pixels + i * 4;
        p[0] = v & 0xFF, p[1] = v >> 8 & 0xFF, p[2] = v >> 16 & 0xFF, p[3] = v >> 24;
    }
#endif
    if (kind == EXTRASAMPLE_ASSOCALPHA) unpremultiply(pixels, (size_t)width * height);
    return MG_OK;
}

// Copies `count` pixels of `n` samples (8 or 16 bits) into `dst` (`spp` 8-bit samples a pixel) from sample `first`.
static void copy_samples(const uint8_t *src, uint16_t bps, uint32_t count, uint32_t n, uint8_t *dst, uint32_t spp,
                         uint32_t first) {
    for (uint32_t p = 0; p < count; p++) {
        for (uint32_t s = 0; s < n; s++) {
            size_t i = (size_t)p * n + s;
            uint8_t v = bps == 8 ? src[i] : scale16(((const uint16_t *)(const void *)src)[i]);
            dst[(size_t)p * spp + first + s] = v;
        }
    }
}

// Reads every sample of the current page, as stored, into `samples` (width * height * spp bytes, 8-bit).
static int read_samples(struct mg_tiff_file *f, uint32_t width, uint32_t height, uint16_t spp, uint16_t bps,
                        uint8_t *samples, mg_error *err) {
    TIFF *tif = f->tif;
    uint16_t planar = PLANARCONFIG_CONTIG;
    p_TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
    uint32_t planes = planar == PLANARCONFIG_SEPARATE ? spp : 1;
    uint32_t per_pixel = planar == PLANARCONFIG_SEPARATE ? 1 : spp;
    size_t bytes_per_sample = bps / 8;
    int tiled = p_TIFFIsTiled(tif);
    tmsize_t size = tiled ? p_TIFFTileSize(tif) : p_TIFFStripSize(tif);
    if (size <= 0) return fail_tiff(f, err, "the strip or tile size is invalid");
    uint8_t *buffer = malloc((size_t)size);
    if (!buffer) return mg_fail(err, MG_ERR_NO_MEMORY, "could not allocate a %lld-byte strip", (long long)size);
    int status = MG_OK;
    if (tiled) {
        uint32_t tw = 0, th = 0;
        p_TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw);
        p_TIFFGetField(tif, TIFFTAG_TILELENGTH, &th);
        size_t tile_row = (size_t)tw * per_pixel * bytes_per_sample;
        if (tw == 0 || th == 0 || tile_row * th > (size_t)size) status = fail_tiff(f, err, "invalid tile size");
        for (uint32_t plane = 0; plane < planes && status == MG_OK; plane++) {
            for (uint32_t y = 0; y < height && status == MG_OK; y += th) {
                for (uint32_t x = 0; x < width && status == MG_OK; x += tw) {
                    uint32_t tile = p_TIFFComputeTile(tif, x, y, 0, (uint16_t)plane);
                    uint32_t rows = height - y < th ? height - y : th, cols = width - x < tw ? width - x : tw;
                    // A short tile would leave uninitialised heap in the image: it must cover the rows used.
                    tmsize_t got = p_TIFFReadEncodedTile(tif, tile, buffer, size);
                    if (got < 0 || (size_t)got < tile_row * (rows - 1) + (size_t)cols * per_pixel * bytes_per_sample ||
                        f->has_error) {
                        status = fail_tiff(f, err, "a tile could not be read");
                        break;
                    }
                    for (uint32_t r = 0; r < rows; r++)
                        copy_samples(buffer + r * tile_row, bps, cols, per_pixel,
                                     samples + ((size_t)(y + r) * width + x) * spp, spp, plane);
                }
            }
        }
    } else {
        uint32_t rows_per_strip = height;
        p_TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &rows_per_strip);
        if (rows_per_strip == 0 || rows_per_strip > height) rows_per_strip = height;
        size_t row_bytes = (size_t)width * per_pixel * bytes_per_sample;
        for (uint32_t plane = 0; plane < planes && status == MG_OK; plane++) {
            for (uint32_t y = 0; y < height && status == MG_OK; y += rows_per_strip) {
                uint32_t rows = height - y < rows_per_strip ? height - y : rows_per_strip;
                uint32_t strip = p_TIFFComputeStrip(tif, y, (uint16_t)plane);
                tmsize_t got = p_TIFFReadEncodedStrip(tif, strip, buffer, size);
                if (got < 0 || f->has_error) {
                    status = fail_tiff(f, err, "a strip could not be read");
                } else if ((size_t)got < row_bytes * rows) {
                    status = mg_fail(err, MG_ERR_TRUNCATED, "strip %u holds %lld bytes, its rows need %zu", strip,
                                     (long long)got, row_bytes * rows);
                } else {
                    for (uint32_t r = 0; r < rows; r++)
                        copy_samples(buffer + r * row_bytes, bps, width, per_pixel,
                                     samples + (size_t)(y + r) * width * spp, spp, plane);
                }
            }
        }
    }
    free(buffer);
    return status;
}

// CMYK (InkSet CMYK, 8 or 16 bits) from its raw samples: R = (255-C)*(255-K)/255 rounded, alike for G and B.
static int decode_cmyk(struct mg_tiff_file *f, uint32_t width, uint32_t height, uint16_t spp, uint16_t bps,
                       const mg_limits *limits, uint8_t *pixels, mg_buffer *cmyk, mg_error *err) {
    size_t count = (size_t)width * height;
    uint64_t needed = (uint64_t)count * spp;
    if (limits && limits->max_total_bytes && needed > limits->max_total_bytes)
        return mg_fail(err, MG_ERR_TOO_LARGE, "%u-sample CMYK page needs %llu bytes, limit is %llu bytes", spp,
                       (unsigned long long)needed, (unsigned long long)limits->max_total_bytes);
    uint8_t *samples = malloc((size_t)needed);
    if (!samples) return mg_fail(err, MG_ERR_NO_MEMORY, "could not allocate %llu bytes", (unsigned long long)needed);
    int status = read_samples(f, width, height, spp, bps, samples, err);
    if (status != MG_OK) {
        free(samples);
        return status;
    }
    uint16_t kind = alpha_kind(f->tif);
    int alpha = kind != 0 && spp > 4;
    for (size_t i = 0; i < count; i++) {
        const uint8_t *s = samples + i * spp;
        uint32_t k = 255 - s[3];
        uint8_t *p = pixels + i * 4;
        for (int c = 0; c < 3; c++) p[c] = (uint8_t)(((255 - s[c]) * k + 127) / 255);
        p[3] = alpha ? s[4] : 255;
    }
    if (alpha && kind == EXTRASAMPLE_ASSOCALPHA) unpremultiply(pixels, count);
    if (cmyk) {
        // Compact in place to 4 samples a pixel (the write never overtakes the read).
        for (size_t i = 0; i < count; i++) memmove(samples + i * 4, samples + i * spp, 4);
        cmyk->bytes = samples;
        cmyk->length = count * 4;
    } else {
        free(samples);
    }
    return MG_OK;
}

// Strip and tile sizes as the directory declares them, before libtiff allocates one.
static int check_chunks(TIFF *tif, const mg_limits *limits, mg_error *err) {
    uint64_t bytes = p_TIFFIsTiled(tif) ? p_TIFFTileSize64(tif) : p_TIFFStripSize64(tif);
    const char *what = p_TIFFIsTiled(tif) ? "tile" : "strip";
    if (bytes == 0) return mg_fail(err, MG_ERR_CORRUPT, "the %s size is zero or overflows", what);
    if (limits && limits->max_total_bytes && bytes > limits->max_total_bytes)
        return mg_fail(err, MG_ERR_TOO_LARGE, "one %s needs %llu bytes, limit is %llu bytes", what,
                       (unsigned long long)bytes, (unsigned long long)limits->max_total_bytes);
    if (p_TIFFIsTiled(tif)) {
        uint32_t tw = 0, th = 0;
        p_TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw);
        p_TIFFGetField(tif, TIFFTAG_TILELENGTH, &th);
        if (limits && limits->max_pixels && (uint64_t)tw * th > limits->max_pixels)
            return mg_fail(err, MG_ERR_TOO_LARGE, "tiles of %ux%u exceed the %llu-pixel limit", tw, th,
                           (unsigned long long)limits->max_pixels);
    }
    return MG_OK;
}

int mg_tiff_decode_page(mg_tiff_file *f, uint32_t index, const mg_limits *limits, mg_bitmap *out, mg_buffer *cmyk,
                        mg_error *err) {
    if (out) memset(out, 0, sizeof *out);
    if (cmyk) memset(cmyk, 0, sizeof *cmyk);
    if (!f || !out) return mg_fail(err, MG_ERR_INVALID_ARGUMENT, "NULL argument");
    mg_tiff_page page;
    int status = mg_tiff_page_info(f, index, &page, err);
    if (status == MG_OK) status = mg_check_frame_size(err, limits, page.width, page.height, "TIFF page");
    if (status == MG_OK) status = check_chunks(f->tif, limits, err);
    if (status != MG_OK) return status;

    uint16_t photometric = 0, spp = 1, bps = page.bit_depth, inkset = INKSET_CMYK, format = SAMPLEFORMAT_UINT;
    uint16_t extra_count = 0, *extra = NULL;
    p_TIFFGetField(f->tif, TIFFTAG_PHOTOMETRIC, &photometric);
    p_TIFFGetFieldDefaulted(f->tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
    p_TIFFGetFieldDefaulted(f->tif, TIFFTAG_INKSET, &inkset);
    p_TIFFGetFieldDefaulted(f->tif, TIFFTAG_SAMPLEFORMAT, &format);
    p_TIFFGetFieldDefaulted(f->tif, TIFFTAG_EXTRASAMPLES, &extra_count, &extra);
    int is_cmyk = photometric == PHOTOMETRIC_SEPARATED && inkset == INKSET_CMYK && spp >= 4 &&
                  spp - extra_count >= 4 && (bps == 8 || bps == 16) && format == SAMPLEFORMAT_UINT;

    size_t size = (size_t)page.width * page.height * 4;
    uint8_t *pixels = mg_alloc_pixels(size);
    if (!pixels) return mg_fail(err, MG_ERR_NO_MEMORY, "could not allocate %zu bytes", size);
    status = is_cmyk ? decode_cmyk(f, page.width, page.height, spp, bps, limits, pixels, cmyk, err)
                     : decode_rgba(f, page.width, page.height, pixels, err);
    if (status != MG_OK) {
        free(pixels);
        return status;
    }
    *out = (mg_bitmap){pixels, page.width, page.height};
    return MG_OK;
}
