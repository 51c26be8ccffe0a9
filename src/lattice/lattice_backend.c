/* SPDX-License-Identifier: BSD-3-Clause */
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

FD_BACKEND_REGISTRY(lattice, struct lattice_ops)

const struct lattice_ops *lattice_backend_fastest(void)
{
    return (const struct lattice_ops *)backends[sizeof backends / sizeof *backends - 1];
}

fd_status lattice_backend_find(const char *name, const struct lattice_ops **ops)
{
    const fd_device_ops *dev = NULL;
    FD_TRY(fd_backend_find(backends, sizeof backends / sizeof *backends, "lattice", name, &dev));
    *ops = (const struct lattice_ops *)dev;
    return FD_OK;
}
