#include "pvalue.h"

#include <float.h>
#include <math.h>

/* Continued fraction of I_x(a, b) (modified Lentz), valid for
 * x < (a + 1) / (a + b + 2); Numerical Recipes 3rd ed., section 6.4. */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap;
    if (fabs(d) < tiny) d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 10000; m++) {
        int m2 = 2 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1 + aa * d;
        if (fabs(d) < tiny) d = tiny;
        c = 1 + aa / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d;
        if (fabs(d) < tiny) d = tiny;
        c = 1 + aa / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < 4 * DBL_EPSILON) break;
    }
    return h;
}

double fd_ibeta(double a, double b, double x)
{
    if (x <= 0) return 0;
    if (x >= 1) return 1;
    /* log of x^a (1-x)^b / B(a, b); log1p keeps 1-x exact for small x.
     * lgamma_r: lgamma writes the global signgam, a data race between
     * the threads that compute p-values (ThreadSanitizer found it). */
    int sg;
    double lfront = lgamma_r(a + b, &sg) - lgamma_r(a, &sg) - lgamma_r(b, &sg) + a * log(x) + b * log1p(-x);
    if (x < (a + 1) / (a + b + 2)) return exp(lfront) * beta_cf(a, b, x) / a;
    return 1 - exp(lfront) * beta_cf(b, a, 1 - x) / b;
}

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
