/* The backends of dpc: the passes over all pairs, behind one table.  The
 * CPU backend is always built; a GPU backend is not written yet, so
 * --backend cuda is refused with the list of built ones. */
#ifndef FD_DPC_BACKEND_H
#define FD_DPC_BACKEND_H

#include "dpc.h"

struct dpc_ops {
    const char *name;
    fd_status (*rho_rows)(const dpc_points *p, double dc, int kernel, uint64_t i0, uint64_t i1, int threads,
                          double *rho, fd_progress *prog);
    fd_status (*delta_rows)(const dpc_points *p, const double *rho, uint64_t i0, uint64_t i1, int threads,
                            double *delta, int64_t *parent, fd_progress *prog);
};

fd_status dpc_backend_get(const char *name, const struct dpc_ops **ops);

#endif
