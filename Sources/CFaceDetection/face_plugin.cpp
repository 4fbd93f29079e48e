// OpenCV's cascade classifier (the Haar model thumbor's face detector uses) behind the plain C ABI of
// mg_face_plugin.h. Built as its own shared library, libMagpieFaceDetection.so, which the codec layer opens on first
// use: OpenCV and what it pulls in (objdetect, dnn, protobuf, TBB) are mapped only in a process that smart-crops, and
// a machine without OpenCV still runs Magpie, without faces. Every OpenCV call is inside a try: its errors are C++
// exceptions, and none may cross into C or Swift.
#include "mg_face_plugin.h"

#include <cstdio>
#include <exception>
#include <new>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/objdetect.hpp>

namespace {

void describe(char *message, size_t size, const char *what, const char *detail) {
    if (message && size > 0) std::snprintf(message, size, "%s: %s", what, detail);
}

struct Detector {
    cv::CascadeClassifier classifier;
};

}  // namespace

extern "C" int mg_face_plugin_abi(void) { return MG_FACE_PLUGIN_ABI; }

extern "C" void *mg_face_plugin_open(const char *model_path, char *message, size_t message_size) {
    if (!model_path) {
        describe(message, message_size, "face model", "no path");
        return nullptr;
    }
    try {
        // One thread per detection: a 256-pixel copy takes milliseconds, and the callers (a server's workers) already
        // keep every core busy, so OpenCV's own pool would add hand-offs, not speed. Process-wide; set before any use.
        static const bool single_threaded = [] {
            cv::setNumThreads(1);
            return true;
        }();
        (void)single_threaded;
        auto *detector = new Detector();
        if (!detector->classifier.load(model_path) || detector->classifier.empty()) {
            delete detector;
            describe(message, message_size, model_path, "not a readable OpenCV cascade file");
            return nullptr;
        }
        return detector;
    } catch (const cv::Exception &error) {
        describe(message, message_size, model_path, error.what());
    } catch (const std::bad_alloc &) {
        describe(message, message_size, model_path, "out of memory");
    } catch (const std::exception &error) {
        describe(message, message_size, model_path, error.what());
    } catch (...) {
        describe(message, message_size, model_path, "unknown error");
    }
    return nullptr;
}

extern "C" int mg_face_plugin_detect(void *opaque, const uint8_t *gray, int width, int height, size_t stride,
                                     double scale_factor, int min_neighbors, int min_size, int32_t *rects,
                                     int capacity, int *count, char *message, size_t message_size) {
    if (count) *count = 0;
    if (!opaque || !gray || width <= 0 || height <= 0 || stride < static_cast<size_t>(width) || !rects ||
        capacity < 0 || !count || scale_factor <= 1.0 || min_neighbors < 0 || min_size < 1) {
        describe(message, message_size, "face detection", "invalid argument");
        return -1;
    }
    try {
        auto *detector = static_cast<Detector *>(opaque);
        // A header over the caller's pixels: OpenCV reads them in place and never writes or frees them.
        const cv::Mat image(height, width, CV_8UC1, const_cast<uint8_t *>(gray), stride);
        std::vector<cv::Rect> faces;
        detector->classifier.detectMultiScale(image, faces, scale_factor, min_neighbors, 0,
                                              cv::Size(min_size, min_size));
        int written = 0;
        for (const cv::Rect &face : faces) {
            if (written == capacity) break;
            rects[written * 4 + 0] = face.x;
            rects[written * 4 + 1] = face.y;
            rects[written * 4 + 2] = face.width;
            rects[written * 4 + 3] = face.height;
            written++;
        }
        *count = written;
        return 0;
    } catch (const cv::Exception &error) {
        describe(message, message_size, "face detection", error.what());
    } catch (const std::bad_alloc &) {
        describe(message, message_size, "face detection", "out of memory");
    } catch (const std::exception &error) {
        describe(message, message_size, "face detection", error.what());
    } catch (...) {
        describe(message, message_size, "face detection", "unknown error");
    }
    return -1;
}

extern "C" void mg_face_plugin_close(void *detector) { delete static_cast<Detector *>(detector); }
