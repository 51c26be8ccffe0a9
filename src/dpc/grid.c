/* SPDX-License-Identifier: BSD-3-Clause */
/* The uniform grid of dpc (see grid.h). */
#include "grid.h"

#include "../common/env.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int64_t coord(const dpc_grid *g, double x, uint32_t k)
{
    double q = floor((x - g->lo[k]) / g->h);
    if (q < 0) q = 0;
    if (q > (double)(g->dim[k] - 1)) q = (double)(g->dim[k] - 1);
    return (int64_t)q;
}

int dpc_grid_usable(const dpc_points *p)
{
    return p->d <= DPC_GRID_MAX_D && !fd_env_switched("FD_DPC_GRID");
}

void dpc_grid_box(const dpc_points *p, double *lo, double *hi) { dpc_points_box(p, lo, hi); }

double dpc_grid_delta_side(const dpc_points *p)
{
    double ext = 0, lo[DPC_GRID_MAX_D], hi[DPC_GRID_MAX_D];
    if (p->d > DPC_GRID_MAX_D) return 1.0;
    dpc_points_box(p, lo, hi);
    for (uint32_t k = 0; k < p->d; k++) ext = hi[k] - lo[k] > ext ? hi[k] - lo[k] : ext;
    return ext > 0 ? ext / pow((double)p->n, 1.0 / p->d) : 1.0;
}

double dpc_grid_slack(const dpc_grid *g)
{
    int64_t m = 1;
    for (uint32_t k = 0; k < g->d; k++) m = g->dim[k] > m ? g->dim[k] : m;
    /* Three roundings of at most half an ulp of values up to m + 1, with
     * room to spare, plus the relative 1e-9 the passes always allowed. */
    return ((double)m + 1) * 0x1p-49 + 1e-9;
}

int dpc_grid_rings(const dpc_grid *g)
{
    int64_t maxdim = 0;
    for (uint32_t k = 0; k < g->d; k++) maxdim = g->dim[k] > maxdim ? g->dim[k] : maxdim;
    int rings = 0;
    for (;;) {
        const int r = rings + 1;
        uint64_t side = 1;
        for (uint32_t k = 0; k < g->d; k++) side *= (uint64_t)(2 * r + 1);
        if (side > DPC_RING_CELLS || r > maxdim) return rings;
        rings = r;
    }
}

int dpc_grid_whole(const dpc_grid *g)
{
    const int rings = dpc_grid_rings(g);
    int whole = 1;
    for (uint32_t k = 0; k < g->d; k++) whole &= g->dim[k] <= rings;
    return whole;
}

void dpc_grid_coords(const dpc_grid *g, uint64_t i, int64_t c[DPC_GRID_MAX_D])
{
    int64_t v = g->cell[i];
    for (uint32_t k = 0; k < g->d; k++) {
        c[k] = v % g->dim[k];
        v /= g->dim[k];
    }
}

uint64_t dpc_grid_cell(const dpc_grid *g, const int64_t c[DPC_GRID_MAX_D])
{
    uint64_t v = 0;
    for (uint32_t k = g->d; k-- > 0;) v = v * (uint64_t)g->dim[k] + (uint64_t)c[k];
    return v;
}

fd_status dpc_grid_shape(dpc_grid *g, const dpc_points *p, double h)
{
    memset(g, 0, sizeof *g);
    if (p->d > DPC_GRID_MAX_D) return fd_fail(FD_ERR_INTERNAL, "dpc_grid_shape: %u coordinates", p->d);
    g->d = p->d;
    double hi[DPC_GRID_MAX_D];
    dpc_points_box(p, g->lo, hi);
    /* A little over h, so that rounding in (x - lo) / h never puts two
     * points closer than h two cells apart; then grown until there are at
     * most max(4 n, 4096) cells. */
    g->h = h * (1 + 1e-6);
    const double limit = fmax(4.0 * (double)p->n, 4096.0);
    for (;;) {
        double cells = 1;
        for (uint32_t k = 0; k < p->d; k++) cells *= floor((hi[k] - g->lo[k]) / g->h) + 1;
        if (cells <= limit) break;
        g->h *= 1.5;
    }
    g->ncells = 1;
    for (uint32_t k = 0; k < p->d; k++) {
        g->dim[k] = (int64_t)floor((hi[k] - g->lo[k]) / g->h) + 1;
        g->ncells *= (uint64_t)g->dim[k];
    }
    return FD_OK;
}

fd_status dpc_grid_build(dpc_grid *g, const dpc_points *p, double h)
{
    FD_TRY(dpc_grid_shape(g, p, h));
    g->start = calloc(g->ncells + 1, sizeof *g->start);
    g->idx = malloc(p->n * sizeof *g->idx);
    g->cell = malloc(p->n * sizeof *g->cell);
    if (!g->start || !g->idx || !g->cell) {
        dpc_grid_free(g);
        return fd_fail(FD_ERR_NOMEM, "out of memory for the grid");
    }
    for (uint64_t i = 0; i < p->n; i++) {
        int64_t c[DPC_GRID_MAX_D];
        for (uint32_t k = 0; k < p->d; k++) c[k] = coord(g, p->x[i * p->d + k], k);
        const uint64_t cell = dpc_grid_cell(g, c);
        g->cell[i] = (int64_t)cell;
        g->start[cell + 1]++;
    }
    for (uint64_t c = 0; c < g->ncells; c++) g->start[c + 1] += g->start[c];
    uint64_t *fill = malloc(g->ncells * sizeof *fill);
    if (!fill) {
        dpc_grid_free(g);
        return fd_fail(FD_ERR_NOMEM, "out of memory for the grid");
    }
    memcpy(fill, g->start, g->ncells * sizeof *fill);
    /* Within a cell, points keep their order: index ascending. */
    for (uint64_t i = 0; i < p->n; i++) g->idx[fill[g->cell[i]]++] = (uint32_t)i;
    free(fill);
    return FD_OK;
}

fd_status dpc_grid_gather(dpc_grid *g, const dpc_points *p)
{
    free(g->xs);
    g->xs = malloc(p->n * p->d * sizeof *g->xs);
    if (!g->xs) return fd_fail(FD_ERR_NOMEM, "out of memory for the grid's coordinates");
    for (uint64_t s = 0; s < p->n; s++)
        for (uint32_t k = 0; k < p->d; k++) g->xs[s * p->d + k] = p->x[(uint64_t)g->idx[s] * p->d + k];
    return FD_OK;
}

void dpc_grid_free(dpc_grid *g)
{
    free(g->start);
    free(g->idx);
    free(g->cell);
    free(g->xs);
    memset(g, 0, sizeof *g);
}

int dpc_walk_row(dpc_cell_walk *w)
{
    const dpc_grid *g = w->g;
    const int64_t r = w->r, dim0 = g->dim[0];
    int edge = !w->ring || r == 0;
    for (uint32_t k = 1; k < g->d; k++) edge |= w->q[k] == w->c[k] - r || w->q[k] == w->c[k] + r;
    w->row = 0;
    for (uint32_t k = g->d; k-- > 1;) w->row = (w->row + (uint64_t)w->q[k]) * (uint64_t)g->dim[k - 1];
    if (edge) {
        w->q[0] = w->lo[0];
        w->end0 = w->hi[0];
        w->step0 = 1;
        return 1;
    }
    /* a ring's row that crosses its inside: the row's two ends */
    const int64_t a = w->c[0] - r, b = w->c[0] + r;
    if (a < 0 && b > dim0 - 1) return 0;
    w->q[0] = a >= 0 ? a : b;
    w->end0 = b <= dim0 - 1 ? b : a;
    w->step0 = 2 * r;
    return 1;
}

void dpc_walk_init(dpc_cell_walk *w, const dpc_grid *g, const int64_t c[DPC_GRID_MAX_D], int64_t r, int ring)
{
    w->g = g;
    w->r = r;
    w->ring = ring;
    for (uint32_t k = 0; k < DPC_GRID_MAX_D; k++) {
        const int in = k < g->d;
        w->c[k] = in ? c[k] : 0;
        w->lo[k] = in ? (c[k] - r > 0 ? c[k] - r : 0) : 0;
        w->hi[k] = in ? (c[k] + r < g->dim[k] - 1 ? c[k] + r : g->dim[k] - 1) : 0;
        w->q[k] = w->lo[k];
    }
    if (!dpc_walk_row(w)) w->end0 = w->q[0] - 1; /* none in the first row: dpc_walk_next moves on */
}
