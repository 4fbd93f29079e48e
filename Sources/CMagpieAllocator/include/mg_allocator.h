// The allocator settings of the `magpie` executable, which links jemalloc (Package.swift says why).
#ifndef MAGPIE_ALLOCATOR_H
#define MAGPIE_ALLOCATOR_H

/// jemalloc's options as this executable sets them (`malloc_conf`); MALLOC_CONF in the environment overrides each.
const char *mg_allocator_settings(void);

#endif
