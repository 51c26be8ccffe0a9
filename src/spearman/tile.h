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

#include <math.h>
#include <stddef.h>

/* Bins of the rho histogram over [-1, 1]: bin b holds -1 + b/1000 <= rho <
 * -1 + (b+1)/1000, rho = 1 in the last. */
#define SPEARMAN_HIST_BINS 2000

typedef struct spearman_sel {
    /* Keep a pair when S^2 >= q S_ii S_jj: q = 1 - x_crit for --pvalue,
     * R^2 for --rho, 0 for every pair. */
    double q;
    /* --pvalue: pairs within rounding of the boundary are decided by
     * computing p and comparing with alpha (dof = n - 2); 0 for --rho. */
    double alpha;
    int dof;
    float pre;            /* prefilter: |S| >= pre sqrt(S_ii) sqrt(S_jj) */
} spearman_sel;

/* Sets up a selection: mode 'p' (p <= value), 'r' (|rho| >= value), or
 * 'a' (all pairs). */
void spearman_sel_init(spearman_sel *s, int mode, double value, uint32_t n);

typedef struct spair {
    uint64_t i, j;        /* rows of x and y (kept-row numbers) */
    int64_t s;            /* S_ij */
} spair;

typedef struct spearman_acc {
    uint64_t pairs;       /* pairs whose rows both vary */
    uint64_t selected;    /* of which selected */
    uint64_t *hist;       /* SPEARMAN_HIST_BINS counts, or NULL */
    spair *out;           /* selected pairs are appended here when not NULL */
    size_t nout, capout;
    int failed;           /* out of memory growing out */
} spearman_acc;

/* upper: x == y and only pairs with j > i count.  i0 and j0 are multiples
 * of 8. */
void spearman_tile(const spearman_mat *x, const spearman_mat *y, uint64_t i0, uint64_t i1, uint64_t j0, uint64_t j1,
                   int upper, const spearman_sel *sel, spearman_acc *acc);

/* The exact test alone (for the tests and the scalar path). */
int spearman_keep(const spearman_sel *sel, int64_t s, int64_t sii, int64_t sjj);

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
