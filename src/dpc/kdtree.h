/* SPDX-License-Identifier: BSD-3-Clause */
/* A kd-tree over dpc's points of 4 to DPC_TREE_MAX_D coordinates
 * (nanoflann's, behind C declarations: kdtree.cpp), so that the cutoff
 * rho, delta and the halo look only at points that can matter.
 *
 * Exact: the tree only proposes candidates, with its pruning bound
 * widened by a slack that covers the rounding of its box distances
 * (kdtree.cpp); every candidate's distance is dpc_d2's, compared as the
 * brute-force passes compare it, so every result is bit-identical to
 * theirs (tests/dpc_numpy.py runs both ways). */
#ifndef FD_DPC_KDTREE_H
#define FD_DPC_KDTREE_H

#include "points.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Beyond this many coordinates a kd-tree prunes too little to beat the
 * vectorised scan (bench/dpc-dims.sh, docs/algorithms.md). */
#define DPC_TREE_MAX_D 32

typedef struct dpc_kdtree dpc_kdtree;

/* Whether dpc's passes may use a tree for these points: 4 to
 * DPC_TREE_MAX_D coordinates, fewer than 2^32 points, and FD_DPC_GRID
 * not off (which turns every spatial index off: the tests run both
 * ways). */
int dpc_kdtree_usable(const dpc_points *p);

/* NULL when out of memory.  p must outlive the tree. */
dpc_kdtree *dpc_kdtree_build(const dpc_points *p);
void dpc_kdtree_free(dpc_kdtree *t);

/* The searches return 0, or -1 when out of memory (nanoflann allocates a
 * vector of d doubles a query).
 *
 * count: *n = the points j != i with dpc_d2(x_i, x_j) < t2.
 * within: fn(ctx, i, j) for each of them. */
int dpc_kdtree_count(const dpc_kdtree *t, uint64_t i, double t2, uint64_t *n);
typedef void (*dpc_kdtree_visit)(void *ctx, uint64_t i, uint64_t j);
int dpc_kdtree_within(const dpc_kdtree *t, uint64_t i, double t2, dpc_kdtree_visit fn, void *ctx);

/* *j = the nearest point denser than i (rho_j > rho_i, or rho_j == rho_i
 * and j < i; nearest by squared distance, then by the smaller j), *d2 its
 * squared distance; *j = -1 when no point is denser. */
int dpc_kdtree_nearest_denser(const dpc_kdtree *t, uint64_t i, const double *rho, int64_t *j, double *d2);

#ifdef __cplusplus
}
#endif

#endif
