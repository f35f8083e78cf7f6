#ifndef LS_MEMORY_TRIM_H
#define LS_MEMORY_TRIM_H

#include <malloc.h>

/// Gives the pages free in every malloc arena back to the system (glibc's malloc_trim(0),
/// which Swift's Glibc module does not import): after the registry's one-time load, what the
/// rows it read left free. Returns 1 when memory was released.
static inline int ls_return_free_memory(void) { return malloc_trim(0); }

#endif
