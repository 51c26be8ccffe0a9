/* SPDX-License-Identifier: BSD-3-Clause */
/* The all-pairs kernel: one tile of rows [i0, i1) of x against rows
 * [j0, j1) of y, S_ij computed exactly in integers, then
 *  - counted into a histogram of rho (every pair both of whose rows vary),
 *  - tested against the selection (a float prefilter, then the exact test
 *    S_ij^2 >= q S_ii S_jj on the few survivors), and counted or emitted.
 * AVX2 (int16 multiply-add, 8 pairs per instruction, no horizontal sums)
 * where the CPU has it and n <= SMAT_FAST_MAX_N; exact scalar int64
 * otherwise.  Both give the same integers, so the same pairs. */
#ifndef FD_SPEARMAN_TILE_H
#define FD_SPEARMAN_TILE_H

#include "rankmat.h"
#include "spearman_hist.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

typedef struct spearman_sel {
    int mode;             /* 'p', 'r', 'x' or 'a' (see spearman_sel_init) */
    /* Keep a pair when S^2 >= q S_ii S_jj: q = 1 - x_crit for --pvalue,
     * R^2 for --rho, 0 for every pair. */
    double q;
    /* mode 'x': keep x_lo <= x <= x_hi, x = 1 - rho^2 from pair_x(). */
    double x_lo, x_hi;
    /* --pvalue: pairs within rounding of the boundary are decided by
     * computing p and comparing with alpha (dof = n - 2); 0 for --rho. */
    double alpha;
    int dof;
    float pre;            /* prefilter: |S| >= pre sqrt(S_ii) sqrt(S_jj) */
    /* --missing pairwise: the selection for a pair of m common
     * observations is by_n[m] (its p has m - 2 degrees of freedom);
     * NULL when no row misses a value. */
    const struct spearman_sel *by_n;
    /* --method kendall --pvalue and --fdr: each pair's p (kendall_p_tab,
     * which needs both rows' ties) against alpha, or in mode 'x' within
     * [x_lo, x_hi] (for Kendall a range of p, --fdr's key); q and pre are
     * 0, so every pair of varying rows is tested.  NULL otherwise. */
    const kendall_ptab *kendall;
    /* --fdr's key is each pair's p, not x = 1 - rho^2: Kendall's, and
     * --missing pairwise's, whose pairs have p-values of their own n. */
    int pkey;
    /* --missing pairwise's mode 'x' (spearman_sel_p): the range of p;
     * the pairs with a missing value compare their p with it, the others
     * their x with [x_lo, x_hi], the same range at the full n. */
    double p_lo, p_hi;
} spearman_sel;

/* Sets up a selection: mode 'p' (p <= value), 'r' (|rho| >= value), or
 * 'a' (all pairs). */
void spearman_sel_init(spearman_sel *s, int mode, double value, uint32_t n);
/* --missing pairwise: s->by_n for pairs of 3 .. n common observations
 * (*table, n + 1 entries, the caller's to free). */
fd_status spearman_sel_by_n(spearman_sel *s, int mode, double value, uint32_t n, spearman_sel **table);
/* A selection by x = 1 - rho^2 in [x_lo, x_hi] (Benjamini-Hochberg), or
 * for Kendall (s->kendall) by p in that range. */
void spearman_sel_x(spearman_sel *s, double x_lo, double x_hi, uint32_t n);
/* --missing pairwise: a selection by p in [p_lo, p_hi], each pair's p of
 * its own n.  The complete rows' pairs (n observations) are selected by
 * x in [x_from(p_lo), x_crit(p_hi)] (pvalue.h), which is the same range
 * where p grows with x, so that a GPU's kernel selects them as it does
 * every x range. */
void spearman_sel_p(spearman_sel *s, double p_lo, double p_hi, uint32_t n);

/* x = 1 - rho^2 = (S_ii S_jj - S^2) / (S_ii S_jj), the same double
 * everywhere it is used (selection, FDR histogram, p-values). */
static inline double pair_x(int64_t s, int64_t sii, int64_t sjj)
{
    long double p = (long double)sii * (long double)sjj, s2 = (long double)s * (long double)s;
    return (double)((p - s2) / p);
}

typedef struct spair spair;
struct spair {
    uint64_t i, j;        /* rows of x and y (kept-row numbers) */
    int64_t s;            /* S_ij */
};

/* --top-k: the K strongest partners (largest |rho|, then smaller j) of
 * each row of one block of rows, as min-heaps with the weakest on top.
 * The kernels skip a pair that cannot enter a full heap using thr.  An
 * entry carries its S_ii and its partner's S_jj, so that comparing two
 * needs no lookup in a table of millions of rows (a cache miss per pair);
 * S_ii is the row's own but under --missing pairwise, where each pair's
 * columns give it its own. */
typedef struct spearman_topk_ent {
    uint64_t j;
    int64_t s, sii, sjj;
} spearman_topk_ent;

typedef struct spearman_topk {
    uint32_t k;
    uint64_t i0;          /* first row of the block */
    uint32_t rows;        /* rows in the block */
    uint32_t cap;         /* rows the arrays hold */
    int same;             /* x == y: a row is not its own partner */
    uint32_t *n;          /* entries per row */
    spearman_topk_ent *heap; /* rows x k */
    float *thr;           /* per row: |rho| of its weakest entry when full, else 0 */
} spearman_topk;

typedef struct spearman_acc {
    uint64_t pairs;       /* pairs whose rows both vary */
    uint64_t selected;    /* of which selected */
    uint64_t *hist;       /* SPEARMAN_HIST_BINS counts, or NULL */
    uint64_t *xhist;      /* selected pairs by x: bin (int)(x * xscale), or NULL */
    uint32_t xbins;
    double xscale;
    /* --fdr under --missing pairwise: p at each bin's lower edge at the
     * full n, pedge[b] = p(b / xscale) (xbins + 1 entries), by which a
     * pair of fewer observations is binned (spearman_pbin); else NULL. */
    const double *pedge;
    spair *out;           /* selected pairs are appended here when not NULL */
    size_t nout, capout;
    int failed;           /* out of memory growing out */
    size_t keep_cap;      /* 0, or the most pairs out may hold (pass 1 keeping pairs) */
    int keep_over;        /* a backend emitted nothing more: out would have gone past keep_cap */
    spearman_topk *topk;  /* --top-k: pairs go to the heaps instead */
} spearman_acc;

fd_status spearman_topk_init(spearman_topk *t, uint32_t k, uint32_t max_rows);
void spearman_topk_free(spearman_topk *t);
/* Starts a block of rows [i0, i0 + rows), growing the heaps past
 * max_rows where a record asks for more (a checkpoint written by another
 * backend has records of another height). */
fd_status spearman_topk_reset(spearman_topk *t, uint64_t i0, uint32_t rows, int same);
/* Pair (i, j) with sum s into row i's heap, if it belongs there; sjj:
 * S_jj of row j of y (a GPU backend hands over the pairs its per-row
 * screen let through, with S_jj). */
void spearman_topk_offer(spearman_topk *t, const spearman_mat *x, uint64_t i, uint64_t j, int64_t s, int64_t sjj);
/* The same for a pair of its own S_ii and S_jj (--missing pairwise). */
void spearman_topk_offer_sums(spearman_topk *t, uint64_t i, uint64_t j, int64_t s, int64_t sii, int64_t sjj);
/* Appends each row's heap, strongest first, to acc->out. */
void spearman_topk_emit(spearman_topk *t, spearman_acc *acc);

/* upper: x == y and only pairs with j > i count.  i0 and j0 are multiples
 * of 8. */
void spearman_tile(const spearman_mat *x, const spearman_mat *y, uint64_t i0, uint64_t i1, uint64_t j0, uint64_t j1,
                   int upper, const spearman_sel *sel, spearman_acc *acc);

/* A pair whose rows both vary, already counted in acc->pairs and the
 * histogram: the exact selection test, then acc->selected, the FDR bin
 * and the emission.  known_keep: a backend decided it already and counted
 * it in acc->selected (and needs no FDR bin); it is only emitted. */
void spearman_acc_take(const spearman_mat *x, const spearman_mat *y, const spearman_sel *sel, spearman_acc *acc,
                       uint64_t i, uint64_t j, int64_t s, int known_keep);

/* The same for a pair with a missing value, of m common observations
 * and its own sums (smat_pair_sums): the selection of its m (sel->by_n),
 * or --fdr's range of its p.  A GPU backend hands over the pairs its
 * screen did not settle, and those it kept for certain (known_keep). */
void spearman_acc_take_sums(const spearman_sel *sel, spearman_acc *acc, uint64_t i, uint64_t j, uint32_t m, int64_t s,
                            int64_t sii, int64_t sjj, int known_keep);

/* --fdr's key of a selected pair: x = 1 - rho^2, or its p (sel->pkey). */
double spearman_pair_key(const spearman_mat *x, const spearman_mat *y, const spearman_sel *sel, uint64_t i, uint64_t j,
                         int64_t s);

/* The same key, and the pair's bin in acc->xhist as pass 1 filled it
 * (spearman_acc_take, spearman_acc_take_sums). */
int spearman_pair_bin(const spearman_mat *x, const spearman_mat *y, const spearman_sel *sel, const spearman_acc *acc,
                      uint64_t i, uint64_t j, int64_t s, double *key);

/* The bin of x in acc->xhist. */
int spearman_xbin(const spearman_acc *acc, double x);
/* The bin of a p-value in acc->xhist by acc->pedge: the last bin whose
 * lower edge's p is at most p. */
int spearman_pbin(const spearman_acc *acc, double p);

/* The exact test alone (for the tests and the scalar path). */
int spearman_keep(const spearman_sel *sel, int64_t s, int64_t sii, int64_t sjj);

/* --missing pairwise: the pairs of the tile with a row that misses a
 * value (which the kernels pass over), each over the observations both
 * rows have (smat_pair_sums); pairs of fewer than 3 are not counted.
 * spearman_tile calls it; a backend that hands such tiles to the CPU
 * would too. */
void spearman_tile_missing(const spearman_mat *x, const spearman_mat *y, uint64_t i0, uint64_t i1, uint64_t j0,
                           uint64_t j1, int upper, const spearman_sel *sel, spearman_acc *acc);

/* The same over `threads` threads, for a backend that hands such tiles
 * to the host from one thread of its own (a GPU's): contiguous runs of
 * the rows, each counted into a part of its own (pairs, histograms,
 * pairs out), merged into acc in row order, so the pairs come out as
 * one thread gives them.  --top-k (acc->topk) runs on one thread.  The
 * parts are kept in *parts between calls (spearman_parts_free). */
typedef struct spearman_parts spearman_parts;
fd_status spearman_tile_missing_split(spearman_parts **parts, int threads, const spearman_mat *x,
                                      const spearman_mat *y, uint64_t i0, uint64_t i1, uint64_t j0, uint64_t j1,
                                      int upper, const spearman_sel *sel, spearman_acc *acc);
void spearman_parts_free(spearman_parts **parts);

/* The scalar kernel, always available (tests compare the two). */
void spearman_tile_scalar(const spearman_mat *x, const spearman_mat *y, uint64_t i0, uint64_t i1, uint64_t j0,
                          uint64_t j1, int upper, const spearman_sel *sel, spearman_acc *acc);

/* rho as written out: S / sqrt(S_ii S_jj) in double (S_ii S_jj is exact
 * in double up to n = 128, and within one rounding above). */
static inline double spearman_rho(int64_t s, int64_t sii, int64_t sjj)
{
    return (double)s / sqrt((double)sii * (double)sjj);
}

#endif
