/* SPDX-License-Identifier: BSD-3-Clause */
/* Density peaks on one GPU: the device engine of the CUDA dpc backend.
 * Plain C interface.  The points stay on the device (coordinates by
 * column, as doubles); each call computes rho, or delta and parent, for a
 * range of rows against every point.  Every distance is the CPU's: the
 * sum over coordinates in order of (x_ik - x_jk)^2 in double with
 * correctly rounded operations and no fused multiply-add, and the
 * Gaussian kernel's exp is dpc_exp.h's on both sides, so the results are
 * bit-identical to the CPU backend's for both kernels.
 *
 * Two ways through the pairs:
 *  - brute force: every row against every point, in shared-memory tiles;
 *    delta splits the points among blocks when there are few rows;
 *  - grid (points of 1 to 3 coordinates, shaped by grid.c, filled here):
 *    rho looks only at the cells within d_c, delta searches rings of
 *    cells and hands the rows whose rings run out (local density peaks)
 *    to a coarser grid's rings when there are many, and what is left
 *    (the densest point) to the brute-force kernel. */
#ifndef FD_DPC_GPU_H
#define FD_DPC_GPU_H

#include "../common/status.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Coordinates a point may have on the GPU (shared-memory tiles of 256
 * points up to 16 coordinates, 32 points beyond; dpc_gpu.cu). */
#define DPC_GPU_MAX_D 128
/* Coordinates a grid may have. */
#define DPC_GPU_GRID_D 3

typedef struct dpc_gpu dpc_gpu;

/* A grid's shape as grid.c's dpc_grid_shape gives it; the device lists
 * the points cell by cell itself (a radix sort by cell). */
typedef struct {
    uint32_t d;
    double h, lo[DPC_GPU_GRID_D];
    int64_t dim[DPC_GPU_GRID_D];
    uint64_t ncells;
    double slack;          /* dpc_grid_slack, in cells */
    int rings;             /* delta: the last ring searched before every point is */
} dpc_gpu_grid;

/* xt: d x n, coordinate k of point j at xt[k n + j] (dpc_points.xt). */
fd_status dpc_gpu_create(dpc_gpu **out, int device, const double *xt, uint64_t n, uint32_t d);
void dpc_gpu_destroy(dpc_gpu **g);

/* kernel: 0 cutoff, 1 Gaussian (as DPC_CUTOFF, DPC_GAUSSIAN); dc2: the
 * squared distance the kernel compares with or divides by (the host's
 * dpc_kernel_d2, so that every backend counts the same pairs).  grid:
 * NULL for brute force; only with the cutoff kernel. */
fd_status dpc_gpu_rho(dpc_gpu *g, const dpc_gpu_grid *grid, double dc, double dc2, int kernel, uint64_t i0,
                      uint64_t i1, double *rho);
/* Rows the delta grid's rings leave from which the GPU takes them
 * through the coarser grid rather than the brute force (see
 * dpc_gpu_delta; FD_DPC_GPU_COARSE=always|off overrides): on an H100 the
 * grid's pass (a warp a row) cost about as much as the brute force of
 * 350 rows at both 10^7 and 10^8 points. */
#define DPC_GPU_COARSE_ROWS 512
/* rho of every point in (NULL: the device's copy is complete already,
 * gathered there); delta and parent of rows [i0, i1) out.  grids: none
 * (brute force), or the delta grid and then coarser ones for the rows
 * each leaves, each taken while coarse_rows rows or more are left (else
 * they go to the brute force). */
fd_status dpc_gpu_delta(dpc_gpu *g, const dpc_gpu_grid *grids, int ngrids, uint64_t coarse_rows, const double *rho,
                        uint64_t i0, uint64_t i1, double *delta, int64_t *parent);
/* Rows of the last delta call that searched every point. */
uint64_t dpc_gpu_delta_brute_rows(const dpc_gpu *g);

/* The m-th smallest (1-based) squared distance from rows[0 .. s) to every
 * other point: a radix select, 12 bits a pass over all those pairs, exact
 * (the CPU's dpc_dc_neighbors selects the same value). */
fd_status dpc_gpu_kth_d2(dpc_gpu *g, const uint64_t *rows, uint64_t s, uint64_t m, double *d2);

/* labels (in: the centres' labels, 0 elsewhere; out: every point's) by
 * pointer jumping along the parents: parent from the host, or NULL for the
 * device's own array (whole: gathered there, or one rank).  *rounds: the
 * rounds it took. */
fd_status dpc_gpu_labels(dpc_gpu *g, const int64_t *parent, int32_t *labels, int *rounds);

/* The device's arrays of every point's rho, delta and parent (the passes
 * write their rows there) and the stream that writes them, for an
 * all-gather on the device (src/mpi/nccl_comm.h). */
void dpc_gpu_arrays(dpc_gpu *g, void **rho, void **delta, void **parent, void **stream);
/* Those arrays, whole, to the host (NULL: not that one). */
fd_status dpc_gpu_fetch(dpc_gpu *g, double *rho, double *delta, int64_t *parent);

#ifdef __cplusplus
}
#endif

#endif
