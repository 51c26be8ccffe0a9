/* SPDX-License-Identifier: BSD-3-Clause */
/* Density peaks on the CPU: every pass is a loop over rows i against all
 * points j, reading the coordinates column by column (dpc_points.xt) so
 * that the j loop vectorises; nothing of size N x N is stored (see
 * dpc.h). */
#include "dpc.h"

#include "../common/clock.h"
#include "../common/dispatch.h"
#include "../common/env.h"
#include "../common/par_rows.h"
#include "../common/special.h"
#include "dpc_exp.h"
#include "grid.h"
#include "kdtree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- rows on threads ---------------- */

/* Squared distances from point i to points [j0, j1) into d2 (the same
 * operations, in the same order, in every pass and every test oracle:
 * the sum over k of (x_ik - x_jk)^2). */
static void dist2_cols(const double *xi, const double *xt, uint64_t n, uint32_t d, uint64_t j0, uint64_t j1,
                       double *d2)
{
    const uint64_t m = j1 - j0;
    for (uint64_t j = 0; j < m; j++) d2[j] = 0;
    for (uint32_t k = 0; k < d; k++) {
        const double xik = xi[k], *xk = xt + (size_t)k * n + j0;
        for (uint64_t j = 0; j < m; j++) {
            const double t = xik - xk[j];
            d2[j] += t * t;
        }
    }
}

static void dist2(const dpc_points *p, uint64_t i, uint64_t j0, uint64_t j1, double *d2)
{
    dist2_cols(p->x + i * p->d, p->xt, p->n, p->d, j0, j1, d2);
}

/* Points j are taken in blocks that stay in L1 with their distances. */
#define JBLOCK 2048

/* ---------------- d_c ---------------- */

/* The r-th smallest (1-based) of v[0..n), reordering v. */
static double select_rth(double *v, uint64_t n, uint64_t r)
{
    uint64_t lo = 0, hi = n - 1, k = r - 1;
    while (lo < hi) {
        const double pivot = v[lo + (hi - lo) / 2];
        uint64_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot) i++;
            while (v[j] > pivot) j--;
            if (i <= j) {
                const double t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                if (j == 0) break;
                j--;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return v[k];
    }
    return v[k];
}

static double pair_d2(const dpc_points *p, uint64_t i, uint64_t j)
{
    return dpc_d2(p->x + i * p->d, p->x + j * p->d, p->d);
}

fd_status dpc_dc_percent(const dpc_points *p, double percent, uint64_t seed, double *dc)
{
    const uint64_t n = p->n, all = n * (n - 1) / 2, m = all <= DPC_EXACT_PAIRS ? all : DPC_EXACT_PAIRS;
    double *v = malloc(m * sizeof *v);
    if (!v) return fd_fail(FD_ERR_NOMEM, "out of memory for %llu distances", (unsigned long long)m);
    uint64_t q = 0;
    if (m == all) {
        for (uint64_t i = 0; i < n; i++)
            for (uint64_t j = i + 1; j < n; j++) v[q++] = pair_d2(p, i, j);
    } else {
        fd_rng g = {seed};
        while (q < m) {
            const uint64_t i = fd_rng_next(&g) % n, j = fd_rng_next(&g) % n;
            if (i != j) v[q++] = pair_d2(p, i, j);
        }
    }
    uint64_t r = (uint64_t)ceil(percent / 100.0 * (double)m);
    if (r < 1) r = 1;
    if (r > m) r = m;
    *dc = sqrt(select_rth(v, m, r));
    free(v);
    if (!(*dc > 0))
        return fd_fail(FD_ERR_INPUT, "--dc-percent %g gives d_c = 0 (many equal points): give --dc or a larger percentile",
                       percent);
    return FD_OK;
}

/* Max-heap of the m smallest values seen. */
static void heap_offer(double *h, uint64_t *len, uint64_t m, double x)
{
    if (*len < m) {
        uint64_t c = (*len)++;
        h[c] = x;
        while (c && h[(c - 1) / 2] < h[c]) {
            const double t = h[c];
            h[c] = h[(c - 1) / 2];
            h[(c - 1) / 2] = t;
            c = (c - 1) / 2;
        }
        return;
    }
    if (!(x < h[0])) return;
    h[0] = x;
    for (uint64_t c = 0;;) {
        uint64_t l = 2 * c + 1, r = l + 1, b = c;
        if (l < m && h[l] > h[b]) b = l;
        if (r < m && h[r] > h[b]) b = r;
        if (b == c) break;
        const double t = h[c];
        h[c] = h[b];
        h[b] = t;
        c = b;
    }
}

typedef struct {
    const dpc_points *p;
    const uint64_t *rows;
    uint64_t m;
    double *heaps;        /* per thread: the m smallest distances it has seen */
    uint64_t *len;
} nb_ctx;

/* Sampled rows [q0, q1) against every point into this thread's heap; a
 * block's distances are first compacted to those below the heap's top
 * (a loop without branches), so that the heap sees few of them. */
FD_HOT static fd_status nb_range(void *arg, uint64_t q0, uint64_t q1, int thread)
{
    const nb_ctx *r = arg;
    const uint64_t n = r->p->n;
    double d2[JBLOCK], keep[JBLOCK], *h = r->heaps + (size_t)thread * r->m;
    uint64_t *len = r->len + thread;
    for (uint64_t q = q0; q < q1; q++)
        for (uint64_t j0 = 0; j0 < n; j0 += JBLOCK) {
            const uint64_t j1 = j0 + JBLOCK < n ? j0 + JBLOCK : n, i = r->rows[q];
            dist2(r->p, i, j0, j1, d2);
            if (i >= j0 && i < j1) d2[i - j0] = INFINITY; /* not its own neighbour */
            const double top = *len < r->m ? INFINITY : h[0];
            uint64_t nk = 0;
            for (uint64_t j = 0; j < j1 - j0; j++) {
                keep[nk] = d2[j];
                nk += d2[j] < top;
            }
            for (uint64_t t = 0; t < nk; t++) heap_offer(h, len, r->m, keep[t]);
        }
    return FD_OK;
}

fd_status dpc_neighbor_rows(const dpc_points *p, double k, uint64_t seed, uint64_t **rows, uint64_t *s, uint64_t *m)
{
    const uint64_t n = p->n;
    *rows = NULL;
    *s = n <= DPC_NEIGHBOR_ROWS ? n : DPC_NEIGHBOR_ROWS;
    *m = (uint64_t)llround(k * (double)*s);
    if (*m < 1) *m = 1;
    if (*m > *s * (n - 1))
        return fd_fail(FD_ERR_USAGE, "--neighbors %g: more than the %llu other points", k, (unsigned long long)(n - 1));
    uint64_t *r = malloc(*s * sizeof *r);
    if (!r) return fd_fail(FD_ERR_NOMEM, "out of memory");
    if (*s == n) {
        for (uint64_t i = 0; i < n; i++) r[i] = i;
    } else {
        /* s distinct rows (Floyd's sampling). */
        fd_rng g = {seed};
        uint64_t got = 0;
        for (uint64_t j = n - *s; j < n; j++) {
            uint64_t t = fd_rng_next(&g) % (j + 1), dup = 0;
            for (uint64_t q = 0; q < got && !dup; q++) dup = r[q] == t;
            r[got++] = dup ? j : t;
        }
    }
    *rows = r;
    return FD_OK;
}

fd_status dpc_dc_from_d2(double d2, double k, double *dc)
{
    *dc = sqrt(d2);
    if (!(*dc > 0))
        return fd_fail(FD_ERR_INPUT, "--neighbors %g gives d_c = 0 (many equal points): give --dc or more neighbours", k);
    return FD_OK;
}

static fd_status dc_grid(const dpc_points *p, const uint64_t *rows, uint64_t s, uint64_t m, int threads, double *d2,
                         int *found);

fd_status dpc_dc_neighbors(const dpc_points *p, double k, uint64_t seed, int threads, double *dc)
{
    fd_status st = FD_OK;
    uint64_t *rows = NULL, s, m, *len = NULL;
    double *heaps = NULL;
    FD_TRY(dpc_neighbor_rows(p, k, seed, &rows, &s, &m));
    /* Large inputs of 1 to 3 coordinates: the same value from the grid
     * (dc_grid); else, or where the grid gives up, every sampled row
     * against every point. */
    if (dpc_grid_usable(p) && p->n >= DPC_DC_GRID_MIN) {
        double v;
        int found = 0;
        st = dc_grid(p, rows, s, m, threads, &v, &found);
        if (st != FD_OK || found) {
            free(rows);
            return st != FD_OK ? st : dpc_dc_from_d2(v, k, dc);
        }
    }
    if (threads < 1) threads = 1;
    len = calloc((size_t)threads, sizeof *len);
    heaps = malloc((size_t)threads * m * sizeof *heaps);
    if (!len || !heaps) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); goto done; }
    nb_ctx r = {p, rows, m, heaps, len};
    FD_TRY_GOTO(par_rows(threads, 0, s, nb_range, &r, NULL), st, done);
    /* The m smallest of all lie among the threads' m smallest each: the
     * m-th of their union, whatever the threads did. */
    uint64_t all = 0;
    for (int t = 0; t < threads; t++) {
        memmove(heaps + all, heaps + (size_t)t * m, len[t] * sizeof *heaps);
        all += len[t];
    }
    st = dpc_dc_from_d2(select_rth(heaps, all, m), k, dc);
done:
    free(rows);
    free(len);
    free(heaps);
    return st;
}

/* ---------------- rho ---------------- */

typedef struct {
    const dpc_points *p;
    double dc2, *rho;
    int kernel;
    uint64_t base;        /* rho[i - base] */
} rho_ctx;

FD_HOT static fd_status rho_range(void *arg, uint64_t i0, uint64_t i1, int thread)
{
    const rho_ctx *r = arg;
    const uint64_t n = r->p->n;
    double d2[JBLOCK];
    (void)thread;
    for (uint64_t i = i0; i < i1; i++) {
        double sum = 0;
        uint64_t cnt = 0;
        for (uint64_t j0 = 0; j0 < n; j0 += JBLOCK) {
            const uint64_t j1 = j0 + JBLOCK < n ? j0 + JBLOCK : n;
            dist2(r->p, i, j0, j1, d2);
            if (i >= j0 && i < j1) d2[i - j0] = INFINITY; /* not its own neighbour */
            if (r->kernel == DPC_CUTOFF) {
                for (uint64_t j = 0; j < j1 - j0; j++) cnt += d2[j] < r->dc2;
            } else {
                for (uint64_t j = 0; j < j1 - j0; j++) sum += dpc_exp_neg(-d2[j] / r->dc2);
            }
        }
        r->rho[i - r->base] = r->kernel == DPC_CUTOFF ? (double)cnt : sum;
    }
    return FD_OK;
}

/* Cutoff rho of every point on one rank, each pair once: row i scans the
 * points after it, counting its own neighbours and adding one to each of
 * theirs in its thread's array (cnt[thread * n + j]), summed at the end;
 * half the distances of rho_range, the same counts (d2 of (i, j) and
 * (j, i) are the same sums: (a - b)^2 = (b - a)^2 in floating point). */
typedef struct {
    const dpc_points *p;
    double dc2;
    uint32_t *cnt;        /* threads x n */
} srho_ctx;

FD_HOT static fd_status srho_range(void *arg, uint64_t i0, uint64_t i1, int thread)
{
    const srho_ctx *r = arg;
    const uint64_t n = r->p->n;
    uint32_t *c = r->cnt + (size_t)thread * n;
    double d2[JBLOCK];
    for (uint64_t i = i0; i < i1; i++) {
        uint32_t own = 0;
        for (uint64_t j0 = i + 1; j0 < n; j0 += JBLOCK) {
            const uint64_t j1 = j0 + JBLOCK < n ? j0 + JBLOCK : n;
            dist2(r->p, i, j0, j1, d2);
            uint32_t *cj = c + j0;
            for (uint64_t j = 0; j < j1 - j0; j++) {
                const uint32_t in = d2[j] < r->dc2;
                own += in;
                cj[j] += in;
            }
        }
        c[i] += own;
    }
    return FD_OK;
}

/* srho_range over all n rows; *done 0 when the threads' counts do not
 * fit (the caller then scans as rho_range). */
static fd_status rho_pairs_once(const dpc_points *p, double dc2, int threads, double *rho, fd_progress *prog,
                                int *done)
{
    const uint64_t n = p->n;
    const int T = threads > 0 ? threads : 1;
    /* 1 GiB of counts at most (16 threads and 16M points): beyond, the
     * scan of every point needs none */
    *done = 0;
    if (n > UINT32_MAX || (double)T * (double)n * sizeof(uint32_t) > (double)(1u << 30)) return FD_OK;
    srho_ctx r = {p, dc2, calloc((size_t)T * n, sizeof(uint32_t))};
    if (!r.cnt) return FD_OK;
    *done = 1;
    fd_status st = par_rows(T, 0, n, srho_range, &r, prog);
    for (uint64_t i = 0; st == FD_OK && i < n; i++) {
        uint64_t sum = 0;
        for (int t = 0; t < T; t++) sum += r.cnt[(size_t)t * n + i];
        rho[i] = (double)sum;
    }
    free(r.cnt);
    return st;
}

/* The cells a ball of radius d_c around a point can reach, with a test of
 * each cell's box against the ball: out (no point of the cell is closer
 * than d_c), whole (every point is), or cut.  The margin (1e-9 of the
 * coordinates' scale) covers the rounding of cell bounds, so that every
 * point near the sphere lands in a cut cell and is tested exactly. */
typedef struct {
    const dpc_grid *g;
    double in2, out2;     /* (d_c -+ margin)^2 */
    int64_t reach;        /* cells, in every coordinate */
} ball;

enum { CELL_OUT, CELL_CUT, CELL_WHOLE };

static void ball_init(ball *b, const dpc_grid *g, double dc, double margin)
{
    b->g = g;
    b->in2 = (dc - margin) * (dc - margin);
    b->out2 = (dc + margin) * (dc + margin);
    b->reach = (int64_t)ceil(dc / g->h) + 1;
}

/* The margin for points p on grid g with cutoff dc. */
static double ball_margin(const dpc_points *p, const dpc_grid *g, double dc)
{
    double scale = dc;
    for (uint32_t k = 0; k < p->d; k++) scale = fmax(scale, fmax(fabs(g->lo[k]), fabs(g->lo[k] + (double)g->dim[k] * g->h)));
    return 1e-9 * scale;
}

/* Cell q (coordinates) against the ball around xi. */
static int ball_test(const ball *b, const double *xi, const int64_t *q)
{
    const dpc_grid *g = b->g;
    double mind2 = 0, maxd2 = 0;
    for (uint32_t k = 0; k < g->d; k++) {
        const double lo = g->lo[k] + (double)q[k] * g->h, hi = lo + g->h;
        const double near = xi[k] < lo ? lo - xi[k] : xi[k] > hi ? xi[k] - hi : 0;
        const double far = fmax(fabs(xi[k] - lo), fabs(xi[k] - hi));
        mind2 += near * near;
        maxd2 += far * far;
    }
    return mind2 > b->out2 ? CELL_OUT : maxd2 < b->in2 ? CELL_WHOLE : CELL_CUT;
}

typedef struct {
    const dpc_points *p;
    ball b;
    double dc2, *rho;
    uint64_t base;
    const uint32_t *slots; /* row k is the point at slot slots[k] (NULL: slot k) */
} grho_ctx;

/* A row the grid's rings left to delta_pending. */
#define DELTA_PENDING (-2)

/* The slots of points [i0, i1) in grid g, in the grid's order, so that a
 * pass takes a rank's rows as the cells hold them: the cells a row reads
 * are those its predecessor read (10^8 points on two ranks read the grid
 * at random in the rows' order).  With parent, only the rows still
 * DELTA_PENDING in it (parent[i - i0]).  NULL when the rows are every
 * point: row k is then slot k.  *count: how many rows. */
static fd_status cell_slots(const dpc_grid *g, uint64_t n, uint64_t i0, uint64_t i1, const int64_t *parent,
                            uint32_t **slots, uint64_t *count)
{
    *slots = NULL;
    *count = i1 - i0;
    if (!parent && i0 == 0 && i1 == n) return FD_OK;
    if (!(*slots = malloc((i1 - i0 + 1) * sizeof **slots))) return fd_fail(FD_ERR_NOMEM, "out of memory");
    uint64_t k = 0;
    for (uint64_t u = 0; u < n; u++) {
        const uint64_t i = g->idx[u];
        if (i >= i0 && i < i1 && (!parent || parent[i - i0] == DELTA_PENDING)) (*slots)[k++] = (uint32_t)u;
    }
    *count = k;
    return FD_OK;
}

/* How many of the m points at x (d coordinates each, one after the other)
 * are closer to xi than t2 in squared distance, each distance by
 * dpc_d2's operations in its order: a loop for each d of the grid, which
 * the compiler vectorises, where dpc_d2's loop over a d known only at run
 * time was not. */
FD_HOT static uint64_t count_closer(const double *xi, const double *x, uint64_t m, uint32_t d, double t2)
{
    uint64_t cnt = 0;
    switch (d) {
    case 1:
        for (uint64_t s = 0; s < m; s++) {
            const double t = xi[0] - x[s];
            cnt += t * t < t2;
        }
        break;
    case 2:
        for (uint64_t s = 0; s < m; s++) {
            const double t0 = xi[0] - x[2 * s], t1 = xi[1] - x[2 * s + 1];
            double q = t0 * t0;
            q += t1 * t1;
            cnt += q < t2;
        }
        break;
    case 3:
        for (uint64_t s = 0; s < m; s++) {
            const double t0 = xi[0] - x[3 * s], t1 = xi[1] - x[3 * s + 1], t2c = xi[2] - x[3 * s + 2];
            double q = t0 * t0;
            q += t1 * t1;
            q += t2c * t2c;
            cnt += q < t2;
        }
        break;
    default:
        for (uint64_t s = 0; s < m; s++) cnt += dpc_d2(xi, x + s * d, d) < t2;
    }
    return cnt;
}

/* Cutoff rho from the cells within d_c of a point, cells a quarter of d_c
 * wide: a cell wholly inside the ball counts all its points at once, and
 * only the points of the cells the sphere cuts are tested one by one. */
FD_HOT static fd_status grho_range(void *arg, uint64_t i0, uint64_t i1, int thread)
{
    const grho_ctx *r = arg;
    const dpc_grid *g = r->b.g;
    (void)thread;
    for (uint64_t k = i0; k < i1; k++) {
        const uint64_t u = r->slots ? r->slots[k] : k, i = g->idx[u];
        int64_t c[DPC_GRID_MAX_D];
        uint64_t cell, cnt = 0;
        dpc_cell_walk w;
        const double *xi = g->xs + u * g->d;
        dpc_grid_coords(g, i, c);
        const uint64_t own = (uint64_t)g->cell[i];
        dpc_walk_init(&w, g, c, r->b.reach, 0);
        while (dpc_walk_next(&w, &cell)) {
            const uint64_t a = g->start[cell], b = g->start[cell + 1];
            if (a == b) continue;
            const int t = ball_test(&r->b, xi, w.at);
            if (t == CELL_WHOLE) cnt += b - a - (cell == own);
            else if (t == CELL_CUT) /* less the point itself, at 0, in slot u */
                cnt += count_closer(xi, g->xs + a * g->d, b - a, g->d, r->dc2) - (u >= a && u < b && 0 < r->dc2);
        }
        r->rho[i - r->base] = (double)cnt;
    }
    return FD_OK;
}

double dpc_cutoff_d2(double dc)
{
    if (!(dc > 0)) return 0;
    if (dc > 0x1p511) return INFINITY; /* every finite d2 has sqrt(d2) < dc */
    /* The least T with sqrt(T) >= dc: dc * dc is within an ulp or two. */
    double t = dc * dc;
    while (t > 0 && sqrt(nextafter(t, 0)) >= dc) t = nextafter(t, 0);
    while (sqrt(t) < dc) t = nextafter(t, INFINITY);
    return t;
}

double dpc_kernel_d2(double dc, int kernel) { return kernel == DPC_CUTOFF ? dpc_cutoff_d2(dc) : dc * dc; }

/* ---------------- d_c on the grid ----------------
 * --neighbors K asks for the m-th smallest (m = K s) of the squared
 * distances from s sampled rows to every other point.  All of them below
 * a threshold T are found from the grid's cells within sqrt(T) of each
 * row, and when there are at least m such values, the m-th smallest of
 * them is the m-th smallest of all: the same value as the scan of every
 * point, bit for bit, in a few passes over the rows' cells instead of
 * s x n distances (10,000,000 points: 30.4 s of 135.4 s on 2 cores,
 * 0.68 s now: bench/results/dpc-phases.csv).  T
 * starts from the density of uniform points over the points' box and is
 * scaled until between m and DC_GRID_SLACK m values lie below it. */

/* The volume of the unit ball in d = 1 to 3 coordinates. */
static double unit_ball(uint32_t d)
{
    const double pi = 3.14159265358979323846;
    return d == 1 ? 2.0 : d == 2 ? pi : 4.0 * pi / 3.0;
}

#define DC_GRID_SLACK 32
#define DC_GRID_TRIES 40

typedef struct {
    const dpc_points *p;
    const uint64_t *rows;
    ball b;
    double t2;
    uint64_t *count;      /* per sampled row: values below t2 */
    const uint64_t *at;   /* NULL: count only; else where row q's values go in out */
    double *out;
} dcg_ctx;

/* Sampled rows [q0, q1): each's squared distances below t2, counted or
 * written out.  Cells wholly inside the ball are still measured point by
 * point: their values are what is kept. */
static fd_status dcg_range(void *arg, uint64_t q0, uint64_t q1, int thread)
{
    const dcg_ctx *r = arg;
    const dpc_grid *g = r->b.g;
    (void)thread;
    for (uint64_t q = q0; q < q1; q++) {
        const uint64_t i = r->rows[q];
        int64_t c[DPC_GRID_MAX_D];
        uint64_t cell, cnt = 0;
        dpc_cell_walk w;
        const double *xi = r->p->x + i * r->p->d;
        double *o = r->at ? r->out + r->at[q] : NULL;
        dpc_grid_coords(g, i, c);
        dpc_walk_init(&w, g, c, r->b.reach, 0);
        while (dpc_walk_next(&w, &cell)) {
            const uint64_t a = g->start[cell], b = g->start[cell + 1];
            if (a == b || ball_test(&r->b, xi, w.at) == CELL_OUT) continue;
            for (uint64_t t = a; t < b; t++) {
                const uint64_t j = g->idx[t];
                if (j == i) continue;
                const double d2 = pair_d2(r->p, i, j);
                if (d2 < r->t2) {
                    if (o) o[cnt] = d2;
                    cnt++;
                }
            }
        }
        if (!o) r->count[q] = cnt;
    }
    return FD_OK;
}

/* *found = 0 where the grid does not settle it (points with no extent in
 * some coordinate, or no threshold found within DC_GRID_TRIES): the
 * caller scans. */
static fd_status dc_grid(const dpc_points *p, const uint64_t *rows, uint64_t s, uint64_t m, int threads, double *v,
                         int *found)
{
    fd_status st = FD_OK;
    const uint32_t d = p->d;
    *found = 0;
    double lo[DPC_GRID_MAX_D], hi[DPC_GRID_MAX_D], vol = 1;
    dpc_grid_box(p, lo, hi);
    for (uint32_t k = 0; k < d; k++) vol *= hi[k] - lo[k];
    if (!(vol > 0) || !isfinite(vol)) return FD_OK;
    /* Uniform points: n c_d r^d / vol = K neighbours. */
    const double kk = (double)m / (double)s;
    double r = pow(kk * vol / ((double)p->n * unit_ball(d)), 1.0 / d);
    uint64_t *count = calloc(s + 1, sizeof *count), total = 0;
    double *vals = NULL;
    if (!count) return fd_fail(FD_ERR_NOMEM, "out of memory");
    dpc_grid g = {0};
    int have = 0;
    for (int tries = 0; tries < DC_GRID_TRIES && isfinite(r) && r > 0; tries++) {
        if (have) dpc_grid_free(&g);
        have = 0;
        FD_TRY_GOTO(dpc_grid_build(&g, p, r), st, done);
        have = 1;
        dcg_ctx c = {p, rows, {0}, dpc_cutoff_d2(r), count, NULL, NULL};
        ball_init(&c.b, &g, r, ball_margin(p, &g, r));
        FD_TRY_GOTO(par_rows(threads, 0, s, dcg_range, &c, NULL), st, done);
        total = 0;
        for (uint64_t q = 0; q < s; q++) total += count[q];
        if (total < m) { /* too few below: widen, by the density's rule, at least 1.25 and at most 4 times */
            r *= fmin(4.0, fmax(1.25, pow(2.0 * (double)m / (double)(total ? total : 1), 1.0 / d)));
            continue;
        }
        if (total > DC_GRID_SLACK * m) { /* too many to keep: narrow */
            r *= fmax(0.25, pow(4.0 * (double)m / (double)total, 1.0 / d));
            continue;
        }
        /* Between m and DC_GRID_SLACK m: write them out, take the m-th. */
        uint64_t *at = malloc((s + 1) * sizeof *at);
        vals = malloc(total * sizeof *vals);
        if (!at || !vals) {
            free(at);
            st = fd_fail(FD_ERR_NOMEM, "out of memory");
            goto done;
        }
        for (uint64_t q = 0, a = 0; q < s; q++) {
            at[q] = a;
            a += count[q];
        }
        c.at = at;
        c.out = vals;
        st = par_rows(threads, 0, s, dcg_range, &c, NULL);
        free(at);
        if (st != FD_OK) goto done;
        *v = select_rth(vals, total, m);
        *found = 1;
        break;
    }
done:
    if (have) dpc_grid_free(&g);
    free(count);
    free(vals);
    return st;
}

/* The grid for the cutoff rho: cells of side d_c / q.  Narrow cells let
 * a ball count whole cells at once, which pays where a ball holds many
 * points, and costs (2 q + 1)^d cells a point where it holds few.  The
 * mean number of points in a ball is read from a grid of side d_c (the
 * points sharing a point's cell, scaled by the ball's volume over the
 * cell's), then q = 1 below 100, 2 below 1,000, else 4.  The rho phase
 * of --stats, one thread, the dev VM: 1M 2-D blobs at 30 neighbours
 * 3.4-4.5 s with q = 4 against 2.1-3.0 s with q = 1; 100,000 of them with
 * the 2% rule (about 2,000) 0.70-0.79 s against 1.05-1.19 s; at 300, q = 2
 * 0.37 s, q = 1 0.48 s, q = 4 0.52 s.  End to end (bench/ab.sh, label
 * rho-cells): 4.74 s to 4.38 s for the first, 0.76 s to 0.82 s for the
 * second (its second grid).  The counts are the same whatever the cells. */
static fd_status rho_grid_build(dpc_grid *g, const dpc_points *p, double dc)
{
    FD_TRY(dpc_grid_build(g, p, dc));
    double share = 0;
    for (uint64_t c = 0; c < g->ncells; c++) {
        const double k = (double)(g->start[c + 1] - g->start[c]);
        share += k * k;
    }
    const double in_ball = share / (double)p->n * unit_ball(p->d) * pow(dc / g->h, (double)p->d);
    const double q = in_ball < 100 ? 1 : in_ball < 1000 ? 2 : 4;
    if (q == 1) return FD_OK;
    dpc_grid_free(g);
    return dpc_grid_build(g, p, dc / q);
}

typedef struct {
    const dpc_kdtree *t;
    double dc2, *rho;
    uint64_t base;
} trho_ctx;

/* Cutoff rho from the tree (points of 4 to DPC_TREE_MAX_D coordinates). */
static fd_status trho_range(void *arg, uint64_t i0, uint64_t i1, int thread)
{
    const trho_ctx *r = arg;
    (void)thread;
    for (uint64_t i = i0; i < i1; i++) r->rho[i - r->base] = (double)dpc_kdtree_count(r->t, i, r->dc2);
    return FD_OK;
}

/* A kd-tree for a pass over points of more coordinates than the grid
 * takes (dpc_kdtree_for), or *t = NULL. */
static fd_status tree_for(dpc_kdtree **t, const dpc_points *p, const double *rho, double t2)
{
    *t = NULL;
    return p->d > DPC_GRID_MAX_D ? dpc_kdtree_for(t, p, rho, t2, rho != NULL) : FD_OK;
}

fd_status dpc_rho_rows(const dpc_points *p, double dc, int kernel, uint64_t i0, uint64_t i1, int threads, double *rho,
                       fd_progress *prog)
{
    fd_status st;
    dpc_kdtree *t = NULL;
    if (kernel == DPC_CUTOFF) FD_TRY(tree_for(&t, p, NULL, dpc_cutoff_d2(dc)));
    if (t) {
        trho_ctx r = {t, dpc_cutoff_d2(dc), rho, i0};
        st = par_rows(threads, i0, i1, trho_range, &r, prog);
        dpc_kdtree_free(t);
        return st;
    }
    if (kernel == DPC_CUTOFF && dpc_grid_usable(p)) {
        dpc_grid g;
        FD_TRY(rho_grid_build(&g, p, dc));
        if ((st = dpc_grid_gather(&g, p)) != FD_OK) {
            dpc_grid_free(&g);
            return st;
        }
        uint32_t *slots;
        uint64_t rows;
        if ((st = cell_slots(&g, p->n, i0, i1, NULL, &slots, &rows)) == FD_OK) {
            grho_ctx r = {p, {0}, dpc_cutoff_d2(dc), rho, i0, slots};
            ball_init(&r.b, &g, dc, ball_margin(p, &g, dc));
            st = par_rows(threads, 0, rows, grho_range, &r, prog);
        }
        free(slots);
        dpc_grid_free(&g);
        return st;
    }
    /* One rank holding every row: the cutoff counts each pair once. */
    if (kernel == DPC_CUTOFF && i0 == 0 && i1 == p->n) {
        int done;
        st = rho_pairs_once(p, dpc_cutoff_d2(dc), threads, rho, prog, &done);
        if (st != FD_OK || done) return st;
    }
    rho_ctx r = {p, dpc_kernel_d2(dc, kernel), rho, kernel, i0};
    return par_rows(threads, i0, i1, rho_range, &r, prog);
}

/* ---------------- delta ---------------- */

typedef struct {
    const dpc_points *p;
    const double *rho;
    double *delta;
    int64_t *parent;
    uint64_t base;
} delta_ctx;

/* Per block: the distances to denser points (others masked to
 * infinity), their minimum and the largest distance, in loops without
 * branches that vectorise; the index is looked for only in a block that
 * improves the minimum, as its first point at that distance, so ties go
 * to the smaller j. */
FD_HOT static fd_status delta_range(void *arg, uint64_t i0, uint64_t i1, int thread)
{
    const delta_ctx *r = arg;
    const uint64_t n = r->p->n;
    double d2[JBLOCK];
    (void)thread;
    for (uint64_t i = i0; i < i1; i++) {
        const double ri = r->rho[i];
        double best = INFINITY, far = 0;
        int64_t bj = -1;
        for (uint64_t j0 = 0; j0 < n; j0 += JBLOCK) {
            const uint64_t j1 = j0 + JBLOCK < n ? j0 + JBLOCK : n, m = j1 - j0;
            const double *rj = r->rho + j0;
            dist2(r->p, i, j0, j1, d2);
            /* Before i an equal rho is denser, from i on it is not. */
            const uint64_t lim = i <= j0 ? 0 : i - j0 < m ? i - j0 : m;
            double bmin = INFINITY;
            for (uint64_t j = 0; j < lim; j++) {
                far = d2[j] > far ? d2[j] : far;
                d2[j] = rj[j] >= ri ? d2[j] : INFINITY;
                bmin = d2[j] < bmin ? d2[j] : bmin;
            }
            for (uint64_t j = lim; j < m; j++) {
                far = d2[j] > far ? d2[j] : far;
                d2[j] = rj[j] > ri ? d2[j] : INFINITY;
                bmin = d2[j] < bmin ? d2[j] : bmin;
            }
            if (bmin < best) {
                uint64_t j = 0;
                while (d2[j] != bmin) j++;
                best = bmin;
                bj = (int64_t)(j0 + j);
            }
        }
        r->delta[i - r->base] = sqrt(bj < 0 ? far : best);
        r->parent[i - r->base] = bj;
    }
    return FD_OK;
}

/* The scan by density order: with the points sorted denser first (rho
 * decreasing, then index: dpc.h's order), the points denser than the one
 * at place r are the places before r, so a row scans r points, not all n
 * with the sparser ones masked: half the distances on average.  The
 * coordinates are copied in that order (xs, column by column as xt);
 * distances are the same sums as dist2's, and ties at the least distance
 * go to the smallest index, as delta_range's. */
typedef struct {
    delta_ctx rows;
    const uint64_t *order; /* order[r]: the point at place r */
    const uint64_t *place; /* place[i]: point i's place */
    const double *xs;      /* xt in that order */
} sdelta_ctx;

FD_HOT static fd_status sdelta_range(void *arg, uint64_t i0, uint64_t i1, int thread)
{
    const sdelta_ctx *sr = arg;
    const delta_ctx *r = &sr->rows;
    const uint64_t n = r->p->n;
    const uint32_t d = r->p->d;
    double d2[JBLOCK];
    for (uint64_t i = i0; i < i1; i++) {
        const uint64_t pl = sr->place[i];
        if (pl == 0) { /* the densest point: the largest distance, as delta_range gives it */
            FD_TRY(delta_range((void *)r, i, i + 1, thread));
            continue;
        }
        const double *xi = r->p->x + i * d;
        double best = INFINITY;
        int64_t bj = -1;
        for (uint64_t q0 = 0; q0 < pl; q0 += JBLOCK) {
            const uint64_t q1 = q0 + JBLOCK < pl ? q0 + JBLOCK : pl, m = q1 - q0;
            dist2_cols(xi, sr->xs, n, d, q0, q1, d2);
            double bmin = INFINITY;
            for (uint64_t q = 0; q < m; q++) bmin = d2[q] < bmin ? d2[q] : bmin;
            if (bmin > best) continue;
            for (uint64_t q = 0; q < m; q++)
                if (d2[q] == bmin && (bmin < best || (int64_t)sr->order[q0 + q] < bj)) {
                    best = bmin;
                    bj = (int64_t)sr->order[q0 + q];
                }
        }
        r->delta[i - r->base] = sqrt(best);
        r->parent[i - r->base] = bj;
    }
    return FD_OK;
}

static int by_key_desc(const void *a, const void *b, void *key);

/* delta by sdelta_range; *done 0 when its copy of the points does not
 * fit (the caller then scans as delta_range). */
static fd_status delta_sorted(const dpc_points *p, const double *rho, uint64_t i0, uint64_t i1, int threads,
                              double *delta, int64_t *parent, fd_progress *prog, int *done)
{
    const uint64_t n = p->n;
    uint64_t *order = malloc(n * sizeof *order), *place = malloc(n * sizeof *place);
    double *xs = malloc((size_t)n * p->d * sizeof *xs);
    fd_status st = FD_OK;
    *done = order && place && xs;
    if (*done) {
        for (uint64_t i = 0; i < n; i++) order[i] = i;
        qsort_r(order, n, sizeof *order, by_key_desc, (void *)rho);
        for (uint64_t q = 0; q < n; q++) place[order[q]] = q;
        for (uint32_t k = 0; k < p->d; k++)
            for (uint64_t q = 0; q < n; q++) xs[(size_t)k * n + q] = p->xt[(size_t)k * n + order[q]];
        sdelta_ctx r = {{p, rho, delta, parent, i0}, order, place, xs};
        st = par_rows(threads, i0, i1, sdelta_range, &r, prog);
    }
    free(order);
    free(place);
    free(xs);
    return st;
}

typedef struct {
    delta_ctx rows; /* the rows and their results, as delta_range takes them */
    const dpc_grid *g;
    double slack;   /* dpc_grid_slack */
    int rings;      /* dpc_grid_rings */
    const double *rs; /* rho in the grid's order (rs[s] = rho[idx[s]]) */
    const uint32_t *slots; /* rows by slot, as grho_range */
} gdelta_ctx;

/* The nearest denser point by rings of cells around the point's own:
 * after ring r, every point not yet seen is at least r h away (less a
 * rounding margin), so a nearest one closer than that is final, as is
 * one found once the rings cover the whole grid.  Points
 * whose rings would pass DPC_RING_CELLS cells (local density peaks, the
 * densest point) scan every point as delta_range does.  A denser point at
 * distance 0 is final at once: it has the same coordinates, so it is in
 * the point's own cell, ring 0, whose points come in ascending index, so
 * no point before it ties with it (many equal points made every one of
 * them scan the whole cell: bench/ab.sh, row delta-zero). */
FD_HOT static fd_status gdelta_range(void *arg, uint64_t i0, uint64_t i1, int thread)
{
    const gdelta_ctx *gr = arg;
    const delta_ctx *r = &gr->rows;
    const dpc_grid *g = gr->g;
    for (uint64_t k = i0; k < i1; k++) {
        const uint64_t u = gr->slots ? gr->slots[k] : k, i = g->idx[u];
        const double ri = r->rho[i], *xi = g->xs + u * g->d;
        int64_t c[DPC_GRID_MAX_D];
        dpc_grid_coords(g, i, c);
        double best = INFINITY;
        int64_t bj = -1, rr;
        int done = 0;
        for (rr = 0; !done && rr <= gr->rings; rr++) {
            uint64_t cell;
            dpc_cell_walk w;
            dpc_walk_init(&w, g, c, rr, 1);
            while (!done && dpc_walk_next(&w, &cell))
                for (uint64_t q = g->start[cell]; q < g->start[cell + 1]; q++) {
                    const uint64_t j = g->idx[q];
                    const double rj = gr->rs[q];
                    if (!(rj > ri || (rj == ri && j < i))) continue;
                    const double t = dpc_d2(xi, g->xs + q * g->d, g->d);
                    if (t < best || (t == best && (int64_t)j < bj)) {
                        best = t;
                        bj = (int64_t)j;
                        if (t == 0) {
                            done = 1;
                            break;
                        }
                    }
                }
            const double reach = ((double)rr - gr->slack) * g->h;
            int all = 1; /* the rings so far cover the whole grid */
            for (uint32_t q = 0; q < g->d; q++) all &= c[q] - rr <= 0 && c[q] + rr >= g->dim[q] - 1;
            done = done || (bj >= 0 && (all || (reach > 0 && best < reach * reach)));
        }
        if (done) {
            r->delta[i - r->base] = sqrt(best);
            r->parent[i - r->base] = bj;
        } else {
            r->parent[i - r->base] = DELTA_PENDING; /* dpc_delta_rows settles it */
        }
    }
    return FD_OK;
}

/* Rows by the tree or by a scan of every point: the rows i0 .. i1, or
 * with list the rows list[i0 .. i1). */
typedef struct {
    delta_ctx rows;
    const dpc_kdtree *t; /* NULL: scan */
    const uint64_t *list;
} some_rows_ctx;

/* The nearest denser point from the tree; the densest point, which has
 * none, and every row without a tree scan every point (delta_range). */
static fd_status some_rows_range(void *arg, uint64_t k0, uint64_t k1, int thread)
{
    const some_rows_ctx *sr = arg;
    const delta_ctx *r = &sr->rows;
    for (uint64_t k = k0; k < k1; k++) {
        const uint64_t i = sr->list ? sr->list[k] : k;
        double d2;
        const int64_t j = sr->t ? dpc_kdtree_nearest_denser(sr->t, i, &d2) : -1;
        if (j < 0) {
            FD_TRY(delta_range((void *)r, i, i + 1, thread));
            continue;
        }
        r->delta[i - r->base] = sqrt(d2);
        r->parent[i - r->base] = j;
    }
    return FD_OK;
}

/* Points' coordinates and densities in grid g's order, for the rings. */
static fd_status delta_grid(dpc_grid *g, const dpc_points *p, const double *rho, double side, double **rs)
{
    *rs = NULL;
    FD_TRY(dpc_grid_build(g, p, side));
    fd_status st = dpc_grid_gather(g, p);
    if (st == FD_OK && !(*rs = malloc(p->n * sizeof **rs))) st = fd_fail(FD_ERR_NOMEM, "out of memory");
    if (st != FD_OK) {
        dpc_grid_free(g);
        return st;
    }
    for (uint64_t q = 0; q < p->n; q++) (*rs)[q] = rho[g->idx[q]];
    return FD_OK;
}

/* Rows left after a grid's rings past which the next coarser grid is not
 * built: each grid is a pass over every point on one thread, and at 10^7
 * 8-blob points, where 7 rows were left after the first coarser grid,
 * scanning every point for them instead of building the grids after it
 * took the command from 23.59 s to 22.66 s on 2 threads (bench/ab.sh,
 * row dpc-scan-few-rows in bench/results/ab.csv). */
#define DELTA_SCAN_ROWS 64

/* The rows whose rings did not settle their nearest denser point (the
 * peaks, and points far from any denser one).  Each scanned every point,
 * the larger part of delta's time on 10M 2-D blobs (delta 67.7 s then,
 * 12.2 s now with the cell order: bench/results/dpc-phases.csv).  They go
 * through grids of cells
 * DPC_GRID_COARSER times wider in every coordinate, each by the same
 * rings, until a grid's rings reach across it or few rows are left; what
 * is left (the densest point, which has no denser one, at least) scans,
 * the rows on the threads. */
static fd_status delta_pending(const dpc_points *p, const double *rho, uint64_t i0, uint64_t i1, int threads,
                               double *delta, int64_t *parent, double side)
{
    fd_status st = FD_OK;
    uint64_t np = 0, *list = NULL;
    for (uint64_t i = i0; i < i1; i++) np += parent[i - i0] == DELTA_PENDING;
    for (int whole = 0, level = 1; np > DELTA_SCAN_ROWS && !whole && level < DPC_GRID_LEVELS; level++) {
        side *= DPC_GRID_COARSER;
        dpc_grid g;
        double *rs;
        uint32_t *slots = NULL;
        FD_TRY(delta_grid(&g, p, rho, side, &rs));
        whole = dpc_grid_whole(&g);
        if ((st = cell_slots(&g, p->n, i0, i1, parent, &slots, &np)) == FD_OK) {
            gdelta_ctx r = {{p, rho, delta, parent, i0}, &g, dpc_grid_slack(&g), dpc_grid_rings(&g), rs, slots};
            st = par_rows(threads, 0, np, gdelta_range, &r, NULL);
        }
        free(slots);
        free(rs);
        dpc_grid_free(&g);
        FD_TRY(st);
        np = 0;
        for (uint64_t i = i0; i < i1; i++) np += parent[i - i0] == DELTA_PENDING;
    }
    if (!np) return FD_OK;
    if (!(list = malloc(np * sizeof *list))) return fd_fail(FD_ERR_NOMEM, "out of memory");
    for (uint64_t i = i0, k = 0; i < i1; i++)
        if (parent[i - i0] == DELTA_PENDING) list[k++] = i;
    some_rows_ctx r = {{p, rho, delta, parent, i0}, NULL, list};
    st = par_rows(threads, 0, np, some_rows_range, &r, NULL);
    free(list);
    return st;
}

fd_status dpc_delta_rows(const dpc_points *p, const double *rho, uint64_t i0, uint64_t i1, int threads, double *delta,
                         int64_t *parent, fd_progress *prog)
{
    fd_status st;
    dpc_kdtree *t;
    FD_TRY(tree_for(&t, p, rho, 0));
    if (t) {
        some_rows_ctx r = {{p, rho, delta, parent, i0}, t, NULL};
        st = par_rows(threads, i0, i1, some_rows_range, &r, prog);
        dpc_kdtree_free(t);
    } else if (dpc_grid_usable(p)) {
        dpc_grid g;
        /* The points' coordinates and densities in the grid's order, the
         * rows too (cell_slots): a ring's cells are then read in runs,
         * mostly from cache (10M 2-D blobs: the rings took 27 s in the
         * input's order on 2 cores, 11 s so). */
        const double side = dpc_grid_delta_side(p);
        double *rs;
        uint32_t *slots = NULL;
        st = delta_grid(&g, p, rho, side, &rs);
        if (st == FD_OK) {
            uint64_t rows;
            if ((st = cell_slots(&g, p->n, i0, i1, NULL, &slots, &rows)) == FD_OK) {
                gdelta_ctx r = {{p, rho, delta, parent, i0}, &g, dpc_grid_slack(&g), dpc_grid_rings(&g), rs, slots};
                st = par_rows(threads, 0, rows, gdelta_range, &r, prog);
            }
            free(slots);
            free(rs);
            dpc_grid_free(&g);
        }
        if (st == FD_OK) st = delta_pending(p, rho, i0, i1, threads, delta, parent, side);
    } else {
        int done;
        st = delta_sorted(p, rho, i0, i1, threads, delta, parent, prog, &done);
        if (st == FD_OK && !done) {
            delta_ctx r = {p, rho, delta, parent, i0};
            st = par_rows(threads, i0, i1, delta_range, &r, prog);
        }
    }
    return st;
}

/* ---------------- centres and labels ---------------- */

/* Decreasing key, then increasing index: the total order of dpc.h when
 * the key is rho. */
static int key_cmp(const double *key, int64_t i, int64_t j)
{
    if (key[i] != key[j]) return key[i] > key[j] ? -1 : 1;
    return i < j ? -1 : i > j;
}

static int by_key_desc(const void *a, const void *b, void *key)
{
    return key_cmp(key, *(const int64_t *)a, *(const int64_t *)b);
}

/* The m points first by key (decreasing, then index), in that order,
 * into top: a heap of the m best seen, its worst at the root, so that
 * most points cost one comparison; then one sort of m. */
static void top_by_key(const double *key, uint64_t n, uint64_t m, int64_t *top)
{
    uint64_t len = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (len == m && key_cmp(key, (int64_t)i, top[0]) > 0) continue;
        uint64_t c;
        if (len < m) {
            /* Sift up: the worst of the heap rises to the root. */
            c = len++;
            while (c && key_cmp(key, top[(c - 1) / 2], (int64_t)i) < 0) {
                top[c] = top[(c - 1) / 2];
                c = (c - 1) / 2;
            }
            top[c] = (int64_t)i;
            continue;
        }
        /* Replace the root, sift down. */
        c = 0;
        for (;;) {
            uint64_t l = 2 * c + 1, r = l + 1, w = c;
            int64_t wv = (int64_t)i;
            if (l < m && key_cmp(key, top[l], wv) > 0) w = l, wv = top[l];
            if (r < m && key_cmp(key, top[r], wv) > 0) w = r, wv = top[r];
            if (w == c) break;
            top[c] = top[w];
            c = w;
        }
        top[c] = (int64_t)i;
    }
    qsort_r(top, len, sizeof *top, by_key_desc, (void *)key);
}

/* The automatic rule: the largest ratio between consecutive gammas in
 * decreasing order (order: the first m points by gamma) ends the
 * centres.  The densest point's delta is its largest distance, by
 * convention; for the gaps it counts with the largest other delta, or it
 * would always stand alone.  Only gaps between positive gammas count: a
 * point of density 0 (no neighbour within d_c) is no centre, and the
 * infinite ratio down to the first such point made every point with a
 * neighbour a centre (180 clusters in 200 points of 3 blobs). */
static uint64_t auto_centers(uint64_t n, const double *rho, const double *delta, const double *gamma,
                             const int64_t *order, uint64_t m, uint64_t top)
{
    double dmax = 0, best = 0;
    uint64_t k = 1;
    for (uint64_t i = 0; i < n; i++)
        if (i != top && delta[i] > dmax) dmax = delta[i];
    for (uint64_t q = 1; q < m; q++) {
        const int64_t a = order[q - 1], b = order[q];
        const double hi = a == (int64_t)top ? rho[a] * dmax : gamma[a], lo = b == (int64_t)top ? rho[b] * dmax : gamma[b];
        if (!(lo > 0)) break; /* decreasing: every later gamma is 0 too */
        const double ratio = hi / lo;
        if (ratio > best) {
            best = ratio;
            k = q;
        }
    }
    return k;
}

/* The most centres the rectangle and outlier rules take. */
#define RECT_MAX 65536

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..m) (sorted here), as numpy's: the mean of the two
 * middle values for even m. */
static double median_sorted(double *v, uint64_t m)
{
    qsort(v, m, sizeof *v, cmp_double);
    return m & 1 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

fd_status dpc_gamma_outliers(uint64_t n, const double *gamma, uint64_t top, double alpha, dpc_auto_report *rep)
{
    uint64_t cnt = 0;
    for (uint64_t i = 0; i < n; i++) cnt += i != top && gamma[i] > 0;
    rep->alpha = alpha;
    rep->z = fd_normal_isf(fmin(0.5, alpha / (double)(n ? n : 1)));
    rep->gamma_thr = INFINITY;
    rep->log_median = rep->log_scale = NAN;
    if (cnt < 3) return FD_OK;
    const uint64_t step = cnt > DPC_OUTLIER_SAMPLE ? (cnt + DPC_OUTLIER_SAMPLE - 1) / DPC_OUTLIER_SAMPLE : 1;
    double *v = malloc(((cnt + step - 1) / step + 1) * sizeof *v);
    if (!v) return fd_fail(FD_ERR_NOMEM, "out of memory");
    uint64_t m = 0, seen = 0;
    for (uint64_t i = 0; i < n; i++)
        if (i != top && gamma[i] > 0 && seen++ % step == 0) v[m++] = log(gamma[i]);
    const double med = median_sorted(v, m);
    for (uint64_t q = 0; q < m; q++) v[q] = fabs(v[q] - med);
    const double scale = 1.4826 * median_sorted(v, m);
    free(v);
    rep->log_median = med;
    rep->log_scale = scale;
    /* No spread (half the points or more share one gamma): nothing stands
     * out against it. */
    if (scale > 0) rep->gamma_thr = exp(med + rep->z * scale);
    return FD_OK;
}

fd_status dpc_centers(const dpc_points *p, const double *rho, const double *delta, const int64_t *parent,
                      const dpc_centers_rule *rule, double *gamma, int32_t *labels, int64_t **centers, uint32_t *k,
                      dpc_auto_report *rep)
{
    const uint64_t n = p->n;
    uint64_t nc = 0, top = 0;
    for (uint64_t i = 0; i < n; i++) {
        gamma[i] = rho[i] * delta[i];
        if (parent[i] < 0) top = i;
    }
    const int rect = !rule->k && rule->delta_min > 0, automatic = !rule->k && !rect;
    dpc_auto_report mine = {0};
    if (!rep) rep = &mine;
    memset(rep, 0, sizeof *rep);
    rep->automatic = automatic;
    /* The outlier rule's threshold and count (the densest point aside). */
    uint64_t nout = 0;
    if (automatic) {
        FD_TRY(dpc_gamma_outliers(n, gamma, top, rule->alpha > 0 ? rule->alpha : DPC_OUTLIER_ALPHA, rep));
        for (uint64_t i = 0; i < n; i++) nout += i != top && gamma[i] > rep->gamma_thr;
        if (rule->outliers && nout > RECT_MAX)
            return fd_fail(FD_ERR_USAGE, "the outlier rule found %llu centres (more than %d); give --centers K",
                           (unsigned long long)nout, RECT_MAX);
    }
    /* The centres, in decreasing gamma, with one place to spare for the
     * densest point. */
    uint64_t m = rule->k ? rule->k : DPC_AUTO_MAX + 1;
    if (rect) {
        m = 0;
        for (uint64_t i = 0; i < n; i++) m += rho[i] > rule->rho_min && delta[i] > rule->delta_min;
        if (m > RECT_MAX)
            return fd_fail(FD_ERR_USAGE, "--rho-min %g --delta-min %g: more than %d centres; narrow the rectangle",
                           rule->rho_min, rule->delta_min, RECT_MAX);
    }
    if (automatic && nout + 1 > m) m = nout + 1;
    m = m < n ? m : n;
    int64_t *cs = malloc((m + 1) * sizeof *cs);
    if (!cs) return fd_fail(FD_ERR_NOMEM, "out of memory");
    if (rect) {
        for (uint64_t i = 0; i < n; i++)
            if (rho[i] > rule->rho_min && delta[i] > rule->delta_min) cs[nc++] = (int64_t)i;
        qsort_r(cs, nc, sizeof *cs, by_key_desc, gamma);
    } else {
        top_by_key(gamma, n, m, cs);
        if (rule->k) {
            nc = m;
        } else {
            const uint64_t gap = auto_centers(n, rho, delta, gamma, cs, m < DPC_AUTO_MAX + 1 ? m : DPC_AUTO_MAX + 1, top);
            /* Both counts with the densest point, wherever it falls. */
            int top_in_gap = 0;
            for (uint64_t q = 0; q < gap; q++) top_in_gap |= cs[q] == (int64_t)top;
            rep->gap = gap + !top_in_gap;
            rep->outliers = nout + 1;
            if (rule->outliers) {
                /* The outliers lead the order by gamma, the densest point
                 * wherever its own gamma puts it: take the first nout
                 * points other than it. */
                uint64_t w = 0;
                for (uint64_t q = 0; q < m && w < nout; q++)
                    if (cs[q] != (int64_t)top) cs[w++] = cs[q];
                nc = w;
            } else {
                nc = gap;
            }
        }
    }
    /* The densest point has no denser parent: it is always a centre, in
     * the place its gamma gives it (replacing the last when k is fixed). */
    int has_top = 0;
    for (uint64_t q = 0; q < nc; q++) has_top |= cs[q] == (int64_t)top;
    if (!has_top) {
        if (rule->k && nc == rule->k) nc--;
        uint64_t q = nc;
        while (q > 0 && key_cmp(gamma, cs[q - 1], (int64_t)top) > 0) {
            cs[q] = cs[q - 1];
            q--;
        }
        cs[q] = (int64_t)top;
        nc++;
    }
    for (uint64_t i = 0; i < n; i++) labels[i] = 0;
    for (uint64_t q = 0; q < nc; q++) labels[cs[q]] = (int32_t)(q + 1);
    *centers = cs;
    *k = (uint32_t)nc;
    return FD_OK;
}

/* Walk up to a labelled point, then label the walk: each point is walked
 * over at most twice.  Every chain ends, since the densest point, the
 * only one without a parent, is a centre; a walk of more than n steps, or
 * a parent out of range, is a bug upstream, reported rather than looped
 * on (dpc_gpu_labels bounds its rounds alike). */
fd_status dpc_label_chains(uint64_t n, const int64_t *parent, int32_t *labels)
{
    for (uint64_t i = 0; i < n; i++) {
        int64_t j = (int64_t)i;
        for (uint64_t steps = 0; labels[j] == 0; steps++) {
            if (steps >= n || parent[j] < 0 || (uint64_t)parent[j] >= n)
                return fd_fail(FD_ERR_INTERNAL, "dpc_label_chains: point %lld's chain of parents %s", (long long)i,
                               steps >= n ? "has a cycle" : "leaves the points");
            j = parent[j];
        }
        const int32_t l = labels[j];
        for (j = (int64_t)i; labels[j] == 0; j = parent[j]) labels[j] = l;
    }
    return FD_OK;
}

fd_status dpc_assign(const dpc_points *p, const double *rho, const double *delta, const int64_t *parent,
                     const dpc_centers_rule *rule, double *gamma, int32_t *labels, int64_t **centers, uint32_t *k)
{
    FD_TRY(dpc_centers(p, rho, delta, parent, rule, gamma, labels, centers, k, NULL));
    return dpc_label_chains(p->n, parent, labels);
}

/* ---------------- halo ---------------- */

typedef struct {
    const dpc_points *p;
    double dc2;
    const double *rho;
    const int32_t *labels;
    uint32_t k;
    double *border;       /* per thread: k + 1 values */
    const ball *b;        /* the grid's cells, or NULL */
    const dpc_kdtree *t;  /* the tree, or NULL; neither: every point */
    const int32_t *cell_label; /* with the grid: a cell's one label, or -1 where its points have several */
} halo_ctx;

static void halo_pair(const halo_ctx *h, double *b, uint64_t i, uint64_t j)
{
    if (h->labels[j] == h->labels[i]) return;
    const double avg = (h->rho[i] + h->rho[j]) / 2;
    if (avg > b[h->labels[i]]) b[h->labels[i]] = avg;
}

/* The pairs closer than d_c from the cells within reach (the grid). */
FD_HOT static fd_status ghalo_range(void *arg, uint64_t i0, uint64_t i1, int thread)
{
    const halo_ctx *h = arg;
    const dpc_grid *g = h->b->g;
    double *b = h->border + (size_t)thread * (h->k + 1);
    for (uint64_t i = i0; i < i1; i++) {
        int64_t c[DPC_GRID_MAX_D];
        uint64_t cell;
        dpc_cell_walk w;
        const double *xi = h->p->x + i * h->p->d;
        dpc_grid_coords(g, i, c);
        dpc_walk_init(&w, g, c, h->b->reach, 0);
        while (dpc_walk_next(&w, &cell)) {
            /* a cell of i's own cluster alone holds no pair of the halo
             * (many equal points in one cell made each visit all) */
            if (g->start[cell] == g->start[cell + 1] || h->cell_label[cell] == h->labels[i] ||
                ball_test(h->b, xi, w.at) == CELL_OUT)
                continue;
            for (uint64_t s = g->start[cell]; s < g->start[cell + 1]; s++) {
                const uint64_t j = g->idx[s];
                if (j != i && pair_d2(h->p, i, j) < h->dc2) halo_pair(h, b, i, j);
            }
        }
    }
    return FD_OK;
}

typedef struct {
    const halo_ctx *h;
    double *b;
} thalo_visit;

static void thalo_pair(void *arg, uint64_t i, uint64_t j)
{
    const thalo_visit *v = arg;
    halo_pair(v->h, v->b, i, j);
}

/* The pairs closer than d_c from the tree's candidates. */
static fd_status thalo_range(void *arg, uint64_t i0, uint64_t i1, int thread)
{
    const halo_ctx *h = arg;
    thalo_visit v = {h, h->border + (size_t)thread * (h->k + 1)};
    for (uint64_t i = i0; i < i1; i++) dpc_kdtree_within_other(h->t, i, h->labels[i], h->dc2, thalo_pair, &v);
    return FD_OK;
}

FD_HOT static fd_status halo_range(void *arg, uint64_t i0, uint64_t i1, int thread)
{
    const halo_ctx *h = arg;
    const uint64_t n = h->p->n;
    double d2[JBLOCK], *b = h->border + (size_t)thread * (h->k + 1);
    for (uint64_t i = i0; i < i1; i++)
        for (uint64_t j0 = 0; j0 < n; j0 += JBLOCK) {
            const uint64_t j1 = j0 + JBLOCK < n ? j0 + JBLOCK : n;
            dist2(h->p, i, j0, j1, d2);
            for (uint64_t j = j0; j < j1; j++)
                if (d2[j - j0] < h->dc2) halo_pair(h, b, i, j);
        }
    return FD_OK;
}

fd_status dpc_halo_border(const dpc_points *p, double dc, const double *rho, const int32_t *labels, uint32_t k,
                          uint64_t i0, uint64_t i1, int threads, double *border, fd_progress *prog)
{
    if (threads < 1) threads = 1;
    double *b = calloc((size_t)threads * (k + 1), sizeof *b);
    if (!b) return fd_fail(FD_ERR_NOMEM, "out of memory");
    fd_status st = FD_OK;
    dpc_kdtree *tree = NULL;
    st = tree_for(&tree, p, NULL, dpc_cutoff_d2(dc));
    if (tree) {
        /* Subtrees of i's own cluster hold no pair of the halo (many equal
         * points made each visit all, as in the grid's cells). */
        halo_ctx h = {p, dpc_cutoff_d2(dc), rho, labels, k, b, NULL, tree, NULL};
        st = dpc_kdtree_set_labels(tree, labels);
        if (st == FD_OK) st = par_rows(threads, i0, i1, thalo_range, &h, prog);
        dpc_kdtree_free(tree);
    } else if (st != FD_OK) {
    } else if (dpc_grid_usable(p)) {
        dpc_grid g = {0};
        ball bl;
        st = dpc_grid_build(&g, p, dc / 4);
        int32_t *cl = st == FD_OK ? malloc(g.ncells * sizeof *cl) : NULL;
        if (st == FD_OK && !cl) st = fd_fail(FD_ERR_NOMEM, "out of memory for the halo's cells");
        if (st == FD_OK) {
            for (uint64_t cell = 0; cell < g.ncells; cell++) {
                int32_t one = g.start[cell] < g.start[cell + 1] ? labels[g.idx[g.start[cell]]] : -1;
                for (uint64_t s = g.start[cell]; s < g.start[cell + 1] && one >= 0; s++)
                    if (labels[g.idx[s]] != one) one = -1;
                cl[cell] = one;
            }
            ball_init(&bl, &g, dc, ball_margin(p, &g, dc));
            halo_ctx h = {p, dpc_cutoff_d2(dc), rho, labels, k, b, &bl, NULL, cl};
            st = par_rows(threads, i0, i1, ghalo_range, &h, prog);
        }
        free(cl);
        if (g.start) dpc_grid_free(&g);
    } else {
        halo_ctx h = {p, dpc_cutoff_d2(dc), rho, labels, k, b, NULL, NULL, NULL};
        st = par_rows(threads, i0, i1, halo_range, &h, prog);
    }
    for (int t = 0; st == FD_OK && t < threads; t++)
        for (uint32_t q = 0; q <= k; q++)
            if (b[(size_t)t * (k + 1) + q] > border[q]) border[q] = b[(size_t)t * (k + 1) + q];
    free(b);
    return st;
}

void dpc_halo_core(uint64_t n, const double *rho, const int32_t *labels, const double *border, int32_t *core)
{
    for (uint64_t i = 0; i < n; i++) core[i] = rho[i] < border[labels[i]] ? 0 : labels[i];
}

/* ---------------- adjusted Rand index ---------------- */

static double choose2(double x) { return x * (x - 1) / 2; }

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

typedef struct {
    int64_t b;
    int32_t a;
    uint32_t used;
    uint64_t count;
} key_slot;

static uint64_t key_hash(int32_t a, int64_t b) { return mix64((uint64_t)b * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uint32_t)a); }

/* The slot of key (a, b) in a table of cap (a power of two) slots. */
static key_slot *key_find(key_slot *t, uint64_t cap, int32_t a, int64_t b)
{
    uint64_t h = key_hash(a, b) & (cap - 1);
    while (t[h].used && !(t[h].a == a && t[h].b == b)) h = (h + 1) & (cap - 1);
    return &t[h];
}

/* A table of distinct keys and their counts, by open addressing, grown
 * with the distinct keys (few: clusters and classes), so that it stays in
 * cache.  key_add: count more of key (a, b); -1 when out of memory. */
typedef struct {
    key_slot *t;
    uint64_t cap, used;
} key_table;

static int key_add(key_table *k, int32_t a, int64_t b, uint64_t count)
{
    if (!k->t && !(k->t = calloc(k->cap = 1024, sizeof *k->t))) return -1;
    key_slot *e = key_find(k->t, k->cap, a, b);
    if (!e->used) {
        if (2 * (k->used + 1) > k->cap) {
            key_slot *u = calloc(2 * k->cap, sizeof *u);
            if (!u) return -1;
            for (uint64_t h = 0; h < k->cap; h++)
                if (k->t[h].used) *key_find(u, 2 * k->cap, k->t[h].a, k->t[h].b) = k->t[h];
            free(k->t);
            k->t = u;
            k->cap *= 2;
            e = key_find(k->t, k->cap, a, b);
        }
        *e = (key_slot){b, a, 1, 0};
        k->used++;
    }
    e->count += count;
    return 0;
}

/* Sum of C(count, 2) over the keys: integers below 2^53 (n < 2^31), so
 * exact in any order. */
static double key_choose2(const key_table *k)
{
    double s = 0;
    for (uint64_t h = 0; k->t && h < k->cap; h++) s += choose2((double)k->t[h].count);
    return s;
}

/* The adjusted Rand index's three sums of C(count, 2): over the distinct
 * pairs (a[i], b[i]) in one pass over the points (O(n), where sorting ten
 * million pairs took seconds), and over a and over b alone from the
 * pairs' counts. */
double dpc_ari(const int32_t *a, const int64_t *b, uint64_t n)
{
    if (n < 2) return NAN;
    key_table joint = {0}, ka = {0}, kb = {0};
    double ari = NAN;
    for (uint64_t i = 0; i < n; i++)
        if (key_add(&joint, a[i], b[i], 1)) goto done;
    for (uint64_t h = 0; h < joint.cap; h++)
        if (joint.t[h].used &&
            (key_add(&ka, joint.t[h].a, 0, joint.t[h].count) || key_add(&kb, 0, joint.t[h].b, joint.t[h].count)))
            goto done;
    const double sij = key_choose2(&joint), sa = key_choose2(&ka), sb = key_choose2(&kb);
    const double expect = sa * sb / choose2((double)n), maxi = (sa + sb) / 2;
    ari = maxi == expect ? 1.0 : (sij - expect) / (maxi - expect);
done:
    free(joint.t);
    free(ka.t);
    free(kb.t);
    return ari;
}
