// A colour conversion that follows a decoder down the image: the decoder reports each band of rows it has
// finished, and a second thread converts bands while the decoder works on the next ones. Converting a 13 MP
// photo to sRGB costs about as much as libjpeg-turbo's decode of it; run afterwards it nearly doubled the time,
// run beside the decode it adds only the last band. The rows are also converted while they are still in cache.
#include <pthread.h>
#include <stdlib.h>
#include "mg_color.h"
#include "internal.h"

struct mg_color_stream {
    void *transform;
    uint8_t *pixels;
    size_t stride;
    uint32_t width;
    int threaded;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    // Guarded by `lock`: rows [0, ready) are final, rows [0, taken) are converted or being converted (claimed a
    // band at a time), and `closing` says no more rows will come.
    uint32_t ready;
    uint32_t taken;
    int closing;
};

static void convert_rows(const mg_color_stream *s, uint32_t from, uint32_t to) {
    if (to <= from) return;
    uint8_t *start = s->pixels + s->stride * from;
    mg_color_transform_apply(s->transform, start, start, (size_t)s->width * (to - from));
}

// Rows claimed at a time: small enough that at the end both threads share what is left evenly, large enough
// that the lock is taken rarely (32 rows of a 4000-pixel-wide photo are about 0.4 ms of work).
static uint32_t claim_rows(const mg_color_stream *s) {
    uint32_t rows = (uint32_t)((1u << 17) / (s->width ? s->width : 1));
    return rows < 1 ? 1 : rows;
}

/// Converts bands of final rows until none is left; with `until_closed`, also waits for more until the stream is
/// closing. Called with the lock held; returns with it held.
static void convert_claims(mg_color_stream *s, int until_closed) {
    const uint32_t most = claim_rows(s);
    for (;;) {
        while (until_closed && s->taken == s->ready && !s->closing) pthread_cond_wait(&s->wake, &s->lock);
        if (s->taken == s->ready) return;
        uint32_t from = s->taken, to = s->ready - from > most ? from + most : s->ready;
        s->taken = to;
        pthread_mutex_unlock(&s->lock);
        convert_rows(s, from, to);
        pthread_mutex_lock(&s->lock);
    }
}

static void *follow(void *argument) {
    mg_color_stream *s = argument;
    pthread_mutex_lock(&s->lock);
    convert_claims(s, 1);
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

mg_color_stream *mg_color_stream_start(void *transform, uint8_t *pixels, uint32_t width, uint32_t height,
                                       int may_thread) {
    mg_color_stream *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->transform = transform;
    s->pixels = pixels;
    s->width = width;
    s->stride = (size_t)width * 4;
    // Below about a megapixel the conversion takes under 3 ms: not worth a thread.
    if (may_thread && (uint64_t)width * height >= (1u << 20) && pthread_mutex_init(&s->lock, NULL) == 0) {
        if (pthread_cond_init(&s->wake, NULL) == 0) {
            if (pthread_create(&s->thread, NULL, follow, s) == 0) {
                s->threaded = 1;
            } else {
                pthread_cond_destroy(&s->wake);
                pthread_mutex_destroy(&s->lock);
            }
        } else {
            pthread_mutex_destroy(&s->lock);
        }
    }
    return s;
}

void mg_color_stream_rows_ready(mg_color_stream *s, uint32_t first, uint32_t end) {
    if (!s->threaded) {
        convert_rows(s, first, end);
        return;
    }
    const uint32_t band = claim_rows(s);
    pthread_mutex_lock(&s->lock);
    s->ready = end;
    pthread_cond_signal(&s->wake);
    // The second thread has fallen behind (its core is busy, or converting is slower than decoding here): the
    // decoder converts the oldest band itself, so that little is left when the decoding ends.
    uint32_t from = s->taken, to = from;
    if (s->ready - from > 8 * band) s->taken = to = from + band;
    pthread_mutex_unlock(&s->lock);
    convert_rows(s, from, to);
}

/// Stops the second thread; with `finish`, the rows not converted yet are shared by both threads first.
static void stop(mg_color_stream *s, int finish) {
    if (s->threaded) {
        pthread_mutex_lock(&s->lock);
        if (!finish) s->ready = s->taken;  // nothing more for the second thread to take
        s->closing = 1;
        pthread_cond_signal(&s->wake);
        if (finish) convert_claims(s, 0);
        pthread_mutex_unlock(&s->lock);
        pthread_join(s->thread, NULL);
        pthread_cond_destroy(&s->wake);
        pthread_mutex_destroy(&s->lock);
    }
    free(s);
}

void mg_color_stream_finish(mg_color_stream *s) {
    if (s) stop(s, 1);
}

void mg_color_stream_abandon(mg_color_stream *s) {
    if (s) stop(s, 0);
}
