/* SPDX-License-Identifier: BSD-3-Clause */
#include "dpc_predict.h"

#include "../common/par_rows.h"
#include "dpc.h"
#include "dpc_exp.h"
#include "kdtree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const dpc_points *fit, *q;
    const double *rho;
    const int32_t *labels;
    double dc2;
    int kernel;
    dpc_prediction *out;
    const dpc_kdtree *tree; /* over the fit with its rho (cutoff kernel), or NULL: every fitted point */
} predict_ctx;

/* The squared distance of new point i to fitted point j as the fit's own
 * (dpc_d2), so that a new point equal to a fitted one meets the cutoff
 * exactly as a fitted point would. */
static inline double d2_of(const predict_ctx *c, uint64_t i, uint64_t j)
{
    const uint32_t d = c->fit->d;
    return dpc_d2(c->q->x + i * d, c->fit->x + j * d, d);
}

/* Two passes over the fitted points per new point: its density, then the
 * nearest denser one (ties: the lower row) if it lies within d_c, else
 * the nearest overall.  Without the bound a new point denser than every
 * fitted point of its cluster (near a peak) would follow the nearest
 * denser one into another cluster: in the fit such a point is a centre,
 * and a prediction makes no new clusters. */
static fd_status predict_range(void *arg, uint64_t i0, uint64_t i1, int thread)
{
    const predict_ctx *c = arg;
    const uint64_t n = c->fit->n;
    (void)thread;
    for (uint64_t i = i0; i < i1; i++) {
        double r = 0;
        uint64_t cnt = 0;
        for (uint64_t j = 0; j < n; j++) {
            const double d2 = d2_of(c, i, j);
            if (c->kernel == DPC_CUTOFF) cnt += d2 < c->dc2;
            else r += dpc_exp_neg(-d2 / c->dc2);
        }
        if (c->kernel == DPC_CUTOFF) r = (double)cnt;
        double best = INFINITY, any = INFINITY;
        int64_t parent = -1, nearest = -1;
        for (uint64_t j = 0; j < n; j++) {
            const double d2 = d2_of(c, i, j);
            if (d2 < any) {
                any = d2;
                nearest = (int64_t)j;
            }
            if (c->rho[j] > r && d2 < best && d2 < c->dc2) {
                best = d2;
                parent = (int64_t)j;
            }
        }
        if (parent < 0) {
            parent = nearest;
            best = any;
        }
        c->out->rho[i] = r;
        c->out->parent[i] = parent;
        c->out->delta[i] = sqrt(best);
        c->out->labels[i] = c->labels[parent];
    }
    return FD_OK;
}

/* The same rule from the tree's candidates: the count within d_c, the
 * nearest denser fitted point closer than d_c, else the nearest of all
 * (ties to the lower row in both, as the scan's strict comparisons in row
 * order give). */
static fd_status tpredict_range(void *arg, uint64_t i0, uint64_t i1, int thread)
{
    const predict_ctx *c = arg;
    (void)thread;
    for (uint64_t i = i0; i < i1; i++) {
        const double *xq = c->q->x + i * c->q->d;
        const double r = (double)dpc_kdtree_count_at(c->tree, xq, c->dc2);
        double best;
        int64_t parent = dpc_kdtree_nearest_above(c->tree, xq, r, c->dc2, &best);
        if (parent < 0) parent = dpc_kdtree_nearest_above(c->tree, xq, -INFINITY, INFINITY, &best);
        c->out->rho[i] = r;
        c->out->parent[i] = parent;
        c->out->delta[i] = sqrt(best);
        c->out->labels[i] = c->labels[parent];
    }
    return FD_OK;
}

fd_status dpc_predict(const dpc_points *fit, const double *rho, const int32_t *labels, double dc, int kernel,
                      const dpc_points *q, int threads, dpc_prediction *out)
{
    fd_status st = FD_OK;
    memset(out, 0, sizeof *out);
    if (q->d != fit->d)
        return fd_fail(FD_ERR_INPUT, "--predict %s: points of %u coordinates, the fit's have %u", q->source, q->d,
                       fit->d);
    out->n = q->n;
    FD_ALLOC_GOTO(out->rho, q->n, st, fail);
    FD_ALLOC_GOTO(out->parent, q->n, st, fail);
    FD_ALLOC_GOTO(out->delta, q->n, st, fail);
    FD_ALLOC_GOTO(out->labels, q->n, st, fail);
    predict_ctx c = {fit, q, rho, labels, dpc_kernel_d2(dc, kernel), kernel, out, NULL};
    dpc_kdtree *tree = NULL;
    /* The Gaussian's density sums over every fitted point: no tree. */
    if (kernel == DPC_CUTOFF) FD_TRY_GOTO(dpc_kdtree_for(&tree, fit, rho, c.dc2, 0), st, fail);
    c.tree = tree;
    st = par_rows(threads, 0, q->n, tree ? tpredict_range : predict_range, &c, NULL);
    dpc_kdtree_free(tree);
    if (st != FD_OK) goto fail;
    return FD_OK;
fail:
    dpc_prediction_free(out);
    return st;
}

void dpc_prediction_free(dpc_prediction *p)
{
    free(p->rho);
    free(p->parent);
    free(p->delta);
    free(p->labels);
    memset(p, 0, sizeof *p);
}
