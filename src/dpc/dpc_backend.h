/* SPDX-License-Identifier: BSD-3-Clause */
/* The backends of dpc: the passes over all pairs, behind one table.  The
 * CPU backend is always built; the CUDA backend where nvcc was found. */
#ifndef FD_DPC_BACKEND_H
#define FD_DPC_BACKEND_H

#include "../common/backend.h"
#include "dpc.h"
#include "../mpi/fdmpi.h"

/* The passes whose rows the ranks all-gather. */
enum { DPC_PASS_RHO, DPC_PASS_DELTA };

struct dpc_ops {
    fd_device_ops dev; /* name, devices, the context (common/backend.h) */
    /* Per-run state (the points on the device); NULL open: none. */
    fd_status (*open)(void **state, const dpc_points *p, int device);
    void (*close)(void *state);
    /* 0: this backend cannot take these points (the CPU backend runs them). */
    int (*supports)(const dpc_points *p);
    /* d_c by the neighbours rule (dpc_dc_neighbors), the same value on
     * every backend. */
    fd_status (*dc_neighbors)(void *state, const dpc_points *p, double k, uint64_t seed, int threads, double *dc);
    fd_status (*rho_rows)(void *state, const dpc_points *p, double dc, int kernel, uint64_t i0, uint64_t i1,
                          int threads, double *rho, fd_progress *prog);
    fd_status (*delta_rows)(void *state, const dpc_points *p, const double *rho, uint64_t i0, uint64_t i1,
                            int threads, double *delta, int64_t *parent, fd_progress *prog);
    /* Every point labelled 0 (all but the centres) takes the label of the
     * first centre up its chain of parents (dpc_label_chains). */
    fd_status (*labels)(void *state, uint64_t n, const int64_t *parent, int32_t *labels);
    /* Optional, for results that live on a device.  connect: joins the
     * ranks' devices (collective, after every rank's open succeeded);
     * *on_device = 1 when gather will do the all-gathers there (NCCL),
     * 0 when the job must do them with MPI on the host. */
    fd_status (*connect)(void *state, const fd_mpi *mpi, int *on_device);
    /* Every rank's rows of a pass (rank r: [off[r], off[r + 1])) onto
     * every rank's device, then whole to the host: rho into a (b NULL), or
     * delta into a and parent into b. */
    fd_status (*gather)(void *state, int pass, const uint64_t *off, double *a, int64_t *b);
};

extern const struct dpc_ops dpc_cpu_ops;
#if defined(FD_HAVE_CUDA) && FD_HAVE_CUDA
extern const struct dpc_ops dpc_cuda_ops;
#endif

fd_status dpc_backend_get(const char *name, const struct dpc_ops **ops);

#endif
