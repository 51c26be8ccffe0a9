/* The registry of spearman backends: the one place that knows which are
 * compiled in. */
#include "spearman_backend.h"

#include "../common/backend.h"

static int cpu_available(void) { return 1; }

static const struct spearman_ops cpu_ops = {"cpu", spearman_tile};

static const fd_backend backends[] = {
    {"cpu", cpu_available, &cpu_ops},
    /* The CUDA spearman backend (int8 tensor cores) registers here (issue #6). */
};

fd_status spearman_backend_get(const char *name, const struct spearman_ops **ops)
{
    const void *p = NULL;
    FD_TRY(fd_backend_get(backends, sizeof backends / sizeof *backends, "spearman", name, &p));
    *ops = p;
    return FD_OK;
}
