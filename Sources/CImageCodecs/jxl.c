// JPEG XL through libjxl 0.7: the streaming decoder with coalesced frames (each frame is the full canvas, as
// displayed) and the codestream orientation applied, and the encoder for stills and animations. libjxl has no
// pixel limit of its own, so the basic info is checked before any output buffer exists.
#include <stdlib.h>
#include <string.h>

#include <jxl/decode.h>
#include <jxl/encode.h>
#include <jxl/thread_parallel_runner.h>

#include "mg_jxl.h"
#include "internal.h"
#include "lazy_library.h"

// Opened on first use (lazy_library.h says why): every function of the library this file calls.
#define JXL_FUNCTIONS(X) \
    X(JxlColorEncodingSetToSRGB) \
    X(JxlDecoderCreate) \
    X(JxlDecoderDestroy) \
    X(JxlDecoderGetBasicInfo) \
    X(JxlDecoderGetBoxType) \
    X(JxlDecoderGetColorAsEncodedProfile) \
    X(JxlDecoderGetColorAsICCProfile) \
    X(JxlDecoderGetFrameHeader) \
    X(JxlDecoderGetICCProfileSize) \
    X(JxlDecoderImageOutBufferSize) \
    X(JxlDecoderProcessInput) \
    X(JxlDecoderReleaseBoxBuffer) \
    X(JxlDecoderSetBoxBuffer) \
    X(JxlDecoderSetDecompressBoxes) \
    X(JxlDecoderSetImageOutBuffer) \
    X(JxlDecoderSetInput) \
    X(JxlDecoderSetKeepOrientation) \
    X(JxlDecoderSetParallelRunner) \
    X(JxlDecoderSetPreferredColorProfile) \
    X(JxlDecoderSubscribeEvents) \
    X(JxlEncoderAddBox) \
    X(JxlEncoderAddImageFrame) \
    X(JxlEncoderCloseBoxes) \
    X(JxlEncoderCloseInput) \
    X(JxlEncoderCreate) \
    X(JxlEncoderDestroy) \
    X(JxlEncoderFrameSettingsCreate) \
    X(JxlEncoderFrameSettingsSetOption) \
    X(JxlEncoderGetError) \
    X(JxlEncoderInitBasicInfo) \
    X(JxlEncoderInitExtraChannelInfo) \
    X(JxlEncoderInitFrameHeader) \
    X(JxlEncoderProcessOutput) \
    X(JxlEncoderSetBasicInfo) \
    X(JxlEncoderSetColorEncoding) \
    X(JxlEncoderSetExtraChannelInfo) \
    X(JxlEncoderSetFrameDistance) \
    X(JxlEncoderSetFrameHeader) \
    X(JxlEncoderSetFrameLossless) \
    X(JxlEncoderSetICCProfile) \
    X(JxlEncoderSetParallelRunner) \
    X(JxlEncoderUseBoxes) \
    X(JxlSignatureCheck) \
    X(JxlThreadParallelRunnerCreate) \
    X(JxlThreadParallelRunnerDestroy) \
    X(JxlThreadParallelRunner)
MG_LAZY_LIBRARY(jxl_library, JXL_FUNCTIONS, "libjxl", MG_LAZY_FILES("libjxl.so", "libjxl.so.0.7"),
                MG_LAZY_FILES("libjxl_threads.so", "libjxl_threads.so.0.7"))

// Two worker threads: enough to help large images without crowding a host that decodes on many threads at once.
#define MG_JXL_THREADS 2
// Exif and XMP boxes larger than this are skipped rather than buffered.
#define MG_JXL_MAX_BOX (16u << 20)

static void fill_info(const JxlBasicInfo *basic, mg_jxl_info *info) {
    info->width = basic->xsize;
    info->height = basic->ysize;
    info->orientation = basic->orientation >= 1 && basic->orientation <= 8 ? (uint32_t)basic->orientation : 1;
    info->bits_per_sample = basic->bits_per_sample;
    info->has_alpha = basic->alpha_bits > 0;
    info->is_animated = basic->have_animation != 0;
    info->loop_count = basic->have_animation ? basic->animation.num_loops : 0;
    info->tps_numerator = basic->animation.tps_numerator;
    info->tps_denominator = basic->animation.tps_denominator;
}

static int check_signature(const uint8_t *data, size_t length, mg_error *err) {
    if (!data || length == 0) return mg_fail(err, MG_ERR_TRUNCATED, "no data");
    switch (p_JxlSignatureCheck(data, length)) {
    case JXL_SIG_CODESTREAM:
    case JXL_SIG_CONTAINER: return MG_OK;
    case JXL_SIG_NOT_ENOUGH_BYTES: return mg_fail(err, MG_ERR_TRUNCATED, "data ends inside the JPEG XL signature");
    default: return mg_fail(err, MG_ERR_CORRUPT, "not a JPEG XL codestream or container");
    }
}

int mg_jxl_probe(const uint8_t *data, size_t length, mg_jxl_info *info, mg_error *err) {
    if (info) memset(info, 0, sizeof *info);
    if (!info) return mg_fail(err, MG_ERR_INVALID_ARGUMENT, "NULL argument");
    if (!mg_lazy_load(&jxl_library, err)) return MG_ERR_UNSUPPORTED;
    int status = check_signature(data, length, err);
    if (status != MG_OK) return status;
    JxlDecoder *decoder = p_JxlDecoderCreate(NULL);
    if (!decoder) return mg_fail(err, MG_ERR_NO_MEMORY, "could not create the libjxl decoder");
    JxlBasicInfo basic;
    if (p_JxlDecoderSubscribeEvents(decoder, JXL_DEC_BASIC_INFO) != JXL_DEC_SUCCESS ||
        p_JxlDecoderSetInput(decoder, data, length) != JXL_DEC_SUCCESS) {
        status = mg_fail(err, MG_ERR_CORRUPT, "libjxl refused the input");
    } else {
        JxlDecoderStatus result = p_JxlDecoderProcessInput(decoder);
        if (result == JXL_DEC_BASIC_INFO && p_JxlDecoderGetBasicInfo(decoder, &basic) == JXL_DEC_SUCCESS)
            fill_info(&basic, info);
        else if (result == JXL_DEC_NEED_MORE_INPUT)
            status = mg_fail(err, MG_ERR_TRUNCATED, "libjxl: the file ends before its basic info does");
        else
            status = mg_fail(err, MG_ERR_CORRUPT, "libjxl: invalid JPEG XL header");
    }
    p_JxlDecoderDestroy(decoder);
    return status;
}

void mg_jxl_image_release(mg_jxl_image *image) {
    if (!image) return;
    if (image->frames)
        for (uint32_t i = 0; i < image->frame_count; i++) free(image->frames[i].pixels);
    free(image->frames);
    free(image->ticks);
    memset(image, 0, sizeof *image);
}

// An Exif or XML box being collected.
typedef struct {
    int kind;           // 0: none, 1: Exif, 2: xml
    uint8_t *bytes;
    size_t capacity;
} box_state;

static void box_finish(JxlDecoder *decoder, box_state *box, mg_image_meta *meta) {
    if (!box->kind) return;
    size_t unused = p_JxlDecoderReleaseBoxBuffer(decoder);
    size_t used = box->bytes && unused <= box->capacity ? box->capacity - unused : 0;
    if (box->kind == 1 && used >= 4 && !meta->exif.bytes) {
        // An Exif box starts with the offset of the TIFF header within the rest of the payload.
        uint32_t offset = (uint32_t)box->bytes[0] << 24 | (uint32_t)box->bytes[1] << 16 |
                          (uint32_t)box->bytes[2] << 8 | box->bytes[3];
        if ((uint64_t)offset + 4 < used) meta->exif = mg_buffer_copy(box->bytes + 4 + offset, used - 4 - offset);
    } else if (box->kind == 2 && used > 0 && !meta->xmp.bytes) {
        meta->xmp = mg_buffer_copy(box->bytes, used);
    }
    free(box->bytes);
    memset(box, 0, sizeof *box);
}

static int box_grow(JxlDecoder *decoder, box_state *box) {
    size_t unused = p_JxlDecoderReleaseBoxBuffer(decoder);
    size_t used = box->capacity - unused;
    size_t capacity = box->capacity ? box->capacity * 2 : 65536;
    if (capacity > MG_JXL_MAX_BOX) return 0;
    uint8_t *bytes = realloc(box->bytes, capacity);
    if (!bytes) return 0;
    box->bytes = bytes;
    box->capacity = capacity;
    return p_JxlDecoderSetBoxBuffer(decoder, bytes + used, capacity - used) == JXL_DEC_SUCCESS;
}

// The colour of the decoded pixels: nothing for plain sRGB (or sRGB-transfer gray), else libjxl's ICC profile.
// An XYB image whose original colour is an ICC profile would come out in linear sRGB (libjxl 0.7 has no CMS to
// reach the profile itself), which 8 bits a sample band badly: such images are asked for in sRGB instead.
static void read_colour(JxlDecoder *decoder, const JxlBasicInfo *basic, mg_image_meta *meta) {
    JxlColorEncoding encoding;
    if (!basic->uses_original_profile &&
        p_JxlDecoderGetColorAsEncodedProfile(decoder, NULL, JXL_COLOR_PROFILE_TARGET_ORIGINAL, &encoding) !=
            JXL_DEC_SUCCESS) {
        p_JxlColorEncodingSetToSRGB(&encoding, basic->num_color_channels == 1 ? JXL_TRUE : JXL_FALSE);
        p_JxlDecoderSetPreferredColorProfile(decoder, &encoding);
    }
    if (p_JxlDecoderGetColorAsEncodedProfile(decoder, NULL, JXL_COLOR_PROFILE_TARGET_DATA, &encoding) ==
            JXL_DEC_SUCCESS &&
        encoding.white_point == JXL_WHITE_POINT_D65 && encoding.transfer_function == JXL_TRANSFER_FUNCTION_SRGB &&
        (encoding.color_space == JXL_COLOR_SPACE_GRAY ||
         (encoding.color_space == JXL_COLOR_SPACE_RGB && encoding.primaries == JXL_PRIMARIES_SRGB)))
        return;
    size_t size = 0;
    if (p_JxlDecoderGetICCProfileSize(decoder, NULL, JXL_COLOR_PROFILE_TARGET_DATA, &size) != JXL_DEC_SUCCESS ||
        size == 0)
        return;
    uint8_t *icc = malloc(size);
    if (!icc) return;
    if (p_JxlDecoderGetColorAsICCProfile(decoder, NULL, JXL_COLOR_PROFILE_TARGET_DATA, icc, size) == JXL_DEC_SUCCESS) {
        meta->icc.bytes = icc;
        meta->icc.length = size;
    } else {
        free(icc);
    }
}

typedef struct {
    JxlDecoder *decoder;
    const mg_limits *limits;
    mg_jxl_image *out;
    uint32_t capacity;      // room in out->frames / out->ticks
    uint8_t *pending;       // the output buffer of the frame being decoded
    uint32_t pending_ticks;
    int pending_is_last;    // the frame being decoded is the codestream's last
    JxlBasicInfo basic;
    uint32_t width, height; // output size (upright unless the orientation is kept)
    int keep_orientation;
} decode_state;

static int begin_frame(decode_state *s, mg_error *err) {
    JxlFrameHeader header;
    if (p_JxlDecoderGetFrameHeader(s->decoder, &header) != JXL_DEC_SUCCESS)
        return mg_fail(err, MG_ERR_CORRUPT, "libjxl: unreadable frame header");
    s->pending_ticks = header.duration;
    s->pending_is_last = header.is_last != 0;
    uint32_t count = s->out->frame_count + 1;
    const mg_limits *limits = s->limits;
    if (limits && limits->max_frames && count > limits->max_frames)
        return mg_fail(err, MG_ERR_TOO_LARGE, "the animation has more than %u frames", limits->max_frames);
    uint64_t total = (uint64_t)s->width * s->height * 4 * count;
    if (limits && limits->max_total_bytes && total > limits->max_total_bytes)
        return mg_fail(err, MG_ERR_TOO_LARGE, "%u frames of %ux%u need %llu bytes, limit is %llu bytes", count,
                       s->width, s->height, (unsigned long long)total, (unsigned long long)limits->max_total_bytes);
    if (count > s->capacity) {
        uint32_t capacity = s->capacity ? s->capacity * 2 : 4;
        mg_bitmap *frames = realloc(s->out->frames, capacity * sizeof *frames);
        if (frames) s->out->frames = frames;
        uint32_t *ticks = realloc(s->out->ticks, capacity * sizeof *ticks);
        if (ticks) s->out->ticks = ticks;
        if (!frames || !ticks) return mg_fail(err, MG_ERR_NO_MEMORY, "could not grow the frame list");
        s->capacity = capacity;
    }
    return MG_OK;
}

static int set_output(decode_state *s, const JxlPixelFormat *format, mg_error *err) {
    size_t size = 0;
    if (p_JxlDecoderImageOutBufferSize(s->decoder, format, &size) != JXL_DEC_SUCCESS ||
        size != (size_t)s->width * s->height * 4)
        return mg_fail(err, MG_ERR_CORRUPT, "libjxl: unexpected output size %zu for %ux%u", size, s->width,
                       s->height);
    free(s->pending);
    s->pending = mg_alloc_pixels(size);
    if (!s->pending) return mg_fail(err, MG_ERR_NO_MEMORY, "could not allocate %zu bytes", size);
    if (p_JxlDecoderSetImageOutBuffer(s->decoder, format, s->pending, size) != JXL_DEC_SUCCESS)
        return mg_fail(err, MG_ERR_CORRUPT, "libjxl refused the output buffer");
    return MG_OK;
}

static int run_decoder(decode_state *s, const mg_limits *limits, int only_first, mg_image_meta *meta,
                       box_state *box, mg_error *err) {
    JxlDecoder *decoder = s->decoder;
    JxlPixelFormat format = {4, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
    int saw_last = 0, status = MG_OK;
    for (;;) {
        JxlDecoderStatus result = p_JxlDecoderProcessInput(decoder);
        switch (result) {
        case JXL_DEC_ERROR:
            return mg_fail(err, MG_ERR_CORRUPT, "libjxl: the codestream is invalid");
        case JXL_DEC_NEED_MORE_INPUT:
            // All input was given: once the last frame is complete this only means "no more boxes".
            if (saw_last) return MG_OK;
            return mg_fail(err, MG_ERR_TRUNCATED, "libjxl: the file ends before its last frame does");
        case JXL_DEC_SUCCESS:
            return MG_OK;
        case JXL_DEC_BASIC_INFO: {
            if (p_JxlDecoderGetBasicInfo(decoder, &s->basic) != JXL_DEC_SUCCESS)
                return mg_fail(err, MG_ERR_CORRUPT, "libjxl: unreadable basic info");
            JxlBasicInfo basic = s->basic;
            fill_info(&basic, &s->out->info);
            status = mg_check_frame_size(err, limits, basic.xsize, basic.ysize, "JPEG XL image");
            if (status != MG_OK) return status;
            int swaps = !s->keep_orientation && basic.orientation >= 5 && basic.orientation <= 8;
            s->width = swaps ? basic.ysize : basic.xsize;
            s->height = swaps ? basic.xsize : basic.ysize;
            meta->bit_depth = basic.bits_per_sample;
            meta->has_alpha = basic.alpha_bits > 0;
            break;
        }
        case JXL_DEC_COLOR_ENCODING:
            read_colour(decoder, &s->basic, meta);
            break;
        case JXL_DEC_FRAME:
            status = begin_frame(s, err);
            if (status != MG_OK) return status;
            break;
        case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
            status = set_output(s, &format, err);
            if (status != MG_OK) return status;
            break;
        case JXL_DEC_FULL_IMAGE: {
            if (!s->pending) return mg_fail(err, MG_ERR_CORRUPT, "libjxl: a frame without an output buffer");
            uint32_t index = s->out->frame_count++;
            s->out->frames[index] = (mg_bitmap){s->pending, s->width, s->height};
            s->out->ticks[index] = s->pending_ticks;
            s->pending = NULL;
            saw_last = s->pending_is_last;
            if (only_first) return MG_OK;
            break;
        }
        case JXL_DEC_BOX: {
            box_finish(decoder, box, meta);
            JxlBoxType type;
            if (p_JxlDecoderGetBoxType(decoder, type, JXL_TRUE) != JXL_DEC_SUCCESS) break;
            if (memcmp(type, "Exif", 4) == 0) box->kind = 1;
            else if (memcmp(type, "xml ", 4) == 0) box->kind = 2;
            if (box->kind && !box_grow(decoder, box)) {
                free(box->bytes);
                memset(box, 0, sizeof *box);
            }
            break;
        }
        case JXL_DEC_BOX_NEED_MORE_OUTPUT:
            if (!box_grow(decoder, box)) {
                // Too large to keep: drop this box and let the decoder skip the rest of it.
                p_JxlDecoderReleaseBoxBuffer(decoder);
                free(box->bytes);
                memset(box, 0, sizeof *box);
            }
            break;
        default:
            break;
        }
    }
}

int mg_jxl_decode(const uint8_t *data, size_t length, const mg_limits *limits, int32_t only_first_frame,
                  int32_t keep_orientation, mg_jxl_image *out, mg_image_meta *meta, mg_error *err) {
    if (out) memset(out, 0, sizeof *out);
    if (meta) memset(meta, 0, sizeof *meta);
    if (!out || !meta) return mg_fail(err, MG_ERR_INVALID_ARGUMENT, "NULL argument");
    if (!mg_lazy_load(&jxl_library, err)) return MG_ERR_UNSUPPORTED;
    int status = check_signature(data, length, err);
    if (status != MG_OK) return status;
    decode_state state = {0};
    state.decoder = p_JxlDecoderCreate(NULL);
    state.limits = limits;
    state.out = out;
    state.keep_orientation = keep_orientation;
    void *runner = p_JxlThreadParallelRunnerCreate(NULL, MG_JXL_THREADS);
    box_state box = {0};
    int events = JXL_DEC_BASIC_INFO | JXL_DEC_COLOR_ENCODING | JXL_DEC_FRAME | JXL_DEC_FULL_IMAGE | JXL_DEC_BOX;
    if (!state.decoder || !runner) {
        status = mg_fail(err, MG_ERR_NO_MEMORY, "could not create the libjxl decoder");
    } else if (p_JxlDecoderSetParallelRunner(state.decoder, p_JxlThreadParallelRunner, runner) != JXL_DEC_SUCCESS ||
               p_JxlDecoderSubscribeEvents(state.decoder, events) != JXL_DEC_SUCCESS ||
               p_JxlDecoderSetDecompressBoxes(state.decoder, JXL_TRUE) != JXL_DEC_SUCCESS ||
               p_JxlDecoderSetKeepOrientation(state.decoder, keep_orientation ? JXL_TRUE : JXL_FALSE) !=
                   JXL_DEC_SUCCESS ||
               p_JxlDecoderSetInput(state.decoder, data, length) != JXL_DEC_SUCCESS) {
        status = mg_fail(err, MG_ERR_CORRUPT, "libjxl refused the decoder settings");
    } else {
        status = run_decoder(&state, limits, only_first_frame, meta, &box, err);
        if (box.kind) box_finish(state.decoder, &box, meta);
    }
    free(box.bytes);
    free(state.pending);
    if (state.decoder) p_JxlDecoderDestroy(state.decoder);
    if (runner) p_JxlThreadParallelRunnerDestroy(runner);
    if (status == MG_OK && out->frame_count == 0)
        status = mg_fail(err, MG_ERR_CORRUPT, "libjxl: the file holds no frame");
    if (status != MG_OK) {
        mg_jxl_image_release(out);
        mg_image_meta_release(meta);
    }
    return status;
}

// MARK: - Encoding

static const char *encoder_error_name(JxlEncoderError error) {
    switch (error) {
    case JXL_ENC_ERR_OK: return "JXL_ENC_ERR_OK";
    case JXL_ENC_ERR_GENERIC: return "JXL_ENC_ERR_GENERIC";
    case JXL_ENC_ERR_OOM: return "JXL_ENC_ERR_OOM";
    case JXL_ENC_ERR_JBRD: return "JXL_ENC_ERR_JBRD";
    case JXL_ENC_ERR_BAD_INPUT: return "JXL_ENC_ERR_BAD_INPUT";
    case JXL_ENC_ERR_NOT_SUPPORTED: return "JXL_ENC_ERR_NOT_SUPPORTED";
    case JXL_ENC_ERR_API_USAGE: return "JXL_ENC_ERR_API_USAGE";
    default: return "unknown JxlEncoderError";
    }
}

static int fail_encoder(JxlEncoder *encoder, mg_error *err, const char *what) {
    return mg_fail(err, MG_ERR_ENCODE, "%s: %s", encoder_error_name(p_JxlEncoderGetError(encoder)), what);
}

static int add_box(JxlEncoder *encoder, const char *type, const uint8_t *prefix, size_t prefix_length,
                   const uint8_t *bytes, size_t length, mg_error *err) {
    uint8_t *payload = malloc(prefix_length + length);
    if (!payload) return mg_fail(err, MG_ERR_NO_MEMORY, "could not allocate a %s box", type);
    memcpy(payload, prefix, prefix_length);
    memcpy(payload + prefix_length, bytes, length);
    JxlBoxType box;
    memcpy(box, type, 4);
    JxlEncoderStatus result = p_JxlEncoderAddBox(encoder, box, payload, prefix_length + length, JXL_FALSE);
    free(payload);
    return result == JXL_ENC_SUCCESS ? MG_OK : fail_encoder(encoder, err, "adding a metadata box failed");
}

static int configure(JxlEncoder *encoder, uint32_t count, uint32_t width, uint32_t height, int has_alpha,
                     const mg_jxl_encode_options *options, mg_error *err) {
    int boxes = (options->exif && options->exif_length) || (options->xmp && options->xmp_length);
    if (boxes && p_JxlEncoderUseBoxes(encoder) != JXL_ENC_SUCCESS) return fail_encoder(encoder, err, "boxes refused");
    JxlBasicInfo basic;
    p_JxlEncoderInitBasicInfo(&basic);
    basic.xsize = width;
    basic.ysize = height;
    basic.bits_per_sample = 8;
    basic.num_color_channels = 3;
    basic.num_extra_channels = has_alpha ? 1 : 0;
    basic.alpha_bits = has_alpha ? 8 : 0;
    // Lossless must keep the samples as given; lossy works in XYB.
    basic.uses_original_profile = options->lossless ? JXL_TRUE : JXL_FALSE;
    if (count > 1) {
        basic.have_animation = JXL_TRUE;
        basic.animation.tps_numerator = 1000;  // one tick per millisecond
        basic.animation.tps_denominator = 1;
        basic.animation.num_loops = options->loop_count;
    }
    if (p_JxlEncoderSetBasicInfo(encoder, &basic) != JXL_ENC_SUCCESS)
        return fail_encoder(encoder, err, "basic info refused (size or channels)");
    if (has_alpha) {
        JxlExtraChannelInfo alpha;
        p_JxlEncoderInitExtraChannelInfo(JXL_CHANNEL_ALPHA, &alpha);
        alpha.bits_per_sample = 8;
        if (p_JxlEncoderSetExtraChannelInfo(encoder, 0, &alpha) != JXL_ENC_SUCCESS)
            return fail_encoder(encoder, err, "alpha channel refused");
    }
    if (options->icc && options->icc_length) {
        if (p_JxlEncoderSetICCProfile(encoder, options->icc, options->icc_length) != JXL_ENC_SUCCESS)
            return fail_encoder(encoder, err, "the ICC profile was refused");
    } else {
        JxlColorEncoding srgb;
        p_JxlColorEncodingSetToSRGB(&srgb, JXL_FALSE);
        if (p_JxlEncoderSetColorEncoding(encoder, &srgb) != JXL_ENC_SUCCESS)
            return fail_encoder(encoder, err, "sRGB colour encoding refused");
    }
    int status = MG_OK;
    static const uint8_t exif_offset[4] = {0, 0, 0, 0};  // the TIFF header follows at once
    if (options->exif && options->exif_length)
        status = add_box(encoder, "Exif", exif_offset, 4, options->exif, options->exif_length, err);
    if (status == MG_OK && options->xmp && options->xmp_length)
        status = add_box(encoder, "xml ", exif_offset, 0, options->xmp, options->xmp_length, err);
    if (boxes) p_JxlEncoderCloseBoxes(encoder);
    return status;
}

static int add_frames(JxlEncoder *encoder, const mg_jxl_frame *frames, uint32_t count, uint32_t width,
                      uint32_t height, int has_alpha, const mg_jxl_encode_options *options, mg_error *err) {
    JxlEncoderFrameSettings *settings = p_JxlEncoderFrameSettingsCreate(encoder, NULL);
    if (!settings) return fail_encoder(encoder, err, "frame settings could not be created");
    if (options->lossless) {
        if (p_JxlEncoderSetFrameLossless(settings, JXL_TRUE) != JXL_ENC_SUCCESS)
            return fail_encoder(encoder, err, "lossless mode refused");
        // Exact round trips include the colour under fully transparent pixels.
        p_JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_KEEP_INVISIBLE, 1);
    } else if (p_JxlEncoderSetFrameDistance(settings, options->distance) != JXL_ENC_SUCCESS) {
        return fail_encoder(encoder, err, "distance refused");
    }
    if (options->effort > 0 &&
        p_JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, options->effort) != JXL_ENC_SUCCESS)
        return fail_encoder(encoder, err, "effort refused");
    uint32_t channels = has_alpha ? 4 : 3;
    JxlPixelFormat format = {channels, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
    size_t pixels = (size_t)width * height;
    uint8_t *rgb = has_alpha ? NULL : malloc(pixels * 3);
    if (!has_alpha && !rgb) return mg_fail(err, MG_ERR_NO_MEMORY, "could not allocate %zu bytes", pixels * 3);
    int status = MG_OK;
    for (uint32_t i = 0; i < count && status == MG_OK; i++) {
        if (count > 1) {
            JxlFrameHeader header;
            p_JxlEncoderInitFrameHeader(&header);
            header.duration = frames[i].duration_ms;
            if (p_JxlEncoderSetFrameHeader(settings, &header) != JXL_ENC_SUCCESS) {
                status = fail_encoder(encoder, err, "frame header refused");
                break;
            }
        }
        const uint8_t *input = frames[i].rgba;
        if (rgb) {
            for (size_t p = 0; p < pixels; p++) memcpy(rgb + p * 3, input + p * 4, 3);
            input = rgb;
        }
        if (p_JxlEncoderAddImageFrame(settings, &format, input, pixels * channels) != JXL_ENC_SUCCESS)
            status = fail_encoder(encoder, err, "a frame was refused");
    }
    free(rgb);
    return status;
}

static int collect_output(JxlEncoder *encoder, mg_buffer *out, mg_error *err) {
    size_t capacity = 65536;
    uint8_t *bytes = malloc(capacity);
    if (!bytes) return mg_fail(err, MG_ERR_NO_MEMORY, "could not allocate the output");
    uint8_t *next = bytes;
    size_t available = capacity;
    JxlEncoderStatus result;
    while ((result = p_JxlEncoderProcessOutput(encoder, &next, &available)) == JXL_ENC_NEED_MORE_OUTPUT) {
        size_t used = (size_t)(next - bytes);
        uint8_t *grown = realloc(bytes, capacity * 2);
        if (!grown) {
            free(bytes);
            return mg_fail(err, MG_ERR_NO_MEMORY, "could not grow the output past %zu bytes", capacity);
        }
        bytes = grown;
        capacity *= 2;
        next = bytes + used;
        available = capacity - used;
    }
    if (result != JXL_ENC_SUCCESS) {
        free(bytes);
        return fail_encoder(encoder, err, "encoding failed");
    }
    out->bytes = bytes;
    out->length = (size_t)(next - bytes);
    return MG_OK;
}

int mg_jxl_encode(const mg_jxl_frame *frames, uint32_t count, uint32_t width, uint32_t height, int32_t has_alpha,
                  const mg_jxl_encode_options *options, mg_buffer *out, mg_error *err) {
    if (out) memset(out, 0, sizeof *out);
    if (!frames || !options || !out) return mg_fail(err, MG_ERR_INVALID_ARGUMENT, "NULL argument");
    if (!mg_lazy_load(&jxl_library, err)) return MG_ERR_UNSUPPORTED;
    if (count == 0) return mg_fail(err, MG_ERR_ENCODE, "no frames to encode");
    if (width == 0 || height == 0) return mg_fail(err, MG_ERR_ENCODE, "cannot encode a %ux%u image", width, height);
    JxlEncoder *encoder = p_JxlEncoderCreate(NULL);
    void *runner = p_JxlThreadParallelRunnerCreate(NULL, MG_JXL_THREADS);
    int status;
    if (!encoder || !runner) {
        status = mg_fail(err, MG_ERR_NO_MEMORY, "could not create the libjxl encoder");
    } else if (p_JxlEncoderSetParallelRunner(encoder, p_JxlThreadParallelRunner, runner) != JXL_ENC_SUCCESS) {
        status = fail_encoder(encoder, err, "parallel runner refused");
    } else {
        status = configure(encoder, count, width, height, has_alpha, options, err);
        if (status == MG_OK) status = add_frames(encoder, frames, count, width, height, has_alpha, options, err);
        if (status == MG_OK) {
            p_JxlEncoderCloseInput(encoder);
            status = collect_output(encoder, out, err);
        }
    }
    if (encoder) p_JxlEncoderDestroy(encoder);
    if (runner) p_JxlThreadParallelRunnerDestroy(runner);
    return status;
}
