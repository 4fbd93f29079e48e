#include "mg_allocator.h"

// jemalloc reads this variable once, when it starts; MALLOC_CONF in the environment is applied after it, so an
// operator can still change any option.
// - background_thread: a thread of jemalloc's own hands freed pages back on time, also while no request allocates;
// - dirty_decay_ms 2000, muzzy_decay_ms 0: within about 2 s, and at once rather than as "muzzy" pages that count
//   until the kernel takes them back;
// - narenas 2: one arena per core rather than four, so space one request freed serves the next on any thread.
// Measured together on `magpie serve` (scripts/bench-serve, docs/BENCHMARKS.md › Analysis › Wave 2 part 7): flat RSS
// through a mixed soak, like jemalloc's defaults (10 s decays, no background thread, eight arenas here), with a peak
// 10 MiB lower than theirs.
const char *malloc_conf = "background_thread:true,dirty_decay_ms:2000,muzzy_decay_ms:0,narenas:2";

const char *mg_allocator_settings(void) { return malloc_conf; }
