#ifndef MAGPIE_MG_FACES_H
#define MAGPIE_MG_FACES_H

#include <stdbool.h>
#include "mg_common.h"

/// A face found by the detector, in the pixels of the grey image it was given.
typedef struct {
    int32_t x;
    int32_t y;
    int32_t width;
    int32_t height;
} mg_face_rect;

/// A loaded face model (one OpenCV cascade classifier). Not for two threads at once.
typedef struct mg_face_detector mg_face_detector;

/// Opens the face detector plugin (libMagpieFaceDetection.so) on the first call; true when it and OpenCV loaded.
/// When not, fills `err` with MG_ERR_UNSUPPORTED and why (no plugin beside the program, OpenCV missing, an old plugin).
/// The plugin is $MAGPIE_FACE_DETECTION_LIBRARY when that is set (only that file); else the one beside the file
/// holding this code (the program, or the test bundle), else one on the library search path.
bool mg_faces_available(mg_error *err);

/// Where the plugin was loaded from ("" until it is).
const char *mg_faces_plugin_path(void);

/// Loads the cascade model at `model_path`; NULL with MG_ERR_UNSUPPORTED (no plugin) or MG_ERR_IO (no model) in `err`.
mg_face_detector *mg_faces_open(const char *model_path, mg_error *err);

/// Finds faces in an 8-bit grey image of `width` × `height` (`stride` bytes per row): up to `capacity` into `faces`,
/// their number into `*count`. `scale_factor` (> 1) and `min_neighbors` are the cascade's; `min_size` the smallest
/// face side looked for, in pixels.
mg_status mg_faces_detect(mg_face_detector *detector, const uint8_t *gray, uint32_t width, uint32_t height,
                          size_t stride, double scale_factor, int min_neighbors, int min_size, mg_face_rect *faces,
                          int capacity, int *count, mg_error *err);

/// Releases a detector (NULL is ignored).
void mg_faces_close(mg_face_detector *detector);

#endif
