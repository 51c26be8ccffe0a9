/* The backends of dpc: the passes over all pairs, behind one table.  The
 * CPU backend is always built; the CUDA backend where nvcc was found. */
#ifndef FD_DPC_BACKEND_H
#define FD_DPC_BACKEND_H

#include "dpc.h"

struct dpc_ops {
    const char *name;
    int (*devices)(void);                        /* GPUs on this node; NULL: not a GPU backend */
    fd_status (*open_device)(int device);        /* NULL: nothing to do */
    /* Per-run state (the points on the device); NULL open: none. */
    fd_status (*open)(void **state, const dpc_points *p, int device);
    void (*close)(void *state);
    /* 0: this backend cannot take these points (the CPU backend runs them). */
    int (*supports)(const dpc_points *p);
    fd_status (*rho_rows)(void *state, const dpc_points *p, double dc, int kernel, uint64_t i0, uint64_t i1,
                          int threads, double *rho, fd_progress *prog);
    fd_status (*delta_rows)(void *state, const dpc_points *p, const double *rho, uint64_t i0, uint64_t i1,
                            int threads, double *delta, int64_t *parent, fd_progress *prog);
};

extern const struct dpc_ops dpc_cpu_ops;
#if defined(FD_HAVE_CUDA) && FD_HAVE_CUDA
extern const struct dpc_ops dpc_cuda_ops;
#endif

fd_status dpc_backend_get(const char *name, const struct dpc_ops **ops);

#endif
