/* Density peaks on one GPU: the device engine of the CUDA dpc backend.
 * Plain C interface.  The points stay on the device (coordinates by
 * column, as doubles); each call computes rho, or delta and parent, for a
 * range of rows against every point.  Every distance is the CPU's: the
 * sum over coordinates in order of (x_ik - x_jk)^2 in double with
 * correctly rounded operations and no fused multiply-add, so the cutoff
 * kernel's results are bit-identical to the CPU backend's (the Gaussian
 * kernel's exp is CUDA's, within 2 ulp of glibc's). */
#ifndef FD_DPC_GPU_H
#define FD_DPC_GPU_H

#include "../common/status.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Coordinates a point may have on the GPU (shared-memory tiles). */
#define DPC_GPU_MAX_D 16

typedef struct dpc_gpu dpc_gpu;

/* xt: d x n, coordinate k of point j at xt[k n + j] (dpc_points.xt). */
fd_status dpc_gpu_create(dpc_gpu **out, int device, const double *xt, uint64_t n, uint32_t d);
void dpc_gpu_destroy(dpc_gpu **g);

/* kernel: 0 cutoff, 1 Gaussian (as DPC_CUTOFF, DPC_GAUSSIAN). */
fd_status dpc_gpu_rho(dpc_gpu *g, double dc, int kernel, uint64_t i0, uint64_t i1, double *rho);
/* rho of every point in; delta and parent of rows [i0, i1) out. */
fd_status dpc_gpu_delta(dpc_gpu *g, const double *rho, uint64_t i0, uint64_t i1, double *delta, int64_t *parent);

#ifdef __cplusplus
}
#endif

#endif
