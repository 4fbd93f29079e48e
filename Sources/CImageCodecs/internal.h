// Helpers shared by the codec wrappers; not part of the public C API.
#ifndef MAGPIE_INTERNAL_H
#define MAGPIE_INTERNAL_H

#include "mg_common.h"

/// Fills `err` (when not NULL) and returns `status`.
int mg_fail(mg_error *err, int status, const char *format, ...) __attribute__((format(printf, 3, 4)));

/// MG_OK, or MG_ERR_TOO_LARGE / MG_ERR_CORRUPT with a message, for a frame of
/// width x height checked against `limits` before its pixels are allocated.
int mg_check_frame_size(mg_error *err, const mg_limits *limits, uint64_t width, uint64_t height,
                        const char *what);

/// MG_OK, or an error when a derived image (grid or overlay) of a HEIF file declares a canvas over `limits`, or
/// cannot be described (heif_derived.c).
int mg_heif_check_derived(const uint8_t *data, size_t length, const mg_limits *limits, mg_error *err);

#endif
