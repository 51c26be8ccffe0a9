/* Choosing a backend by name at run time: each workload keeps a table of
 * the backends compiled in (cpu first, faster ones after) and asks here
 * for "cpu", "cuda" or "auto" (the last one that can run). */
#ifndef FD_BACKEND_H
#define FD_BACKEND_H

#include "status.h"

#include <stddef.h>

typedef struct fd_backend {
    const char *name;
    int (*available)(void);   /* 1 when it can run here (built in, device present) */
    const void *ops;          /* the workload's table of functions */
} fd_backend;

/* *ops = the chosen backend's ops.  FD_ERR_UNAVAILABLE naming the built
 * backends when name is unknown, or when that backend cannot run here. */
fd_status fd_backend_get(const fd_backend *table, size_t n, const char *workload, const char *name,
                         const void **ops);
/* The name a command uses when the user gives none: $FD_BACKEND when set,
 * else "auto". */
const char *fd_backend_default(void);
/* "cpu, cuda": the names in the table, into buf. */
const char *fd_backend_names(const fd_backend *table, size_t n, char *buf, size_t cap);

#endif
