#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "mg_common.h"
#include "internal.h"

void mg_free(void *pointer) { free(pointer); }

int mg_fail(mg_error *err, int status, const char *format, ...) {
    if (err) {
        err->status = status;
        va_list args;
        va_start(args, format);
        vsnprintf(err->message, sizeof err->message, format, args);
        va_end(args);
    }
    return status;
}

int mg_check_frame_size(mg_error *err, const mg_limits *limits, uint64_t width, uint64_t height,
                        const char *what) {
    if (width == 0 || height == 0)
        return mg_fail(err, MG_ERR_CORRUPT, "%s has zero size (%llux%llu)", what,
                       (unsigned long long)width, (unsigned long long)height);
    uint64_t pixels = width * height;
    if (limits && limits->max_pixels && pixels > limits->max_pixels)
        return mg_fail(err, MG_ERR_TOO_LARGE, "%s is %llux%llu (%llu pixels), limit is %llu pixels", what,
                       (unsigned long long)width, (unsigned long long)height, (unsigned long long)pixels,
                       (unsigned long long)limits->max_pixels);
    if (limits && limits->max_total_bytes && pixels * 4 > limits->max_total_bytes)
        return mg_fail(err, MG_ERR_TOO_LARGE, "%s needs %llu bytes, limit is %llu bytes", what,
                       (unsigned long long)(pixels * 4), (unsigned long long)limits->max_total_bytes);
    return MG_OK;
}
