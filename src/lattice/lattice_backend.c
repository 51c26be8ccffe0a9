/* The registry of lattice backends: the one place that knows which are
 * compiled in. */
#include "lattice.h"

#include "../common/backend.h"
#include "version.h" /* FD_HAVE_CUDA */

static int cpu_available(void) { return 1; }
#if FD_HAVE_CUDA
static int cuda_available(void) { return lattice_cuda_ops.available(); }
#endif

static const fd_backend backends[] = {
    {"cpu", cpu_available, &lattice_cpu_ops},
#if FD_HAVE_CUDA
    {"cuda", cuda_available, &lattice_cuda_ops},
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
    const void *p = NULL;
    FD_TRY(fd_backend_get(backends, NBACKENDS, "lattice", name, &p));
    *ops = p;
    return FD_OK;
}
