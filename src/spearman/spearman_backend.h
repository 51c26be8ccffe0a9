/* SPDX-License-Identifier: BSD-3-Clause */
/* Spearman backends: how a rectangle of pairs is computed is what differs
 * between the CPU and the GPU; records, passes, selection, output and
 * ranks are shared (spearman_job.c).  Chosen at run time by name ("cpu",
 * "cuda", "auto"). */
#ifndef FD_SPEARMAN_BACKEND_H
#define FD_SPEARMAN_BACKEND_H

#include "../common/backend.h"
#include "tile.h"

struct spearman_ops {
    fd_device_ops dev; /* name, devices, the context (common/backend.h) */
    /* Record shape: rows per record and columns per rect call, in tile
     * blocks (spearman_job_impl.h, BLOCK); 0 columns: the whole record in
     * one call. */
    uint32_t record_blocks, rect_blocks;
    /* Per-run state on the device (NULL for the CPU): the rank matrices,
     * resident for both passes.  y == x: pairs within x.  host_threads:
     * the cores the backend may use for its host-side work. */
    fd_status (*open)(void **state, const spearman_mat *x, const spearman_mat *y, int device, int host_threads);
    void (*close)(void *state);
    /* Whether this backend runs a selection (spearman_opts' mode) on x
     * (incomplete: x or y has rows that miss values): 1; 0 for rows beyond
     * the GPU's exact range, which fall back to the CPU backend. */
    int (*supports)(int mode, const spearman_mat *x, int incomplete);
    /* Rows [i0, i1) of x against rows [j0, j1) of y, with spearman_tile's
     * contract on acc (tile.h); upper: y == x, only pairs with j > i. */
    fd_status (*rect)(void *state, const spearman_mat *x, const spearman_mat *y, uint64_t i0, uint64_t i1, uint64_t j0,
                      uint64_t j1, int upper, const spearman_sel *sel, spearman_acc *acc);
};

extern const struct spearman_ops spearman_cpu_ops;
extern const struct spearman_ops spearman_cuda_ops; /* built with CUDA only */

fd_status spearman_backend_get(const char *name, const struct spearman_ops **ops);

#endif
