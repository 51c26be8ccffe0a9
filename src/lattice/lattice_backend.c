/* The registry of lattice backends: the one place that knows which are
 * compiled in. */
#include "lattice.h"

#include "version.h"

#include <string.h>

static const struct lattice_ops *const backends[] = {
    &lattice_cpu_ops,
    /* The CUDA lattice backend registers here when it exists (issue #5). */
};

#define NBACKENDS (sizeof backends / sizeof *backends)

const char *lattice_backend_list(void) { return "cpu"; }

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
