// The face detector plugin's C ABI: what Sources/CImageCodecs/faces.c finds with dlsym in libMagpieFaceDetection.so.
// Plain C types only, so the loader needs no C++ and no OpenCV header; faces.c declares the same prototypes for its
// pointers and checks mg_face_plugin_abi() before using any other, so a plugin from another build is refused, not
// called with the wrong arguments.
#ifndef MAGPIE_MG_FACE_PLUGIN_H
#define MAGPIE_MG_FACE_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The ABI this plugin speaks; the loader refuses any other.
#define MG_FACE_PLUGIN_ABI 1

/// Returns MG_FACE_PLUGIN_ABI.
int mg_face_plugin_abi(void);

/// Loads the cascade classifier model at `model_path` (an OpenCV cascade XML file). Returns NULL and a reason in
/// `message` when the file is missing, unreadable or not a cascade.
void *mg_face_plugin_open(const char *model_path, char *message, size_t message_size);

/// Finds faces in an 8-bit grey image (`stride` bytes per row) and writes up to `capacity` rectangles as
/// (x, y, width, height) quadruples into `rects`, largest detections as the classifier orders them; `*count` is how
/// many it wrote. `scale_factor` and `min_neighbors` are the classifier's; faces smaller than `min_size` pixels are
/// not looked for. Returns 0, or -1 with a reason in `message`. One detector must not be used by two threads at once.
int mg_face_plugin_detect(void *detector, const uint8_t *gray, int width, int height, size_t stride, double scale_factor,
                          int min_neighbors, int min_size, int32_t *rects, int capacity, int *count, char *message,
                          size_t message_size);

/// Releases a detector from mg_face_plugin_open (NULL is ignored).
void mg_face_plugin_close(void *detector);

#ifdef __cplusplus
}
#endif

#endif
