// The face detector: a plugin (Sources/CFaceDetection, built as libMagpieFaceDetection.so) opened on first use, as the
// wave-2 codecs are (lazy_library.h says why: nothing of OpenCV is mapped in a process that never smart-crops). Not
// linked: OpenCV is C++ only, and a missing OpenCV or plugin must leave Magpie working, without faces.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "mg_faces.h"

// The plugin's ABI, as Sources/CFaceDetection/include/mg_face_plugin.h declares it (that header is the other target's;
// these prototypes must match it, which mg_face_plugin_abi's number vouches for).
enum { FACE_PLUGIN_ABI = 1 };
_Static_assert(sizeof(mg_face_rect) == 4 * sizeof(int32_t), "mg_face_rect is the plugin's (x, y, width, height) quadruple");
typedef int (*abi_fn)(void);
typedef void *(*open_fn)(const char *, char *, size_t);
typedef int (*detect_fn)(void *, const uint8_t *, int, int, size_t, double, int, int, int32_t *, int, int *, char *,
                         size_t);
typedef void (*close_fn)(void *);

static const char plugin_file[] = "libMagpieFaceDetection.so";
static pthread_once_t plugin_once = PTHREAD_ONCE_INIT;
static bool plugin_ready;
static char plugin_failure[400];
static char plugin_path[PATH_MAX];
static open_fn p_open;
static detect_fn p_detect;
static close_fn p_close;

struct mg_face_detector {
    void *plugin_detector;
};

// Tries one file; on failure keeps dlerror's reason (the first one's, which names the file the user set or built).
static void *try_open(const char *path, char *reason, size_t reason_size) {
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle && reason[0] == 0) snprintf(reason, reason_size, "%s", dlerror());
    if (handle) snprintf(plugin_path, sizeof plugin_path, "%s", path);
    return handle;
}

static void load_plugin(void) {
    char reason[300] = {0};
    void *handle = NULL;
    const char *configured = getenv("MAGPIE_FACE_DETECTION_LIBRARY");
    // A configured path is the only one tried: an operator who names a plugin (or a missing file, to turn faces off)
    // never gets another by surprise.
    if (configured && configured[0]) {
        handle = try_open(configured, reason, sizeof reason);
    } else {
        // Beside the program or test bundle this code is linked into: where `swift build` puts the plugin.
        Dl_info info;
        if (dladdr((void *)&load_plugin, &info) && info.dli_fname) {
            const char *slash = strrchr(info.dli_fname, '/');
            if (slash) {
                char path[PATH_MAX];
                int length = snprintf(path, sizeof path, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname,
                                      plugin_file);
                if (length > 0 && (size_t)length < sizeof path) handle = try_open(path, reason, sizeof reason);
            }
        }
        if (!handle) handle = try_open(plugin_file, reason, sizeof reason);
    }
    if (!handle) {
        snprintf(plugin_failure, sizeof plugin_failure, "face detection is not available: %s", reason);
        return;
    }
    abi_fn abi = (abi_fn)dlsym(handle, "mg_face_plugin_abi");
    p_open = (open_fn)dlsym(handle, "mg_face_plugin_open");
    p_detect = (detect_fn)dlsym(handle, "mg_face_plugin_detect");
    p_close = (close_fn)dlsym(handle, "mg_face_plugin_close");
    if (!abi || !p_open || !p_detect || !p_close) {
        snprintf(plugin_failure, sizeof plugin_failure, "face detection is not available: %s lacks the plugin's functions",
                 plugin_path);
        return;
    }
    if (abi() != FACE_PLUGIN_ABI) {
        snprintf(plugin_failure, sizeof plugin_failure,
                 "face detection is not available: %s speaks plugin ABI %d, this build %d", plugin_path, abi(),
                 FACE_PLUGIN_ABI);
        return;
    }
    // The handle stays open for the life of the process, as the codec libraries' do.
    plugin_ready = true;
}

bool mg_faces_available(mg_error *err) {
    pthread_once(&plugin_once, load_plugin);
    if (!plugin_ready) mg_fail(err, MG_ERR_UNSUPPORTED, "%s", plugin_failure);
    return plugin_ready;
}

const char *mg_faces_plugin_path(void) {
    pthread_once(&plugin_once, load_plugin);
    return plugin_ready ? plugin_path : "";
}

mg_face_detector *mg_faces_open(const char *model_path, mg_error *err) {
    if (!mg_faces_available(err)) return NULL;
    mg_face_detector *detector = calloc(1, sizeof *detector);
    if (!detector) {
        mg_fail(err, MG_ERR_NO_MEMORY, "face detector: out of memory");
        return NULL;
    }
    char message[200] = {0};
    detector->plugin_detector = p_open(model_path, message, sizeof message);
    if (!detector->plugin_detector) {
        free(detector);
        mg_fail(err, MG_ERR_IO, "%s", message[0] ? message : "the face model could not be loaded");
        return NULL;
    }
    return detector;
}

mg_status mg_faces_detect(mg_face_detector *detector, const uint8_t *gray, uint32_t width, uint32_t height,
                          size_t stride, double scale_factor, int min_neighbors, int min_size, mg_face_rect *faces,
                          int capacity, int *count, mg_error *err) {
    if (count) *count = 0;
    if (!detector || !gray || !faces || !count || width == 0 || height == 0 || width > INT_MAX || height > INT_MAX ||
        capacity < 0) {
        return mg_fail(err, MG_ERR_INVALID_ARGUMENT, "face detection: invalid argument");
    }
    char message[200] = {0};
    // mg_face_rect is four int32_t in the plugin's quadruple order, so its array is the plugin's rects array.
    int status = p_detect(detector->plugin_detector, gray, (int)width, (int)height, stride, scale_factor, min_neighbors,
                          min_size, (int32_t *)faces, capacity, count, message, sizeof message);
    if (status != 0) return mg_fail(err, MG_ERR_CORRUPT, "%s", message[0] ? message : "face detection failed");
    return MG_OK;
}

void mg_faces_close(mg_face_detector *detector) {
    if (!detector) return;
    if (detector->plugin_detector) p_close(detector->plugin_detector);
    free(detector);
}
