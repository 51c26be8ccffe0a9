/* The registry of lattice backends: the one place that knows which are
 * compiled in. */
#include "lattice.h"

#include "../common/backend.h"
#include "version.h" /* FD_HAVE_CUDA */

/* The dev part of each backend's table (common/backend.h): a workload's
 * ops start with it, so each entry also points to the whole table. */
static const fd_device_ops *const backends[] = {
    &lattice_cpu_ops.dev,
#if FD_HAVE_CUDA
    &lattice_cuda_ops.dev,
#endif
};

#define NBACKENDS (sizeof backends / sizeof *backends)

const char *lattice_backend_list(void)
{
    static char list[128];
    return fd_backend_names(backends, NBACKENDS, list, sizeof list);
}

fd_status lattice_backend_get(const char *name, const struct lattice_ops **ops)
{
    const fd_device_ops *dev = NULL;
    FD_TRY(fd_backend_get(backends, NBACKENDS, "lattice", name, &dev));
    *ops = (const struct lattice_ops *)dev; /* dev is the table's first member */
    return FD_OK;
}
