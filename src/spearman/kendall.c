/* SPDX-License-Identifier: BSD-3-Clause */
#include "kendall.h"

#include "../common/special.h" /* fd_normal_isf */

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void kendall_embed(const double *x, uint32_t n, int32_t *a, kendall_ties *t, double *scratch)
{
    uint32_t q = 0;
    for (uint32_t k = 0; k < n; k++)
        for (uint32_t l = k + 1; l < n; l++) a[q++] = (x[l] > x[k]) - (x[l] < x[k]);
    for (uint32_t k = 0; k < n; k++) scratch[k] = x[k];
    qsort(scratch, n, sizeof *scratch, cmp_double);
    *t = (kendall_ties){0, 0, 0};
    for (uint32_t s = 0; s < n;) {
        uint32_t e = s + 1;
        while (e < n && scratch[e] == scratch[s]) e++;
        const double g = e - s;
        if (g > 1) {
            t->ties += g * (g - 1) / 2;
            t->t3 += g * (g - 1) * (g - 2);
            t->t5 += g * (g - 1) * (2 * g + 5);
        }
        s = e;
    }
}

/* P(discordant pairs <= c) among the n! orderings, twice (two-sided),
 * for every c in [0, cmax] into p: the counts of permutations by
 * inversions (Mahonian numbers) up to cmax, built one element at a time
 * as scipy's _kendall_p_exact does (its branch for n < 171), in long
 * double, then their running sums.  A count up to c does not depend on
 * cmax >= c, so p[c] is the same bits whatever cmax. */
static int exact_table(uint32_t n, uint64_t cmax, double *p)
{
    long double *v = calloc(cmax + 2, sizeof *v);
    if (!v) return 0;
    v[0] = 1;
    if (cmax >= 1) v[1] = 1;
    for (uint32_t j = 3; j <= n; j++) {
        for (uint64_t k = 1; k <= cmax; k++) v[k] += v[k - 1]; /* cumulative sums */
        if (j <= cmax)
            for (uint64_t k = cmax; k >= j; k--) v[k] -= v[k - j];
    }
    long double sum = 0, fact = 1;
    for (uint32_t j = 2; j <= n; j++) fact *= j;
    for (uint64_t k = 0; k <= cmax; k++) {
        sum += v[k];
        const double q = (double)(2 * sum / fact);
        p[k] = q > 1 ? 1 : q;
    }
    free(v);
    return 1;
}

static double exact_two_sided(uint32_t n, uint64_t c)
{
    double *p = malloc((c + 1) * sizeof *p);
    const double q = p && exact_table(n, c, p) ? p[c] : NAN;
    free(p);
    return q;
}

/* The exact branch's condition (scipy's "auto"): untied rows, n <= 33 or
 * at most one discordant (or concordant) pair; c: the smaller count. */
static int exact_case(uint32_t n, int64_t s, const kendall_ties *tx, const kendall_ties *ty, uint64_t *c)
{
    if (tx->ties != 0 || ty->ties != 0) return 0;
    const uint64_t tot = (uint64_t)n * (n - 1) / 2;
    const uint64_t dis = (uint64_t)(((int64_t)tot - s) / 2);
    *c = dis < tot - dis ? dis : tot - dis;
    return n <= 33 || *c <= 1;
}

/* The normal branch's variance of S, tie-corrected. */
static double normal_var(uint32_t n, const kendall_ties *tx, const kendall_ties *ty)
{
    const double m = (double)n * (n - 1.0);
    return (m * (2.0 * n + 5) - tx->t5 - ty->t5) / 18 + 2 * tx->ties * ty->ties / m + tx->t3 * ty->t3 / (9 * m * (n - 2.0));
}

double kendall_p(uint32_t n, int64_t s, const kendall_ties *tx, const kendall_ties *ty)
{
    const uint64_t tot = (uint64_t)n * (n - 1) / 2;
    uint64_t c;
    if (exact_case(n, s, tx, ty, &c)) {
        if (n <= 2) return 1;
        if (4 * c == tot * 2) return 1; /* the middle of the symmetric distribution */
        return exact_two_sided(n, c);
    }
    const double z = fabs((double)s) / sqrt(normal_var(n, tx, ty));
    return erfc(z / M_SQRT2);
}

int kendall_ptab_init(kendall_ptab *t, uint32_t n)
{
    t->n = n;
    t->cmax = n <= 33 ? (uint64_t)n * (n - 1) / 4 : 1;
    t->p = malloc((t->cmax + 1) * sizeof *t->p);
    return t->p && exact_table(n, t->cmax, t->p);
}

void kendall_ptab_free(kendall_ptab *t)
{
    free(t->p);
    t->p = NULL;
}

double kendall_p_tab(const kendall_ptab *t, int64_t s, const kendall_ties *tx, const kendall_ties *ty)
{
    const uint32_t n = t->n;
    const uint64_t tot = (uint64_t)n * (n - 1) / 2;
    uint64_t c;
    if (n > 2 && exact_case(n, s, tx, ty, &c) && 4 * c != tot * 2 && c <= t->cmax) return t->p[c];
    return kendall_p(n, s, tx, ty);
}

void kendall_ptab_alpha(kendall_ptab *t, double alpha)
{
    const double z = fd_normal_isf(alpha / 2);
    t->alpha = alpha;
    t->z2 = z * z;
}

int kendall_p_le(const kendall_ptab *t, int64_t s, const kendall_ties *tx, const kendall_ties *ty)
{
    const uint32_t n = t->n;
    uint64_t c;
    if (n <= 2 || exact_case(n, s, tx, ty, &c)) return kendall_p_tab(t, s, tx, ty) <= t->alpha;
    const double z2 = (double)s * (double)s / normal_var(n, tx, ty);
    if (z2 > t->z2 * (1 + 1e-9)) return 1;
    if (z2 < t->z2 * (1 - 1e-9)) return 0;
    return kendall_p(n, s, tx, ty) <= t->alpha;
}
