/* SPDX-License-Identifier: BSD-3-Clause */
/* The registry of dpc backends, and the CPU backend's table: the one place
 * that knows which are built. */
#include "version.h" /* FD_HAVE_CUDA */

#include "dpc_backend.h"

#include "../common/backend.h"

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
    return dpc_label_chains(n, parent, labels);
}

const struct dpc_ops dpc_cpu_ops = {
    .dev = {.name = "cpu"},
    .dc_neighbors = cpu_dc_neighbors,
    .rho_rows = cpu_rho,
    .delta_rows = cpu_delta,
    .labels = cpu_labels,
};

/* The dev part of each backend's table (common/backend.h): a workload's
 * ops start with it, so each entry also points to the whole table. */
static const fd_device_ops *const backends[] = {
    &dpc_cpu_ops.dev,
#if FD_HAVE_CUDA
    &dpc_cuda_ops.dev,
#endif
};

FD_BACKEND_REGISTRY(dpc, struct dpc_ops)
