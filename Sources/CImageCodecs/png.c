// libpng wrapper. libpng reports errors by calling our error function, which must
// not return: we longjmp back to the setjmp in each entry point.
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <png.h>
#include <zlib.h>
#include "mg_png.h"
#include "internal.h"

#define MG_PNG_CHUNK_MALLOC_MAX (16u << 20)

typedef struct {
    jmp_buf jump;
    int status;
    char message[200];
    const uint8_t *data;
    size_t length;
    size_t offset;
    uint8_t *out;       // encoder output
    size_t out_length;
    size_t out_capacity;
} mg_png_io;

static void on_error(png_structp png, png_const_charp message) {
    mg_png_io *io = png_get_error_ptr(png);
    if (io->status == MG_OK) io->status = MG_ERR_CORRUPT;
    if (io->message[0] == 0) snprintf(io->message, sizeof io->message, "%s", message);
    longjmp(io->jump, 1);
}

static void on_warning(png_structp png, png_const_charp message) {
    (void)png;
    (void)message;  // ancillary chunk problems: libpng already skips the chunk
}

static void read_bytes(png_structp png, png_bytep target, size_t count) {
    mg_png_io *io = png_get_io_ptr(png);
    if (count > io->length - io->offset) {
        io->status = MG_ERR_TRUNCATED;
        snprintf(io->message, sizeof io->message, "data ends at byte %zu, inside the image", io->length);
        png_error(png, io->message);
    }
    memcpy(target, io->data + io->offset, count);
    io->offset += count;
}

// libpng allocates and clears an ancillary chunk's declared length before reading it, and the
// chunk malloc cap below does not stop every chunk in 1.6.39: a 57-byte file declaring a 1 GiB
// sCAL took 1 GB and seconds per decode (found by fuzzing the corpus). A chunk ahead of the image
// data that declares more bytes than the data has left is truncation; say so before libpng reads it.
static int check_chunk_lengths(const uint8_t *data, size_t length, mg_error *err) {
    size_t offset = 8;  // the signature
    while (offset + 8 <= length) {
        const uint8_t *p = data + offset;
        uint32_t declared = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
        if (memcmp(p + 4, "IDAT", 4) == 0) return MG_OK;  // libpng streams image data in small pieces
        size_t remaining = length - offset - 8;
        // PNG lengths stop at 2^31 - 1, which also keeps `declared + 4` from wrapping a 32-bit size_t.
        if (declared > 0x7fffffffu || (size_t)declared + 4 > remaining) {
            char name[5];
            for (int i = 0; i < 4; i++) name[i] = (p[4 + i] >= 0x20 && p[4 + i] < 0x7f) ? (char)p[4 + i] : '?';
            name[4] = 0;
            return mg_fail(err, MG_ERR_TRUNCATED, "chunk %s declares %u bytes but the data ends %zu bytes later",
                           name, declared, remaining);
        }
        offset += 12 + (size_t)declared;
    }
    return MG_OK;  // anything else wrong is libpng's to report
}

int mg_png_decode(const uint8_t *data, size_t length, const mg_limits *limits, mg_bitmap *out, mg_error *err) {
    int checked = check_chunk_lengths(data, length, err);
    if (checked != MG_OK) return checked;
    // On the heap: callbacks change it between setjmp and longjmp, and only a pointer that
    // never changes after setjmp may be read in the handler.
    mg_png_io *io = calloc(1, sizeof *io);
    if (!io) return mg_fail(err, MG_ERR_NO_MEMORY, "cannot allocate the PNG state");
    io->data = data;
    io->length = length;
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, io, on_error, on_warning);
    if (!png) {
        free(io);
        return mg_fail(err, MG_ERR_NO_MEMORY, "png_create_read_struct failed");
    }
    png_infop info = png_create_info_struct(png);
    uint8_t *volatile pixels = NULL;
    png_bytep *volatile rows = NULL;
    if (!info) {
        png_destroy_read_struct(&png, NULL, NULL);
        free(io);
        return mg_fail(err, MG_ERR_NO_MEMORY, "png_create_info_struct failed");
    }
    if (setjmp(io->jump)) {
        free(pixels);
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        int failed = mg_fail(err, io->status, "%s", io->message);
        free(io);
        return failed;
    }
    png_set_read_fn(png, io, read_bytes);
    // Our own pixel limit is the real guard; lift libpng's fixed 1M x 1M cap so it
    // does not pre-empt it with a less precise message.
    png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
    // libpng allocates an ancillary chunk's declared length before reading it (found by
    // fuzzing: a 730-byte file declaring a 1.9 GB sPLT). No real metadata chunk, nor the
    // decompressed text of iCCP/zTXt/iTXt, comes near this cap; larger ones are skipped.
    png_set_chunk_malloc_max(png, MG_PNG_CHUNK_MALLOC_MAX);
    png_read_info(png, info);

    png_uint_32 width, height;
    int bit_depth, color_type, interlace;
    png_get_IHDR(png, info, &width, &height, &bit_depth, &color_type, &interlace, NULL, NULL);
    int status = mg_check_frame_size(err, limits, width, height, "PNG");
    if (status != MG_OK) {
        png_destroy_read_struct(&png, &info, NULL);
        free(io);
        return status;
    }

    if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
    if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (bit_depth == 16) png_set_scale_16(png);
    if (color_type == PNG_COLOR_TYPE_GRAY || color_type == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
    if (!(color_type & PNG_COLOR_MASK_ALPHA) && !png_get_valid(png, info, PNG_INFO_tRNS))
        png_set_add_alpha(png, 0xFF, PNG_FILLER_AFTER);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);

    size_t stride = (size_t)width * 4;
    if (png_get_rowbytes(png, info) != stride) {
        png_destroy_read_struct(&png, &info, NULL);
        free(io);
        return mg_fail(err, MG_ERR_CORRUPT, "unexpected row size after conversion to RGBA");
    }
    pixels = mg_alloc_pixels(stride * height);
    rows = malloc(sizeof(png_bytep) * height);
    if (!pixels || !rows) {
        free(pixels);
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        free(io);
        return mg_fail(err, MG_ERR_NO_MEMORY, "cannot allocate %ux%u RGBA", width, height);
    }
    for (png_uint_32 y = 0; y < height; y++) rows[y] = pixels + stride * y;
    png_read_image(png, rows);
    free(rows);
    png_destroy_read_struct(&png, &info, NULL);
    out->pixels = pixels;
    out->width = width;
    out->height = height;
    free(io);
    return MG_OK;
}

static void write_bytes(png_structp png, png_bytep bytes, size_t count) {
    mg_png_io *io = png_get_io_ptr(png);
    if (io->out_capacity - io->out_length < count) {
        size_t capacity = io->out_capacity ? io->out_capacity : 65536;
        while (capacity - io->out_length < count) capacity *= 2;
        uint8_t *grown = realloc(io->out, capacity);
        if (!grown) {
            io->status = MG_ERR_NO_MEMORY;
            png_error(png, "cannot grow the output buffer");
        }
        io->out = grown;
        io->out_capacity = capacity;
    }
    memcpy(io->out + io->out_length, bytes, count);
    io->out_length += count;
}

static void flush_bytes(png_structp png) { (void)png; }

int mg_png_encode(const uint8_t *rgba, uint32_t width, uint32_t height, int32_t drop_alpha,
                  int32_t compression_level, mg_buffer *out, mg_error *err) {
    if (width == 0 || height == 0) return mg_fail(err, MG_ERR_ENCODE, "PNG cannot store %ux%u", width, height);
    // On the heap: callbacks change it between setjmp and longjmp, and only a pointer that
    // never changes after setjmp may be read in the handler.
    mg_png_io *io = calloc(1, sizeof *io);
    if (!io) return mg_fail(err, MG_ERR_NO_MEMORY, "cannot allocate the PNG state");
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, io, on_error, on_warning);
    if (!png) {
        free(io);
        return mg_fail(err, MG_ERR_NO_MEMORY, "png_create_write_struct failed");
    }
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        free(io);
        return mg_fail(err, MG_ERR_NO_MEMORY, "png_create_info_struct failed");
    }
    if (setjmp(io->jump)) {
        png_destroy_write_struct(&png, &info);
        free(io->out);
        int failed = mg_fail(err, MG_ERR_ENCODE, "%s", io->message);
        free(io);
        return failed;
    }
    png_set_write_fn(png, io, write_bytes, flush_bytes);
    png_set_compression_level(png, compression_level);
    png_set_IHDR(png, info, width, height, 8, drop_alpha ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_RGBA,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    if (drop_alpha) png_set_filler(png, 0, PNG_FILLER_AFTER);  // input rows carry a 4th byte to skip
    size_t stride = (size_t)width * 4;
    for (uint32_t y = 0; y < height; y++) {
        // A tall image deflates for seconds: a caller that gave up stops it here, every 64 rows.
        if ((y & 63) == 63 && mg_cancel_requested()) {
            png_destroy_write_struct(&png, &info);
            free(io->out);
            free(io);
            return mg_fail(err, MG_ERR_CANCELLED, "PNG encoding cancelled at row %u of %u", y, height);
        }
        png_write_row(png, (png_const_bytep)(rgba + stride * y));
    }
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    out->bytes = io->out;
    out->length = io->out_length;
    free(io);
    return MG_OK;
}
