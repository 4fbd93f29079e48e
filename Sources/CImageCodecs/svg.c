// SVG rendering with librsvg 2.54 + cairo.
//
// Why the prototypes below are declared here instead of including <librsvg/rsvg.h>, <cairo.h> and <glib.h>: those
// headers need the pkg-config include folders of glib, cairo and gdk-pixbuf, and handing those to this C target
// makes SwiftPM warn about `-pthread` (the project builds with zero warnings). The libraries are opened on first use
// (lazy_library.h), through pointers of these prototypes' types. Every declaration was checked against the installed
// headers: librsvg 2.54.7 (/usr/include/librsvg-2.0/librsvg/rsvg.h, rsvg-cairo.h), cairo 1.16
// (/usr/include/cairo/cairo.h) and glib 2.74 (glib/gerror.h, glib/gtypes.h). Only opaque pointers and plain structs
// cross this boundary.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "internal.h"
#include "lazy_library.h"
#include "mg_svg.h"

typedef int gboolean;                 // glib/gtypes.h: typedef gint gboolean
typedef struct {                      // glib/gerror.h: struct _GError
    uint32_t domain;                  // GQuark (guint32)
    int code;
    char *message;
} GError;
typedef struct _RsvgHandle RsvgHandle;
typedef struct {                      // rsvg.h: struct _RsvgRectangle
    double x, y, width, height;
} RsvgRectangle;
typedef struct {                      // rsvg.h: RsvgLength (RsvgUnit is a C enum)
    double length;
    int unit;
} RsvgLength;
enum { RSVG_UNIT_PERCENT = 0 };
typedef struct _cairo cairo_t;
typedef struct _cairo_surface cairo_surface_t;
enum { CAIRO_FORMAT_ARGB32 = 0, CAIRO_STATUS_SUCCESS = 0 };

extern RsvgHandle *rsvg_handle_new_from_data(const uint8_t *data, size_t data_len, GError **error);
extern void rsvg_handle_set_dpi(RsvgHandle *handle, double dpi);
extern gboolean rsvg_handle_get_intrinsic_size_in_pixels(RsvgHandle *handle, double *out_width, double *out_height);
extern void rsvg_handle_get_intrinsic_dimensions(RsvgHandle *handle, gboolean *out_has_width, RsvgLength *out_width,
                                                 gboolean *out_has_height, RsvgLength *out_height,
                                                 gboolean *out_has_viewbox, RsvgRectangle *out_viewbox);
extern gboolean rsvg_handle_get_geometry_for_element(RsvgHandle *handle, const char *id, RsvgRectangle *out_ink_rect,
                                                     RsvgRectangle *out_logical_rect, GError **error);
extern gboolean rsvg_handle_render_document(RsvgHandle *handle, cairo_t *cr, const RsvgRectangle *viewport,
                                            GError **error);
extern void g_object_unref(void *object);
extern void g_error_free(GError *error);
extern cairo_surface_t *cairo_image_surface_create_for_data(unsigned char *data, int format, int width, int height,
                                                            int stride);
extern int cairo_surface_status(cairo_surface_t *surface);
extern cairo_t *cairo_create(cairo_surface_t *target);
extern int cairo_status(cairo_t *cr);
extern void cairo_scale(cairo_t *cr, double sx, double sy);
extern void cairo_surface_flush(cairo_surface_t *surface);
extern void cairo_destroy(cairo_t *cr);
extern void cairo_surface_destroy(cairo_surface_t *surface);

// Opened on first use (lazy_library.h says why): every function of the library this file calls.
#define SVG_FUNCTIONS(X) \
    X(cairo_create) \
    X(cairo_destroy) \
    X(cairo_image_surface_create_for_data) \
    X(cairo_scale) \
    X(cairo_status) \
    X(cairo_surface_destroy) \
    X(cairo_surface_flush) \
    X(cairo_surface_status) \
    X(g_error_free) \
    X(g_object_unref) \
    X(rsvg_handle_get_geometry_for_element) \
    X(rsvg_handle_get_intrinsic_dimensions) \
    X(rsvg_handle_get_intrinsic_size_in_pixels) \
    X(rsvg_handle_new_from_data) \
    X(rsvg_handle_render_document) \
    X(rsvg_handle_set_dpi)
MG_LAZY_LIBRARY(svg_library, SVG_FUNCTIONS, "librsvg", MG_LAZY_FILES("librsvg-2.so", "librsvg-2.so.2"))

/// Cairo cannot make image surfaces wider or taller than this.
#define MG_SVG_MAX_SIDE 32767
/// Magpie's element limit, a tenth of librsvg's own (1,000,000). librsvg 2.54 parses about 100,000 elements a
/// second and refuses a document over its limit only after building every element: the decode fuzzer found a
/// cut-down copy of a 1,000,000-element bomb taking over 10 s and 1.9 GB, then a gzip one of 239,000 empty rects
/// (19 MB from 37 KB) taking 2.5 s before failing its checksum. Counting start tags first refuses both at once and
/// bounds what a hostile document costs to about a second. Real drawings, maps and icon sheets stay far below.
#define MG_SVG_MAX_ELEMENTS 100000u

/// Entity declarations a document may make. librsvg 2.54 leaks each declared entity's value (about 100 bytes,
/// allocated by libxml2's xmlParseEntityValue) on every parse: harmless for a drawing's handful of namespace
/// entities, a leak an attacker could multiply with thousands. Expansion attacks need far fewer than this, and
/// libxml2's amplification limit refuses those.
#define MG_SVG_MAX_ENTITIES 64u

typedef struct {
    uint64_t count;
    int after_open;  // the previous byte was '<'
    uint64_t entities;
    uint8_t tail[7];  // the last bytes seen, for an entity declaration split across chunks
    size_t tail_length;
} tag_counter;

/// Counts `<!ENTITY` declarations, including one that starts in the previous chunk's last 7 bytes.
static void count_entities(tag_counter *counter, const uint8_t *bytes, size_t length) {
    static const char declaration[8] = {'<', '!', 'E', 'N', 'T', 'I', 'T', 'Y'};
    uint8_t joined[14];
    size_t head = length < 7 ? length : 7;
    memcpy(joined, counter->tail, counter->tail_length);
    memcpy(joined + counter->tail_length, bytes, head);
    size_t joined_length = counter->tail_length + head;
    for (size_t start = 0; start < counter->tail_length; start++)
        if (start + 8 <= joined_length && memcmp(joined + start, declaration, 8) == 0) counter->entities++;
    for (size_t i = 0; i + 8 <= length;) {
        const uint8_t *open = memchr(bytes + i, '<', length - 7 - i);
        if (!open) break;
        i = (size_t)(open - bytes);
        if (memcmp(open, declaration, 8) == 0) counter->entities++;
        i++;
    }
    // A declaration starting in the last 7 bytes is counted with the next chunk, from the tail.
    if (length >= 7) {
        memcpy(counter->tail, bytes + length - 7, 7);
        counter->tail_length = 7;
    } else {
        size_t keep = joined_length < 7 ? joined_length : 7;
        memmove(counter->tail, joined + joined_length - keep, keep);
        counter->tail_length = keep;
    }
}

static int is_name_start(uint8_t c) {
    uint8_t lower = c | 0x20;
    return (lower >= 'a' && lower <= 'z') || c == '_' || c == ':' || c >= 0x80;
}

/// Counts `<` followed by a name's first character: start tags (and, harmlessly, the odd one inside a comment).
static void count_tags(tag_counter *counter, const uint8_t *bytes, size_t length) {
    count_entities(counter, bytes, length);
    size_t i = 0;
    if (counter->after_open && length > 0) {
        if (is_name_start(bytes[0])) counter->count++;
    }
    counter->after_open = 0;
    while (i < length) {
        const uint8_t *open = memchr(bytes + i, '<', length - i);
        if (!open) return;
        i = (size_t)(open - bytes) + 1;
        if (i == length) {
            counter->after_open = 1;
            return;
        }
        if (is_name_start(bytes[i])) counter->count++;
    }
}

/// Compressed SVGs are counted only up to this many inflated bytes: a tag-free gzip bomb would otherwise be inflated
/// in full just to count its tags (libxml2 refuses documents far smaller than this anyway).
#define MG_SVG_MAX_INFLATED ((size_t)64 << 20)

/// MG_OK, or an error when the document (inflated first when gzip-compressed) has more start tags than librsvg
/// accepts elements, inflates past MG_SVG_MAX_INFLATED, or cannot be checked at all (fails closed).
static int check_elements(const uint8_t *data, size_t length, mg_error *err) {
    tag_counter counter;
    memset(&counter, 0, sizeof counter);
    if (length < 2 || data[0] != 0x1F || data[1] != 0x8B) {
        count_tags(&counter, data, length);
    } else {
        z_stream stream;
        memset(&stream, 0, sizeof stream);
        if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) return mg_fail(err, MG_ERR_NO_MEMORY, "zlib cannot start");
        enum { CHUNK = 1 << 16 };
        uint8_t *chunk = malloc(CHUNK);
        if (!chunk) {
            inflateEnd(&stream);
            return mg_fail(err, MG_ERR_NO_MEMORY, "out of memory");
        }
        stream.next_in = (uint8_t *)data;
        stream.avail_in = (uInt)(length > 0xFFFFFFFFu ? 0xFFFFFFFFu : length);
        int result = Z_OK;
        while (result == Z_OK && counter.count <= MG_SVG_MAX_ELEMENTS && stream.total_out <= MG_SVG_MAX_INFLATED) {
            stream.next_out = chunk;
            stream.avail_out = CHUNK;
            result = inflate(&stream, Z_NO_FLUSH);
            count_tags(&counter, chunk, CHUNK - stream.avail_out);
        }
        size_t inflated = stream.total_out;
        free(chunk);
        inflateEnd(&stream);
        if (inflated > MG_SVG_MAX_INFLATED)
            return mg_fail(err, MG_ERR_TOO_LARGE, "the compressed SVG inflates past %zu bytes", MG_SVG_MAX_INFLATED);
        // Broken gzip data is left for librsvg to report.
    }
    if (counter.count > MG_SVG_MAX_ELEMENTS)
        return mg_fail(err, MG_ERR_CORRUPT, "the SVG has more than %u XML elements", MG_SVG_MAX_ELEMENTS);
    if (counter.entities > MG_SVG_MAX_ENTITIES)
        return mg_fail(err, MG_ERR_CORRUPT, "the SVG declares more than %u XML entities", MG_SVG_MAX_ENTITIES);
    return MG_OK;
}

static int fail_gerror(mg_error *err, int status, const char *what, GError *error) {
    int result = mg_fail(err, status, "%s: %s", what, error && error->message ? error->message : "unknown error");
    if (error) p_g_error_free(error);
    return result;
}

/// The size rsvg-convert 2.54 uses: width/height in pixels at 96 dpi; else the viewBox; else the size (not the
/// position) of the drawing's ink extent, which is also what librsvg 2.54 itself reports for a document with neither.
static int intrinsic_size(RsvgHandle *handle, double *width, double *height, mg_error *err) {
    if (p_rsvg_handle_get_intrinsic_size_in_pixels(handle, width, height)) return MG_OK;
    gboolean has_width = 0, has_height = 0, has_viewbox = 0;
    RsvgLength w = {0, 0}, h = {0, 0};
    RsvgRectangle viewbox = {0, 0, 0, 0};
    p_rsvg_handle_get_intrinsic_dimensions(handle, &has_width, &w, &has_height, &h, &has_viewbox, &viewbox);
    if (has_viewbox) {
        *width = viewbox.width;
        *height = viewbox.height;
        return MG_OK;
    }
    RsvgRectangle ink, logical;
    GError *error = NULL;
    if (!p_rsvg_handle_get_geometry_for_element(handle, NULL, &ink, &logical, &error))
        return fail_gerror(err, MG_ERR_CORRUPT, "cannot measure the SVG document", error);
    *width = ink.width;
    *height = ink.height;
    return MG_OK;
}

/// `value` rounded up to whole pixels, forgiving the float noise of exact sizes (100.0000001 stays 100).
static double whole_pixels(double value) { return ceil(value - 1e-6); }

/// Premultiplied native-endian ARGB32 to straight RGBA bytes, in place (cairo's own PNG writer rounds the same way).
static void unpremultiply(uint8_t *pixels, size_t count) {
    uint32_t *words = (uint32_t *)pixels;
    for (size_t i = 0; i < count; i++) {
        uint32_t argb = words[i];
        uint32_t a = argb >> 24, r = (argb >> 16) & 0xFF, g = (argb >> 8) & 0xFF, b = argb & 0xFF;
        if (a != 0 && a != 255) {
            r = (r * 255 + a / 2) / a;
            g = (g * 255 + a / 2) / a;
            b = (b * 255 + a / 2) / a;
        }
        uint8_t *p = pixels + i * 4;
        p[0] = (uint8_t)r;
        p[1] = (uint8_t)g;
        p[2] = (uint8_t)b;
        p[3] = (uint8_t)a;
    }
}

static int render(RsvgHandle *handle, const mg_svg_info *info, mg_bitmap *out, mg_error *err) {
    size_t count = (size_t)info->width * info->height;
    uint8_t *pixels = mg_alloc_pixels(count * 4);
    if (!pixels) return mg_fail(err, MG_ERR_NO_MEMORY, "cannot allocate %zu bytes for the SVG render", count * 4);
    memset(pixels, 0, count * 4);  // transparent background
    cairo_surface_t *surface = p_cairo_image_surface_create_for_data(pixels, CAIRO_FORMAT_ARGB32, (int)info->width,
                                                                   (int)info->height, (int)info->width * 4);
    if (p_cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
        p_cairo_surface_destroy(surface);
        free(pixels);
        return mg_fail(err, MG_ERR_NO_MEMORY, "cairo cannot create a %ux%u surface", info->width, info->height);
    }
    cairo_t *cr = p_cairo_create(surface);
    // The document is laid out at its intrinsic size and the context scaled to the output, so a document without a
    // viewBox scales too, and every size is a vector render, never an upscaled bitmap.
    p_cairo_scale(cr, info->width / info->intrinsic_width, info->height / info->intrinsic_height);
    RsvgRectangle viewport = {0, 0, info->intrinsic_width, info->intrinsic_height};
    GError *error = NULL;
    gboolean ok = p_rsvg_handle_render_document(handle, cr, &viewport, &error);
    int cairo_error = p_cairo_status(cr);
    p_cairo_destroy(cr);
    p_cairo_surface_flush(surface);
    p_cairo_surface_destroy(surface);
    if (!ok) {
        free(pixels);
        return fail_gerror(err, MG_ERR_CORRUPT, "cannot render the SVG", error);
    }
    if (cairo_error != CAIRO_STATUS_SUCCESS) {
        free(pixels);
        return mg_fail(err, MG_ERR_CORRUPT, "cairo failed while rendering the SVG (status %d)", cairo_error);
    }
    unpremultiply(pixels, count);
    out->pixels = pixels;
    out->width = info->width;
    out->height = info->height;
    return MG_OK;
}

int mg_svg_decode(const uint8_t *data, size_t length, const mg_svg_options *options, const mg_limits *limits,
                  mg_svg_info *info, mg_bitmap *out, mg_error *err) {
    if (!mg_lazy_load(&svg_library, err)) return MG_ERR_UNSUPPORTED;
    memset(info, 0, sizeof *info);
    if (out) memset(out, 0, sizeof *out);
    if (length == 0) return mg_fail(err, MG_ERR_CORRUPT, "empty SVG data");
    int checked = check_elements(data, length, err);
    if (checked != MG_OK) return checked;
    GError *error = NULL;
    // From bytes, with no base file or URI: librsvg then refuses every href but data: URLs. Flags stay 0 (never
    // RSVG_HANDLE_FLAG_UNLIMITED), so libxml2 keeps its entity-expansion and depth limits.
    RsvgHandle *handle = p_rsvg_handle_new_from_data(data, length, &error);
    if (!handle) return fail_gerror(err, MG_ERR_CORRUPT, "cannot parse the SVG", error);
    p_rsvg_handle_set_dpi(handle, 96.0);

    double width = 0, height = 0;
    int status = intrinsic_size(handle, &width, &height, err);
    if (status != MG_OK) goto done;
    if (!(width > 0 && height > 0) || !isfinite(width) || !isfinite(height)) {
        status = mg_fail(err, MG_ERR_CORRUPT, "the SVG document has no usable size (%gx%g)", width, height);
        goto done;
    }
    info->intrinsic_width = width;
    info->intrinsic_height = height;
    double out_width = fmax(1, whole_pixels(width)), out_height = fmax(1, whole_pixels(height));
    if (options && options->target_width > 0 && options->target_height > 0) {
        double sx = options->target_width / width, sy = options->target_height / height;
        double scale = options->fill ? fmax(sx, sy) : fmin(sx, sy);
        out_width = fmax(1, whole_pixels(width * scale));
        out_height = fmax(1, whole_pixels(height * scale));
    }
    // Limits first, then cairo's own side limit, all before any pixel memory exists.
    if (limits) {
        double pixels = out_width * out_height;
        if (pixels > (double)limits->max_pixels || pixels * 4 > (double)limits->max_total_bytes) {
            status = mg_fail(err, MG_ERR_TOO_LARGE, "the SVG renders at %.0fx%.0f pixels, above the limits",
                             out_width, out_height);
            goto done;
        }
    }
    if (out_width > MG_SVG_MAX_SIDE || out_height > MG_SVG_MAX_SIDE) {
        status = mg_fail(err, MG_ERR_TOO_LARGE, "the SVG renders at %.0fx%.0f pixels; cairo allows at most %d a side",
                         out_width, out_height, MG_SVG_MAX_SIDE);
        goto done;
    }
    info->width = (uint32_t)out_width;
    info->height = (uint32_t)out_height;
    if (out) status = render(handle, info, out, err);
done:
    p_g_object_unref(handle);
    return status;
}

size_t mg_svg_gunzip_prefix(const uint8_t *data, size_t length, uint8_t *out, size_t capacity) {
    if (length < 10 || data[0] != 0x1F || data[1] != 0x8B || capacity == 0) return 0;
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) return 0;
    stream.next_in = (uint8_t *)data;
    stream.avail_in = (uInt)(length > 0xFFFFFFFFu ? 0xFFFFFFFFu : length);
    stream.next_out = out;
    stream.avail_out = (uInt)capacity;
    int result = inflate(&stream, Z_SYNC_FLUSH);
    size_t produced = capacity - stream.avail_out;
    inflateEnd(&stream);
    return (result == Z_OK || result == Z_STREAM_END || result == Z_BUF_ERROR) ? produced : 0;
}
