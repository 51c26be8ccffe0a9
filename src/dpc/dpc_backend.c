/* The registry of dpc backends: the one place that knows which are built. */
#include "dpc_backend.h"

#include "../common/backend.h"

static int cpu_available(void) { return 1; }

static const struct dpc_ops dpc_cpu_ops = {"cpu", dpc_rho_rows, dpc_delta_rows};

static const fd_backend backends[] = {
    {"cpu", cpu_available, &dpc_cpu_ops},
};

fd_status dpc_backend_get(const char *name, const struct dpc_ops **ops)
{
    const void *p = NULL;
    FD_TRY(fd_backend_get(backends, sizeof backends / sizeof *backends, "dpc", name, &p));
    *ops = p;
    return FD_OK;
}
