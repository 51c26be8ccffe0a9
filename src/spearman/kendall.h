/* SPDX-License-Identifier: BSD-3-Clause */
/* Kendall's tau-b (--method kendall) on the Spearman machinery
 * (docs/algorithms.md, "Kendall").  Each row of n observations becomes
 * its sign vector over the N = n(n-1)/2 pairs of observations,
 * s_kl = sign(x_l - x_k) for k < l; then for two rows
 *     S_xy = sum s_x s_y = concordant - discordant pairs,
 *     S_xx = N - (pairs tied in x),
 *     tau_b = S_xy / sqrt(S_xx S_yy),
 * which is rho's formula over the ranks (rankmat.h): the tiles, ranks,
 * GPU kernels, thresholds on |tau|, --top-k and checkpoints all apply,
 * exactly, with N in place of n.  The p-value is scipy.stats.kendalltau's
 * (method "auto"): exact for untied rows when n <= 33 or the discordant
 * pairs (or concordant) number at most 1, else the normal approximation
 * with the tie-corrected variance, which needs each row's tie counts. */
#ifndef FD_SPEARMAN_KENDALL_H
#define FD_SPEARMAN_KENDALL_H

#include <stdint.h>

/* The most observations a row may have (N = n(n-1)/2 <= 32,767, the rank
 * matrix's width). */
#define KENDALL_MAX_N 256

/* A row's ties as scipy counts them over its tie groups of sizes t:
 * ties = sum t(t-1)/2, t3 = sum t(t-1)(t-2), t5 = sum t(t-1)(2t+5). */
typedef struct kendall_ties {
    double ties, t3, t5;
} kendall_ties;

static inline uint32_t kendall_width(uint32_t n) { return n * (n - 1) / 2; }

/* The sign vector of x[0..n) into a[0..N) and its ties; scratch: n
 * doubles. */
void kendall_embed(const double *x, uint32_t n, int32_t *a, kendall_ties *t, double *scratch);

/* Two-sided p of S = concordant - discordant for two rows of n
 * observations with ties tx and ty, as scipy.stats.kendalltau. */
double kendall_p(uint32_t n, int64_t s, const kendall_ties *tx, const kendall_ties *ty);

/* The exact branch's p-values of rows of n observations, once a run, so
 * that a p costs a lookup there instead of the dynamic programme (its
 * p[c] are kendall_p's bits). */
typedef struct kendall_ptab {
    uint32_t n;
    uint64_t cmax;
    double *p;
    double alpha, z2;   /* kendall_ptab_alpha's: the level and z^2 with P(|Z| > z) = alpha */
} kendall_ptab;

/* 0: out of memory. */
int kendall_ptab_init(kendall_ptab *t, uint32_t n);
void kendall_ptab_free(kendall_ptab *t);
/* kendall_p(t->n, s, tx, ty), from the table where it applies. */
double kendall_p_tab(const kendall_ptab *t, int64_t s, const kendall_ties *tx, const kendall_ties *ty);
/* The level of kendall_p_le. */
void kendall_ptab_alpha(kendall_ptab *t, double alpha);
/* kendall_p_tab(t, s, tx, ty) <= t->alpha, the same verdict: in the
 * normal branch by z^2 = S^2 / var against z_alpha^2 (p falls as z
 * grows), p itself computed only within 1e-9 of the boundary. */
int kendall_p_le(const kendall_ptab *t, int64_t s, const kendall_ties *tx, const kendall_ties *ty);

#endif
