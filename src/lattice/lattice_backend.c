/* The registry of lattice backends: the one place that knows which are
 * compiled in. */
#include "lattice.h"

#include <stdio.h>
#include <string.h>

static const struct lattice_ops *const backends[] = {
    &lattice_cpu_ops,
    /* The CUDA lattice backend registers here when it exists (issue #5). */
};

#define NBACKENDS (sizeof backends / sizeof *backends)

const char *lattice_backend_list(void)
{
    /* Derived from the table, so it cannot drift from what is built. */
    static char list[128];
    if (!list[0])
        for (size_t i = 0; i < NBACKENDS; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", backends[i]->name);
    return list;
}

fd_status lattice_backend_get(const char *name, const struct lattice_ops **ops)
{
    if (!strcmp(name, "auto")) {
        /* Later entries are faster when they can run. */
        for (size_t i = NBACKENDS; i-- > 0;)
            if (backends[i]->available()) {
                *ops = backends[i];
                return FD_OK;
            }
    }
    for (size_t i = 0; i < NBACKENDS; i++)
        if (!strcmp(name, backends[i]->name)) {
            if (!backends[i]->available())
                return fd_fail(FD_ERR_UNAVAILABLE, "backend '%s' cannot run here (no usable device)", name);
            *ops = backends[i];
            return FD_OK;
        }
    return fd_fail(FD_ERR_UNAVAILABLE, "backend '%s' is not available for lattice in this build (available: %s)",
                   name, lattice_backend_list());
}
