// libjpeg-turbo wrapper. libjpeg reports fatal errors through error_exit, which by
// default calls exit(): we longjmp back instead. Every local that is read after a
// longjmp is volatile. Truncation and corrupt entropy data only produce warnings in
// libjpeg (it pads with grey and carries on), so emit_message turns those into errors.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>
#include <jerror.h>
#include "mg_color.h"
#include "mg_jpeg.h"
#include "internal.h"
#include "jpeg_eighth.h"

// Progressive JPEGs can declare many tiny scans that each walk the whole coefficient
// buffer: a CPU bomb (a review measured 2.8 s for 1000 scans of an 85 KB, 16 MP file).
// Real encoders write about 10 scans; 100 leaves room for unusual scripts.
#define MG_JPEG_MAX_SCANS 100

typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    int status;
    char message[JMSG_LENGTH_MAX + 64];
} mg_jpeg_error_mgr;

typedef struct {
    struct jpeg_progress_mgr base;
    j_decompress_ptr cinfo;
} mg_jpeg_progress;

static void fail_jump(j_common_ptr cinfo, int status) {
    mg_jpeg_error_mgr *mgr = (mg_jpeg_error_mgr *)cinfo->err;
    mgr->status = status;
    (*cinfo->err->format_message)(cinfo, mgr->message);
    longjmp(mgr->jump, 1);
}

static void on_error_exit(j_common_ptr cinfo) {
    int code = cinfo->err->msg_code;
    int status = MG_ERR_CORRUPT;
    if (code == JERR_BAD_PRECISION || code == JERR_NOT_COMPILED)
        status = MG_ERR_UNSUPPORTED;
    else if (code == JERR_OUT_OF_MEMORY)
        status = MG_ERR_NO_MEMORY;
    else if (code == JERR_NO_BACKING_STORE)  // libjpeg's own buffers would pass max_memory_to_use
        status = MG_ERR_TOO_LARGE;
    else if (code == JERR_INPUT_EMPTY || code == JERR_INPUT_EOF)
        status = MG_ERR_TRUNCATED;
    else if (code == JERR_FILE_READ)
        status = MG_ERR_IO;
    fail_jump(cinfo, status);
}

static void on_emit_message(j_common_ptr cinfo, int level) {
    if (level >= 0) return;  // trace messages
    struct jpeg_error_mgr *err = cinfo->err;
    err->num_warnings++;
    switch (err->msg_code) {
    case JWRN_JPEG_EOF:
        fail_jump(cinfo, MG_ERR_TRUNCATED);
        break;
    case JWRN_HUFF_BAD_CODE:
    case JWRN_ARITH_BAD_CODE:
    case JWRN_MUST_RESYNC:
    case JWRN_HIT_MARKER:
    case JWRN_BOGUS_PROGRESSION:  // a scan repeating coefficients already complete: padding for a CPU bomb
        fail_jump(cinfo, MG_ERR_CORRUPT);
        break;
    case JWRN_EXTRANEOUS_DATA: {
        // Junk between header segments is harmless; junk inside the entropy-coded
        // data (before a restart marker) means the scan is damaged.
        int marker = err->msg_parm.i[1];
        if (marker >= 0xD0 && marker <= 0xD7) fail_jump(cinfo, MG_ERR_CORRUPT);
        break;
    }
    default:
        break;
    }
}

static void on_progress(j_common_ptr cinfo) {
    if (cinfo->is_decompressor) {
        j_decompress_ptr d = (j_decompress_ptr)cinfo;
        if (d->input_scan_number > MG_JPEG_MAX_SCANS) {
            mg_jpeg_error_mgr *mgr = (mg_jpeg_error_mgr *)cinfo->err;
            mgr->status = MG_ERR_CORRUPT;
            snprintf(mgr->message, sizeof mgr->message, "more than %d progressive scans", MG_JPEG_MAX_SCANS);
            longjmp(mgr->jump, 1);
        }
    }
}

static void setup_errors(mg_jpeg_error_mgr *mgr) {
    jpeg_std_error(&mgr->base);
    mgr->base.error_exit = on_error_exit;
    mgr->base.emit_message = on_emit_message;
    mgr->status = MG_OK;
    mgr->message[0] = 0;
}

static int copy_failure(mg_jpeg_error_mgr *mgr, mg_error *err) {
    return mg_fail(err, mgr->status ? mgr->status : MG_ERR_CORRUPT, "%s", mgr->message);
}

// A source that reads a file as libjpeg asks (pread), with jpeg_mem_src's behaviour at the end: a warning (here a
// truncation error) and a fake EOI.
#define FILE_CHUNK (64 * 1024)

typedef struct {
    struct jpeg_source_mgr base;
    const mg_input *in;
    uint64_t next;  // offset of the byte after the buffer
    JOCTET buffer[FILE_CHUNK];
} mg_jpeg_file_source;

static void file_source_init(j_decompress_ptr cinfo) { (void)cinfo; }

static boolean file_source_fill(j_decompress_ptr cinfo) {
    mg_jpeg_file_source *src = (mg_jpeg_file_source *)cinfo->src;
    ptrdiff_t got = mg_input_read(src->in, src->next, src->buffer, FILE_CHUNK);
    if (got < 0) ERREXIT(cinfo, JERR_FILE_READ);
    if (got == 0) {
        WARNMS(cinfo, JWRN_JPEG_EOF);
        src->buffer[0] = 0xFF;
        src->buffer[1] = JPEG_EOI;
        got = 2;
    } else {
        src->next += (uint64_t)got;
    }
    src->base.next_input_byte = src->buffer;
    src->base.bytes_in_buffer = (size_t)got;
    return TRUE;
}

static void file_source_skip(j_decompress_ptr cinfo, long count) {
    mg_jpeg_file_source *src = (mg_jpeg_file_source *)cinfo->src;
    if (count <= 0) return;
    if ((size_t)count <= src->base.bytes_in_buffer) {
        src->base.next_input_byte += count;
        src->base.bytes_in_buffer -= (size_t)count;
        return;
    }
    // Past the buffer: the next fill reads from there (or reports the end).
    src->next += (uint64_t)count - src->base.bytes_in_buffer;
    src->base.bytes_in_buffer = 0;
}

static void file_source_term(j_decompress_ptr cinfo) { (void)cinfo; }

// The source for `in`: jpeg_mem_src for memory; for a file, `file` (the caller's, alive until the decode ends).
static void set_source(j_decompress_ptr cinfo, const mg_input *in, mg_jpeg_file_source *file) {
    if (in->data) {
        jpeg_mem_src(cinfo, in->data, (unsigned long)in->length);
        return;
    }
    memset(file, 0, sizeof *file);
    file->in = in;
    file->base.init_source = file_source_init;
    file->base.fill_input_buffer = file_source_fill;
    file->base.skip_input_data = file_source_skip;
    file->base.resync_to_restart = jpeg_resync_to_restart;
    file->base.term_source = file_source_term;
    cinfo->src = &file->base;
}

// The offset in `in` of libjpeg's next unread byte.
static uint64_t source_offset(j_decompress_ptr cinfo, const mg_input *in, const mg_jpeg_file_source *file) {
    if (in->data) return (uint64_t)(cinfo->src->next_input_byte - in->data);
    return file->next - file->base.bytes_in_buffer;
}

int mg_jpeg_read_header(const uint8_t *data, size_t length, mg_jpeg_header *header, mg_error *err) {
    struct jpeg_decompress_struct cinfo;
    mg_jpeg_error_mgr mgr;
    setup_errors(&mgr);
    cinfo.err = &mgr.base;
    if (setjmp(mgr.jump)) {
        jpeg_destroy_decompress(&cinfo);
        return copy_failure(&mgr, err);
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)length);
    jpeg_read_header(&cinfo, TRUE);
    header->width = cinfo.image_width;
    header->height = cinfo.image_height;
    header->components = cinfo.num_components;
    header->is_progressive = cinfo.progressive_mode;
    header->is_arithmetic = cinfo.arith_code;
    header->data_precision = cinfo.data_precision;
    jpeg_destroy_decompress(&cinfo);
    return MG_OK;
}

// Adobe files store CMYK inverted (0 = full ink), others store it straight.
static void cmyk_row_to_rgba(const uint8_t *cmyk, uint8_t *rgba, uint32_t width, int inverted) {
    for (uint32_t x = 0; x < width; x++) {
        unsigned c = cmyk[0], m = cmyk[1], y = cmyk[2], k = cmyk[3];
        if (!inverted) { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k; }
        rgba[0] = (uint8_t)((c * k + 127) / 255);
        rgba[1] = (uint8_t)((m * k + 127) / 255);
        rgba[2] = (uint8_t)((y * k + 127) / 255);
        rgba[3] = 255;
        cmyk += 4;
        rgba += 4;
    }
}


// At 1/8 scale libjpeg's IDCT reads only each block's DC coefficient, and a progressive
// JPEG keeps DC in scans of its own (Ss == 0). Copying the stream without its AC scans
// (skipped by looking for the next marker, no Huffman decoding) therefore gives the same
// 1/8 picture for a fraction of the work. Returns NULL when the stream does not have the
// expected structure (the caller then decodes normally), or sets *truncated when the
// data ends inside a scan or before EOI.
static uint8_t *dc_only_stream(const uint8_t *data, size_t length, size_t *out_length, int *truncated) {
    uint8_t *out = malloc(length);
    if (!out) return NULL;
    size_t o = 0, i = 2;
    memcpy(out, data, 2);  // SOI
    o = 2;
    *truncated = 0;
    while (i + 2 <= length) {
        if (data[i] != 0xFF) { free(out); return NULL; }
        uint8_t marker = data[i + 1];
        if (marker == 0xFF) { i++; continue; }
        if (marker == 0xD9) {  // EOI
            out[o++] = 0xFF;
            out[o++] = 0xD9;
            *out_length = o;
            return out;
        }
        if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) {  // TEM, RSTn: no length field
            out[o++] = 0xFF;
            out[o++] = marker;
            i += 2;
            continue;
        }
        if (i + 4 > length) break;
        size_t segment = ((size_t)data[i + 2] << 8 | data[i + 3]) + 2;
        if (segment < 4) { free(out); return NULL; }  // a length field below 2 is malformed
        if (i + segment > length) { *truncated = 1; free(out); return NULL; }
        int keep = 1;
        size_t end = i + segment;
        if (marker == 0xDA) {  // SOS: header, then entropy-coded data up to the next marker
            if (segment < 5) { free(out); return NULL; }
            size_t ns = data[i + 4];  // in bounds: i + 4 < i + segment <= length
            if (segment < 8 + 2 * ns) { free(out); return NULL; }  // Ls = 6 + 2*Ns, plus the marker
            keep = data[i + 4 + 1 + 2 * ns] == 0;  // Ss == 0: a DC scan
            size_t j = end;
            for (;;) {
                const uint8_t *ff = j < length ? memchr(data + j, 0xFF, length - j) : NULL;
                if (!ff || (size_t)(ff - data) + 1 >= length) { *truncated = 1; free(out); return NULL; }
                j = (size_t)(ff - data);
                uint8_t next = data[j + 1];
                if (next == 0x00 || (next >= 0xD0 && next <= 0xD7)) { j += 2; continue; }  // stuffing, RSTn
                if (next == 0xFF) { j += 1; continue; }  // fill bytes before a marker
                break;
            }
            end = j;
        }
        if (keep) {
            memcpy(out + o, data + i, end - i);
            o += end - i;
        }
        i = end;
    }
    *truncated = 1;
    free(out);
    return NULL;
}

static int decode_input(const mg_input *in, uint32_t min_width, uint32_t min_height, int32_t flags,
                        void *color_transform, const mg_limits *limits, mg_bitmap *out, int32_t *raw_cmyk,
                        mg_error *err);

int mg_jpeg_decode(const uint8_t *data, size_t length, uint32_t min_width, uint32_t min_height, int32_t flags,
                   void *color_transform, const mg_limits *limits, mg_bitmap *out, int32_t *raw_cmyk, mg_error *err) {
    mg_input in = {data, -1, length};
    return decode_input(&in, min_width, min_height, flags, color_transform, limits, out, raw_cmyk, err);
}

int mg_jpeg_decode_file(int fd, uint64_t length, uint32_t min_width, uint32_t min_height, int32_t flags,
                        void *color_transform, const mg_limits *limits, mg_bitmap *out, int32_t *raw_cmyk,
                        mg_error *err) {
    if (fd < 0) return mg_fail(err, MG_ERR_INVALID_ARGUMENT, "no file descriptor");
    mg_input in = {NULL, fd, length};
    return decode_input(&in, min_width, min_height, flags, color_transform, limits, out, raw_cmyk, err);
}

static int decode_input(const mg_input *in, uint32_t min_width, uint32_t min_height, int32_t flags,
                        void *color_transform, const mg_limits *limits, mg_bitmap *out, int32_t *raw_cmyk,
                        mg_error *err) {
    const int fast = (flags & MG_JPEG_FAST) != 0;
    const int two_threads = (flags & MG_JPEG_TWO_THREADS) != 0;
    if (raw_cmyk) *raw_cmyk = 0;
    struct jpeg_decompress_struct cinfo;
    mg_jpeg_error_mgr mgr;
    mg_jpeg_progress progress;
    uint8_t *volatile pixels = NULL;
    uint8_t *volatile cmyk_row = NULL;
    uint8_t *volatile dc_stream = NULL;
    mg_color_stream *volatile colors = NULL;
    mg_input dc_input = {NULL, -1, 0};
    const mg_input *volatile input = in;  // becomes the DC-only copy on that path
    mg_jpeg_file_source *file = in->data ? NULL : malloc(sizeof *file);
    if (!in->data && !file) return mg_fail(err, MG_ERR_NO_MEMORY, "cannot allocate a file buffer");
restart:
    setup_errors(&mgr);
    cinfo.err = &mgr.base;
    if (setjmp(mgr.jump)) {
        mg_color_stream_abandon(colors);  // its thread is done with the pixels before they are freed
        free(pixels);
        free(cmyk_row);
        free(dc_stream);
        free(file);
        jpeg_destroy_decompress(&cinfo);
        return copy_failure(&mgr, err);
    }
    jpeg_create_decompress(&cinfo);
    progress.base.progress_monitor = on_progress;
    progress.cinfo = &cinfo;
    cinfo.progress = &progress.base;
    set_source(&cinfo, input, file);
    jpeg_read_header(&cinfo, TRUE);

    int status = mg_check_frame_size(err, limits, cinfo.image_width, cinfo.image_height, "JPEG");
    if (status != MG_OK) {
        jpeg_destroy_decompress(&cinfo);
        free(dc_stream);
        free(file);
        return status;
    }

    // Progressive and multi-scan files make libjpeg buffer every coefficient (2 bytes per
    // sample), on top of our 4-byte output: bound its own pool by the same budget.
    if (limits && limits->max_total_bytes) cinfo.mem->max_memory_to_use = (long)limits->max_total_bytes;
    int is_cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
    cinfo.out_color_space = is_cmyk ? JCS_CMYK : JCS_EXT_RGBA;
    if (min_width || min_height) {
        unsigned num = 8;
        for (unsigned n = 1; n <= 8; n++) {
            cinfo.scale_num = n;
            cinfo.scale_denom = 8;
            jpeg_calc_output_dimensions(&cinfo);
            if (cinfo.output_width >= min_width && cinfo.output_height >= min_height) { num = n; break; }
        }
        cinfo.scale_num = num;
        cinfo.scale_denom = 8;
        if (fast && num < 8) {
            cinfo.do_fancy_upsampling = FALSE;
            cinfo.dct_method = JDCT_IFAST;
        }
        if (fast && num == 1 && cinfo.progressive_mode && !dc_stream) {
            size_t dc_length = 0;
            int truncated = 0;
            // A file is read whole for this: the copy is made from all of it (as much as there is: a file cut since
            // its size was taken is a truncated image, as from bytes).
            uint8_t *whole = NULL;
            size_t whole_length = (size_t)input->length;
            if (!input->data && input->length <= SIZE_MAX) {
                whole = malloc(input->length ? (size_t)input->length : 1);
                if (!whole) {
                    jpeg_destroy_decompress(&cinfo);
                    free(file);
                    return mg_fail(err, MG_ERR_NO_MEMORY, "cannot allocate %llu bytes for the file",
                                   (unsigned long long)input->length);
                }
                ptrdiff_t got = mg_input_read(input, 0, whole, (size_t)input->length);
                if (got < 0) {
                    jpeg_destroy_decompress(&cinfo);
                    free(whole);
                    free(file);
                    return mg_fail(err, MG_ERR_IO, "cannot read the file");
                }
                whole_length = (size_t)got;
            }
            uint8_t *dc = input->data || whole
                ? dc_only_stream(whole ? whole : input->data, whole_length, &dc_length, &truncated)
                : NULL;
            free(whole);
            if (truncated) {
                jpeg_destroy_decompress(&cinfo);
                free(file);
                return mg_fail(err, MG_ERR_TRUNCATED, "data ends before the end of the image");
            }
            if (dc) {
                // Start over on the DC-only copy; the scale and limits come out the same.
                jpeg_destroy_decompress(&cinfo);
                dc_stream = dc;
                dc_input = (mg_input){dc, -1, dc_length};
                input = &dc_input;
                goto restart;
            }
        }
    }
    if (!(flags & MG_JPEG_LIBJPEG_ONLY) && !is_cmyk && cinfo.scale_num == 1 && cinfo.scale_denom == 8 &&
        !cinfo.progressive_mode) {
        // A baseline file at 1/8: jpeg_eighth.c decodes it faster, and on two threads when allowed. It gives
        // libjpeg's pixels exactly, or declines (damaged data included) and libjpeg decodes as before. The output
        // size is current: the scale search above stopped at 1/8 right after computing it.
        uint8_t *eighth = mg_alloc_pixels((size_t)cinfo.output_width * 4 * cinfo.output_height);
        if (eighth) {
            int threads = two_threads ? 2 : 1;
            if (mg_jpeg_decode_eighth(&cinfo, input, source_offset(&cinfo, input, file), eighth, threads) ==
                MG_EIGHTH_DONE) {
                if (color_transform)
                    mg_color_transform_apply(color_transform, eighth, eighth,
                                             (size_t)cinfo.output_width * cinfo.output_height);
                out->pixels = eighth;
                out->width = cinfo.output_width;
                out->height = cinfo.output_height;
                jpeg_destroy_decompress(&cinfo);
                free(dc_stream);
                free(file);
                return MG_OK;
            }
            free(eighth);
        }
    }
    jpeg_start_decompress(&cinfo);

    uint32_t width = cinfo.output_width, height = cinfo.output_height;
    size_t stride = (size_t)width * 4;
    pixels = mg_alloc_pixels(stride * height);
    if (!pixels) {
        jpeg_destroy_decompress(&cinfo);
        free(dc_stream);
        free(file);
        return mg_fail(err, MG_ERR_NO_MEMORY, "cannot allocate %ux%u RGBA", width, height);
    }
    if (is_cmyk) {
        cmyk_row = malloc(stride);
        if (!cmyk_row) {
            free(pixels);
            jpeg_destroy_decompress(&cinfo);
            free(dc_stream);
            free(file);
            return mg_fail(err, MG_ERR_NO_MEMORY, "cannot allocate a CMYK row");
        }
    }
    // With MG_JPEG_KEEP_CMYK the caller converts the samples through the file's CMYK profile itself.
    const int keep = is_cmyk && (flags & MG_JPEG_KEEP_CMYK);
    const int converts = color_transform && !keep;
    if (converts) colors = mg_color_stream_start(color_transform, pixels, width, height, two_threads);
    if (is_cmyk) {
        int inverted = cinfo.saw_Adobe_marker;
        while (cinfo.output_scanline < height) {
            JSAMPROW row = keep ? pixels + stride * cinfo.output_scanline : cmyk_row;
            uint32_t y = cinfo.output_scanline;
            jpeg_read_scanlines(&cinfo, &row, 1);
            if (!keep) cmyk_row_to_rgba(cmyk_row, pixels + stride * y, width, inverted);
            if (colors) mg_color_stream_rows_ready(colors, y, y + 1);
        }
        if (keep && raw_cmyk) *raw_cmyk = inverted ? 2 : 1;
    } else {
        JSAMPROW rows[16];
        while (cinfo.output_scanline < height) {
            uint32_t y = cinfo.output_scanline;
            uint32_t count = height - y < 16 ? height - y : 16;
            for (uint32_t i = 0; i < count; i++) rows[i] = pixels + stride * (y + i);
            JDIMENSION read = jpeg_read_scanlines(&cinfo, rows, count);
            if (colors) mg_color_stream_rows_ready(colors, y, y + read);
        }
    }
    jpeg_finish_decompress(&cinfo);
    mg_color_stream *converted = colors;
    colors = NULL;
    if (converted) {
        mg_color_stream_finish(converted);
    } else if (converts) {
        mg_color_transform_apply(color_transform, pixels, pixels, (size_t)width * height);  // no memory for a stream
    }
    jpeg_destroy_decompress(&cinfo);
    free(cmyk_row);
    free(dc_stream);
    free(file);
    out->pixels = pixels;
    out->width = width;
    out->height = height;
    return MG_OK;
}

// Destination manager writing into a growing malloc'd buffer. jpeg_mem_dest is
// avoided because after an error it can leave the caller holding a freed buffer.
typedef struct {
    struct jpeg_destination_mgr base;
    uint8_t *buffer;
    size_t capacity;
    int failed;
} mg_jpeg_dest;

static void dest_init(j_compress_ptr cinfo) {
    mg_jpeg_dest *d = (mg_jpeg_dest *)cinfo->dest;
    d->base.next_output_byte = d->buffer;
    d->base.free_in_buffer = d->capacity;
}

static boolean dest_empty(j_compress_ptr cinfo) {
    mg_jpeg_dest *d = (mg_jpeg_dest *)cinfo->dest;
    size_t grown = d->capacity * 2;
    uint8_t *buffer = realloc(d->buffer, grown);
    if (!buffer) {
        d->failed = 1;
        ERREXIT(cinfo, JERR_OUT_OF_MEMORY);
    }
    // libjpeg's contract: when called, the whole buffer has been filled.
    d->base.next_output_byte = buffer + d->capacity;
    d->base.free_in_buffer = grown - d->capacity;
    d->buffer = buffer;
    d->capacity = grown;
    return TRUE;
}

static void dest_term(j_compress_ptr cinfo) { (void)cinfo; }

int mg_jpeg_encode(const uint8_t *rgba, uint32_t width, uint32_t height, int32_t quality, int32_t progressive,
                   mg_buffer *out, mg_error *err) {
    if (width == 0 || height == 0 || width > JPEG_MAX_DIMENSION || height > JPEG_MAX_DIMENSION)
        return mg_fail(err, MG_ERR_ENCODE, "JPEG cannot store %ux%u", width, height);
    struct jpeg_compress_struct cinfo;
    mg_jpeg_error_mgr mgr;
    // On the heap: the buffer grows (realloc) between setjmp and a possible longjmp, and
    // only a pointer that never changes after setjmp is safe to read in the handler.
    mg_jpeg_dest *dest = calloc(1, sizeof *dest);
    if (!dest) return mg_fail(err, MG_ERR_NO_MEMORY, "cannot allocate the output state");
    dest->capacity = 16384 + (size_t)width * height / 4;
    dest->buffer = malloc(dest->capacity);
    if (!dest->buffer) {
        free(dest);
        return mg_fail(err, MG_ERR_NO_MEMORY, "cannot allocate the output buffer");
    }
    setup_errors(&mgr);
    cinfo.err = &mgr.base;
    if (setjmp(mgr.jump)) {
        jpeg_destroy_compress(&cinfo);
        free(dest->buffer);
        free(dest);
        return mg_fail(err, MG_ERR_ENCODE, "%s", mgr.message);
    }
    jpeg_create_compress(&cinfo);
    dest->base.init_destination = dest_init;
    dest->base.empty_output_buffer = dest_empty;
    dest->base.term_destination = dest_term;
    cinfo.dest = &dest->base;
    cinfo.image_width = width;
    cinfo.image_height = height;
    cinfo.input_components = 4;
    cinfo.in_color_space = JCS_EXT_RGBA;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    if (progressive) jpeg_simple_progression(&cinfo);
    jpeg_start_compress(&cinfo, TRUE);
    size_t stride = (size_t)width * 4;
    while (cinfo.next_scanline < height) {
        if ((cinfo.next_scanline & 255) == 255 && mg_cancel_requested()) {
            uint32_t reached = cinfo.next_scanline;
            jpeg_destroy_compress(&cinfo);
            free(dest->buffer);
            free(dest);
            return mg_fail(err, MG_ERR_CANCELLED, "JPEG encoding cancelled at row %u of %u", reached, height);
        }
        JSAMPROW row = (JSAMPROW)(rgba + stride * cinfo.next_scanline);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    out->bytes = dest->buffer;
    out->length = dest->capacity - dest->base.free_in_buffer;
    jpeg_destroy_compress(&cinfo);
    free(dest);
    return MG_OK;
}
