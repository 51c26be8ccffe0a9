/* SPDX-License-Identifier: BSD-3-Clause */
/* Special functions from Boost.Math (the Boost Software License, which
 * allows any use), behind C declarations (special.h).
 *
 * The regularised incomplete beta function: Spearman's p-values are I_x of
 * it (src/spearman/pvalue.h).  Boost's ibeta is the one scipy.special.betainc calls, to
 * a few ulps everywhere; it replaced a continued fraction that followed
 * Numerical Recipes, whose licence forbids redistribution.  In double
 * precision (promote_double<false>: in long double it took 600 ns a call
 * against 80) it costs 80 to 350 ns a call at the spearman's x (the old
 * fraction 80 to 220 ns): a run that writes many pairs pays that per
 * pair (bench/results/ab.csv: 2.1 million pairs written from 2e8, 1.60 s
 * against 0.95 s on the dev VM's 2 cores; a GPU run at --pvalue 1e-12, a
 * few hundredths of a second). */
#include "special.h"

#include <boost/math/special_functions/beta.hpp>
#include <boost/math/special_functions/erf.hpp>

#include <cmath>

namespace {
/* No exceptions across the C boundary: a domain error or an overflow
 * gives NaN or infinity, which the callers' comparisons then refuse. */
using c_policy = boost::math::policies::policy<
    boost::math::policies::domain_error<boost::math::policies::ignore_error>,
    boost::math::policies::pole_error<boost::math::policies::ignore_error>,
    boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::evaluation_error<boost::math::policies::ignore_error>,
    boost::math::policies::promote_double<false>>;
} // namespace

extern "C" double fd_ibeta(double a, double b, double x)
{
    if (!(x > 0)) return 0;
    if (!(x < 1)) return 1;
    return boost::math::ibeta(a, b, x, c_policy());
}

/* The normal's upper quantile from the inverse of erfc, as scipy's
 * norm.isf (ndtri): it replaced a bisection on libm's erfc in dpc's
 * outlier rule. */
extern "C" double fd_normal_isf(double p)
{
    if (!(p > 0)) return INFINITY;
    if (!(p < 1)) return -INFINITY;
    return M_SQRT2 * boost::math::erfc_inv(2 * p, c_policy());
}
