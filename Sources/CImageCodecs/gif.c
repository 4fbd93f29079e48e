// GIF through giflib's record-level API: the decoder walks the records itself so that every
// limit is checked before the matching allocation, and composites in C for speed.
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gif_lib.h>

#include "mg_gif.h"
#include "internal.h"

// ---------------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------------

typedef struct {
    const uint8_t *data;
    size_t length;
    size_t position;
    bool hit_end;  // a read asked for more than was left: tells truncation from other read errors
} memory_reader;

static int read_memory(GifFileType *gif, GifByteType *buffer, int count) {
    memory_reader *reader = gif->UserData;
    if (count <= 0) return 0;
    size_t left = reader->length - reader->position;
    size_t n = (size_t)count;
    if (n > left) {
        n = left;
        reader->hit_end = true;
    }
    memcpy(buffer, reader->data + reader->position, n);
    reader->position += n;
    return (int)n;
}

typedef struct {
    uint32_t x0, y0, x1, y1;  // clipped to the canvas; empty when x0 == x1 or y0 == y1
} rect;

struct mg_gif_decoder {
    GifFileType *gif;
    memory_reader input;
    mg_limits limits;
    uint32_t width, height;
    uint8_t *canvas;  // the composited canvas as the last returned frame showed it
    uint8_t *saved;   // the canvas before a "restore to previous" frame was drawn
    GifPixelType *line;
    size_t line_capacity;
    uint32_t frame_count;
    uint64_t total_bytes;
    uint64_t block_pixels;  // pixels of all image blocks so far, clipped or not
    int32_t loop_count;
    // Graphic Control Extension waiting for the next image block.
    bool has_control;
    int control_disposal;
    int control_transparent;
    uint32_t control_delay_cs;
    // What the previous frame asked to be done to its area before the next one is drawn.
    int previous_disposal;
    rect previous_area;
    bool finished;
    bool failed;
};

static int giflib_failure(mg_gif_decoder *decoder, int code, mg_error *err) {
    decoder->failed = true;
    // Once a read has run out of input, whatever giflib reports next (a failed read, "no screen
    // descriptor", or no code at all for a missing LZW code size) is a consequence of truncation.
    if (decoder->input.hit_end)
        return mg_fail(err, MG_ERR_TRUNCATED, "GIF data ends after %zu bytes, inside %s (giflib error %d)",
                       decoder->input.length,
                       decoder->frame_count == 0 ? "the header or first frame" : "a frame or extension", code);
    const char *text = code ? GifErrorString(code) : "giflib failed without an error code";
    if (!text) text = "unknown giflib error";
    int status = MG_ERR_CORRUPT;
    if (code == D_GIF_ERR_EOF_TOO_SOON) status = MG_ERR_TRUNCATED;  // the LZW data ends before the pixels do
    if (code == D_GIF_ERR_NOT_ENOUGH_MEM) status = MG_ERR_NO_MEMORY;
    return mg_fail(err, status, "%s (giflib error %d at byte %zu)", text, code, decoder->input.position);
}

static int decoder_failure(mg_gif_decoder *decoder, int status) {
    decoder->failed = true;
    return status;
}

mg_gif_decoder *mg_gif_decoder_open(const uint8_t *data, size_t length, const mg_limits *limits,
                                    mg_error *err) {
    if (!data && length > 0) {
        mg_fail(err, MG_ERR_INVALID_ARGUMENT, "no data");
        return NULL;
    }
    mg_gif_decoder *decoder = calloc(1, sizeof *decoder);
    if (!decoder) {
        mg_fail(err, MG_ERR_NO_MEMORY, "cannot allocate the GIF decoder");
        return NULL;
    }
    decoder->input.data = data;
    decoder->input.length = length;
    decoder->loop_count = -1;
    decoder->control_transparent = -1;
    if (limits) decoder->limits = *limits;

    int code = D_GIF_SUCCEEDED;
    decoder->gif = DGifOpen(&decoder->input, read_memory, &code);
    if (!decoder->gif) {
        giflib_failure(decoder, code, err);
        free(decoder);
        return NULL;
    }
    decoder->width = (uint32_t)decoder->gif->SWidth;
    decoder->height = (uint32_t)decoder->gif->SHeight;
    if (mg_check_frame_size(err, &decoder->limits, decoder->width, decoder->height,
                            "GIF logical screen") != MG_OK) {
        mg_gif_decoder_close(decoder);
        return NULL;
    }
    return decoder;
}

void mg_gif_decoder_canvas_size(const mg_gif_decoder *decoder, uint32_t *width, uint32_t *height) {
    if (width) *width = decoder ? decoder->width : 0;
    if (height) *height = decoder ? decoder->height : 0;
}

int32_t mg_gif_decoder_loop_count(const mg_gif_decoder *decoder) {
    return decoder ? decoder->loop_count : -1;
}

void mg_gif_decoder_close(mg_gif_decoder *decoder) {
    if (!decoder) return;
    if (decoder->gif) DGifCloseFile(decoder->gif, NULL);
    free(decoder->canvas);
    free(decoder->saved);
    free(decoder->line);
    free(decoder);
}

static bool is_loop_application(const GifByteType *block) {
    return block && block[0] == 11 &&
           (memcmp(block + 1, "NETSCAPE2.0", 11) == 0 || memcmp(block + 1, "ANIMEXTS1.0", 11) == 0);
}

static int read_extension(mg_gif_decoder *decoder, mg_error *err) {
    int function = 0;
    GifByteType *block = NULL;
    if (DGifGetExtension(decoder->gif, &function, &block) == GIF_ERROR)
        return giflib_failure(decoder, decoder->gif->Error, err);

    bool loop_block = false;
    if (function == GRAPHICS_EXT_FUNC_CODE && block && block[0] >= 4) {
        decoder->has_control = true;
        decoder->control_disposal = (block[1] >> 2) & 7;
        decoder->control_delay_cs = (uint32_t)block[2] | (uint32_t)block[3] << 8;
        decoder->control_transparent = (block[1] & 1) ? block[4] : -1;
    } else if (function == APPLICATION_EXT_FUNC_CODE) {
        loop_block = is_loop_application(block);
    }
    // giflib hands out sub-blocks one at a time; NULL marks the block terminator.
    while (block) {
        if (DGifGetExtensionNext(decoder->gif, &block) == GIF_ERROR)
            return giflib_failure(decoder, decoder->gif->Error, err);
        // First loop block wins when a file stores several (what other decoders report).
        if (loop_block && block && block[0] >= 3 && block[1] == 1 && decoder->loop_count < 0)
            decoder->loop_count = (int32_t)((uint32_t)block[2] | (uint32_t)block[3] << 8);
    }
    return MG_OK;
}

static void clear_area(uint8_t *canvas, uint32_t width, rect area) {
    for (uint32_t y = area.y0; y < area.y1; y++)
        memset(canvas + ((size_t)y * width + area.x0) * 4, 0, (size_t)(area.x1 - area.x0) * 4);
}

static void copy_area(uint8_t *to, const uint8_t *from, uint32_t width, rect area) {
    for (uint32_t y = area.y0; y < area.y1; y++) {
        size_t offset = ((size_t)y * width + area.x0) * 4;
        memcpy(to + offset, from + offset, (size_t)(area.x1 - area.x0) * 4);
    }
}

static int read_image(mg_gif_decoder *decoder, mg_bitmap *frame, uint32_t *delay_ms, mg_error *err) {
    GifFileType *gif = decoder->gif;
    if (DGifGetImageDesc(gif) == GIF_ERROR) {
        int code = gif->Error;
        // The only read failure with input left is giflib refusing the LZW minimum code size,
        // which is the byte it read last. Sizes 9 to 11 are legal but beyond giflib.
        if (code == D_GIF_ERR_READ_FAILED && !decoder->input.hit_end && decoder->input.position > 0) {
            unsigned size = decoder->input.data[decoder->input.position - 1];
            decoder->failed = true;
            if (size >= 9 && size <= 11)
                return mg_fail(err, MG_ERR_UNSUPPORTED,
                               "GIF image block %u uses LZW minimum code size %u; giflib supports at most 8",
                               decoder->frame_count + 1, size);
            return mg_fail(err, MG_ERR_CORRUPT, "GIF image block %u has invalid LZW minimum code size %u",
                           decoder->frame_count + 1, size);
        }
        return giflib_failure(decoder, code, err);
    }
    const GifImageDesc *desc = &gif->Image;
    uint32_t index = decoder->frame_count + 1;
    char what[48];
    snprintf(what, sizeof what, "GIF image block %u", index);
    int status = mg_check_frame_size(err, &decoder->limits, (uint64_t)desc->Width, (uint64_t)desc->Height, what);
    if (status != MG_OK) return decoder_failure(decoder, status);

    const mg_limits *limits = &decoder->limits;
    if (limits->max_frames && index > limits->max_frames)
        return decoder_failure(decoder, mg_fail(err, MG_ERR_TOO_LARGE,
                                                "GIF has more than %u frames, limit is %u frames",
                                                limits->max_frames, limits->max_frames));
    size_t canvas_bytes = (size_t)decoder->width * decoder->height * 4;
    uint64_t total = decoder->total_bytes + canvas_bytes;
    if (limits->max_total_bytes && total > limits->max_total_bytes)
        return decoder_failure(decoder, mg_fail(err, MG_ERR_TOO_LARGE,
                                                "GIF frames 1 to %u need %llu bytes (%ux%u canvas), limit is %llu bytes",
                                                index, (unsigned long long)total, decoder->width, decoder->height,
                                                (unsigned long long)limits->max_total_bytes));

    uint32_t image_width = (uint32_t)desc->Width, image_height = (uint32_t)desc->Height;
    // Blocks may reach far past the canvas and are decoded in full even where clipped, so their
    // pixels get the same budget as the frames; files whose blocks stay on the canvas never hit it.
    uint64_t block_pixels = decoder->block_pixels + (uint64_t)image_width * image_height;
    if (limits->max_total_bytes && block_pixels > limits->max_total_bytes / 4)
        return decoder_failure(decoder, mg_fail(err, MG_ERR_TOO_LARGE,
                                                "GIF image blocks 1 to %u hold %llu pixels, limit is %llu pixels",
                                                index, (unsigned long long)block_pixels,
                                                (unsigned long long)(limits->max_total_bytes / 4)));
    uint32_t left = (uint32_t)desc->Left, top = (uint32_t)desc->Top;
    rect area = {0, 0, 0, 0};
    if (left < decoder->width && top < decoder->height) {
        area.x0 = left;
        area.y0 = top;
        area.x1 = (uint64_t)left + image_width < decoder->width ? left + image_width : decoder->width;
        area.y1 = (uint64_t)top + image_height < decoder->height ? top + image_height : decoder->height;
    }
    int disposal = decoder->has_control ? decoder->control_disposal : 0;

    if (!decoder->canvas && !(decoder->canvas = calloc(canvas_bytes, 1)))
        return decoder_failure(decoder, mg_fail(err, MG_ERR_NO_MEMORY, "cannot allocate the %ux%u GIF canvas",
                                                decoder->width, decoder->height));
    if (decoder->line_capacity < image_width) {
        free(decoder->line);
        decoder->line_capacity = 0;
        if (!(decoder->line = malloc(image_width)))
            return decoder_failure(decoder, mg_fail(err, MG_ERR_NO_MEMORY, "cannot allocate a GIF row"));
        decoder->line_capacity = image_width;
    }
    if (disposal == DISPOSE_PREVIOUS && !decoder->saved && !(decoder->saved = malloc(canvas_bytes)))
        return decoder_failure(decoder, mg_fail(err, MG_ERR_NO_MEMORY, "cannot allocate the GIF restore buffer"));
    uint8_t *output = mg_alloc_pixels(canvas_bytes);
    if (!output)
        return decoder_failure(decoder, mg_fail(err, MG_ERR_NO_MEMORY, "cannot allocate GIF frame %u", index));

    // The previous frame's disposal happens now, just before this frame is drawn.
    if (decoder->previous_disposal == DISPOSE_BACKGROUND) {
        // Transparent rather than the background colour: what browsers and the GIF suite do.
        clear_area(decoder->canvas, decoder->width, decoder->previous_area);
    } else if (decoder->previous_disposal == DISPOSE_PREVIOUS) {
        copy_area(decoder->canvas, decoder->saved, decoder->width, decoder->previous_area);
    }
    if (disposal == DISPOSE_PREVIOUS) copy_area(decoder->saved, decoder->canvas, decoder->width, area);

    // Indices past the colour table (or with no table at all) are drawn opaque black, the rule
    // libpng applies to palette PNGs.
    uint8_t palette[256][4];
    memset(palette, 0, sizeof palette);
    for (int i = 0; i < 256; i++) palette[i][3] = 255;
    const ColorMapObject *map = desc->ColorMap ? desc->ColorMap : gif->SColorMap;
    if (map && map->Colors) {
        int count = map->ColorCount < 256 ? map->ColorCount : 256;
        for (int i = 0; i < count; i++) {
            palette[i][0] = map->Colors[i].Red;
            palette[i][1] = map->Colors[i].Green;
            palette[i][2] = map->Colors[i].Blue;
        }
    }
    int transparent = decoder->has_control ? decoder->control_transparent : -1;

    // Interlaced images arrive in four passes: every 8th row from 0, every 8th from 4,
    // every 4th from 2, every 2nd from 1.
    static const uint32_t interlaced_start[4] = {0, 4, 2, 1}, interlaced_step[4] = {8, 8, 4, 2};
    static const uint32_t progressive_start[1] = {0}, progressive_step[1] = {1};
    const uint32_t *starts = desc->Interlace ? interlaced_start : progressive_start;
    const uint32_t *steps = desc->Interlace ? interlaced_step : progressive_step;
    int passes = desc->Interlace ? 4 : 1;
    for (int pass = 0; pass < passes; pass++) {
        for (uint32_t row = starts[pass]; row < image_height; row += steps[pass]) {
            if (DGifGetLine(gif, decoder->line, (int)image_width) == GIF_ERROR) {
                free(output);
                return giflib_failure(decoder, gif->Error, err);
            }
            uint32_t y = top + row;
            if ((uint64_t)top + row >= decoder->height || area.x0 == area.x1) continue;
            uint8_t *target = decoder->canvas + ((size_t)y * decoder->width + area.x0) * 4;
            const GifPixelType *source = decoder->line;
            for (uint32_t x = 0, n = area.x1 - area.x0; x < n; x++, target += 4) {
                int value = source[x];
                if (value == transparent) continue;
                memcpy(target, palette[value], 4);
            }
        }
    }

    memcpy(output, decoder->canvas, canvas_bytes);
    frame->pixels = output;
    frame->width = decoder->width;
    frame->height = decoder->height;
    *delay_ms = decoder->has_control ? decoder->control_delay_cs * 10 : 0;

    // Disposal values 4 to 7 are undefined; like other decoders, treat them as "keep".
    decoder->previous_disposal = disposal;
    decoder->previous_area = area;
    decoder->has_control = false;
    decoder->control_transparent = -1;
    decoder->frame_count = index;
    decoder->total_bytes = total;
    decoder->block_pixels = block_pixels;
    return MG_OK;
}

int mg_gif_decoder_next_frame(mg_gif_decoder *decoder, mg_bitmap *frame, uint32_t *delay_ms, mg_error *err) {
    if (!decoder || !frame || !delay_ms) return mg_fail(err, MG_ERR_INVALID_ARGUMENT, "missing argument");
    frame->pixels = NULL;
    frame->width = 0;
    frame->height = 0;
    *delay_ms = 0;
    if (decoder->failed) return mg_fail(err, MG_ERR_INVALID_ARGUMENT, "the GIF decoder already failed");
    if (decoder->finished) return MG_OK;

    for (;;) {
        if (decoder->input.position >= decoder->input.length) {
            // Without the trailer, data cut between two frames cannot be told from a complete
            // file, so it is truncation (as giflib's DGifSlurp and the reference decoder judge).
            return decoder_failure(decoder, mg_fail(err, MG_ERR_TRUNCATED,
                                                    "GIF data ends after %u frame(s) without a trailer",
                                                    decoder->frame_count));
        }
        GifRecordType type = UNDEFINED_RECORD_TYPE;
        if (DGifGetRecordType(decoder->gif, &type) == GIF_ERROR)
            return giflib_failure(decoder, decoder->gif->Error, err);
        switch (type) {
        case IMAGE_DESC_RECORD_TYPE:
            return read_image(decoder, frame, delay_ms, err);
        case EXTENSION_RECORD_TYPE: {
            int status = read_extension(decoder, err);
            if (status != MG_OK) return status;
            break;
        }
        case TERMINATE_RECORD_TYPE:
            if (decoder->frame_count == 0)
                return decoder_failure(decoder, mg_fail(err, MG_ERR_CORRUPT, "GIF has no image"));
            decoder->finished = true;
            return MG_OK;
        default:
            return decoder_failure(decoder, mg_fail(err, MG_ERR_CORRUPT, "unexpected GIF record"));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------------

typedef struct {
    uint8_t *bytes;
    size_t length;
    size_t capacity;
} memory_writer;

static int write_memory(GifFileType *gif, const GifByteType *bytes, int count) {
    memory_writer *writer = gif->UserData;
    if (count <= 0) return 0;
    if (writer->length + (size_t)count > writer->capacity) {
        size_t capacity = writer->capacity ? writer->capacity : 4096;
        while (capacity < writer->length + (size_t)count) capacity *= 2;
        uint8_t *grown = realloc(writer->bytes, capacity);
        if (!grown) return 0;  // giflib turns the short write into E_GIF_ERR_WRITE_FAILED
        writer->bytes = grown;
        writer->capacity = capacity;
    }
    memcpy(writer->bytes + writer->length, bytes, (size_t)count);
    writer->length += (size_t)count;
    return count;
}

// giflib colour tables must hold a power of two (2 to 256) entries; the rest is padded black.
static ColorMapObject *make_color_map(const mg_gif_frame *frame) {
    int size = 2;
    while (size < (int)frame->palette_size) size *= 2;
    ColorMapObject *map = GifMakeMapObject(size, NULL);
    if (!map) return NULL;
    memset(map->Colors, 0, sizeof(GifColorType) * (size_t)size);
    for (uint32_t i = 0; i < frame->palette_size; i++) {
        map->Colors[i].Red = frame->palette[3 * i];
        map->Colors[i].Green = frame->palette[3 * i + 1];
        map->Colors[i].Blue = frame->palette[3 * i + 2];
    }
    return map;
}

static bool same_palette(const mg_gif_frame *a, const mg_gif_frame *b) {
    return a->palette_size == b->palette_size && memcmp(a->palette, b->palette, 3 * (size_t)a->palette_size) == 0;
}

static int encode_frames(GifFileType *gif, uint32_t width, uint32_t height, const mg_gif_frame *frames,
                         uint32_t frame_count, int32_t loop_count, int32_t restore_to_transparent,
                         GifPixelType *row, mg_error *err) {
    ColorMapObject *global = make_color_map(&frames[0]);
    if (!global) return mg_fail(err, MG_ERR_NO_MEMORY, "cannot allocate a GIF colour table");
    int result = EGifPutScreenDesc(gif, (int)width, (int)height, 8, 0, global);
    GifFreeMapObject(global);  // giflib keeps its own copy
    if (result == GIF_ERROR) goto giflib_error;

    if (loop_count >= 0) {
        uint16_t count = loop_count > 65535 ? 65535 : (uint16_t)loop_count;
        const GifByteType loop[3] = {1, (GifByteType)(count & 0xff), (GifByteType)(count >> 8)};
        if (EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) == GIF_ERROR ||
            EGifPutExtensionBlock(gif, 11, "NETSCAPE2.0") == GIF_ERROR ||
            EGifPutExtensionBlock(gif, 3, loop) == GIF_ERROR || EGifPutExtensionTrailer(gif) == GIF_ERROR)
            goto giflib_error;
    }

    for (uint32_t i = 0; i < frame_count; i++) {
        const mg_gif_frame *frame = &frames[i];
        if (frame_count > 1 || frame->transparent_index >= 0) {
            GraphicsControlBlock control = {
                .DisposalMode = restore_to_transparent ? DISPOSE_BACKGROUND : DISPOSE_DO_NOT,
                .UserInputFlag = false,
                .DelayTime = frame->delay_cs > 65535 ? 65535 : (int)frame->delay_cs,
                .TransparentColor = frame->transparent_index >= 0 ? frame->transparent_index : NO_TRANSPARENT_COLOR,
            };
            GifByteType extension[4];
            size_t length = EGifGCBToExtension(&control, extension);
            if (EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, (int)length, extension) == GIF_ERROR)
                goto giflib_error;
        }
        ColorMapObject *local = NULL;
        if (i > 0 && !same_palette(frame, &frames[0]) && !(local = make_color_map(frame)))
            return mg_fail(err, MG_ERR_NO_MEMORY, "cannot allocate a GIF colour table");
        // giflib 5.2.1 overwrites (without freeing) the previous frame's local colour
        // map when the next frame has none: free it first (found by LeakSanitizer).
        if (!local && gif->Image.ColorMap) {
            GifFreeMapObject(gif->Image.ColorMap);
            gif->Image.ColorMap = NULL;
        }
        result = EGifPutImageDesc(gif, 0, 0, (int)width, (int)height, false, local);
        GifFreeMapObject(local);  // giflib keeps its own copy; NULL is ignored
        if (result == GIF_ERROR) goto giflib_error;
        for (uint32_t y = 0; y < height; y++) {
            if ((y & 63) == 63 && mg_cancel_requested())
                return mg_fail(err, MG_ERR_CANCELLED, "GIF encoding cancelled at frame %u, row %u", i + 1, y);
            // EGifPutLine masks the row in place, so it gets a scratch copy.
            memcpy(row, frame->indices + (size_t)y * width, width);
            if (EGifPutLine(gif, row, (int)width) == GIF_ERROR) goto giflib_error;
        }
    }
    return MG_OK;

giflib_error: {
    const char *text = GifErrorString(gif->Error);
    return mg_fail(err, MG_ERR_ENCODE, "%s (giflib error %d)", text ? text : "unknown giflib error", gif->Error);
}
}

int mg_gif_encode(uint32_t width, uint32_t height, const mg_gif_frame *frames, uint32_t frame_count,
                  int32_t loop_count, int32_t restore_to_transparent, mg_buffer *out, mg_error *err) {
    if (!out) return mg_fail(err, MG_ERR_INVALID_ARGUMENT, "missing output");
    out->bytes = NULL;
    out->length = 0;
    if (width == 0 || height == 0 || width > 65535 || height > 65535)
        return mg_fail(err, MG_ERR_ENCODE, "GIF cannot store a %ux%u image (1 to 65535 pixels per side)",
                       width, height);
    if (!frames || frame_count == 0) return mg_fail(err, MG_ERR_INVALID_ARGUMENT, "no frames to encode");
    for (uint32_t i = 0; i < frame_count; i++) {
        const mg_gif_frame *frame = &frames[i];
        if (!frame->indices || !frame->palette || frame->palette_size == 0 || frame->palette_size > 256 ||
            frame->transparent_index >= (int32_t)frame->palette_size)
            return mg_fail(err, MG_ERR_INVALID_ARGUMENT, "GIF frame %u has an invalid palette", i + 1);
    }

    GifPixelType *row = malloc(width);
    if (!row) return mg_fail(err, MG_ERR_NO_MEMORY, "cannot allocate a GIF row");
    memory_writer writer = {NULL, 0, 0};
    int code = E_GIF_SUCCEEDED;
    GifFileType *gif = EGifOpen(&writer, write_memory, &code);
    if (!gif) {
        free(row);
        const char *text = GifErrorString(code);
        return mg_fail(err, MG_ERR_ENCODE, "%s (giflib error %d)", text ? text : "unknown giflib error", code);
    }
    EGifSetGifVersion(gif, true);  // graphic control and application extensions need GIF89a

    int status = encode_frames(gif, width, height, frames, frame_count, loop_count, restore_to_transparent, row, err);
    free(row);
    // EGifCloseFile writes the trailer and frees `gif` whatever happened before.
    if (EGifCloseFile(gif, &code) == GIF_ERROR && status == MG_OK) {
        const char *text = GifErrorString(code);
        status = mg_fail(err, MG_ERR_ENCODE, "%s (giflib error %d)", text ? text : "unknown giflib error", code);
    }
    if (status != MG_OK) {
        free(writer.bytes);
        return status;
    }
    out->bytes = writer.bytes;
    out->length = writer.length;
    return MG_OK;
}
