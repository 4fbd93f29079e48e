// Codec libraries opened on first use instead of at process start; not part of the public C API.
//
// Why: linked directly, the wave-2 codecs (libavif, libheif, libjxl, libtiff, librsvg and what they pull in: cairo,
// glib, libxml2, ICU, x265, aom, rav1e, SVT-AV1, ...) are mapped and relocated in every process that uses Magpie, and
// their touched pages are resident before any of them decodes a byte: a JPEG thumbnail worker measured 32.6 MB of RSS
// with them against a ≤ 25 MB target. Opened lazily, a process pays for a library only once it meets that format.
#ifndef MAGPIE_LAZY_LIBRARY_H
#define MAGPIE_LAZY_LIBRARY_H

#include <pthread.h>
#include <stdbool.h>
#include "mg_common.h"

/// One function to resolve: its name and where its address goes.
typedef struct {
    const char *name;
    void **slot;
} mg_lazy_symbol;

/// A set of shared libraries opened together, once per process, and the functions taken from them.
typedef struct {
    /// What the error message calls it ("libavif").
    const char *what;
    /// Per library, the file names to try in order (a NULL-terminated list each): the development symlink, then the
    /// soname. Every library must open.
    const char *const *const *files;
    size_t file_count;
    const mg_lazy_symbol *symbols;
    size_t symbol_count;
    /// Called once after every symbol resolved (a library's own global set-up), or NULL.
    void (*initialize)(void);
    pthread_once_t once;
    /// Set by the one load: true when every library opened and every symbol resolved.
    bool ready;
    char failure[200];
} mg_lazy_library;

/// Opens `library` on the first call (thread-safe) and says whether it is usable; when it is not, fills `err`
/// with MG_ERR_UNSUPPORTED and the reason (a missing library or function).
bool mg_lazy_load(mg_lazy_library *library, mg_error *err);

// For a list `X(name)` of the functions a file calls (the library's header or prototypes first), declares a pointer
// `p_name` of each one's own type and `variable`, the mg_lazy_library that fills them from the files given, each
// MG_LAZY_FILES("libfoo.so", "libfoo.so.N") (the development symlink, then the soname). MG_LAZY_LIBRARY_INITIALIZED
// also names a function to call once the pointers are set.
#define MG_LAZY_POINTER_(name) static __typeof__(&name) p_##name;
#define MG_LAZY_SYMBOL_(name) {#name, (void **)&p_##name},
#define MG_LAZY_FILES(...) (const char *const[]){__VA_ARGS__, NULL}
#define MG_LAZY_LIBRARY(variable, LIST, description, ...)                                                          \
    MG_LAZY_LIBRARY_INITIALIZED(variable, LIST, description, NULL, __VA_ARGS__)
#define MG_LAZY_LIBRARY_INITIALIZED(variable, LIST, description, initializer, ...)                                 \
    LIST(MG_LAZY_POINTER_)                                                                                       \
    static const mg_lazy_symbol variable##_symbols[] = {LIST(MG_LAZY_SYMBOL_)};                                  \
    static const char *const *const variable##_files[] = {__VA_ARGS__};                                          \
    static mg_lazy_library variable = {                                                                          \
        .what = description, .files = variable##_files,                                                          \
        .file_count = sizeof(variable##_files) / sizeof(variable##_files[0]), .symbols = variable##_symbols,      \
        .symbol_count = sizeof(variable##_symbols) / sizeof(variable##_symbols[0]), .initialize = initializer,   \
        .once = PTHREAD_ONCE_INIT,                                                                               \
    };

#endif
