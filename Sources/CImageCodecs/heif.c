// HEIF/HEIC through libheif 1.15: the primary image only, decoded by libheif with its
// transformations (clap, irot, imir) applied. More than 8 bits are decoded as 16-bit RGBA and
// scaled here by round(v*255/(2^d-1)).
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <libheif/heif.h>

#include "mg_heif.h"
#include "internal.h"
#include "lazy_library.h"

// Opened on first use (lazy_library.h says why): every function of the library this file calls.
#define HEIF_FUNCTIONS(X) \
    X(heif_context_alloc) \
    X(heif_context_free) \
    X(heif_context_get_image_handle) \
    X(heif_context_get_list_of_top_level_image_IDs) \
    X(heif_context_get_primary_image_ID) \
    X(heif_context_get_primary_image_handle) \
    X(heif_context_is_top_level_image_ID) \
    X(heif_context_read_from_memory_without_copy) \
    X(heif_context_set_max_decoding_threads) \
    X(heif_context_set_maximum_image_size_limit) \
    X(heif_decode_image) \
    X(heif_decoding_options_alloc) \
    X(heif_decoding_options_free) \
    X(heif_image_get_bits_per_pixel_range) \
    X(heif_image_get_chroma_format) \
    X(heif_image_get_height) \
    X(heif_image_get_plane_readonly) \
    X(heif_image_get_width) \
    X(heif_image_handle_get_color_profile_type) \
    X(heif_image_handle_get_height) \
    X(heif_image_handle_get_ispe_height) \
    X(heif_image_handle_get_ispe_width) \
    X(heif_image_handle_get_list_of_metadata_block_IDs) \
    X(heif_image_handle_get_luma_bits_per_pixel) \
    X(heif_image_handle_get_metadata) \
    X(heif_image_handle_get_metadata_content_type) \
    X(heif_image_handle_get_metadata_size) \
    X(heif_image_handle_get_metadata_type) \
    X(heif_image_handle_get_nclx_color_profile) \
    X(heif_image_handle_get_number_of_metadata_blocks) \
    X(heif_image_handle_get_raw_color_profile) \
    X(heif_image_handle_get_raw_color_profile_size) \
    X(heif_image_handle_get_width) \
    X(heif_image_handle_has_alpha_channel) \
    X(heif_image_handle_is_premultiplied_alpha) \
    X(heif_image_handle_release) \
    X(heif_image_release) \
    X(heif_init) \
    X(heif_nclx_color_profile_free)
static void initialize_heif(void);
MG_LAZY_LIBRARY_INITIALIZED(heif_library, HEIF_FUNCTIONS, "libheif", initialize_heif,
                            MG_LAZY_FILES("libheif.so", "libheif.so.1"))

// Loads libheif's decoder plugins once for the whole process (never undone: decoding runs on many threads).
static void initialize_heif(void) { p_heif_init(NULL); }

// libheif 1.15's MAX_IMAGE_WIDTH/MAX_IMAGE_HEIGHT (heif_limits.h), the limit a fresh context has.
#define MG_HEIF_DEFAULT_SIDE_LIMIT 32768u

static int status_for(struct heif_error error) {
    if (error.subcode == heif_suberror_Security_limit_exceeded) return MG_ERR_TOO_LARGE;
    if (error.subcode == heif_suberror_End_of_data) return MG_ERR_TRUNCATED;
    switch (error.code) {
    case heif_error_Memory_allocation_error: return MG_ERR_NO_MEMORY;
    case heif_error_Unsupported_feature: return MG_ERR_UNSUPPORTED;
    default: return MG_ERR_CORRUPT;
    }
}

static int fail_heif(mg_error *err, struct heif_error error, const char *what) {
    return mg_fail(err, status_for(error), "%s: %s", what, error.message ? error.message : "libheif error");
}

// Reads the file into a context and opens its primary image. `side_limit` (0: libheif's default) is the
// longest side libheif accepts while parsing.
static int open_primary(const uint8_t *data, size_t length, uint64_t side_limit, struct heif_context **context,
                        struct heif_image_handle **handle, mg_error *err) {
    *context = NULL;
    *handle = NULL;
    if (length == 0) return mg_fail(err, MG_ERR_TRUNCATED, "no data");
    struct heif_context *ctx = p_heif_context_alloc();
    if (!ctx) return mg_fail(err, MG_ERR_NO_MEMORY, "could not create the HEIF context");
    // No side can be longer than the pixel limit; never raise libheif's own default above it.
    if (side_limit && side_limit < MG_HEIF_DEFAULT_SIDE_LIMIT) p_heif_context_set_maximum_image_size_limit(ctx, (int)side_limit);
    // Grid tiles on two threads (libheif starts them per decode), as JPEG XL decodes on two: a phone photo is
    // 48 tiles, and one thread left HEIC decoding at 2.5x pillow-heif's time.
    p_heif_context_set_max_decoding_threads(ctx, 2);
    struct heif_error error = p_heif_context_read_from_memory_without_copy(ctx, data, length, NULL);
    if (error.code == heif_error_Ok) error = p_heif_context_get_primary_image_handle(ctx, handle);
    // A `pitm` naming a thumbnail (an item that is not top-level) means the file's real image is the
    // first top-level one; libheif 1.15 would return the thumbnail.
    heif_item_id primary = 0, first = 0;
    if (error.code == heif_error_Ok && p_heif_context_get_primary_image_ID(ctx, &primary).code == heif_error_Ok &&
        !p_heif_context_is_top_level_image_ID(ctx, primary) &&
        p_heif_context_get_list_of_top_level_image_IDs(ctx, &first, 1) == 1) {
        struct heif_image_handle *top = NULL;
        if (p_heif_context_get_image_handle(ctx, first, &top).code == heif_error_Ok) {
            p_heif_image_handle_release(*handle);
            *handle = top;
        }
    }
    if (error.code != heif_error_Ok) {
        int status = fail_heif(err, error, "reading the HEIF container");
        p_heif_context_free(ctx);
        return status;
    }
    *context = ctx;
    return MG_OK;
}

static void describe(const struct heif_image_handle *handle, mg_heif_info *info) {
    info->width = (uint32_t)p_heif_image_handle_get_width(handle);
    info->height = (uint32_t)p_heif_image_handle_get_height(handle);
    int ispe_width = p_heif_image_handle_get_ispe_width(handle);
    int ispe_height = p_heif_image_handle_get_ispe_height(handle);
    info->ispe_width = ispe_width > 0 ? (uint32_t)ispe_width : info->width;
    info->ispe_height = ispe_height > 0 ? (uint32_t)ispe_height : info->height;
    info->has_alpha = p_heif_image_handle_has_alpha_channel(handle) ? 1 : 0;
    int depth = p_heif_image_handle_get_luma_bits_per_pixel(handle);
    info->bit_depth = depth > 0 ? (uint32_t)depth : 0;
}

int mg_heif_probe(const uint8_t *data, size_t length, mg_heif_info *info, mg_error *err) {
    if (info) memset(info, 0, sizeof *info);
    if (!data || !info) return mg_fail(err, MG_ERR_INVALID_ARGUMENT, "NULL argument");
    if (!mg_lazy_load(&heif_library, err)) return MG_ERR_UNSUPPORTED;
    struct heif_context *ctx = NULL;
    struct heif_image_handle *handle = NULL;
    int status = open_primary(data, length, 0, &ctx, &handle, err);
    if (status != MG_OK) return status;
    describe(handle, info);
    p_heif_image_handle_release(handle);
    p_heif_context_free(ctx);
    return MG_OK;
}

// ICC (`prof`/`rICC`) or nclx, EXIF (after the 4-byte offset to its TIFF header) and XMP.
static void read_meta(const struct heif_image_handle *handle, const mg_heif_info *info, mg_image_meta *meta) {
    enum heif_color_profile_type type = p_heif_image_handle_get_color_profile_type(handle);
    if (type == heif_color_profile_type_prof || type == heif_color_profile_type_rICC) {
        size_t size = p_heif_image_handle_get_raw_color_profile_size(handle);
        uint8_t *icc = size ? malloc(size) : NULL;
        if (icc && p_heif_image_handle_get_raw_color_profile(handle, icc).code == heif_error_Ok) {
            meta->icc.bytes = icc;
            meta->icc.length = size;
        } else {
            free(icc);
        }
    }
    struct heif_color_profile_nclx *nclx = NULL;
    if (type == heif_color_profile_type_nclx &&
        p_heif_image_handle_get_nclx_color_profile(handle, &nclx).code == heif_error_Ok && nclx) {
        meta->has_cicp = 1;
        meta->cicp_primaries = (uint16_t)nclx->color_primaries;
        meta->cicp_transfer = (uint16_t)nclx->transfer_characteristics;
        meta->cicp_matrix = (uint16_t)nclx->matrix_coefficients;
        meta->cicp_full_range = nclx->full_range_flag ? 1 : 0;
    }
    if (nclx) p_heif_nclx_color_profile_free(nclx);

    int count = p_heif_image_handle_get_number_of_metadata_blocks(handle, NULL);
    heif_item_id ids[32];
    if (count > 32) count = 32;
    count = count > 0 ? p_heif_image_handle_get_list_of_metadata_block_IDs(handle, NULL, ids, count) : 0;
    for (int i = 0; i < count; i++) {
        const char *kind = p_heif_image_handle_get_metadata_type(handle, ids[i]);
        const char *content = p_heif_image_handle_get_metadata_content_type(handle, ids[i]);
        int is_exif = kind && strcmp(kind, "Exif") == 0 && !meta->exif.bytes;
        int is_xmp = kind && strcmp(kind, "mime") == 0 && content && strcmp(content, "application/rdf+xml") == 0 &&
                     !meta->xmp.bytes;
        if (!is_exif && !is_xmp) continue;
        size_t size = p_heif_image_handle_get_metadata_size(handle, ids[i]);
        uint8_t *bytes = size ? malloc(size) : NULL;
        if (!bytes) continue;
        if (p_heif_image_handle_get_metadata(handle, ids[i], bytes).code == heif_error_Ok) {
            if (is_xmp) {
                meta->xmp = mg_buffer_copy(bytes, size);
            } else if (size > 4) {
                size_t offset = (size_t)bytes[0] << 24 | (size_t)bytes[1] << 16 | (size_t)bytes[2] << 8 | bytes[3];
                if (offset < size - 4) meta->exif = mg_buffer_copy(bytes + 4 + offset, size - 4 - offset);
            }
        }
        free(bytes);
    }
    meta->bit_depth = info->bit_depth;
    meta->has_alpha = info->has_alpha;
}

static int check_limits(const mg_heif_info *info, const mg_limits *limits, mg_error *err) {
    int status = mg_check_frame_size(err, limits, info->ispe_width, info->ispe_height, "HEIF image (ispe)");
    if (status == MG_OK) status = mg_check_frame_size(err, limits, info->width, info->height, "HEIF image");
    return status;
}

// Copies libheif's interleaved RGBA (8 bits, or 16-bit little-endian samples holding `depth` bits)
// into a tightly packed RGBA8 buffer.
static int copy_pixels(const struct heif_image *image, int depth, mg_bitmap *out, mg_error *err) {
    int width = p_heif_image_get_width(image, heif_channel_interleaved);
    int height = p_heif_image_get_height(image, heif_channel_interleaved);
    int stride = 0;
    const uint8_t *plane = p_heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride);
    if (!plane || width <= 0 || height <= 0) return mg_fail(err, MG_ERR_CORRUPT, "libheif returned no pixels");
    size_t size = (size_t)width * height * 4;
    uint8_t *pixels = mg_alloc_pixels(size);
    if (!pixels) return mg_fail(err, MG_ERR_NO_MEMORY, "could not allocate %zu bytes for %dx%d", size, width, height);
    if (depth <= 8 && p_heif_image_get_chroma_format(image) == heif_chroma_interleaved_RGB) {
        if ((size_t)stride < (size_t)width * 3) {
            mg_free(pixels);
            return mg_fail(err, MG_ERR_CORRUPT, "libheif returned rows shorter than the image");
        }
        for (int y = 0; y < height; y++) {
            const uint8_t *row = plane + (size_t)y * stride;
            uint8_t *dst = pixels + (size_t)y * width * 4;
            for (int x = 0; x < width; x++, row += 3, dst += 4) {
                dst[0] = row[0];
                dst[1] = row[1];
                dst[2] = row[2];
                dst[3] = 255;
            }
        }
    } else if (depth <= 8) {
        for (int y = 0; y < height; y++)
            memcpy(pixels + (size_t)y * width * 4, plane + (size_t)y * stride, (size_t)width * 4);
    } else {
        uint32_t max = (1u << depth) - 1;
        for (int y = 0; y < height; y++) {
            const uint8_t *row = plane + (size_t)y * stride;
            uint8_t *dst = pixels + (size_t)y * width * 4;
            for (int i = 0; i < width * 4; i++) {
                uint32_t v = (uint32_t)row[2 * i] | (uint32_t)row[2 * i + 1] << 8;
                if (v > max) v = max;
                dst[i] = (uint8_t)((v * 510 + max) / (2 * max));  // round(v * 255 / max)
            }
        }
    }
    *out = (mg_bitmap){pixels, (uint32_t)width, (uint32_t)height};
    return MG_OK;
}

// libheif 1.15 ignores an nclx `full_range_flag` of 0 and converts limited-range YCbCr as if it were full
// range. For such files (without alpha) libheif is asked for upsampled 4:4:4 YCbCr and the conversion is done
// here with the nclx matrix. Returns 1 and the matrix's Kr and Kb when that applies.
static int needs_limited_range(const struct heif_image_handle *handle, const mg_heif_info *info, double *kr,
                               double *kb) {
    if (info->has_alpha || p_heif_image_handle_get_color_profile_type(handle) != heif_color_profile_type_nclx) return 0;
    struct heif_color_profile_nclx *nclx = NULL;
    // libheif 1.15 allocates the profile before it validates the code points and returns an error without
    // freeing it: free it whatever the answer (the decode fuzzer found the leak).
    int read = p_heif_image_handle_get_nclx_color_profile(handle, &nclx).code == heif_error_Ok;
    if (!read || !nclx) {
        if (nclx) p_heif_nclx_color_profile_free(nclx);
        return 0;
    }
    int limited = !nclx->full_range_flag;
    int matrix = (int)nclx->matrix_coefficients;
    p_heif_nclx_color_profile_free(nclx);
    if (!limited) return 0;
    switch (matrix) {
    case 1: *kr = 0.2126; *kb = 0.0722; return 1;            // BT.709
    case 5: case 6: *kr = 0.299; *kb = 0.114; return 1;      // BT.601
    case 9: case 10: *kr = 0.2627; *kb = 0.0593; return 1;   // BT.2020
    default: return 0;
    }
}

static double sample_at(const uint8_t *row, int x, int wide) {
    return wide ? (double)((uint32_t)row[2 * x] | (uint32_t)row[2 * x + 1] << 8) : (double)row[x];
}

static uint8_t to_byte(double v) {
    v = v * 255.0 + 0.5;
    return v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)v;
}

// Limited-range 4:4:4 YCbCr (Y 16...235, Cb/Cr 16...240, scaled to the bit depth) to opaque RGBA8.
static int convert_limited(const struct heif_image *image, double kr, double kb, mg_bitmap *out, mg_error *err) {
    int width = p_heif_image_get_width(image, heif_channel_Y);
    int height = p_heif_image_get_height(image, heif_channel_Y);
    int depth = p_heif_image_get_bits_per_pixel_range(image, heif_channel_Y);
    int y_stride = 0, cb_stride = 0, cr_stride = 0;
    const uint8_t *yp = p_heif_image_get_plane_readonly(image, heif_channel_Y, &y_stride);
    const uint8_t *cbp = p_heif_image_get_plane_readonly(image, heif_channel_Cb, &cb_stride);
    const uint8_t *crp = p_heif_image_get_plane_readonly(image, heif_channel_Cr, &cr_stride);
    // Every plane must have the luma's size and depth: chroma read with the wrong sample width would run past its rows.
    if (!yp || !cbp || !crp || width <= 0 || height <= 0 || depth < 8 || depth > 16 ||
        p_heif_image_get_width(image, heif_channel_Cb) != width || p_heif_image_get_height(image, heif_channel_Cb) != height ||
        p_heif_image_get_width(image, heif_channel_Cr) != width || p_heif_image_get_height(image, heif_channel_Cr) != height ||
        p_heif_image_get_bits_per_pixel_range(image, heif_channel_Cb) != depth ||
        p_heif_image_get_bits_per_pixel_range(image, heif_channel_Cr) != depth)
        return mg_fail(err, MG_ERR_CORRUPT, "libheif returned no 4:4:4 YCbCr planes");
    size_t size = (size_t)width * height * 4;
    uint8_t *pixels = mg_alloc_pixels(size);
    if (!pixels) return mg_fail(err, MG_ERR_NO_MEMORY, "could not allocate %zu bytes for %dx%d", size, width, height);
    double scale = (double)(1 << (depth - 8));
    double y_offset = 16 * scale, c_offset = 128 * scale, y_range = 219 * scale, c_range = 224 * scale;
    double kg = 1 - kr - kb;
    int wide = depth > 8;
    for (int y = 0; y < height; y++) {
        const uint8_t *yr = yp + (size_t)y * y_stride, *cbr = cbp + (size_t)y * cb_stride, *crr = crp + (size_t)y * cr_stride;
        uint8_t *dst = pixels + (size_t)y * width * 4;
        for (int x = 0; x < width; x++) {
            double luma = (sample_at(yr, x, wide) - y_offset) / y_range;
            double cb = (sample_at(cbr, x, wide) - c_offset) / c_range;
            double cr = (sample_at(crr, x, wide) - c_offset) / c_range;
            double r = luma + 2 * (1 - kr) * cr;
            double b = luma + 2 * (1 - kb) * cb;
            double g = (luma - kr * r - kb * b) / kg;
            dst[4 * x] = to_byte(r);
            dst[4 * x + 1] = to_byte(g);
            dst[4 * x + 2] = to_byte(b);
            dst[4 * x + 3] = 255;
        }
    }
    *out = (mg_bitmap){pixels, (uint32_t)width, (uint32_t)height};
    return MG_OK;
}

// libheif 1.15 hands premultiplied colour over as stored (libavif un-premultiplies, libheif does not).
static void unpremultiply(mg_bitmap *bitmap) {
    size_t count = (size_t)bitmap->width * bitmap->height;
    uint8_t *p = bitmap->pixels;
    for (size_t i = 0; i < count; i++, p += 4) {
        uint32_t a = p[3];
        if (a == 255) continue;
        for (int c = 0; c < 3; c++) {
            uint32_t v = a ? ((uint32_t)p[c] * 255 + a / 2) / a : 0;
            p[c] = (uint8_t)(v > 255 ? 255 : v);
        }
    }
}

int mg_heif_decode(const uint8_t *data, size_t length, const mg_limits *limits, mg_bitmap *out,
                   mg_image_meta *meta, mg_error *err) {
    if (out) memset(out, 0, sizeof *out);
    if (meta) memset(meta, 0, sizeof *meta);
    if (!data || !out || !meta) return mg_fail(err, MG_ERR_INVALID_ARGUMENT, "NULL argument");
    if (!mg_lazy_load(&heif_library, err)) return MG_ERR_UNSUPPORTED;
    struct heif_context *ctx = NULL;
    struct heif_image_handle *handle = NULL;
    int status = open_primary(data, length, limits ? limits->max_pixels : 0, &ctx, &handle, err);
    if (status != MG_OK) return status;

    mg_heif_info info;
    describe(handle, &info);
    status = check_limits(&info, limits, err);
    if (status == MG_OK) status = mg_heif_check_derived(data, length, limits, err);
    if (status == MG_OK && info.bit_depth == 0) status = mg_fail(err, MG_ERR_CORRUPT, "image has undefined bit depth");
    int depth = (int)info.bit_depth;
    if (status == MG_OK && depth > 16)
        status = mg_fail(err, MG_ERR_UNSUPPORTED, "%d bits per sample", depth);

    struct heif_image *image = NULL;
    double kr = 0, kb = 0;
    int limited = status == MG_OK && needs_limited_range(handle, &info, &kr, &kb);
    if (status == MG_OK) {
        struct heif_decoding_options *options = p_heif_decoding_options_alloc();
        if (!options) status = mg_fail(err, MG_ERR_NO_MEMORY, "could not allocate decoding options");
        else {
            enum heif_colorspace space = limited ? heif_colorspace_YCbCr : heif_colorspace_RGB;
            // 8-bit without alpha as RGB: libheif 1.15 converts 4:2:0 to 24-bit RGB faster than to RGBA, and
            // adding the opaque alpha while copying costs less than the difference.
            enum heif_chroma chroma = limited ? heif_chroma_444
                                      : depth > 8 ? heif_chroma_interleaved_RRGGBBAA_LE
                                      : info.has_alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB;
            struct heif_error error = p_heif_decode_image(handle, &image, space, chroma, options);
            p_heif_decoding_options_free(options);
            if (error.code != heif_error_Ok) status = fail_heif(err, error, "decoding the HEIF image");
        }
    }
    if (status == MG_OK) {
        // The limits were checked on what the container declares; check them again on what was decoded.
        enum heif_channel channel = limited ? heif_channel_Y : heif_channel_interleaved;
        int w = p_heif_image_get_width(image, channel), h = p_heif_image_get_height(image, channel);
        status = mg_check_frame_size(err, limits, w > 0 ? (uint64_t)w : 0, h > 0 ? (uint64_t)h : 0, "decoded HEIF image");
    }
    if (status == MG_OK && limited) {
        status = convert_limited(image, kr, kb, out, err);
    } else if (status == MG_OK) {
        // libheif reports the depth of what it returned; the handle's luma depth can differ (alpha, chroma).
        int returned = p_heif_image_get_bits_per_pixel_range(image, heif_channel_interleaved);
        status = copy_pixels(image, depth > 8 ? (returned > 8 ? returned : depth) : 8, out, err);
    }
    if (status == MG_OK && info.has_alpha && p_heif_image_handle_is_premultiplied_alpha(handle)) unpremultiply(out);
    if (status == MG_OK) read_meta(handle, &info, meta);
    if (image) p_heif_image_release(image);
    p_heif_image_handle_release(handle);
    p_heif_context_free(ctx);
    return status;
}
