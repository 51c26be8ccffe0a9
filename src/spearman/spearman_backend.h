/* Spearman backends: the tile computation is what differs between the CPU
 * and the GPU; tiles, passes, selection, output and ranks are shared
 * (spearman_job.c).  Chosen at run time by name ("cpu", "cuda", "auto"). */
#ifndef FD_SPEARMAN_BACKEND_H
#define FD_SPEARMAN_BACKEND_H

#include "tile.h"

struct spearman_ops {
    const char *name;
    /* One tile, with spearman_tile's contract (tile.h). */
    void (*tile)(const spearman_mat *x, const spearman_mat *y, uint64_t i0, uint64_t i1, uint64_t j0, uint64_t j1,
                 int upper, const spearman_sel *sel, spearman_acc *acc);
};

fd_status spearman_backend_get(const char *name, const struct spearman_ops **ops);

#endif
