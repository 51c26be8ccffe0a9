/* SPDX-License-Identifier: BSD-3-Clause */
/* The registry of spearman backends, and the CPU backend: the one place
 * that knows which are compiled in. */
#include "spearman_backend.h"

#include "../common/backend.h"
#include "version.h" /* FD_HAVE_CUDA */

static int cpu_supports(int mode, const spearman_mat *x, int incomplete)
{
    (void)mode;
    (void)x;
    (void)incomplete;
    return 1;
}

static fd_status cpu_rect(void *state, const spearman_mat *x, const spearman_mat *y, uint64_t i0, uint64_t i1,
                          uint64_t j0, uint64_t j1, int upper, const spearman_sel *sel, spearman_acc *acc)
{
    (void)state;
    spearman_tile(x, y, i0, i1, j0, j1, upper, sel, acc);
    return FD_OK;
}

/* One block of rows against one block of columns per call: the job
 * flushes selected pairs between calls. */
const struct spearman_ops spearman_cpu_ops = {
    .dev = {.name = "cpu"},
    .record_blocks = 1,
    .rect_blocks = 1,
    .supports = cpu_supports,
    .rect = cpu_rect,
};

/* The dev part of each backend's table (common/backend.h): a workload's
 * ops start with it, so each entry also points to the whole table. */
static const fd_device_ops *const backends[] = {
    &spearman_cpu_ops.dev,
#if FD_HAVE_CUDA
    &spearman_cuda_ops.dev,
#endif
};

FD_BACKEND_REGISTRY(spearman, struct spearman_ops)
