/* SPDX-License-Identifier: BSD-3-Clause */
#include "kendall.h"

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

/* P(discordant pairs <= c) among the n! orderings, twice (two-sided):
 * the counts of permutations by inversions (Mahonian numbers) up to c,
 * built one element at a time as scipy's _kendall_p_exact does (its
 * branch for n < 171), in long double. */
static double exact_two_sided(uint32_t n, uint64_t c)
{
    long double *v = calloc(c + 2, sizeof *v);
    if (!v) return NAN;
    v[0] = 1;
    if (c >= 1) v[1] = 1;
    for (uint32_t j = 3; j <= n; j++) {
        for (uint64_t k = 1; k <= c; k++) v[k] += v[k - 1]; /* cumulative sums */
        if (j <= c)
            for (uint64_t k = c; k >= j; k--) v[k] -= v[k - j];
    }
    long double sum = 0, fact = 1;
    for (uint64_t k = 0; k <= c; k++) sum += v[k];
    for (uint32_t j = 2; j <= n; j++) fact *= j;
    free(v);
    const double p = (double)(2 * sum / fact);
    return p > 1 ? 1 : p;
}

double kendall_p(uint32_t n, int64_t s, const kendall_ties *tx, const kendall_ties *ty)
{
    const uint64_t tot = (uint64_t)n * (n - 1) / 2;
    if (tx->ties == 0 && ty->ties == 0) {
        /* No ties: concordant + discordant = tot, their difference s. */
        const uint64_t dis = (uint64_t)(((int64_t)tot - s) / 2), c = dis < tot - dis ? dis : tot - dis;
        if (n <= 33 || c <= 1) {
            if (n <= 2) return 1;
            if (4 * c == tot * 2) return 1; /* the middle of the symmetric distribution */
            return exact_two_sided(n, c);
        }
    }
    const double m = (double)n * (n - 1.0);
    const double var = (m * (2.0 * n + 5) - tx->t5 - ty->t5) / 18 + 2 * tx->ties * ty->ties / m +
                       tx->t3 * ty->t3 / (9 * m * (n - 2.0));
    const double z = fabs((double)s) / sqrt(var);
    return erfc(z / M_SQRT2);
}
