/* SPDX-License-Identifier: BSD-3-Clause */
/* The points as the sink of the matrix readers: rows kept as doubles,
 * then the coordinate columns picked out. */
#include "points.h"

#include "../common/bigmem.h"

#include "../common/par_rows.h"
#include "../io/matrix_collect.h"
#include "../io/matrix_sink.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "1,2" or "1-3,5" into 0-based column numbers; each at most ncols. */
static fd_status parse_columns(const char *spec, uint32_t ncols, uint32_t **out, uint32_t *count)
{
    uint32_t *c = NULL, n = 0, cap = 0;
    const char *p = spec;
    for (;;) {
        char *end;
        unsigned long a = strtoul(p, &end, 10), b = a;
        if (end == p) goto bad;
        p = end;
        if (*p == '-') {
            b = strtoul(p + 1, &end, 10);
            if (end == p + 1) goto bad;
            p = end;
        }
        if (a < 1 || b < a) goto bad;
        if (b > ncols) {
            free(c);
            return fd_fail(FD_ERR_INPUT, "--columns %s: column %lu, but the rows have %u values", spec, b, ncols);
        }
        for (unsigned long k = a; k <= b; k++) {
            if (n == cap) {
                uint32_t *q = realloc(c, (cap = cap ? 2 * cap : 8) * sizeof *q);
                if (!q) { free(c); return fd_fail(FD_ERR_NOMEM, "out of memory"); }
                c = q;
            }
            c[n++] = (uint32_t)(k - 1);
        }
        if (!*p) break;
        if (*p++ != ',') goto bad;
    }
    *out = c;
    *count = n;
    return FD_OK;
bad:
    free(c);
    return fd_fail(FD_ERR_USAGE, "--columns %s: expected 1-based columns like 1,2 or 1-3", spec);
}

/* The picked columns of rows [i0, i1) into x (unless x is all, taken
 * whole) and xt, on the threads that first touch their pages, and each
 * coordinate's range on the way (lo, hi: d a thread), which was a pass
 * of its own on one thread after (25 of 180 ms of the dev VM's read of
 * 10^7 2-D points). */
typedef struct {
    dpc_points *p;
    const double *all; /* rows of stride values; NULL: x holds them */
    uint32_t stride;
    const uint32_t *pick;
    double *lo, *hi;
} pick_work;

static fd_status pick_rows(void *ctx, uint64_t i0, uint64_t i1, int thread)
{
    const pick_work *w = ctx;
    double *x = w->p->x, *xt = w->p->xt;
    const uint64_t n = w->p->n;
    const uint32_t d = w->p->d;
    double *lo = w->lo + (size_t)thread * d, *hi = w->hi + (size_t)thread * d;
    if (w->all)
        for (uint64_t i = i0; i < i1; i++)
            for (uint32_t k = 0; k < d; k++) x[i * d + k] = w->all[i * w->stride + w->pick[k]];
    for (uint32_t k = 0; k < d; k++) {
        double l = lo[k], h = hi[k];
        for (uint64_t i = i0; i < i1; i++) {
            const double v = x[i * d + k];
            xt[k * n + i] = v;
            l = v < l ? v : l;
            h = v > h ? v : h;
        }
        lo[k] = l;
        hi[k] = h;
    }
    return FD_OK;
}

/* p->lo, p->hi: each coordinate's range, the least and largest of the
 * threads' (pick_rows). */
static fd_status merge_ranges(dpc_points *p, const pick_work *w, int threads)
{
    if (!(p->lo = malloc(p->d * sizeof *p->lo)) || !(p->hi = malloc(p->d * sizeof *p->hi)))
        return fd_fail(FD_ERR_NOMEM, "out of memory");
    for (uint32_t k = 0; k < p->d; k++) {
        double lo = w->lo[k], hi = w->hi[k];
        for (int t = 1; t < threads; t++) {
            lo = w->lo[(size_t)t * p->d + k] < lo ? w->lo[(size_t)t * p->d + k] : lo;
            hi = w->hi[(size_t)t * p->d + k] > hi ? w->hi[(size_t)t * p->d + k] : hi;
        }
        p->lo[k] = lo;
        p->hi[k] = hi;
    }
    return FD_OK;
}

/* Every squared distance the passes compute must be finite: its sum over
 * the coordinates of (x_ik - x_jk)^2 is at most the sum of the squared
 * ranges, checked here, so no pair, grid or chain of parents ever meets
 * an infinity (coordinates near 1e160 hung the grid's sizing and broke the
 * heap without a grid).  Tiny coordinates may underflow to equal
 * distances; that is rounding, not failure. */
static fd_status check_range(const dpc_points *p, const char *spec, const uint32_t *pick)
{
    double sum = 0;
    for (uint32_t k = 0; k < p->d; k++) {
        const double span = p->hi[k] - p->lo[k];
        sum += span * span;
        if (!isfinite(sum))
            return fd_fail(FD_ERR_INPUT,
                           "%s: column %u spans %g to %g: squared distances between points would overflow double "
                           "precision (above 1.8e308); rescale the coordinates",
                           spec, pick[k] + 1, p->lo[k], p->hi[k]);
    }
    return FD_OK;
}

/* Column c of the n x stride values as integer labels, the truth. */
static fd_status take_labels(dpc_points *p, const double *all, uint32_t stride, uint32_t c, const char *spec)
{
    fd_status st = FD_OK;
    FD_ALLOC_GOTO(p->truth, p->n, st, fail);
    for (uint64_t i = 0; i < p->n; i++) {
        const double v = all[i * stride + c];
        if (v != floor(v) || fabs(v) > 9e15) {
            st = fd_fail(FD_ERR_INPUT, "%s: row %llu: label %g is not an integer", spec, (unsigned long long)i + 1, v);
            goto fail;
        }
        p->truth[i] = (int64_t)v;
    }
    return FD_OK;
fail:
    free(p->truth);
    p->truth = NULL;
    return st;
}

/* --labels FILE: one integer per point, a one-column matrix of any
 * format (what `gen blobs` writes beside its points). */
static fd_status read_labels(dpc_points *p, const char *spec, int threads)
{
    fd_matrix_all r;
    fd_status st = fd_matrix_collect(spec, FD_HEADER_AUTO, 0, threads, 0, &r);
    if (st == FD_OK && r.n != 1)
        st = fd_fail(FD_ERR_INPUT, "--labels %s: %u values a row; a label file has one per row", spec, r.n);
    if (st == FD_OK && r.rows != p->n)
        st = fd_fail(FD_ERR_INPUT, "--labels %s: %llu labels for %llu points", spec, (unsigned long long)r.rows,
                     (unsigned long long)p->n);
    if (st == FD_OK) st = take_labels(p, r.all, 1, 0, spec);
    fd_matrix_all_free(&r);
    return st;
}

fd_status dpc_points_read(dpc_points **out, const char *spec, const dpc_columns *cols, int threads)
{
    fd_status st = FD_OK;
    fd_matrix_all r = {0};
    uint32_t *pick = NULL, npick = 0;
    dpc_points *p = calloc(1, sizeof *p);
    *out = NULL;
    if (!p) return fd_fail(FD_ERR_NOMEM, "out of memory");
    FD_TRY_GOTO(fd_matrix_collect(spec, cols->header, 0, threads, 0, &r), st, done);
    if (cols->label > r.n) {
        st = fd_fail(FD_ERR_INPUT, "--label-column %u, but the rows of %s have %u values", cols->label, spec, r.n);
        goto done;
    }
    if (cols->coords) {
        FD_TRY_GOTO(parse_columns(cols->coords, r.n, &pick, &npick), st, done);
    } else {
        FD_ALLOC_GOTO(pick, r.n, st, done);
        for (uint32_t k = 0; k < r.n; k++)
            if (k + 1 != cols->label) pick[npick++] = k;
    }
    if (npick == 0) { st = fd_fail(FD_ERR_INPUT, "%s: no coordinate columns", spec); goto done; }
    if (r.rows < 2) { st = fd_fail(FD_ERR_INPUT, "%s: %llu point; dpc needs at least 2", spec, (unsigned long long)r.rows); goto done; }
    p->n = r.rows;
    p->d = npick;
    p->columns = r.n;
    /* In huge pages, first touched on the threads (bigmem.h): their 4 KiB
     * faults were most of the transposition's time. */
    if (!(p->xt = fd_big_zalloc(p->n * p->d * sizeof *p->xt))) {
        st = fd_fail(FD_ERR_NOMEM, "out of memory");
        goto done;
    }
    /* Every column, in order (no label column): the rows read are the
     * points, taken as they are. */
    int whole = npick == r.n;
    for (uint32_t k = 0; whole && k < npick; k++) whole = pick[k] == k;
    if (whole) {
        p->x = r.all;
        r.all = NULL;
    } else {
        FD_ALLOC_GOTO(p->x, p->n * p->d, st, done);
    }
    const int T = threads > 0 ? threads : 1;
    pick_work w = {p, whole ? NULL : r.all, r.n, pick, NULL, NULL};
    FD_ALLOC_GOTO(w.lo, (size_t)T * npick, st, done);
    FD_ALLOC_GOTO(w.hi, (size_t)T * npick, st, done);
    for (size_t k = 0; k < (size_t)T * npick; k++) {
        w.lo[k] = INFINITY;
        w.hi[k] = -INFINITY;
    }
    st = par_rows(T, 0, p->n, pick_rows, &w, NULL);
    if (st == FD_OK) st = merge_ranges(p, &w, T);
    if (st == FD_OK) st = check_range(p, spec, pick);
    free(w.lo);
    free(w.hi);
    if (st != FD_OK) goto done;
    if (cols->label) FD_TRY_GOTO(take_labels(p, r.all, r.n, cols->label - 1, spec), st, done);
    if (cols->labels) FD_TRY_GOTO(read_labels(p, cols->labels, threads), st, done);
    p->sha = r.sha;
    r.sha.job = NULL;
    if (!(p->source = strdup(spec))) st = fd_fail(FD_ERR_NOMEM, "out of memory");
done:
    fd_matrix_all_free(&r);
    free(pick);
    if (st != FD_OK) dpc_points_destroy(&p);
    *out = p;
    return st;
}

void dpc_points_destroy(dpc_points **pp)
{
    dpc_points *p = *pp;
    if (!p) return;
    free(p->x);
    fd_big_free(p->xt, p->n * p->d * sizeof *p->xt);
    free(p->truth);
    free(p->source);
    free(p->lo);
    free(p->hi);
    sha256_future_drop(&p->sha);
    free(p);
    *pp = NULL;
}

fd_status dpc_points_sha256(dpc_points *p, const char **hex)
{
    FD_TRY(sha256_future_get(&p->sha));
    *hex = p->sha.hex;
    return FD_OK;
}

void dpc_points_box(const dpc_points *p, double *lo, double *hi)
{
    if (p->lo && p->hi) {
        memcpy(lo, p->lo, p->d * sizeof *lo);
        memcpy(hi, p->hi, p->d * sizeof *hi);
        return;
    }
    for (uint32_t k = 0; k < p->d; k++) {
        lo[k] = p->x[k];
        hi[k] = p->x[k];
    }
    for (uint64_t i = 1; i < p->n; i++)
        for (uint32_t k = 0; k < p->d; k++) {
            const double v = p->x[i * p->d + k];
            lo[k] = v < lo[k] ? v : lo[k];
            hi[k] = v > hi[k] ? v : hi[k];
        }
}
