// Colour conversion to sRGB with Little CMS 2. Transforms are created without lcms's one-pixel cache
// (cmsFLAGS_NOCACHE), which is what makes one transform safe to share between decoding threads.
#include <lcms2.h>
#include <stdlib.h>
#include <string.h>
#include "mg_color.h"
#include "internal.h"

typedef struct {
    cmsHTRANSFORM transform;
    int32_t layout;
} mg_color_transform_box;

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
        // One gray sample followed by three bytes lcms skips; the output keeps the alpha byte (written below).
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
    cmsCloseProfile(input);
    if (srgb) cmsCloseProfile(srgb);
    if (!transform) {
        mg_fail(err, MG_ERR_UNSUPPORTED, "lcms2 cannot build a transform from this colour profile");
        return NULL;
    }
    mg_color_transform_box *box = malloc(sizeof *box);
    if (!box) {
        cmsDeleteTransform(transform);
        mg_fail(err, MG_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    box->transform = transform;
    box->layout = layout;
    return box;
mismatch:
    cmsCloseProfile(input);
    mg_fail(err, MG_ERR_UNSUPPORTED, "the colour profile does not describe these samples");
    return NULL;
}

void mg_color_transform_apply(void *transform, const uint8_t *input, uint8_t *output, size_t pixel_count) {
    mg_color_transform_box *box = transform;
    const size_t slice = 1 << 20;  // lcms counts pixels in 32 bits
    for (size_t done = 0; done < pixel_count; done += slice) {
        size_t n = pixel_count - done < slice ? pixel_count - done : slice;
        cmsDoTransform(box->transform, input + done * 4, output + done * 4, (cmsUInt32Number)n);
    }
    if (box->layout == MG_COLOR_CMYK8 || box->layout == MG_COLOR_CMYK8_INVERTED) {
        for (size_t i = 0; i < pixel_count; i++) output[i * 4 + 3] = 255;
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
