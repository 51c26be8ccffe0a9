/* The registry of lattice backends: the one place that knows which are
 * compiled in. */
#include "lattice.h"

#include "../common/backend.h"

static int cpu_available(void) { return 1; }

static const fd_backend backends[] = {
    {"cpu", cpu_available, &lattice_cpu_ops},
    /* The CUDA lattice backend registers here when it exists (issue #5). */
};

#define NBACKENDS (sizeof backends / sizeof *backends)

const char *lattice_backend_list(void)
{
    static char list[128];
    return fd_backend_names(backends, NBACKENDS, list, sizeof list);
}

fd_status lattice_backend_get(const char *name, const struct lattice_ops **ops)
{
    const void *p = NULL;
    FD_TRY(fd_backend_get(backends, NBACKENDS, "lattice", name, &p));
    *ops = p;
    return FD_OK;
}
