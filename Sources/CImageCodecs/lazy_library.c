#include <dlfcn.h>
#include <stdio.h>
#include "internal.h"
#include "lazy_library.h"

// pthread_once takes no argument: the library being loaded is handed over in a thread-local.
static _Thread_local mg_lazy_library *loading;

static void load_once(void) {
    mg_lazy_library *library = loading;
    enum { MAX_FILES = 8 };
    void *handles[MAX_FILES] = {0};
    size_t opened = 0;
    if (library->file_count > MAX_FILES) {
        snprintf(library->failure, sizeof library->failure, "%s: more than %d libraries to open", library->what,
                 MAX_FILES);
        return;
    }
    for (size_t index = 0; index < library->file_count; index++) {
        const char *const *names = library->files[index];
        void *handle = NULL;
        for (size_t name = 0; names[name] && !handle; name++) {
            // RTLD_LOCAL: its symbols stay out of the global scope, so nothing else binds to them by accident.
            handle = dlopen(names[name], RTLD_NOW | RTLD_LOCAL);
        }
        if (!handle) {
            // dlerror() describes the last name tried.
            snprintf(library->failure, sizeof library->failure, "%s is not available: no %s could be opened (%s)",
                     library->what, names[0], dlerror());
            return;
        }
        handles[opened++] = handle;
    }
    for (size_t index = 0; index < library->symbol_count; index++) {
        void *address = NULL;
        // dlsym on a handle also searches that library's dependencies (cairo's functions through librsvg's handle).
        for (size_t handle = 0; handle < opened && !address; handle++) {
            address = dlsym(handles[handle], library->symbols[index].name);
        }
        if (!address) {
            snprintf(library->failure, sizeof library->failure, "%s is not available: it has no function %s",
                     library->what, library->symbols[index].name);
            return;
        }
        *library->symbols[index].slot = address;
    }
    if (library->initialize) library->initialize();
    // The handles stay open for the life of the process: decoders may run at any time.
    library->ready = true;
}

bool mg_lazy_load(mg_lazy_library *library, mg_error *err) {
    loading = library;
    pthread_once(&library->once, load_once);
    loading = NULL;
    if (!library->ready) mg_fail(err, MG_ERR_UNSUPPORTED, "%s", library->failure);
    return library->ready;
}
