/* SPDX-License-Identifier: BSD-3-Clause */
/* A kd-tree over dpc's points of up to DPC_TREE_MAX_D coordinates, so
 * that the cutoff rho, delta and the halo (4 coordinates or more: fewer
 * take the grid) and --predict look only at the points that can matter
 * (kdtree.c).
 *
 * Exact without any margin: a node's box is the tight box of its points
 * (their own coordinates), and the box's nearest and farthest squared
 * distances are summed with dpc_d2's operations in dpc_d2's order, so by
 * the monotony of rounded subtraction, squaring and addition they bound
 * every point's dpc_d2 from below and above bit for bit.  Every point
 * that can count is then judged on its own dpc_d2, as the brute-force
 * passes judge it, so every result is bit-identical to theirs
 * (tests/dpc_numpy.py runs both ways). */
#ifndef FD_DPC_KDTREE_H
#define FD_DPC_KDTREE_H

#include "points.h"

/* Beyond this many coordinates a kd-tree prunes too little to beat the
 * vectorised scan (bench/dpc-dims.sh, docs/algorithms.md). */
#define DPC_TREE_MAX_D 32

typedef struct dpc_kdtree dpc_kdtree;

/* Whether a tree may be built over these points: up to DPC_TREE_MAX_D
 * coordinates, fewer than 2^32 points, and FD_DPC_GRID not off (which
 * turns every spatial index off: the tests run both ways). */
int dpc_kdtree_usable(const dpc_points *p);

/* rho: every point's density, for dpc_kdtree_nearest_denser (which
 * skips subtrees with no point as dense as i), or NULL.  p and rho must
 * outlive the tree.  NULL when out of memory. */
dpc_kdtree *dpc_kdtree_build(const dpc_points *p, const double *rho);
void dpc_kdtree_free(dpc_kdtree *t);

/* The points j != i with dpc_d2(x_i, x_j) < t2. */
uint64_t dpc_kdtree_count(const dpc_kdtree *t, uint64_t i, double t2);
/* The same for a point xq that is not one of the tree's (none skipped). */
uint64_t dpc_kdtree_count_at(const dpc_kdtree *t, const double *xq, double t2);
/* fn(ctx, i, j) for each of them. */
typedef void (*dpc_kdtree_visit)(void *ctx, uint64_t i, uint64_t j);
void dpc_kdtree_within(const dpc_kdtree *t, uint64_t i, double t2, dpc_kdtree_visit fn, void *ctx);
/* Labels the tree's nodes by their points' labels (labels[j] >= 0 for
 * every point), for dpc_kdtree_within_other.  FD_ERR_NOMEM on failure. */
fd_status dpc_kdtree_set_labels(dpc_kdtree *t, const int32_t *labels);
/* As dpc_kdtree_within, but a subtree whose points all carry label li
 * is not visited (its pairs are of one cluster: the halo wants the
 * others).  Points of label li in mixed subtrees are still passed to fn.
 * Without dpc_kdtree_set_labels, or li < 0, the same as
 * dpc_kdtree_within. */
void dpc_kdtree_within_other(const dpc_kdtree *t, uint64_t i, int32_t li, double t2, dpc_kdtree_visit fn, void *ctx);

/* The nearest point denser than i (rho_j > rho_i, or rho_j == rho_i and
 * j < i; nearest by dpc_d2, then by the smaller j), with *d2 its squared
 * distance; -1 when no point is denser.  The tree must have rho. */
int64_t dpc_kdtree_nearest_denser(const dpc_kdtree *t, uint64_t i, double *d2);
/* For a point xq that is not one of the tree's: the nearest j with
 * rho_j > r and dpc_d2(xq, x_j) < bound (INFINITY: any), ties to the
 * smaller j; -1 when none. */
int64_t dpc_kdtree_nearest_above(const dpc_kdtree *t, const double *xq, double r, double bound, double *d2);

/* The tree's work per row (boxes and distances computed), as a fraction
 * of a scan of every point, on 64 rows spread over the input: of
 * dpc_kdtree_nearest_denser (denser; the tree must have rho), else of
 * dpc_kdtree_count with t2.
 * Above DPC_TREE_MAX_COST a pass scans every point instead: a unit of
 * the tree's work (short loops, box tests) costs several units of the
 * scan's long vectorised loops, and on uniform points in 16 coordinates
 * the tree prunes nothing (cost 1.0); the A/B rows kdtree-* of
 * bench/results/ab.csv (docs/algorithms.md). */
double dpc_kdtree_cost(const dpc_kdtree *t, double t2, int denser);
#define DPC_TREE_MAX_COST 0.15

/* A tree for a pass, or *t = NULL where none is usable or it would not
 * pay (its cost above DPC_TREE_MAX_COST, unless FD_DPC_TREE=always): the
 * caller then scans, with the same results.  FD_ERR_NOMEM when the tree
 * cannot be built. */
fd_status dpc_kdtree_for(dpc_kdtree **t, const dpc_points *p, const double *rho, double t2, int denser);

#endif
