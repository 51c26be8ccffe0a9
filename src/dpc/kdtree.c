/* SPDX-License-Identifier: BSD-3-Clause */
/* dpc's kd-tree (kdtree.h).
 *
 * Hand-written rather than nanoflann's (which an earlier commit used),
 * for three things a general library does not do and an A/B in
 * bench/results/ab.csv ("kdtree-own") measured: exact bounds with no
 * slack (tight boxes summed as dpc_d2 sums, kdtree.h), the points of a
 * leaf held coordinate by coordinate so that a leaf's distances are one
 * vectorised loop as in the brute-force passes, and per node the largest
 * rho below it, so that the search for a nearer denser point skips
 * subtrees of sparser points (a density peak otherwise searches far).
 * A node whose whole box lies within the cutoff counts all its points at
 * once.  This file is compiled without fused multiply-adds, as dpc.c is
 * (CMakeLists.txt). */
#include "kdtree.h"

#include "../common/env.h"

#include <math.h>
#include <stdlib.h>

/* Points a leaf holds at most, unless they all coincide: a median split
 * of more leaves at least half as many.  A leaf's distances go through a
 * buffer of CHUNK. */
#define LEAF 32
#define CHUNK 64
/* Median splits of fewer than 2^32 points nest at most 28 deep below
 * the root (leaves of at least LEAF / 2): a search's stack holds one
 * pending sibling a level. */
#define STACK 64
/* Rows dpc_kdtree_cost samples. */
#define COST_ROWS 64

typedef struct {
    uint32_t a, b;        /* the node's points: tree order [a, b) */
    uint32_t left, right; /* children, or 0 for a leaf (0 is the root, never a child) */
    uint32_t equal;       /* a leaf of equal points (any number), in ascending index */
} kd_node;

struct dpc_kdtree {
    const dpc_points *p;
    uint32_t d;
    uint64_t n, nodes;
    kd_node *node;
    double *box;          /* node c's lowest coordinates at box[2 d c], highest at box[2 d c + d] */
    double *maxrho;       /* per node: the largest rho of its points; NULL without rho */
    int32_t *label;       /* per node: its points' one label, -1 where several (dpc_kdtree_set_labels) */
    double *rs;           /* rho by tree order; NULL without rho */
    uint32_t *perm;       /* tree order -> point */
    uint32_t *pos;        /* point -> tree order */
    double *xs;           /* d x n by tree order: coordinate k of point perm[s] at xs[k n + s] */
};

int dpc_kdtree_usable(const dpc_points *p)
{
    return p->d >= 1 && p->d <= DPC_TREE_MAX_D && p->n < UINT32_MAX && !fd_env_switched("FD_DPC_GRID");
}

static double coord(const dpc_kdtree *t, uint32_t point, uint32_t k) { return t->p->x[(size_t)point * t->d + k]; }

/* Puts the point of rank m (by coordinate k) of perm[lo..hi] at m, the
 * smaller ones before it and the larger after (Hoare's selection). */
static void select_rank(const dpc_kdtree *t, uint32_t k, uint64_t lo, uint64_t hi, uint64_t m)
{
    uint32_t *perm = t->perm;
    while (lo < hi) {
        const double pivot = coord(t, perm[lo + (hi - lo) / 2], k);
        uint64_t i = lo, j = hi;
        while (i <= j) {
            while (coord(t, perm[i], k) < pivot) i++;
            while (coord(t, perm[j], k) > pivot) j--;
            if (i <= j) {
                const uint32_t s = perm[i];
                perm[i] = perm[j];
                perm[j] = s;
                i++;
                if (j == 0) break;
                j--;
            }
        }
        if (m <= j) hi = j;
        else if (m >= i) lo = i;
        else return;
    }
}

/* Node for points [a, b), split at the median of its widest coordinate
 * until a leaf; returns its number (preorder, so children come after). */
static int cmp_u32(const void *x, const void *y)
{
    const uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

static uint32_t build_node(dpc_kdtree *t, uint64_t a, uint64_t b)
{
    const uint32_t c = (uint32_t)t->nodes++, d = t->d;
    double *lo = t->box + 2 * (size_t)d * c, *hi = lo + d;
    uint32_t widest = 0;
    for (uint32_t k = 0; k < d; k++) {
        lo[k] = INFINITY;
        hi[k] = -INFINITY;
        for (uint64_t s = a; s < b; s++) {
            const double v = coord(t, t->perm[s], k);
            lo[k] = v < lo[k] ? v : lo[k];
            hi[k] = v > hi[k] ? v : hi[k];
        }
        if (hi[k] - lo[k] > hi[widest] - lo[widest]) widest = k;
    }
    t->node[c] = (kd_node){(uint32_t)a, (uint32_t)b, 0, 0, 0};
    if (!(hi[widest] > lo[widest])) { /* every point the same: at any distance, the smallest index first */
        qsort(t->perm + a, b - a, sizeof *t->perm, cmp_u32);
        t->node[c].equal = 1;
        return c;
    }
    if (b - a <= LEAF) return c;
    const uint64_t mid = a + (b - a) / 2;
    select_rank(t, widest, a, b - 1, mid);
    const uint32_t left = build_node(t, a, mid), right = build_node(t, mid, b);
    t->node[c].left = left;
    t->node[c].right = right;
    return c;
}

fd_status dpc_kdtree_for(dpc_kdtree **t, const dpc_points *p, const double *rho, double t2, int denser)
{
    *t = NULL;
    if (!dpc_kdtree_usable(p)) return FD_OK;
    dpc_kdtree *k = dpc_kdtree_build(p, rho);
    if (!k) return fd_fail(FD_ERR_NOMEM, "out of memory for a kd-tree of %llu points", (unsigned long long)p->n);
    if (dpc_kdtree_cost(k, t2, denser) > DPC_TREE_MAX_COST && !fd_env_switched("FD_DPC_TREE")) dpc_kdtree_free(k);
    else *t = k;
    return FD_OK;
}

void dpc_kdtree_free(dpc_kdtree *t)
{
    if (!t) return;
    free(t->node);
    free(t->box);
    free(t->maxrho);
    free(t->label);
    free(t->rs);
    free(t->perm);
    free(t->pos);
    free(t->xs);
    free(t);
}

dpc_kdtree *dpc_kdtree_build(const dpc_points *p, const double *rho)
{
    dpc_kdtree *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    const uint64_t n = p->n, cap = 2 * (n / (LEAF / 2) + 1);
    t->p = p;
    t->d = p->d;
    t->n = n;
    t->node = malloc(cap * sizeof *t->node);
    t->box = malloc(cap * 2 * p->d * sizeof *t->box);
    t->perm = malloc(n * sizeof *t->perm);
    t->pos = malloc(n * sizeof *t->pos);
    t->xs = malloc(n * p->d * sizeof *t->xs);
    if (rho) {
        t->maxrho = malloc(cap * sizeof *t->maxrho);
        t->rs = malloc(n * sizeof *t->rs);
    }
    if (!t->node || !t->box || !t->perm || !t->pos || !t->xs || (rho && (!t->maxrho || !t->rs))) {
        dpc_kdtree_free(t);
        return NULL;
    }
    for (uint64_t s = 0; s < n; s++) t->perm[s] = (uint32_t)s;
    build_node(t, 0, n);
    for (uint64_t s = 0; s < n; s++) {
        t->pos[t->perm[s]] = (uint32_t)s;
        for (uint32_t k = 0; k < p->d; k++) t->xs[k * n + s] = coord(t, t->perm[s], k);
    }
    if (rho) {
        for (uint64_t s = 0; s < n; s++) t->rs[s] = rho[t->perm[s]];
        for (uint64_t c = t->nodes; c-- > 0;) {
            const kd_node *nd = &t->node[c];
            double m = -INFINITY;
            if (nd->left) {
                m = fmax(t->maxrho[nd->left], t->maxrho[nd->right]);
            } else {
                for (uint32_t s = nd->a; s < nd->b; s++) m = t->rs[s] > m ? t->rs[s] : m;
            }
            t->maxrho[c] = m;
        }
    }
    return t;
}

/* The squared distances from x_i to the box of node c: *near, at most
 * every point's dpc_d2, and *far, at least it (kdtree.h: the same
 * operations in the same order as dpc_d2, on the box's own coordinates). */
static void box_d2(const dpc_kdtree *t, uint32_t c, const double *xi, double *near, double *far)
{
    const double *lo = t->box + 2 * (size_t)t->d * c, *hi = lo + t->d;
    double sn = 0, sf = 0;
    for (uint32_t k = 0; k < t->d; k++) {
        const double tl = xi[k] - lo[k], th = xi[k] - hi[k];
        const double tn = tl < 0 ? tl : th > 0 ? th : 0, tf = fabs(tl) > fabs(th) ? tl : th;
        sn += tn * tn;
        sf += tf * tf;
    }
    *near = sn;
    *far = sf;
}

static double box_near(const dpc_kdtree *t, uint32_t c, const double *xi)
{
    const double *lo = t->box + 2 * (size_t)t->d * c, *hi = lo + t->d;
    double s = 0;
    for (uint32_t k = 0; k < t->d; k++) {
        const double tl = xi[k] - lo[k], th = xi[k] - hi[k];
        const double tn = tl < 0 ? tl : th > 0 ? th : 0;
        s += tn * tn;
    }
    return s;
}

/* dpc_d2 from x_i to the points at tree order [s0, s1), s1 - s0 <= CHUNK,
 * coordinate by coordinate so that the loop over points vectorises (each
 * point's sum still runs over k in order). */
static void leaf_d2(const dpc_kdtree *t, const double *xi, uint64_t s0, uint64_t s1, double *d2)
{
    const uint64_t m = s1 - s0;
    for (uint64_t s = 0; s < m; s++) d2[s] = 0;
    for (uint32_t k = 0; k < t->d; k++) {
        const double x = xi[k], *xk = t->xs + (size_t)k * t->n + s0;
        for (uint64_t s = 0; s < m; s++) {
            const double u = x - xk[s];
            d2[s] += u * u;
        }
    }
}

/* The points within t2 of xi but the one at tree position me (none:
 * UINT64_MAX): counted, or each passed to fn(ctx, i, j) when fn is not
 * NULL (inlined with fn constant, so counting calls nothing); *work:
 * boxes and distances computed (a box costs about two distances), for
 * dpc_kdtree_cost. */
static inline uint64_t within_rows(const dpc_kdtree *t, const double *xi, uint64_t me, double t2, dpc_kdtree_visit fn,
                                   void *ctx, uint64_t i, int32_t skip, uint64_t *work)
{
    uint64_t w = 0, cnt = 0;
    uint32_t stack[STACK];
    double d2[CHUNK];
    int sp = 0;
    stack[sp++] = 0;
    while (sp) {
        const uint32_t c = stack[--sp];
        if (skip >= 0 && t->label[c] == skip) continue;
        const kd_node *nd = &t->node[c];
        double near, far;
        box_d2(t, (uint32_t)(nd - t->node), xi, &near, &far);
        w += 2;
        if (!(near < t2)) continue;
        if (far < t2 && !fn) {
            cnt += nd->b - nd->a - (me >= nd->a && me < nd->b);
        } else if (far < t2) {
            for (uint64_t s = nd->a; s < nd->b; s++)
                if (s != me) fn(ctx, i, t->perm[s]);
        } else if (nd->left) {
            stack[sp++] = nd->right;
            stack[sp++] = nd->left;
        } else {
            for (uint64_t s0 = nd->a; s0 < nd->b; s0 += CHUNK) {
                const uint64_t s1 = s0 + CHUNK < nd->b ? s0 + CHUNK : nd->b;
                leaf_d2(t, xi, s0, s1, d2);
                for (uint64_t s = s0; s < s1; s++) {
                    const int in = d2[s - s0] < t2 && s != me;
                    if (!fn) cnt += in;
                    else if (in) fn(ctx, i, t->perm[s]);
                }
            }
            w += nd->b - nd->a;
        }
    }
    *work = w;
    return cnt;
}

uint64_t dpc_kdtree_count(const dpc_kdtree *t, uint64_t i, double t2)
{
    uint64_t w;
    return within_rows(t, t->p->x + i * t->d, t->pos[i], t2, NULL, NULL, i, -1, &w);
}

uint64_t dpc_kdtree_count_at(const dpc_kdtree *t, const double *xq, double t2)
{
    uint64_t w;
    return within_rows(t, xq, UINT64_MAX, t2, NULL, NULL, 0, -1, &w);
}

void dpc_kdtree_within(const dpc_kdtree *t, uint64_t i, double t2, dpc_kdtree_visit fn, void *ctx)
{
    uint64_t w;
    within_rows(t, t->p->x + i * t->d, t->pos[i], t2, fn, ctx, i, -1, &w);
}

fd_status dpc_kdtree_set_labels(dpc_kdtree *t, const int32_t *labels)
{
    if (!t->label && !(t->label = malloc(t->nodes * sizeof *t->label)))
        return fd_fail(FD_ERR_NOMEM, "out of memory for a kd-tree's labels");
    /* Children come after their parent (build_node numbers in preorder). */
    for (uint64_t c = t->nodes; c-- > 0;) {
        const kd_node *nd = &t->node[c];
        int32_t one;
        if (nd->left) {
            one = t->label[nd->left] == t->label[nd->right] ? t->label[nd->left] : -1;
        } else {
            one = labels[t->perm[nd->a]];
            for (uint32_t s = nd->a + 1; s < nd->b && one >= 0; s++)
                if (labels[t->perm[s]] != one) one = -1;
        }
        t->label[c] = one;
    }
    return FD_OK;
}

void dpc_kdtree_within_other(const dpc_kdtree *t, uint64_t i, int32_t li, double t2, dpc_kdtree_visit fn, void *ctx)
{
    uint64_t w;
    within_rows(t, t->p->x + i * t->d, t->pos[i], t2, fn, ctx, i, t->label && li >= 0 ? li : -1, &w);
}

/* The nearest point j to xi with rho_j > ri, or rho_j == ri and j < tie,
 * closer than `bound` (INFINITY: any); ties in distance to the smaller j.
 * Depth first, the nearer child first; a subtree is skipped when its box
 * is farther than the best so far (an equal one may hold a smaller j) or
 * when none of its points is as dense as ri. */
static int64_t denser_row(const dpc_kdtree *t, const double *xi, double ri, int64_t tie, double bound, double *d2out,
                          uint64_t *work)
{
    uint64_t w = 0;
    uint32_t stack[STACK];
    double near[STACK], d2[CHUNK], best = bound;
    int64_t bj = -1;
    int sp = 0;
    stack[sp] = 0;
    near[sp++] = box_near(t, 0, xi);
    while (sp) {
        --sp;
        if (near[sp] > best) continue;
        const kd_node *nd = &t->node[stack[sp]];
        if (nd->left) {
            const uint32_t c[2] = {nd->left, nd->right};
            const double e[2] = {box_near(t, c[0], xi), box_near(t, c[1], xi)};
            w += 2;
            const int first = e[1] < e[0]; /* popped first, so pushed last */
            for (int q = 1; q >= 0; q--) {
                const int h = q ? !first : first;
                if (e[h] > best || t->maxrho[c[h]] < ri) continue;
                stack[sp] = c[h];
                near[sp++] = e[h];
            }
            continue;
        }
        for (uint64_t s0 = nd->a; s0 < nd->b; s0 += CHUNK) {
            const uint64_t s1 = s0 + CHUNK < nd->b ? s0 + CHUNK : nd->b;
            leaf_d2(t, xi, s0, s1, d2);
            w += s1 - s0;
            int last = 0;
            for (uint64_t s = s0; s < s1 && !last; s++) {
                const double rj = t->rs[s];
                const int64_t j = t->perm[s];
                if (!(rj > ri || (rj == ri && j < tie))) continue;
                if (d2[s - s0] < best || (d2[s - s0] == best && j < bj)) {
                    best = d2[s - s0];
                    bj = j;
                }
                /* equal points in ascending index: the first denser one is
                 * the leaf's answer (many equal points each scanned all) */
                last = (int)nd->equal;
            }
            if (last) break;
        }
    }
    *d2out = best;
    *work = w;
    return bj;
}

int64_t dpc_kdtree_nearest_denser(const dpc_kdtree *t, uint64_t i, double *d2)
{
    uint64_t w;
    return denser_row(t, t->p->x + i * t->d, t->rs[t->pos[i]], (int64_t)i, INFINITY, d2, &w);
}

int64_t dpc_kdtree_nearest_above(const dpc_kdtree *t, const double *xq, double r, double bound, double *d2)
{
    uint64_t w;
    return denser_row(t, xq, r, 0, bound, d2, &w);
}

double dpc_kdtree_cost(const dpc_kdtree *t, double t2, int denser)
{
    const uint64_t rows = t->n < COST_ROWS ? t->n : COST_ROWS;
    uint64_t total = 0, w;
    double d2;
    for (uint64_t r = 0; r < rows; r++) {
        /* Rows spread evenly over the input, the same every run. */
        const uint64_t i = r * t->n / rows;
        const double *xi = t->p->x + i * t->d;
        if (denser) denser_row(t, xi, t->rs[t->pos[i]], (int64_t)i, INFINITY, &d2, &w);
        else within_rows(t, xi, t->pos[i], t2, NULL, NULL, i, -1, &w);
        total += w;
    }
    return (double)total / ((double)rows * (double)t->n);
}
