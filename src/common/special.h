/* SPDX-License-Identifier: BSD-3-Clause */
/* Special functions the workloads share, from Boost.Math
 * (special_boost.cpp): a library's, to a few ulps, not hand-written. */
#ifndef FD_COMMON_SPECIAL_H
#define FD_COMMON_SPECIAL_H

#ifdef __cplusplus
extern "C" {
#endif

/* I_x(a, b), the regularised incomplete beta function, 0 <= x <= 1. */
double fd_ibeta(double a, double b, double x);

/* z with P(Z > z) = p for a standard normal Z (scipy.stats.norm.isf),
 * 0 < p < 1; +-infinity at the ends. */
double fd_normal_isf(double p);

#ifdef __cplusplus
}
#endif

#endif
