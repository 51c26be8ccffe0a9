/* The registry of dpc backends, and the CPU backend's table: the one place
 * that knows which are built. */
#include "version.h" /* FD_HAVE_CUDA */

#include "dpc_backend.h"

#include "../common/backend.h"

static int cpu_available(void) { return 1; }

static fd_status cpu_dc_neighbors(void *state, const dpc_points *p, double k, uint64_t seed, int threads, double *dc)
{
    (void)state;
    return dpc_dc_neighbors(p, k, seed, threads, dc);
}

static fd_status cpu_rho(void *state, const dpc_points *p, double dc, int kernel, uint64_t i0, uint64_t i1,
                         int threads, double *rho, fd_progress *prog)
{
    (void)state;
    return dpc_rho_rows(p, dc, kernel, i0, i1, threads, rho, prog);
}

static fd_status cpu_delta(void *state, const dpc_points *p, const double *rho, uint64_t i0, uint64_t i1, int threads,
                           double *delta, int64_t *parent, fd_progress *prog)
{
    (void)state;
    return dpc_delta_rows(p, rho, i0, i1, threads, delta, parent, prog);
}

static fd_status cpu_labels(void *state, uint64_t n, const int64_t *parent, int32_t *labels)
{
    (void)state;
    dpc_label_chains(n, parent, labels);
    return FD_OK;
}

const struct dpc_ops dpc_cpu_ops = {
    .name = "cpu",
    .dc_neighbors = cpu_dc_neighbors,
    .rho_rows = cpu_rho,
    .delta_rows = cpu_delta,
    .labels = cpu_labels,
};

#if FD_HAVE_CUDA
static int cuda_available(void) { return dpc_cuda_ops.devices() > 0; }
#endif

static const fd_backend backends[] = {
    {"cpu", cpu_available, &dpc_cpu_ops},
#if FD_HAVE_CUDA
    {"cuda", cuda_available, &dpc_cuda_ops},
#endif
};

fd_status dpc_backend_get(const char *name, const struct dpc_ops **ops)
{
    const void *p = NULL;
    FD_TRY(fd_backend_get(backends, sizeof backends / sizeof *backends, "dpc", name, &p));
    *ops = p;
    return FD_OK;
}
