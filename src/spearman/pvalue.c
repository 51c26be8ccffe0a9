/* SPDX-License-Identifier: BSD-3-Clause */
#include "pvalue.h"

#include <math.h>

double spearman_x_crit(double alpha, int dof)
{
    if (alpha >= 1) return 1;
    if (alpha <= 0) return 0;
    double lo = 0, hi = 1;
    /* Bisection to the last representable step: p is monotone in x. */
    for (int i = 0; i < 2000 && hi - lo > 0; i++) {
        double mid = lo + (hi - lo) / 2;
        if (mid <= lo || mid >= hi) break;
        if (spearman_p_of_x(mid, dof) <= alpha) lo = mid;
        else hi = mid;
    }
    return lo;
}

double spearman_x_from(double alpha, int dof)
{
    if (alpha <= 0) return 0;
    if (alpha > 1) return 2;
    double lo = 0, hi = 1; /* p(lo) < alpha <= p(hi) */
    for (int i = 0; i < 2000 && hi - lo > 0; i++) {
        double mid = lo + (hi - lo) / 2;
        if (mid <= lo || mid >= hi) break;
        if (spearman_p_of_x(mid, dof) >= alpha) hi = mid;
        else lo = mid;
    }
    return hi;
}
