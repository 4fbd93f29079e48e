// sched_getaffinity and CPU_COUNT are GNU extensions, which Swift's Glibc module does not declare.
#define _GNU_SOURCE
#include <sched.h>
#include "mg_common.h"

int mg_usable_cpu_count(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    return CPU_COUNT(&set);
}
