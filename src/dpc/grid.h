/* SPDX-License-Identifier: BSD-3-Clause */
/* A uniform grid over points of 1 to 3 coordinates, so that dpc's passes
 * look only at nearby cells: exact, since every distance is still
 * computed as in dpc.c and only points that cannot matter are skipped.
 * Cells are at least the size asked for (grown so that there are at most
 * about 4 cells a point); points are listed cell by cell. */
#ifndef FD_DPC_GRID_H
#define FD_DPC_GRID_H

#include "points.h"

#define DPC_GRID_MAX_D 3
/* The cells of the rings a point searches for its nearest denser point
 * before it scans every point (both backends). */
#define DPC_RING_CELLS 1024
/* The rows a grid's rings leave go through grids whose cells are this
 * many times wider, up to DPC_GRID_LEVELS grids in all (both backends). */
#define DPC_GRID_COARSER 8
#define DPC_GRID_LEVELS 16

typedef struct dpc_grid {
    uint32_t d;
    double h, lo[DPC_GRID_MAX_D];
    int64_t dim[DPC_GRID_MAX_D];
    uint64_t ncells;
    uint64_t *start;      /* ncells + 1: points of cell c are idx[start[c] .. start[c+1]) */
    uint32_t *idx;
    int64_t *cell;        /* per point: its cell's coordinates, packed (see grid.c) */
    double *xs;           /* NULL, or after dpc_grid_gather: the points' coordinates in
                           * idx's order (point idx[s] at xs[s d]) */
} dpc_grid;

/* h: the smallest cell side (it is made a little larger, so that two
 * points closer than h are never more than one cell apart after rounding). */
fd_status dpc_grid_build(dpc_grid *g, const dpc_points *p, double h);
/* Only the grid's shape (d, h, lo, dim, ncells; no lists): the GPU fills
 * its own. */
fd_status dpc_grid_shape(dpc_grid *g, const dpc_points *p, double h);
void dpc_grid_free(dpc_grid *g);
/* Fills g->xs, so that a pass over a cell reads its points' coordinates
 * in one run instead of one cache line each from the input's order (10M
 * 2-D points: 160 MB read at random). */
fd_status dpc_grid_gather(dpc_grid *g, const dpc_points *p);

/* Whether dpc's passes may use a grid for these points: up to 3
 * coordinates, unless FD_DPC_GRID=off (the tests run both ways). */
int dpc_grid_usable(const dpc_points *p);
/* The points' bounding box: lo[k], hi[k] for each of their d coordinates
 * (lo and hi hold d each). */
void dpc_grid_box(const dpc_points *p, double *lo, double *hi);
/* The cell side for the delta pass: about one expected nearest-neighbour
 * distance (the largest extent over the d-th root of n). */
double dpc_grid_delta_side(const dpc_points *p);
/* How far, in cells, rounding may move a point's computed cell
 * coordinate from the true one (its (x - lo) / h is off by a few ulp of
 * the largest cell coordinate): the passes widen their reach by it, so
 * that no point that matters is ever skipped. */
double dpc_grid_slack(const dpc_grid *g);
/* The last ring of cells the delta pass searches around a point's cell
 * before it scans every point: (2 r + 1)^d cells at most DPC_RING_CELLS,
 * and no further than the grid reaches (both backends). */
int dpc_grid_rings(const dpc_grid *g);

/* Whether g's rings reach across it: its last level. */
int dpc_grid_whole(const dpc_grid *g);
/* The shapes of the delta pass's grids: cells of side, then each
 * DPC_GRID_COARSER times wider until one is whole; their count. */
int dpc_grid_levels(const dpc_points *p, double side, dpc_grid levels[DPC_GRID_LEVELS]);

/* The cells within r of cell c in every coordinate (clipped to the
 * grid), or with ring only those at exactly r in some coordinate, in the
 * order of their index (coordinate 0 fastest).  A row along coordinate 0
 * at a time, whose cells are consecutive, without a division: walking
 * the whole cube and decoding each cell's index (as dpc.c did before)
 * took (2 r + 1)^d steps for every ring of delta's search and most of
 * rho's time on the CPU (bench/results/dpc-phases.csv).
 *
 *   dpc_cell_walk w;
 *   dpc_walk_init(&w, g, c, r, ring);
 *   while (dpc_walk_next(&w, &cell)) ... w.at: the cell's coordinates */
typedef struct {
    const dpc_grid *g;
    int64_t c[DPC_GRID_MAX_D], r;
    int ring;
    int64_t lo[DPC_GRID_MAX_D], hi[DPC_GRID_MAX_D]; /* the cube, clipped */
    int64_t q[DPC_GRID_MAX_D];                     /* the next cell */
    int64_t end0, step0;                           /* the row's cells: q[0] .. end0 by step0 */
    uint64_t row;                                  /* the index of cell (0, q[1], q[2]) */
    int64_t at[DPC_GRID_MAX_D];                    /* the cell dpc_walk_next gave last */
} dpc_cell_walk;

void dpc_walk_init(dpc_cell_walk *w, const dpc_grid *g, const int64_t c[DPC_GRID_MAX_D], int64_t r, int ring);
/* Sets row (q[1], q[2])'s cells; 0 when it holds none (a ring's row
 * whose two ends are outside the grid).  Only for dpc_walk_next. */
int dpc_walk_row(dpc_cell_walk *w);

/* The next cell: its index in *cell, its coordinates in w->at; 0 when
 * the walk is done.  Inline: it runs for every cell a pass visits. */
static inline int dpc_walk_next(dpc_cell_walk *w, uint64_t *cell)
{
    for (;;) {
        if (w->q[0] <= w->end0) {
            *cell = w->row + (uint64_t)w->q[0];
            w->at[0] = w->q[0];
            w->at[1] = w->q[1];
            w->at[2] = w->q[2];
            w->q[0] += w->step0;
            return 1;
        }
        if (++w->q[1] > w->hi[1]) {
            w->q[1] = w->lo[1];
            if (++w->q[2] > w->hi[2]) return 0;
        }
        if (!dpc_walk_row(w)) w->end0 = w->q[0] - 1;
    }
}

/* The cell coordinates of point i. */
void dpc_grid_coords(const dpc_grid *g, uint64_t i, int64_t c[DPC_GRID_MAX_D]);
/* The cell at coordinates c (all inside the grid). */
uint64_t dpc_grid_cell(const dpc_grid *g, const int64_t c[DPC_GRID_MAX_D]);

#endif
