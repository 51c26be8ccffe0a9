/* SPDX-License-Identifier: BSD-3-Clause */
#include "tile.h"

#include "pvalue.h"
#include "../common/env.h"
#include "../common/par_rows.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

void spearman_sel_init(spearman_sel *s, int mode, double value, uint32_t n)
{
    s->mode = mode;
    s->by_n = NULL;
    s->kendall = NULL;
    s->pkey = 0;
    s->dof = (int)n - 2;
    s->alpha = 0;
    s->x_lo = s->x_hi = 0;
    s->p_lo = s->p_hi = 0;
    if (mode == 'p') {
        s->alpha = value;
        s->q = 1 - spearman_x_crit(value, s->dof);
    } else if (mode == 'r') {
        s->q = value * value;
    } else {
        s->q = 0;
    }
    /* sqrt(q) with a margin far above float rounding of |S| and the roots. */
    s->pre = (float)(sqrt(s->q) * (1 - 1e-5));
}

void spearman_sel_x(spearman_sel *s, double x_lo, double x_hi, uint32_t n)
{
    const kendall_ptab *kendall = s->kendall;
    const spearman_sel *by_n = s->by_n;
    const int pkey = s->pkey;
    spearman_sel_init(s, 'a', 0, n);
    s->mode = 'x';
    s->x_lo = x_lo;
    s->x_hi = x_hi;
    s->q = x_hi >= 1 ? 0 : 1 - x_hi;
    s->by_n = by_n;
    s->kendall = kendall;
    s->pkey = pkey;
    /* Kendall: [x_lo, x_hi] is a range of p, no bound on |tau|. */
    if (kendall) s->q = 0;
    s->pre = (float)(sqrt(s->q) * (1 - 1e-5));
}

void spearman_sel_p(spearman_sel *s, double p_lo, double p_hi, uint32_t n)
{
    const int dof = (int)n - 2;
    spearman_sel_x(s, spearman_x_from(p_lo, dof), spearman_x_crit(p_hi, dof), n);
    s->p_lo = p_lo;
    s->p_hi = p_hi;
}

fd_status spearman_sel_by_n(spearman_sel *s, int mode, double value, uint32_t n, spearman_sel **table)
{
    spearman_sel *t = calloc((size_t)n + 1, sizeof *t);
    if (!t) return fd_fail(FD_ERR_NOMEM, "out of memory");
    for (uint32_t m = 3; m <= n; m++) spearman_sel_init(&t[m], mode, value, m);
    s->by_n = t;
    *table = t;
    return FD_OK;
}

double spearman_pair_key(const spearman_mat *x, const spearman_mat *y, const spearman_sel *sel, uint64_t i, uint64_t j,
                         int64_t s)
{
    if (sel->kendall) return kendall_p_tab(sel->kendall, s, &x->ties[i], &y->ties[j]);
    int64_t sii, sjj;
    const int dof = smat_pair_stats(x, y, i, j, &s, &sii, &sjj, sel->dof);
    const double v = pair_x(s, sii, sjj);
    return sel->pkey ? spearman_p_of_x(v, dof) : v;
}

int spearman_pair_bin(const spearman_mat *x, const spearman_mat *y, const spearman_sel *sel, const spearman_acc *acc,
                      uint64_t i, uint64_t j, int64_t s, double *key)
{
    *key = spearman_pair_key(x, y, sel, i, j, s);
    if (!acc->pedge) return spearman_xbin(acc, *key);
    if (smat_incomplete(x, i) || smat_incomplete(y, j)) return spearman_pbin(acc, *key);
    return spearman_xbin(acc, pair_x(s, x->sii[i], y->sii[j]));
}

int spearman_xbin(const spearman_acc *acc, double x)
{
    double b = x * acc->xscale;
    return b <= 0 ? 0 : b >= acc->xbins - 1 ? (int)acc->xbins - 1 : (int)b;
}

int spearman_pbin(const spearman_acc *acc, double p)
{
    uint32_t lo = 0, hi = acc->xbins; /* pedge[lo] <= p, or lo = 0 */
    while (hi - lo > 1) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (acc->pedge[mid] <= p) lo = mid;
        else hi = mid;
    }
    return (int)lo;
}

int spearman_keep(const spearman_sel *sel, int64_t s, int64_t sii, int64_t sjj)
{
    if (sii == 0 || sjj == 0) return 0;
    if (sel->mode == 'x') {
        double x = pair_x(s, sii, sjj);
        return x >= sel->x_lo && x <= sel->x_hi;
    }
    long double p = (long double)sii * (long double)sjj, s2 = (long double)s * (long double)s;
    long double d = s2 - (long double)sel->q * p;
    /* Far from the boundary the sign decides.  Near it (p-value mode), p
     * itself, from the exact x = (P - S^2) / P, is compared with alpha. */
    if (sel->alpha > 0 && fabsl(d) <= 1e-12L * p) {
        double x = (double)((p - s2) / p);
        return spearman_p_of_x(x, sel->dof) <= sel->alpha;
    }
    return d >= 0;
}

/* Room for `more` pairs in acc->out; sets acc->failed when there is none. */
static int out_room(spearman_acc *acc, size_t more)
{
    if (acc->nout + more <= acc->capout) return 1;
    size_t cap = acc->capout ? acc->capout : 4096;
    while (cap < acc->nout + more) cap *= 2;
    spair *p = realloc(acc->out, cap * sizeof *p);
    if (!p) {
        acc->failed = 1;
        return 0;
    }
    acc->out = p;
    acc->capout = cap;
    return 1;
}

static void emit(spearman_acc *acc, uint64_t i, uint64_t j, int64_t s)
{
    if (out_room(acc, 1)) acc->out[acc->nout++] = (spair){i, j, s};
}

/* ---------------- top-k heaps ---------------- */

static fd_status topk_alloc(spearman_topk *t, uint32_t rows)
{
    uint32_t *n = calloc(rows, sizeof *n);
    float *thr = calloc(rows, sizeof *thr);
    spearman_topk_ent *heap = calloc((size_t)rows * t->k, sizeof *heap);
    if (!n || !thr || !heap) {
        free(n);
        free(thr);
        free(heap);
        return fd_fail(FD_ERR_NOMEM, "out of memory for --top-k %u heaps of %u rows", t->k, rows);
    }
    spearman_topk_free(t);
    t->n = n;
    t->thr = thr;
    t->heap = heap;
    t->cap = rows;
    return FD_OK;
}

fd_status spearman_topk_init(spearman_topk *t, uint32_t k, uint32_t max_rows)
{
    memset(t, 0, sizeof *t);
    t->k = k;
    return topk_alloc(t, max_rows);
}

void spearman_topk_free(spearman_topk *t)
{
    free(t->n);
    free(t->thr);
    free(t->heap);
    t->n = NULL;
    t->thr = NULL;
    t->heap = NULL;
    t->cap = 0;
}

fd_status spearman_topk_reset(spearman_topk *t, uint64_t i0, uint32_t rows, int same)
{
    if (rows > t->cap) FD_TRY(topk_alloc(t, rows));
    t->i0 = i0;
    t->rows = rows;
    t->same = same;
    memset(t->n, 0, rows * sizeof *t->n);
    memset(t->thr, 0, rows * sizeof *t->thr);
    return FD_OK;
}

/* a stronger than b, both partners of one row: |S_a| / sqrt(S_ia S_ja)
 * against |S_b| / sqrt(S_ib S_jb), exactly where S^2 S_i S_j fits 128 bits
 * (up to some 2,000 observations; with one S_i, as without missing
 * values, S^2 S_j, up to some 25,000), in long double beyond; then
 * smaller j. */
static int stronger(const spearman_topk_ent *a, const spearman_topk_ent *b)
{
    unsigned __int128 l, r;
    const unsigned __int128 sa = (unsigned __int128)((__int128)a->s * a->s),
                            sb = (unsigned __int128)((__int128)b->s * b->s);
    const int same_i = a->sii == b->sii;
    const uint64_t la = (uint64_t)(same_i ? 1 : b->sii), ra = (uint64_t)(same_i ? 1 : a->sii);
    if (!__builtin_mul_overflow(sa, (unsigned __int128)la * (uint64_t)b->sjj, &l) &&
        !__builtin_mul_overflow(sb, (unsigned __int128)ra * (uint64_t)a->sjj, &r))
        return l != r ? l > r : a->j < b->j;
    const long double x = (long double)a->s * a->s / ((long double)a->sii * a->sjj),
                      y = (long double)b->s * b->s / ((long double)b->sii * b->sjj);
    return x != y ? x > y : a->j < b->j;
}

static void sift_down(spearman_topk_ent *h, uint32_t n, uint32_t i)
{
    for (;;) {
        uint32_t c = 2 * i + 1, w = i;
        if (c < n && stronger(&h[w], &h[c])) w = c;
        if (c + 1 < n && stronger(&h[w], &h[c + 1])) w = c + 1;
        if (w == i) return;
        spearman_topk_ent tmp = h[i];
        h[i] = h[w];
        h[w] = tmp;
        i = w;
    }
}

void spearman_topk_offer(spearman_topk *t, const spearman_mat *x, uint64_t i, uint64_t j, int64_t s, int64_t sjj)
{
    spearman_topk_offer_sums(t, i, j, s, x->sii[i], sjj);
}

void spearman_topk_offer_sums(spearman_topk *t, uint64_t i, uint64_t j, int64_t s, int64_t sii, int64_t sjj)
{
    if (t->same && i == j) return;
    uint32_t r = (uint32_t)(i - t->i0), *n = &t->n[r];
    spearman_topk_ent *h = t->heap + (size_t)r * t->k, e = {j, s, sii, sjj};
    if (*n < t->k) {
        uint32_t c = (*n)++;
        h[c] = e;
        while (c > 0 && stronger(&h[(c - 1) / 2], &h[c])) { /* weakest on top */
            spearman_topk_ent tmp = h[c];
            h[c] = h[(c - 1) / 2];
            h[(c - 1) / 2] = tmp;
            c = (c - 1) / 2;
        }
    } else if (stronger(&e, &h[0])) {
        h[0] = e;
        sift_down(h, *n, 0);
    } else {
        return;
    }
    if (*n == t->k) t->thr[r] = (float)fabs(spearman_rho(h[0].s, h[0].sii, h[0].sjj));
}

/* Empties each row's heap, weakest first, into the end of the row's slice
 * of acc->out, so the row's partners come out strongest first. */
void spearman_topk_emit(spearman_topk *t, spearman_acc *acc)
{
    for (uint32_t r = 0; r < t->rows; r++) {
        spearman_topk_ent *h = t->heap + (size_t)r * t->k;
        uint32_t n = t->n[r];
        if (!out_room(acc, n)) return;
        size_t base = acc->nout;
        acc->nout += n;
        for (uint32_t left = n; left > 0; left--) {
            acc->out[base + left - 1] = (spair){t->i0 + r, h[0].j, h[0].s};
            h[0] = h[left - 1];
            sift_down(h, left - 1, 0);
        }
        acc->selected += n;
    }
}

void spearman_acc_take(const spearman_mat *x, const spearman_mat *y, const spearman_sel *sel, spearman_acc *acc,
                       uint64_t i, uint64_t j, int64_t s, int known_keep)
{
    if (known_keep) {
        if (acc->out) emit(acc, i, j, s);
        return;
    }
    const int64_t sii = x->sii[i], sjj = y->sii[j];
    /* The test; with a range of p (--fdr's key for Kendall and --missing
     * pairwise), the pair's p, which its bin then reuses. */
    double p = -1;
    int keep;
    if (sel->kendall && sel->mode != 'x') {
        keep = sii != 0 && sjj != 0 && kendall_p_le(sel->kendall, s, &x->ties[i], &y->ties[j]);
    } else if (sel->kendall && sel->mode == 'x') {
        if (sii == 0 || sjj == 0) return;
        p = spearman_pair_key(x, y, sel, i, j, s);
        keep = p >= sel->x_lo && p <= sel->x_hi;
    } else {
        keep = spearman_keep(sel, s, sii, sjj);
    }
    if (!keep) return;
    acc->selected++;
    /* the bin: of Kendall's p, else of x (under --missing pairwise too:
     * these rows have all n observations, binned as the GPU bins them) */
    if (acc->xhist) {
        const double key = p >= 0 ? p : sel->kendall ? spearman_pair_key(x, y, sel, i, j, s) : pair_x(s, sii, sjj);
        acc->xhist[spearman_xbin(acc, key)]++;
    }
    if (acc->out) emit(acc, i, j, s);
}

/* One pair after its S is known: histogram (hk: row i's factor,
 * spearman_hist_factor), test, count or emit. */
static inline void visit(const spearman_mat *x, const spearman_mat *y, uint64_t i, uint64_t j, int64_t s, float hk,
                         const spearman_sel *sel, spearman_acc *acc)
{
    int64_t sii = x->sii[i], sjj = y->sii[j];
    if (sii == 0 || sjj == 0) return;
    if (acc->topk) {
        if (!(acc->topk->same && i == j)) acc->pairs++;
        spearman_topk_offer(acc->topk, x, i, j, s, sjj);
        return;
    }
    acc->pairs++;
    if (acc->hist) acc->hist[spearman_hist_bin((int32_t)s, hk, y->inv_root[j])]++;
    spearman_acc_take(x, y, sel, acc, i, j, s, 0);
}

void spearman_acc_take_sums(const spearman_sel *sel, spearman_acc *acc, uint64_t i, uint64_t j, uint32_t m, int64_t s,
                            int64_t sii, int64_t sjj, int known_keep)
{
    if (known_keep) {
        if (acc->out) emit(acc, i, j, s);
        return;
    }
    double p = -1;
    if (sel->mode == 'x') { /* --fdr: a range of p (spearman_sel_p) */
        p = spearman_p_of_x(pair_x(s, sii, sjj), (int)m - 2);
        if (p < sel->p_lo || p > sel->p_hi) return;
    } else if (!spearman_keep(sel->by_n ? &sel->by_n[m] : sel, s, sii, sjj)) {
        return;
    }
    acc->selected++;
    if (acc->xhist) acc->xhist[spearman_pbin(acc, p >= 0 ? p : spearman_p_of_x(pair_x(s, sii, sjj), (int)m - 2))]++;
    if (acc->out) emit(acc, i, j, s);
}

/* One pair with a missing value: its own sums, its own selection. */
static void visit_missing(const spearman_mat *x, const spearman_mat *y, uint64_t i, uint64_t j,
                          const spearman_sel *sel, spearman_acc *acc)
{
    int64_t s, sii, sjj;
    const uint32_t m = smat_pair_sums(x, y, i, j, &s, &sii, &sjj);
    if (m < 3 || sii == 0 || sjj == 0) return;
    if (acc->topk) {
        if (!(acc->topk->same && i == j)) acc->pairs++;
        spearman_topk_offer_sums(acc->topk, i, j, s, sii, sjj);
        return;
    }
    acc->pairs++;
    if (acc->hist)
        acc->hist[spearman_hist_bin((int32_t)s, spearman_hist_factor((float)(1 / sqrt((double)sii))),
                                    (float)(1 / sqrt((double)sjj)))]++;
    spearman_acc_take_sums(sel, acc, i, j, m, s, sii, sjj, 0);
}

void spearman_tile_missing(const spearman_mat *x, const spearman_mat *y, uint64_t i0, uint64_t i1, uint64_t j0,
                           uint64_t j1, int upper, const spearman_sel *sel, spearman_acc *acc)
{
    /* A complete row meets only the tile's incomplete columns, listed
     * once (a tile is BLOCK rows a side; longer ones in pieces).  A
     * complete row that is constant is constant over any columns. */
    enum { PIECE = 512 };
    uint64_t cols[PIECE];
    for (uint64_t p0 = j0; p0 < j1; p0 += PIECE) {
        const uint64_t p1 = j1 - p0 > PIECE ? p0 + PIECE : j1;
        uint32_t nc = 0;
        for (uint64_t j = p0; j < p1; j++)
            if (smat_incomplete(y, j)) cols[nc++] = j;
        for (uint64_t i = i0; i < i1; i++) {
            const uint64_t from = upper && p0 <= i ? i + 1 : p0;
            if (smat_incomplete(x, i)) {
                for (uint64_t j = from; j < p1; j++)
                    if (smat_incomplete(y, j) || y->sii[j] != 0) visit_missing(x, y, i, j, sel, acc);
            } else if (x->sii[i] != 0) {
                for (uint32_t c = 0; c < nc; c++)
                    if (cols[c] >= from) visit_missing(x, y, i, cols[c], sel, acc);
            }
        }
    }
}

/* ---------------- spearman_tile_missing on several threads ---------------- */

struct spearman_parts {
    int n;             /* parts allocated */
    uint32_t xbins;    /* bins each xhist holds */
    spearman_acc *acc; /* n parts */
    uint64_t *hist;    /* n x SPEARMAN_HIST_BINS */
    uint64_t *xhist;   /* n x xbins, or NULL */
    spair **out;       /* n buffers of pairs, kept between calls */
    size_t *cap;
};

void spearman_parts_free(spearman_parts **pp)
{
    spearman_parts *p = *pp;
    if (!p) return;
    for (int t = 0; p->out && t < p->n; t++) free(p->out[t]);
    free(p->out);
    free(p->cap);
    free(p->acc);
    free(p->hist);
    free(p->xhist);
    free(p);
    *pp = NULL;
}

static fd_status parts_reserve(spearman_parts **pp, int n, uint32_t xbins)
{
    spearman_parts *p = *pp;
    if (p && p->n >= n && (!xbins || p->xbins >= xbins)) return FD_OK;
    spearman_parts_free(pp);
    p = calloc(1, sizeof *p);
    if (p) {
        p->n = n;
        p->xbins = xbins;
        p->acc = calloc((size_t)n, sizeof *p->acc);
        p->out = calloc((size_t)n, sizeof *p->out);
        p->cap = calloc((size_t)n, sizeof *p->cap);
        p->hist = malloc((size_t)n * SPEARMAN_HIST_BINS * sizeof *p->hist);
        p->xhist = xbins ? malloc((size_t)n * xbins * sizeof *p->xhist) : NULL;
    }
    if (!p || !p->acc || !p->out || !p->cap || !p->hist || (xbins && !p->xhist)) {
        spearman_parts_free(&p);
        return fd_fail(FD_ERR_NOMEM, "out of memory for %d threads' pair counts", n);
    }
    *pp = p;
    return FD_OK;
}

typedef struct {
    const spearman_mat *x, *y;
    uint64_t i0, run, j0, j1;
    int upper;
    const spearman_sel *sel;
    spearman_acc *part;
} split_ctx;

/* One run of rows a call (the chunk is the run), into the run's part. */
static fd_status split_rows(void *arg, uint64_t r0, uint64_t r1, int thread)
{
    const split_ctx *c = arg;
    (void)thread;
    spearman_tile_missing(c->x, c->y, r0, r1, c->j0, c->j1, c->upper, c->sel, &c->part[(r0 - c->i0) / c->run]);
    return FD_OK;
}

fd_status spearman_tile_missing_split(spearman_parts **parts, int threads, const spearman_mat *x,
                                      const spearman_mat *y, uint64_t i0, uint64_t i1, uint64_t j0, uint64_t j1,
                                      int upper, const spearman_sel *sel, spearman_acc *acc)
{
    const uint64_t rows = i1 > i0 ? i1 - i0 : 0;
    const int T = rows < (uint64_t)threads ? (int)rows : threads;
    if (acc->topk || T <= 1) {
        spearman_tile_missing(x, y, i0, i1, j0, j1, upper, sel, acc);
        return FD_OK;
    }
    const uint32_t xbins = acc->xhist ? acc->xbins : 0;
    FD_TRY(parts_reserve(parts, T, xbins));
    spearman_parts *p = *parts;
    const uint64_t run = (rows + (uint64_t)T - 1) / (uint64_t)T;
    const int nrun = (int)((rows + run - 1) / run);
    for (int t = 0; t < nrun; t++) {
        spearman_acc *a = &p->acc[t];
        *a = *acc; /* the selection's settings (xscale, pedge, ...) */
        a->pairs = a->selected = 0;
        a->hist = acc->hist ? p->hist + (size_t)t * SPEARMAN_HIST_BINS : NULL;
        a->xhist = acc->xhist ? p->xhist + (size_t)t * xbins : NULL;
        if (a->hist) memset(a->hist, 0, SPEARMAN_HIST_BINS * sizeof *a->hist);
        if (a->xhist) memset(a->xhist, 0, xbins * sizeof *a->xhist);
        /* The kernels emit only into a buffer that exists (out != NULL). */
        a->out = acc->out ? p->out[t] : NULL;
        a->capout = acc->out ? p->cap[t] : 0;
        a->nout = 0;
        a->failed = 0;
        a->keep_cap = 0;
        a->keep_over = 0;
        if (acc->out && !out_room(a, 1)) return fd_fail(FD_ERR_NOMEM, "out of memory buffering selected pairs");
    }
    split_ctx c = {x, y, i0, run, j0, j1, upper, sel, p->acc};
    const fd_status st = par_rows_chunk(T, i0, i1, run, split_rows, &c, NULL);
    for (int t = 0; t < nrun; t++) {
        spearman_acc *a = &p->acc[t];
        acc->pairs += a->pairs;
        acc->selected += a->selected;
        if (acc->hist)
            for (int b = 0; b < SPEARMAN_HIST_BINS; b++) acc->hist[b] += a->hist[b];
        if (acc->xhist)
            for (uint32_t b = 0; b < xbins; b++) acc->xhist[b] += a->xhist[b];
        if (a->failed) acc->failed = 1;
        if (!acc->out) continue;
        if (a->nout && out_room(acc, a->nout)) {
            memcpy(acc->out + acc->nout, a->out, a->nout * sizeof *a->out);
            acc->nout += a->nout;
        }
        p->out[t] = a->out; /* grown by out_room */
        p->cap[t] = a->capout;
    }
    return st;
}

void spearman_tile_scalar(const spearman_mat *x, const spearman_mat *y, uint64_t i0, uint64_t i1, uint64_t j0,
                          uint64_t j1, int upper, const spearman_sel *sel, spearman_acc *acc)
{
    for (uint64_t i = i0; i < i1; i++) {
        if (x->sii[i] == 0) continue;
        const float hk = spearman_hist_factor(x->inv_root[i]);
        for (uint64_t j = upper && j0 <= i ? i + 1 : j0; j < j1; j++) {
            int64_t s = 0;
            for (uint32_t k = 0; k < x->n; k++) s += (int64_t)smat_a(x, i, k) * smat_a(y, j, k);
            visit(x, y, i, j, s, hk, sel, acc);
        }
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* 4 rows of x against 8 rows of y at a time: per column pair, one load of
 * y's 8 rows, four 32-bit broadcasts of x's rows, four pmaddwd.  Each of
 * the 32 sums stays in its own lane, so no horizontal reduction. */
__attribute__((target("avx2"))) static void tile_avx2(const spearman_mat *x, const spearman_mat *y, uint64_t i0,
                                                      uint64_t i1, uint64_t j0, uint64_t j1, int upper,
                                                      const spearman_sel *sel, spearman_acc *acc)
{
    const uint32_t kp = x->kp;
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256 zero = _mm256_setzero_ps();
    int hist = acc->hist != NULL;
    for (uint64_t ib = i0; ib < i1; ib += 4) {
        const uint32_t *xi[4];
        float thr[4];
        int live = 0;
        for (int r = 0; r < 4; r++) {
            uint64_t i = ib + r < i1 ? ib + r : ib; /* past the end: repeat a row, masked below */
            xi[r] = x->packed + (i >> 3) * kp * 8 + (i & 7);
            thr[r] = sel->pre * x->root[i];
            live |= (ib + r < i1 && x->sii[ib + r] != 0) << r;
        }
        if (!live) continue;
        uint64_t jstart = j0;
        if (upper && j0 <= ib) jstart = (ib + 1) & ~(uint64_t)7;
        for (uint64_t jb = jstart; jb < j1; jb += 8) {
            const __m256i *yp = (const __m256i *)(y->packed + (jb >> 3) * kp * 8);
            __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
            for (uint32_t p = 0; p < kp; p++) {
                __m256i b = _mm256_loadu_si256(yp + p);
                a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_set1_epi32((int)xi[0][p * 8]), b));
                a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_set1_epi32((int)xi[1][p * 8]), b));
                a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(_mm256_set1_epi32((int)xi[2][p * 8]), b));
                a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(_mm256_set1_epi32((int)xi[3][p * 8]), b));
            }
            if (acc->topk)
                for (int r = 0; r < 4; r++)
                    if (live >> r & 1) thr[r] = acc->topk->thr[ib + r - acc->topk->i0] * (1 - 1e-5f) * x->root[ib + r];
            __m256 rootj = _mm256_loadu_ps(y->root + jb);
            int jvalid = _mm256_movemask_ps(_mm256_cmp_ps(rootj, zero, _CMP_GT_OQ));
            if (jb + 8 > j1) jvalid &= (1 << (j1 - jb)) - 1;
            __m256i acc4[4] = {a0, a1, a2, a3};
            for (int r = 0; r < 4; r++) {
                if (!(live >> r & 1)) continue;
                uint64_t i = ib + r;
                int valid = jvalid;
                if (upper && jb <= i) {
                    /* lanes j > i only */
                    __m256i gt = _mm256_cmpgt_epi32(lane, _mm256_set1_epi32((int)(i - jb)));
                    valid &= _mm256_movemask_ps(_mm256_castsi256_ps(gt));
                }
                if (!valid) continue;
                __m256 as = _mm256_cvtepi32_ps(_mm256_abs_epi32(acc4[r]));
                int cand = valid & _mm256_movemask_ps(_mm256_cmp_ps(as, _mm256_mul_ps(_mm256_set1_ps(thr[r]), rootj), _CMP_GE_OQ));
                if (acc->topk) {
                    if (acc->topk->same && i >= jb && i < jb + 8) valid &= ~(1 << (i - jb));
                    acc->pairs += (uint64_t)__builtin_popcount((unsigned)valid);
                    int32_t sv[8];
                    _mm256_storeu_si256((__m256i *)sv, acc4[r]);
                    for (int m = cand & valid; m; m &= m - 1) {
                        int l = __builtin_ctz((unsigned)m);
                        spearman_topk_offer(acc->topk, x, i, jb + l, sv[l], y->sii[jb + l]);
                    }
                    continue;
                }
                acc->pairs += (uint64_t)__builtin_popcount((unsigned)valid);
                if (hist) {
                    const float ik = spearman_hist_factor(x->inv_root[i]); /* spearman_hist.h */
                    __m256 u = _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(acc4[r]), _mm256_set1_ps(ik)),
                                             _mm256_loadu_ps(y->inv_root + jb));
                    __m256i b = _mm256_add_epi32(_mm256_cvttps_epi32(_mm256_floor_ps(u)),
                                                 _mm256_set1_epi32(SPEARMAN_HIST_BINS / 2));
                    b = _mm256_min_epi32(_mm256_max_epi32(b, _mm256_setzero_si256()), _mm256_set1_epi32(SPEARMAN_HIST_BINS - 1));
                    int32_t bv[8];
                    _mm256_storeu_si256((__m256i *)bv, b);
                    for (int m = valid; m; m &= m - 1) acc->hist[bv[__builtin_ctz((unsigned)m)]]++;
                }
                int32_t sv[8];
                if (cand) _mm256_storeu_si256((__m256i *)sv, acc4[r]);
                while (cand) {
                    int l = __builtin_ctz((unsigned)cand);
                    cand &= cand - 1;
                    spearman_acc_take(x, y, sel, acc, i, jb + l, sv[l], 0);
                }
            }
        }
    }
}

static int have_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? 1 : 0;
}
#else
static int have_avx2(void) { return 0; }
#define tile_avx2 spearman_tile_scalar
#endif

void spearman_tile(const spearman_mat *x, const spearman_mat *y, uint64_t i0, uint64_t i1, uint64_t j0, uint64_t j1,
                   int upper, const spearman_sel *sel, spearman_acc *acc)
{
    /* Whether to take the AVX2 kernel, found out once: the CPU has AVX2
     * and FD_SPEARMAN_SCALAR=1 does not force the portable one (for
     * comparisons).  Atomic: the workers' first tiles may each find it out
     * at once (ThreadSanitizer), storing the same value. */
    static atomic_int use_avx2 = -1;
    int fast = atomic_load_explicit(&use_avx2, memory_order_relaxed);
    if (fast < 0) {
        fast = have_avx2() && !fd_env_switched("FD_SPEARMAN_SCALAR");
        atomic_store_explicit(&use_avx2, fast, memory_order_relaxed);
    }
    if (x->n <= SMAT_FAST_MAX_N && fast)
        tile_avx2(x, y, i0, i1, j0, j1, upper, sel, acc);
    else
        spearman_tile_scalar(x, y, i0, i1, j0, j1, upper, sel, acc);
    if (x->incomplete || y->incomplete) spearman_tile_missing(x, y, i0, i1, j0, j1, upper, sel, acc);
}
