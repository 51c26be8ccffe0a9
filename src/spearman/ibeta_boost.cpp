/* SPDX-License-Identifier: BSD-3-Clause */
/* The regularised incomplete beta function from Boost.Math (the Boost
 * Software License, which allows any use): Spearman's p-values are I_x of
 * it (pvalue.h).  Boost's ibeta is the one scipy.special.betainc calls, to
 * a few ulps everywhere; it replaced a continued fraction that followed
 * Numerical Recipes, whose licence forbids redistribution.  In double
 * precision (promote_double<false>: in long double it took 600 ns a call
 * against 80) it costs 80 to 350 ns a call at the spearman's x (the old
 * fraction 80 to 220 ns): a run that writes many pairs pays that per
 * pair (bench/results/ab.csv: 2.1 million pairs written from 2e8, 1.60 s
 * against 0.95 s on the dev VM's 2 cores; a GPU run at --pvalue 1e-12, a
 * few hundredths of a second). */
#include <boost/math/special_functions/beta.hpp>

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
