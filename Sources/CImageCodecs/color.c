// Colour conversion to sRGB with Little CMS 2. Transforms are created without lcms's one-pixel cache
// (cmsFLAGS_NOCACHE), which is what makes one transform safe to share between decoding threads.
#include <lcms2.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mg_color.h"
#include "internal.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

typedef struct {
    cmsHTRANSFORM transform;
    int32_t layout;
    // Matrix-shaper fast path (RGB in, matrix-shaper profile): linearise through 256-entry tables, one 3x3 matrix
    // into sRGB's primaries, re-encode through a 4097-entry table. lcms2 2.14 spends 30-50 ns a pixel on the same
    // transform; this is the identical maths (for matrix-shapers the perceptual intent is colorimetric and their
    // black point is zero, so black-point compensation changes nothing) at a few ns a pixel.
    int fast;
    float linear[3][256];
    float matrix[3][3];
    uint8_t encode[4097];
    // Each input channel's share of the output, matrix column times linear value, one (R, G, B, 0) vector per
    // sample value: with SSE2 a pixel is three loads and two adds instead of nine multiplies (the same products,
    // summed in the same order, so the results are identical).
    float share[3][256][4] __attribute__((aligned(16)));
} mg_color_transform_box;

static int invert3(const double m[3][3], double out[3][3]) {
    double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                 + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    if (det > -1e-12 && det < 1e-12) return 0;
    out[0][0] = (m[1][1] * m[2][2] - m[1][2] * m[2][1]) / det;
    out[0][1] = (m[0][2] * m[2][1] - m[0][1] * m[2][2]) / det;
    out[0][2] = (m[0][1] * m[1][2] - m[0][2] * m[1][1]) / det;
    out[1][0] = (m[1][2] * m[2][0] - m[1][0] * m[2][2]) / det;
    out[1][1] = (m[0][0] * m[2][2] - m[0][2] * m[2][0]) / det;
    out[1][2] = (m[0][2] * m[1][0] - m[0][0] * m[1][2]) / det;
    out[2][0] = (m[1][0] * m[2][1] - m[1][1] * m[2][0]) / det;
    out[2][1] = (m[0][1] * m[2][0] - m[0][0] * m[2][1]) / det;
    out[2][2] = (m[0][0] * m[1][1] - m[0][1] * m[1][0]) / det;
    return 1;
}

/// The colorant matrix (columns: red, green, blue XYZ in the D50 PCS) of a matrix-shaper RGB profile.
static int colorants(cmsHPROFILE profile, double m[3][3]) {
    const cmsTagSignature tags[3] = {cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag};
    for (int c = 0; c < 3; c++) {
        const cmsCIEXYZ *xyz = cmsReadTag(profile, tags[c]);
        if (!xyz) return 0;
        m[0][c] = xyz->X;
        m[1][c] = xyz->Y;
        m[2][c] = xyz->Z;
    }
    return 1;
}

/// Fills the fast-path tables for `input` → `srgb`; 0 when either is not a plain RGB matrix-shaper.
static int build_fast_path(mg_color_transform_box *box, cmsHPROFILE input, cmsHPROFILE srgb) {
    if (!cmsIsMatrixShaper(input) || !cmsIsMatrixShaper(srgb) || cmsGetColorSpace(input) != cmsSigRgbData) return 0;
    // For the perceptual intent lcms2 prefers a LUT (A2B0/D2B0) over the matrix and curves: leave those to it.
    if (cmsIsTag(input, cmsSigAToB0Tag) || cmsIsTag(input, cmsSigDToB0Tag)) return 0;
    double source[3][3], target[3][3], inverse[3][3];
    if (!colorants(input, source) || !colorants(srgb, target) || !invert3(target, inverse)) return 0;
    const cmsTagSignature trcs[3] = {cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag};
    for (int c = 0; c < 3; c++) {
        const cmsToneCurve *curve = cmsReadTag(input, trcs[c]);
        if (!curve) return 0;
        for (int v = 0; v < 256; v++) {
            box->linear[c][v] = cmsEvalToneCurveFloat(curve, (cmsFloat32Number)(v / 255.0));
            if (!isfinite(box->linear[c][v])) return 0;
        }
    }
    // A hostile profile (or a cHRM with y = 0) gives lcms2 infinite colorants; its own evaluation clamps, ours
    // must not index tables with NaN, so such profiles stay on lcms2's path.
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            box->matrix[r][c] = (float)(inverse[r][0] * source[0][c] + inverse[r][1] * source[1][c] + inverse[r][2] * source[2][c]);
            if (!isfinite(box->matrix[r][c])) return 0;
        }
    for (int c = 0; c < 3; c++)
        for (int v = 0; v < 256; v++) {
            for (int r = 0; r < 3; r++) box->share[c][v][r] = box->matrix[r][c] * box->linear[c][v];
            box->share[c][v][3] = 0;
        }
    // sRGB's three curves are the same; re-encoding is its inverse.
    const cmsToneCurve *out = cmsReadTag(srgb, cmsSigRedTRCTag);
    cmsToneCurve *reversed = out ? cmsReverseToneCurve(out) : NULL;
    if (!reversed) return 0;
    for (int i = 0; i <= 4096; i++) {
        float v = cmsEvalToneCurveFloat(reversed, (cmsFloat32Number)(i / 4096.0));
        v = v < 0 ? 0 : (v > 1 ? 1 : v);
        box->encode[i] = (uint8_t)(v * 255.0f + 0.5f);
    }
    cmsFreeToneCurve(reversed);
    return 1;
}

static cmsToneCurve *tone_curve(const mg_rgb_space *space) {
    switch (space->transfer) {
    case MG_TRANSFER_SRGB: {
        const cmsFloat64Number p[5] = {2.4, 1.0 / 1.055, 0.055 / 1.055, 1.0 / 12.92, 0.04045};
        return cmsBuildParametricToneCurve(NULL, 4, p);
    }
    case MG_TRANSFER_BT709: {
        const cmsFloat64Number p[5] = {1.0 / 0.45, 1.0 / 1.099, 0.099 / 1.099, 1.0 / 4.5, 0.081};
        return cmsBuildParametricToneCurve(NULL, 4, p);
    }
    case MG_TRANSFER_LINEAR:
        return cmsBuildGamma(NULL, 1.0);
    default:
        return cmsBuildGamma(NULL, space->gamma > 0 ? space->gamma : 2.2);
    }
}

static cmsHPROFILE profile_from_space(const mg_rgb_space *space) {
    cmsCIExyY white = {space->white_x, space->white_y, 1.0};
    cmsCIExyYTRIPLE primaries = {
        {space->red_x, space->red_y, 1.0}, {space->green_x, space->green_y, 1.0}, {space->blue_x, space->blue_y, 1.0}};
    cmsToneCurve *curve = tone_curve(space);
    if (!curve) return NULL;
    cmsToneCurve *curves[3] = {curve, curve, curve};
    cmsHPROFILE profile = cmsCreateRGBProfile(&white, &primaries, curves);
    cmsFreeToneCurve(curve);
    return profile;
}

void *mg_color_transform_create(const uint8_t *icc, size_t icc_length, const mg_rgb_space *space, int32_t layout,
                                mg_error *err) {
    int exact = (layout & MG_COLOR_EXACT_LCMS) != 0;
    layout &= ~MG_COLOR_EXACT_LCMS;
    cmsHPROFILE input = icc ? cmsOpenProfileFromMem(icc, (cmsUInt32Number)icc_length)
                            : (space ? profile_from_space(space) : NULL);
    if (!input) {
        mg_fail(err, MG_ERR_CORRUPT, "the colour profile cannot be read");
        return NULL;
    }
    cmsColorSpaceSignature model = cmsGetColorSpace(input);
    cmsUInt32Number in_format;
    cmsUInt32Number flags = cmsFLAGS_NOCACHE;
    switch (layout) {
    case MG_COLOR_RGBA8:
        in_format = TYPE_RGBA_8;
        flags |= cmsFLAGS_COPY_ALPHA;
        if (model != cmsSigRgbData) goto mismatch;
        break;
    case MG_COLOR_GRAY_IN_RGBA8:
        // One gray sample followed by three bytes lcms skips; alpha is carried over after the transform.
        in_format = COLORSPACE_SH(PT_GRAY) | CHANNELS_SH(1) | BYTES_SH(1) | EXTRA_SH(3);
        if (model != cmsSigGrayData) goto mismatch;
        break;
    case MG_COLOR_CMYK8:
        in_format = TYPE_CMYK_8;
        if (model != cmsSigCmykData) goto mismatch;
        break;
    case MG_COLOR_CMYK8_INVERTED:
        in_format = TYPE_CMYK_8_REV;
        if (model != cmsSigCmykData) goto mismatch;
        break;
    default:
        cmsCloseProfile(input);
        mg_fail(err, MG_ERR_INVALID_ARGUMENT, "unknown pixel layout %d", layout);
        return NULL;
    }
    cmsHPROFILE srgb = cmsCreate_sRGBProfile();
    // RGB plus one extra byte: with COPY_ALPHA lcms copies alpha into it, otherwise it leaves it alone.
    cmsUInt32Number out_format = layout == MG_COLOR_RGBA8 ? TYPE_RGBA_8 : (TYPE_RGB_8 | EXTRA_SH(1));
    cmsHTRANSFORM transform =
        srgb ? cmsCreateTransform(input, in_format, srgb, out_format, INTENT_PERCEPTUAL, flags) : NULL;
    mg_color_transform_box *box = transform ? calloc(1, sizeof *box) : NULL;
    if (box) {
        box->transform = transform;
        box->layout = layout;
        // lcms2 still vets the profile (the transform above); the fast path only replaces its evaluation.
        box->fast = !exact && layout == MG_COLOR_RGBA8 && build_fast_path(box, input, srgb);
    }
    cmsCloseProfile(input);
    if (srgb) cmsCloseProfile(srgb);
    if (!transform) {
        mg_fail(err, MG_ERR_UNSUPPORTED, "lcms2 cannot build a transform from this colour profile");
        return NULL;
    }
    if (!box) {
        cmsDeleteTransform(transform);
        mg_fail(err, MG_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    return box;
mismatch:
    cmsCloseProfile(input);
    mg_fail(err, MG_ERR_UNSUPPORTED, "the colour profile does not describe these samples");
    return NULL;
}

static inline uint8_t encode_channel(const mg_color_transform_box *box, float v) {
    // Written so that NaN also lands on 0.
    if (!(v > 0)) v = 0;
    else if (v > 1) v = 1;
    return box->encode[(int)(v * 4096.0f + 0.5f)];
}

#if defined(__SSE2__)
/// The fast path with one SSE2 vector per pixel (see `share`).
static void apply_fast_sse2(const mg_color_transform_box *box, const uint8_t *input, uint8_t *output, size_t count) {
    const __m128 zero = _mm_setzero_ps(), one = _mm_set1_ps(1.0f), scale = _mm_set1_ps(4096.0f),
                 half = _mm_set1_ps(0.5f);
    const uint8_t *encode = box->encode;
    for (size_t i = 0; i < count; i++) {
        uint32_t pixel;
        memcpy(&pixel, input + i * 4, 4);
        __m128 x = _mm_add_ps(_mm_add_ps(_mm_load_ps(box->share[0][pixel & 0xFF]),
                                         _mm_load_ps(box->share[1][(pixel >> 8) & 0xFF])),
                              _mm_load_ps(box->share[2][(pixel >> 16) & 0xFF]));
        // max(x, 0) answers 0 for NaN, as the scalar clamp does.
        x = _mm_min_ps(_mm_max_ps(x, zero), one);
        __m128i index = _mm_cvttps_epi32(_mm_add_ps(_mm_mul_ps(x, scale), half));
        uint32_t out = (uint32_t)encode[_mm_cvtsi128_si32(index)] |
                       (uint32_t)encode[_mm_extract_epi16(index, 2)] << 8 |
                       (uint32_t)encode[_mm_extract_epi16(index, 4)] << 16 | (pixel & 0xFF000000u);
        memcpy(output + i * 4, &out, 4);
    }
}
#endif

void mg_color_transform_apply(void *transform, const uint8_t *input, uint8_t *output, size_t pixel_count) {
    mg_color_transform_box *box = transform;
    if (box->fast) {
#if defined(__SSE2__)
        apply_fast_sse2(box, input, output, pixel_count);
        return;
#endif
        const float(*m)[3] = box->matrix;
        for (size_t i = 0; i < pixel_count; i++) {
            const uint8_t *p = input + i * 4;
            uint8_t *q = output + i * 4;
            float r = box->linear[0][p[0]], g = box->linear[1][p[1]], b = box->linear[2][p[2]];
            uint8_t a = p[3];
            q[0] = encode_channel(box, m[0][0] * r + m[0][1] * g + m[0][2] * b);
            q[1] = encode_channel(box, m[1][0] * r + m[1][1] * g + m[1][2] * b);
            q[2] = encode_channel(box, m[2][0] * r + m[2][1] * g + m[2][2] * b);
            q[3] = a;
        }
        return;
    }
    const size_t slice = 1 << 20;  // lcms counts pixels in 32 bits
    for (size_t done = 0; done < pixel_count; done += slice) {
        size_t n = pixel_count - done < slice ? pixel_count - done : slice;
        cmsDoTransform(box->transform, input + done * 4, output + done * 4, (cmsUInt32Number)n);
    }
    if (box->layout == MG_COLOR_CMYK8 || box->layout == MG_COLOR_CMYK8_INVERTED) {
        for (size_t i = 0; i < pixel_count; i++) output[i * 4 + 3] = 255;
    } else if (box->layout == MG_COLOR_GRAY_IN_RGBA8 && output != input) {
        // lcms2 leaves the extra byte alone: carry alpha over when not transforming in place.
        for (size_t i = 0; i < pixel_count; i++) output[i * 4 + 3] = input[i * 4 + 3];
    }
}

void mg_color_transform_free(void *transform) {
    mg_color_transform_box *box = transform;
    if (!box) return;
    cmsDeleteTransform(box->transform);
    free(box);
}

int mg_color_profile_from_space(const mg_rgb_space *space, mg_buffer *out, mg_error *err) {
    out->bytes = NULL;
    out->length = 0;
    cmsHPROFILE profile = profile_from_space(space);
    if (!profile) return mg_fail(err, MG_ERR_ENCODE, "lcms2 cannot build a profile for this colour space");
    cmsUInt32Number size = 0;
    if (!cmsSaveProfileToMem(profile, NULL, &size) || size == 0) {
        cmsCloseProfile(profile);
        return mg_fail(err, MG_ERR_ENCODE, "lcms2 cannot serialise the profile");
    }
    out->bytes = malloc(size);
    if (!out->bytes) {
        cmsCloseProfile(profile);
        return mg_fail(err, MG_ERR_NO_MEMORY, "out of memory");
    }
    if (!cmsSaveProfileToMem(profile, out->bytes, &size)) {
        free(out->bytes);
        out->bytes = NULL;
        cmsCloseProfile(profile);
        return mg_fail(err, MG_ERR_ENCODE, "lcms2 cannot serialise the profile");
    }
    out->length = size;
    cmsCloseProfile(profile);
    return MG_OK;
}
