// Reading a decoder's input, from memory or from a file. A file is read with pread, which keeps no position: the
// two threads of the 1/8 JPEG decoder read different parts of one descriptor at once.
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

ptrdiff_t mg_input_read(const mg_input *in, uint64_t offset, uint8_t *buffer, size_t count) {
    if (offset >= in->length) return 0;
    if (count > in->length - offset) count = (size_t)(in->length - offset);
    if (in->data) {
        memcpy(buffer, in->data + offset, count);
        return (ptrdiff_t)count;
    }
    size_t done = 0;
    while (done < count) {
        ssize_t got = pread(in->fd, buffer + done, count - done, (off_t)(offset + done));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return -1;
        if (got == 0) break;  // the file shrank since its size was taken
        done += (size_t)got;
    }
    return (ptrdiff_t)done;
}

const uint8_t *mg_input_view(const mg_input *in, uint64_t offset, size_t count, uint8_t *scratch) {
    if (offset > in->length || count > in->length - offset) return NULL;
    if (in->data) return in->data + offset;
    return mg_input_read(in, offset, scratch, count) == (ptrdiff_t)count ? scratch : NULL;
}
