/* SPDX-License-Identifier: BSD-3-Clause */
/* CUDA backend of dpc: the points go to the rank's GPU once; each pass is
 * one launch over the rank's rows (src/cuda/dpc_gpu.cu).  Points of up to
 * 3 coordinates go through grids of the CPU backend's shape (grid.c),
 * which the device fills; the others, and the Gaussian kernel's rho,
 * through brute force. */
#include "dpc_backend.h"
#include "grid.h"
#include "../common/env.h"

#include "dpc_gpu.h"
#include "../cuda/fdcuda.h"
#include "../mpi/nccl_comm.h"

#include <stdio.h>
#include <stdlib.h>

static int cuda_devices(void) { return fd_cuda_device_count(); }

static int cuda_supports(const dpc_points *p) { return p->d <= DPC_GPU_MAX_D; }

/* A rank's device, and the communicator between the ranks' devices
 * (NULL: the job all-gathers with MPI). */
typedef struct {
    dpc_gpu *g;
    fd_nccl *nccl;
    int parents_whole; /* the device holds every point's parent */
} cuda_state;

static fd_status cuda_open(void **state, const dpc_points *p, int device)
{
    cuda_state *s = calloc(1, sizeof *s);
    if (!s) return fd_fail(FD_ERR_NOMEM, "out of memory");
    fd_cuda_set_oom_hint("every GPU holds all points and their grid: use --backend cpu, or a GPU with more memory");
    const fd_status st = dpc_gpu_create(&s->g, device, p->xt, p->n, p->d);
    if (st != FD_OK) {
        free(s);
        return st;
    }
    *state = s;
    return FD_OK;
}

static void cuda_close(void *state)
{
    cuda_state *s = state;
    fd_nccl_close(&s->nccl);
    dpc_gpu_destroy(&s->g);
    free(s);
}

static fd_status cuda_connect(void *state, const fd_mpi *mpi, int *on_device)
{
    cuda_state *s = state;
    FD_TRY(fd_nccl_open(&s->nccl, mpi));
    *on_device = s->nccl != NULL;
    return FD_OK;
}

static fd_status cuda_gather(void *state, int pass, const uint64_t *off, double *a, int64_t *b)
{
    cuda_state *s = state;
    void *rho, *delta, *parent, *stream;
    dpc_gpu_arrays(s->g, &rho, &delta, &parent, &stream);
    if (pass == DPC_PASS_RHO) {
        FD_TRY(fd_nccl_allgatherv(s->nccl, rho, off, sizeof(double), stream));
        return dpc_gpu_fetch(s->g, a, NULL, NULL);
    }
    FD_TRY(fd_nccl_allgatherv(s->nccl, delta, off, sizeof(double), stream));
    FD_TRY(fd_nccl_allgatherv(s->nccl, parent, off, sizeof(int64_t), stream));
    s->parents_whole = 1;
    return dpc_gpu_fetch(s->g, NULL, a, b);
}

/* The device's view of grid g. */
static dpc_gpu_grid gpu_grid(const dpc_grid *g)
{
    dpc_gpu_grid v = {g->d, g->h, {0}, {0}, g->ncells, dpc_grid_slack(g), dpc_grid_rings(g)};
    for (uint32_t k = 0; k < g->d; k++) {
        v.lo[k] = g->lo[k];
        v.dim[k] = g->dim[k];
    }
    return v;
}

/* The CPU's rows and rank, the GPU's selection: the same d_c. */
static fd_status cuda_dc_neighbors(void *state, const dpc_points *p, double k, uint64_t seed, int threads, double *dc)
{
    uint64_t *rows, s, m;
    double d2 = 0;
    (void)threads;
    FD_TRY(dpc_neighbor_rows(p, k, seed, &rows, &s, &m));
    const fd_status st = dpc_gpu_kth_d2(((cuda_state *)state)->g, rows, s, m, &d2);
    free(rows);
    FD_TRY(st);
    return dpc_dc_from_d2(d2, k, dc);
}

static fd_status cuda_rho(void *state, const dpc_points *p, double dc, int kernel, uint64_t i0, uint64_t i1,
                          int threads, double *rho, fd_progress *prog)
{
    dpc_gpu *g = ((cuda_state *)state)->g;
    (void)threads;
    if (kernel == DPC_CUTOFF && dpc_grid_usable(p)) {
        /* Cells of d_c / 2: 5^d cells around a point hold the ball. */
        dpc_grid grid;
        FD_TRY(dpc_grid_shape(&grid, p, dc / 2));
        const dpc_gpu_grid v = gpu_grid(&grid);
        FD_TRY(dpc_gpu_rho(g, &v, dc, dpc_kernel_d2(dc, kernel), kernel, i0, i1, rho));
    } else {
        FD_TRY(dpc_gpu_rho(g, NULL, dc, dpc_kernel_d2(dc, kernel), kernel, i0, i1, rho));
    }
    if (prog) fd_progress_add(prog, i1 - i0);
    return FD_OK;
}

static fd_status cuda_delta(void *state, const dpc_points *p, const double *rho, uint64_t i0, uint64_t i1, int threads,
                            double *delta, int64_t *parent, fd_progress *prog)
{
    cuda_state *s = state;
    dpc_gpu *g = s->g;
    s->parents_whole = i0 == 0 && i1 == p->n;
    /* With NCCL the device's rho is whole already (gathered there). */
    if (s->nccl) rho = NULL;
    (void)threads;
    /* The delta grid, and one coarser for the rows its rings leave: a
     * thread a row searching the still coarser grids' cells of thousands
     * of points was slower than the brute force of the few rows left
     * (10^7 points: 3.35 s against 0.15 s; dpc-gpu-history.txt). */
    static const char *const coarse_words[] = {"auto", "always", "off", NULL};
    int coarse = 0;
    FD_TRY(fd_env_word("FD_DPC_GPU_COARSE", coarse_words, 0, &coarse));
    dpc_grid levels[2];
    dpc_gpu_grid v[2];
    int nv = 0;
    if (dpc_grid_usable(p)) {
        FD_TRY(dpc_grid_shape(&levels[0], p, dpc_grid_delta_side(p)));
        nv = 1;
        /* Without the coarser grid (its shape refused), the brute force. */
        if (coarse != 2 && !dpc_grid_whole(&levels[0])) {
            if (dpc_grid_shape(&levels[1], p, dpc_grid_delta_side(p) * DPC_GRID_COARSER) == FD_OK) nv = 2;
            fd_errclear();
        }
    }
    for (int k = 0; k < nv; k++) v[k] = gpu_grid(&levels[k]);
    FD_TRY(dpc_gpu_delta(g, v, nv, coarse == 1 ? 0 : DPC_GPU_COARSE_ROWS, rho, i0, i1, delta, parent));
    if (getenv("FD_GPU_VERBOSE"))
        fprintf(stderr, "gpu dpc: delta of %llu rows, %llu of them by brute force\n", (unsigned long long)(i1 - i0),
                (unsigned long long)dpc_gpu_delta_brute_rows(g));
    if (prog) fd_progress_add(prog, i1 - i0);
    return FD_OK;
}

static fd_status cuda_labels(void *state, uint64_t n, const int64_t *parent, int32_t *labels)
{
    cuda_state *s = state;
    int rounds = 0;
    (void)n;
    FD_TRY(dpc_gpu_labels(s->g, s->parents_whole ? NULL : parent, labels, &rounds));
    if (getenv("FD_GPU_VERBOSE")) fprintf(stderr, "gpu dpc: labels in %d rounds of pointer jumping\n", rounds);
    return FD_OK;
}

static int cuda_available(void) { return cuda_devices() > 0; }

const struct dpc_ops dpc_cuda_ops = {
    .dev = {.name = "cuda", .available = cuda_available, .devices = cuda_devices, .open_device = fd_cuda_open, .warm_device = fd_cuda_warm,
            .release_device = fd_cuda_release},
    .open = cuda_open,
    .close = cuda_close,
    .supports = cuda_supports,
    .dc_neighbors = cuda_dc_neighbors,
    .rho_rows = cuda_rho,
    .delta_rows = cuda_delta,
    .labels = cuda_labels,
    .connect = cuda_connect,
    .gather = cuda_gather,
};
