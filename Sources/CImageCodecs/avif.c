// AVIF through libavif 0.11: avifDecoder (strict checks off, like the other decoders) with
// libavif's size limits, YUV to 8-bit RGBA by libavif, then the transformative properties
// (clap, irot, imir) that libavif 0.11 reports but does not apply. Encoding through avifEncoder,
// with quality mapped to quantizers (the `quality` fields came after 0.11).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <avif/avif.h>

#include "mg_avif.h"
#include "internal.h"
#include "lazy_library.h"

// Opened on first use (lazy_library.h says why): every function of the library this file calls.
#define AVIF_FUNCTIONS(X) \
    X(avifCropRectConvertCleanApertureBox) \
    X(avifDecoderCreate) \
    X(avifDecoderDestroy) \
    X(avifDecoderNthImage) \
    X(avifDecoderNthImageTiming) \
    X(avifDecoderParse) \
    X(avifDecoderSetIOMemory) \
    X(avifDiagnosticsClearError) \
    X(avifEncoderAddImage) \
    X(avifEncoderCreate) \
    X(avifEncoderDestroy) \
    X(avifEncoderFinish) \
    X(avifImageCreate) \
    X(avifImageDestroy) \
    X(avifImageRGBToYUV) \
    X(avifImageSetMetadataExif) \
    X(avifImageSetMetadataXMP) \
    X(avifImageSetProfileICC) \
    X(avifImageYUVToRGB) \
    X(avifRGBImageSetDefaults) \
    X(avifRWDataFree) \
    X(avifResultToString)
MG_LAZY_LIBRARY(avif_library, AVIF_FUNCTIONS, "libavif", MG_LAZY_FILES("libavif.so", "libavif.so.15"))

// ---------------------------------------------------------------------------------------------
// Errors

// The size in libavif's messages about refused dimensions: "Item ID [1] dimensions are too large
// [65535x65535]" (ispe) or "Grid box contains illegal dimensions: [W x H]" (grid output size).
static int declared_size(const char *diag, unsigned *width, unsigned *height) {
    if (!strstr(diag, "dimensions")) return 0;
    const char *open = strrchr(diag, '[');
    return open && (sscanf(open, "[%ux%u]", width, height) == 2 || sscanf(open, "[%u x %u]", width, height) == 2);
}

static int status_for(avifResult result, const char *diag) {
    unsigned width = 0, height = 0;
    // A grid of zero size is "illegal" too; only a non-empty declared size was refused for being large.
    if (declared_size(diag, &width, &height) && width > 0 && height > 0) return MG_ERR_TOO_LARGE;
    if (result == AVIF_RESULT_TRUNCATED_DATA || strstr(diag, "truncated")) return MG_ERR_TRUNCATED;
    switch (result) {
    case AVIF_RESULT_OUT_OF_MEMORY: return MG_ERR_NO_MEMORY;
    case AVIF_RESULT_NOT_IMPLEMENTED:
    case AVIF_RESULT_NO_CODEC_AVAILABLE:
    case AVIF_RESULT_UNSUPPORTED_DEPTH: return MG_ERR_UNSUPPORTED;
    default: return MG_ERR_CORRUPT;
    }
}

static int fail_result(mg_error *err, avifResult result, const avifDiagnostics *diag, const char *what) {
    const char *detail = diag ? diag->error : "";
    return mg_fail(err, status_for(result, detail), "%s: %s%s%s", what, p_avifResultToString(result),
                   detail[0] ? ": " : "", detail);
}

static int fail_encode(mg_error *err, avifResult result, const avifDiagnostics *diag, const char *what) {
    const char *detail = diag ? diag->error : "";
    return mg_fail(err, MG_ERR_ENCODE, "%s: %s%s%s", what, p_avifResultToString(result), detail[0] ? ": " : "",
                   detail);
}

// ---------------------------------------------------------------------------------------------
// Parsing

static int open_decoder(const uint8_t *data, size_t length, const mg_limits *limits, avifDecoder **out,
                        mg_error *err) {
    *out = NULL;
    if (length == 0) return mg_fail(err, MG_ERR_TRUNCATED, "no data");
    avifDecoder *decoder = p_avifDecoderCreate();
    if (!decoder) return mg_fail(err, MG_ERR_NO_MEMORY, "could not create the AVIF decoder");
    // Files without `pixi` and similar harmless omissions decode, as in other decoders.
    decoder->strictFlags = AVIF_STRICT_DISABLED;
    // Two threads, as HEIF and JPEG XL decode on two: dav1d filters rows on the second while the first decodes (a
    // 13 MP photo in 36 ms instead of 51; its buffers add about 20 MiB at that size).
    decoder->maxThreads = 2;
    // libavif refuses an `ispe` or grid above its limit while parsing, before any AV1 decoding.
    if (limits && limits->max_pixels && limits->max_pixels < AVIF_DEFAULT_IMAGE_SIZE_LIMIT)
        decoder->imageSizeLimit = (uint32_t)limits->max_pixels;
    avifResult result = p_avifDecoderSetIOMemory(decoder, data, length);
    if (result == AVIF_RESULT_OK) result = p_avifDecoderParse(decoder);
    if (result != AVIF_RESULT_OK) {
        int status = fail_result(err, result, &decoder->diag, "parsing the AVIF container");
        if (status == MG_ERR_TOO_LARGE && limits && limits->max_pixels)
            mg_fail(err, MG_ERR_TOO_LARGE, "AVIF image is above the limit of %llu pixels (libavif: %s)",
                    (unsigned long long)limits->max_pixels, decoder->diag.error);
        p_avifDecoderDestroy(decoder);
        return status;
    }
    *out = decoder;
    return MG_OK;
}

// The clean aperture as a crop rectangle of the coded image; 0 when there is none or it is invalid
// (an invalid clap is ignored rather than failing the whole image).
static int crop_rect(const avifImage *image, avifCropRect *rect) {
    rect->x = 0;
    rect->y = 0;
    rect->width = image->width;
    rect->height = image->height;
    if (!(image->transformFlags & AVIF_TRANSFORM_CLAP)) return 0;
    avifDiagnostics diag;
    p_avifDiagnosticsClearError(&diag);
    avifCropRect converted;
    if (!p_avifCropRectConvertCleanApertureBox(&converted, &image->clap, image->width, image->height,
                                             image->yuvFormat, &diag))
        return 0;
    if (converted.width == 0 || converted.height == 0) return 0;
    *rect = converted;
    return 1;
}

static int rotation_of(const avifImage *image) {
    return (image->transformFlags & AVIF_TRANSFORM_IROT) ? (image->irot.angle & 3) : 0;
}

static void display_size(const avifImage *image, uint32_t *width, uint32_t *height) {
    avifCropRect rect;
    crop_rect(image, &rect);
    int swaps = rotation_of(image) & 1;
    *width = swaps ? rect.height : rect.width;
    *height = swaps ? rect.width : rect.height;
}

static void fill_info(const avifDecoder *decoder, mg_avif_info *info) {
    display_size(decoder->image, &info->width, &info->height);
    info->frame_count = decoder->imageCount > 0 ? (uint32_t)decoder->imageCount : 1;
    info->is_sequence = decoder->imageCount > 1;
    info->has_alpha = decoder->alphaPresent ? 1 : 0;
    info->bit_depth = decoder->image->depth;
}

// The declared size of an item libavif refused as too large, for describing a bomb.
static void size_from_message(const char *message, mg_avif_info *info) {
    unsigned width = 0, height = 0;
    if (declared_size(message, &width, &height)) {
        info->width = width;
        info->height = height;
        info->frame_count = 1;
    }
}

int mg_avif_probe(const uint8_t *data, size_t length, mg_avif_info *info, mg_error *err) {
    if (info) memset(info, 0, sizeof *info);
    if (!data || !info) return mg_fail(err, MG_ERR_INVALID_ARGUMENT, "NULL argument");
    if (!mg_lazy_load(&avif_library, err)) return MG_ERR_UNSUPPORTED;
    avifDecoder *decoder = NULL;
    int status = open_decoder(data, length, NULL, &decoder, err);
    if (status == MG_ERR_TOO_LARGE && err) size_from_message(err->message, info);
    if (status != MG_OK) return status;
    fill_info(decoder, info);
    p_avifDecoderDestroy(decoder);
    return MG_OK;
}

// ---------------------------------------------------------------------------------------------
// Transforms: clap (crop), irot (anticlockwise quarter turns), imir (0 top-bottom, 1 left-right)

static uint8_t *cropped(uint8_t *pixels, uint32_t width, const avifCropRect *rect) {
    uint8_t *out = mg_alloc_pixels((size_t)rect->width * rect->height * 4);
    if (!out) return NULL;
    for (uint32_t y = 0; y < rect->height; y++)
        memcpy(out + (size_t)y * rect->width * 4, pixels + (((size_t)rect->y + y) * width + rect->x) * 4,
               (size_t)rect->width * 4);
    return out;
}

static uint8_t *rotated(const uint8_t *pixels, uint32_t width, uint32_t height, int angle) {
    const uint32_t *src = (const uint32_t *)pixels;
    uint32_t *out = mg_alloc_pixels((size_t)width * height * 4);
    if (!out) return NULL;
    for (uint32_t y = 0; y < height; y++) {
        for (uint32_t x = 0; x < width; x++) {
            uint32_t p = src[(size_t)y * width + x];
            switch (angle) {
            case 1: out[(size_t)(width - 1 - x) * height + y] = p; break;  // 90 anticlockwise: height x width
            case 2: out[(size_t)(height - 1 - y) * width + (width - 1 - x)] = p; break;
            default: out[(size_t)x * height + (height - 1 - y)] = p; break;  // 270 anticlockwise
            }
        }
    }
    return (uint8_t *)out;
}

static void mirror(uint8_t *pixels, uint32_t width, uint32_t height, int mode) {
    uint32_t *p = (uint32_t *)pixels;
    if (mode == 0) {
        for (uint32_t y = 0; y < height / 2; y++) {
            uint32_t *a = p + (size_t)y * width, *b = p + (size_t)(height - 1 - y) * width;
            for (uint32_t x = 0; x < width; x++) {
                uint32_t t = a[x];
                a[x] = b[x];
                b[x] = t;
            }
        }
    } else {
        for (uint32_t y = 0; y < height; y++) {
            uint32_t *row = p + (size_t)y * width;
            for (uint32_t x = 0; x < width / 2; x++) {
                uint32_t t = row[x];
                row[x] = row[width - 1 - x];
                row[width - 1 - x] = t;
            }
        }
    }
}

// Applies the image's transformative properties to `bitmap` in order clap, irot, imir.
static int apply_transforms(const avifImage *image, mg_bitmap *bitmap, mg_error *err) {
    avifCropRect rect;
    if (crop_rect(image, &rect) &&
        (rect.x != 0 || rect.y != 0 || rect.width != bitmap->width || rect.height != bitmap->height)) {
        uint8_t *out = cropped(bitmap->pixels, bitmap->width, &rect);
        if (!out) return mg_fail(err, MG_ERR_NO_MEMORY, "could not allocate the cropped image");
        free(bitmap->pixels);
        *bitmap = (mg_bitmap){out, rect.width, rect.height};
    }
    int angle = rotation_of(image);
    if (angle) {
        uint8_t *out = rotated(bitmap->pixels, bitmap->width, bitmap->height, angle);
        if (!out) return mg_fail(err, MG_ERR_NO_MEMORY, "could not allocate the rotated image");
        free(bitmap->pixels);
        if (angle & 1) *bitmap = (mg_bitmap){out, bitmap->height, bitmap->width};
        else bitmap->pixels = out;
    }
    if (image->transformFlags & AVIF_TRANSFORM_IMIR) mirror(bitmap->pixels, bitmap->width, bitmap->height, image->imir.mode);
    return MG_OK;
}

// ---------------------------------------------------------------------------------------------
// Decoding

void mg_avif_image_release(mg_avif_image *image) {
    if (!image) return;
    if (image->frames) {
        for (uint32_t i = 0; i < image->frame_count; i++) free(image->frames[i].pixels);
    }
    free(image->frames);
    free(image->durations_us);
    mg_image_meta_release(&image->meta);
    memset(image, 0, sizeof *image);
}

static int check_limits(const avifDecoder *decoder, uint32_t decoded, const mg_limits *limits, mg_error *err) {
    const avifImage *image = decoder->image;
    int status = mg_check_frame_size(err, limits, image->width, image->height, "AVIF image");
    if (status != MG_OK) return status;
    if (limits && limits->max_frames && decoded > limits->max_frames)
        return mg_fail(err, MG_ERR_TOO_LARGE, "image sequence has %u frames, limit is %u frames", decoded,
                       limits->max_frames);
    uint64_t total = (uint64_t)image->width * image->height * 4 * decoded;
    if (limits && limits->max_total_bytes && total > limits->max_total_bytes)
        return mg_fail(err, MG_ERR_TOO_LARGE, "%u frames of %ux%u need %llu bytes, limit is %llu bytes", decoded,
                       image->width, image->height, (unsigned long long)total,
                       (unsigned long long)limits->max_total_bytes);
    return MG_OK;
}

static int decode_frame(avifDecoder *decoder, uint32_t index, uint32_t decoded, const mg_limits *limits,
                        const mg_bitmap *first, mg_bitmap *bitmap, mg_error *err) {
    avifResult result = p_avifDecoderNthImage(decoder, index);
    if (result != AVIF_RESULT_OK) {
        char what[64];
        snprintf(what, sizeof what, "decoding AVIF frame %u", index + 1);
        return fail_result(err, result, &decoder->diag, what);
    }
    const avifImage *image = decoder->image;
    // libavif takes the size of what the AV1 stream decodes to, not what the container declared: check the
    // limits again on the real size before allocating, and hold every frame to the first one's size.
    if (index == 0) {
        int status = check_limits(decoder, decoded, limits, err);
        if (status != MG_OK) return status;
    } else if (image->width != first->width || image->height != first->height) {
        return mg_fail(err, MG_ERR_CORRUPT, "frame %u is %ux%u, the first frame is %ux%u", index + 1, image->width,
                       image->height, first->width, first->height);
    }
    avifRGBImage rgb;
    p_avifRGBImageSetDefaults(&rgb, image);
    rgb.format = AVIF_RGB_FORMAT_RGBA;
    rgb.depth = 8;  // libavif rounds 10- and 12-bit samples to 8 bits
    rgb.alphaPremultiplied = AVIF_FALSE;  // premultiplied files come out straight
    rgb.rowBytes = image->width * 4;
    size_t size = (size_t)rgb.rowBytes * image->height;
    rgb.pixels = mg_alloc_pixels(size);
    if (!rgb.pixels)
        return mg_fail(err, MG_ERR_NO_MEMORY, "could not allocate %zu bytes for %ux%u", size, image->width,
                       image->height);
    result = p_avifImageYUVToRGB(image, &rgb);
    if (result != AVIF_RESULT_OK) {
        free(rgb.pixels);
        return fail_result(err, result, NULL, "converting AVIF YUV to RGB");
    }
    *bitmap = (mg_bitmap){rgb.pixels, image->width, image->height};
    return apply_transforms(image, bitmap, err);
}

// Colour and metadata as the file states them. libavif reports CICP 2/2/2 when neither an nclx box nor
// the AV1 sequence header states anything: that is "not stated", not a colour space.
static void fill_meta(const avifDecoder *decoder, mg_image_meta *meta) {
    const avifImage *image = decoder->image;
    meta->icc = mg_buffer_copy(image->icc.data, image->icc.size);
    const uint8_t *exif = image->exif.data;
    size_t exif_length = image->exif.size;
    meta->exif = mg_buffer_copy(exif, exif_length);
    meta->xmp = mg_buffer_copy(image->xmp.data, image->xmp.size);
    int unspecified = image->colorPrimaries == AVIF_COLOR_PRIMARIES_UNSPECIFIED &&
                      image->transferCharacteristics == AVIF_TRANSFER_CHARACTERISTICS_UNSPECIFIED &&
                      image->matrixCoefficients == AVIF_MATRIX_COEFFICIENTS_UNSPECIFIED;
    if (!unspecified) {
        meta->has_cicp = 1;
        meta->cicp_primaries = (uint16_t)image->colorPrimaries;
        meta->cicp_transfer = (uint16_t)image->transferCharacteristics;
        meta->cicp_matrix = (uint16_t)image->matrixCoefficients;
        meta->cicp_full_range = image->yuvRange == AVIF_RANGE_FULL;
    }
    meta->bit_depth = image->depth;
    meta->has_alpha = decoder->alphaPresent ? 1 : 0;
}

int mg_avif_decode(const uint8_t *data, size_t length, const mg_limits *limits,
                   const mg_avif_decode_options *options, mg_avif_image *out, mg_error *err) {
    if (out) memset(out, 0, sizeof *out);
    if (!data || !out) return mg_fail(err, MG_ERR_INVALID_ARGUMENT, "NULL argument");
    if (!mg_lazy_load(&avif_library, err)) return MG_ERR_UNSUPPORTED;
    avifDecoder *decoder = NULL;
    int status = open_decoder(data, length, limits, &decoder, err);
    if (status != MG_OK) return status;

    uint32_t count = decoder->imageCount > 0 ? (uint32_t)decoder->imageCount : 1;
    int sequence = count > 1;
    uint32_t decoded = (options && options->only_first_frame) ? 1 : count;
    // Every limit is checked against the parsed header before any pixel memory exists.
    status = check_limits(decoder, decoded, limits, err);
    if (status == MG_OK) {
        out->frames = calloc(decoded, sizeof *out->frames);
        out->durations_us = calloc(decoded, sizeof *out->durations_us);
        if (!out->frames || !out->durations_us)
            status = mg_fail(err, MG_ERR_NO_MEMORY, "could not allocate %u frame records", decoded);
        else out->frame_count = decoded;
    }
    mg_bitmap stored_first = {NULL, 0, 0};
    for (uint32_t i = 0; status == MG_OK && i < decoded; i++) {
        // Frames are compared before any transform, so the first frame's stored size is kept aside.
        status = decode_frame(decoder, i, decoded, limits, &stored_first, &out->frames[i], err);
        if (i == 0 && status == MG_OK) stored_first = (mg_bitmap){NULL, decoder->image->width, decoder->image->height};
        if (status != MG_OK) break;
        avifImageTiming timing;
        if (sequence && p_avifDecoderNthImageTiming(decoder, i, &timing) == AVIF_RESULT_OK && timing.timescale)
            out->durations_us[i] =
                (timing.durationInTimescales * 1000000 + timing.timescale / 2) / timing.timescale;
        if (i == 0) fill_meta(decoder, &out->meta);
    }
    out->is_sequence = sequence;
    p_avifDecoderDestroy(decoder);
    if (status != MG_OK) mg_avif_image_release(out);
    return status;
}

// ---------------------------------------------------------------------------------------------
// Encoding

static int all_opaque(const mg_avif_frame *frames, uint32_t count, uint32_t width, uint32_t height) {
    size_t pixels = (size_t)width * height;
    for (uint32_t f = 0; f < count; f++)
        for (size_t i = 0; i < pixels; i++)
            if (frames[f].rgba[i * 4 + 3] != 255) return 0;
    return 1;
}

static void configure(avifEncoder *encoder, const mg_avif_encode_options *options) {
    int quantizer = 0;
    if (!options->lossless) {
        int quality = options->quality < 1 ? 1 : options->quality > 100 ? 100 : options->quality;
        // libavif 1.x's mapping of `quality` (0...100) onto quantizers (63...0).
        quantizer = ((100 - quality) * AVIF_QUANTIZER_WORST_QUALITY + 50) / 100;
    }
    encoder->minQuantizer = encoder->maxQuantizer = quantizer;
    encoder->minQuantizerAlpha = encoder->maxQuantizerAlpha = quantizer;
    int speed = options->speed < AVIF_SPEED_SLOWEST ? AVIF_SPEED_SLOWEST : options->speed;
    encoder->speed = speed > AVIF_SPEED_FASTEST ? AVIF_SPEED_FASTEST : speed;
    encoder->maxThreads = 1;
    encoder->timescale = 1000;  // durations are whole milliseconds
}

static avifImage *make_image(uint32_t width, uint32_t height, const mg_avif_encode_options *options) {
    avifPixelFormat format = options->lossless ? AVIF_PIXEL_FORMAT_YUV444 : AVIF_PIXEL_FORMAT_YUV420;
    avifImage *image = p_avifImageCreate(width, height, 8, format);
    if (!image) return NULL;
    image->yuvRange = AVIF_RANGE_FULL;
    // Identity keeps RGB as it is, which lossless needs; BT.601 is what every decoder handles.
    image->matrixCoefficients = options->lossless ? AVIF_MATRIX_COEFFICIENTS_IDENTITY : AVIF_MATRIX_COEFFICIENTS_BT601;
    if (options->icc && options->icc_length) {
        p_avifImageSetProfileICC(image, options->icc, options->icc_length);
        image->colorPrimaries = AVIF_COLOR_PRIMARIES_UNSPECIFIED;
        image->transferCharacteristics = AVIF_TRANSFER_CHARACTERISTICS_UNSPECIFIED;
    } else if (options->has_cicp) {
        image->colorPrimaries = options->cicp_primaries;
        image->transferCharacteristics = options->cicp_transfer;
    } else {
        image->colorPrimaries = AVIF_COLOR_PRIMARIES_BT709;
        image->transferCharacteristics = AVIF_TRANSFER_CHARACTERISTICS_SRGB;
    }
    if (options->exif && options->exif_length) {
        p_avifImageSetMetadataExif(image, options->exif, options->exif_length);
        // libavif 0.11 turns the EXIF orientation into irot/imir; our pixels are already upright.
        image->transformFlags &= ~(avifTransformFlags)(AVIF_TRANSFORM_IROT | AVIF_TRANSFORM_IMIR);
        image->irot.angle = 0;
        image->imir.mode = 0;
    }
    if (options->xmp && options->xmp_length) p_avifImageSetMetadataXMP(image, options->xmp, options->xmp_length);
    return image;
}

int mg_avif_encode(const mg_avif_frame *frames, uint32_t count, uint32_t width, uint32_t height,
                   const mg_avif_encode_options *options, mg_buffer *out, mg_error *err) {
    if (out) {
        out->bytes = NULL;
        out->length = 0;
    }
    if (!frames || !options || !out) return mg_fail(err, MG_ERR_INVALID_ARGUMENT, "NULL argument");
    if (!mg_lazy_load(&avif_library, err)) return MG_ERR_UNSUPPORTED;
    if (count == 0) return mg_fail(err, MG_ERR_ENCODE, "nothing to encode: no frames");
    if (width == 0 || height == 0 || width > 65536 || height > 65536)
        return mg_fail(err, MG_ERR_ENCODE, "cannot encode a %ux%u AVIF", width, height);
    avifImage *image = make_image(width, height, options);
    avifEncoder *encoder = p_avifEncoderCreate();
    if (!image || !encoder) {
        if (image) p_avifImageDestroy(image);
        if (encoder) p_avifEncoderDestroy(encoder);
        return mg_fail(err, MG_ERR_NO_MEMORY, "could not create the AVIF encoder");
    }
    configure(encoder, options);
    int opaque = all_opaque(frames, count, width, height);

    int status = MG_OK;
    avifAddImageFlags flags = count == 1 ? AVIF_ADD_IMAGE_FLAG_SINGLE : AVIF_ADD_IMAGE_FLAG_NONE;
    for (uint32_t i = 0; i < count && status == MG_OK; i++) {
        // libavif offers no hook inside a frame: a cancelled caller stops it between frames.
        if (i > 0 && mg_cancel_requested()) {
            status = mg_fail(err, MG_ERR_CANCELLED, "AVIF encoding cancelled at frame %u of %u", i + 1, count);
            break;
        }
        avifRGBImage rgb;
        p_avifRGBImageSetDefaults(&rgb, image);
        rgb.format = AVIF_RGB_FORMAT_RGBA;
        rgb.depth = 8;
        rgb.ignoreAlpha = opaque ? AVIF_TRUE : AVIF_FALSE;
        rgb.pixels = (uint8_t *)frames[i].rgba;
        rgb.rowBytes = width * 4;
        avifResult result = p_avifImageRGBToYUV(image, &rgb);
        if (result != AVIF_RESULT_OK) {
            status = fail_encode(err, result, NULL, "converting RGB to YUV");
            break;
        }
        uint64_t duration = frames[i].duration_ms ? frames[i].duration_ms : 1;
        result = p_avifEncoderAddImage(encoder, image, duration, flags);
        if (result != AVIF_RESULT_OK) {
            char what[64];
            snprintf(what, sizeof what, "encoding AVIF frame %u", i + 1);
            status = fail_encode(err, result, &encoder->diag, what);
        }
    }
    avifRWData output = AVIF_DATA_EMPTY;
    if (status == MG_OK) {
        avifResult result = p_avifEncoderFinish(encoder, &output);
        if (result != AVIF_RESULT_OK) {
            status = fail_encode(err, result, &encoder->diag, "finishing the AVIF file");
        } else {
            out->bytes = malloc(output.size ? output.size : 1);
            if (!out->bytes) {
                status = mg_fail(err, MG_ERR_NO_MEMORY, "could not allocate %zu bytes of output", output.size);
            } else {
                memcpy(out->bytes, output.data, output.size);
                out->length = output.size;
            }
        }
    }
    p_avifRWDataFree(&output);
    p_avifEncoderDestroy(encoder);
    p_avifImageDestroy(image);
    return status;
}
