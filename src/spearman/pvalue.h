/* SPDX-License-Identifier: BSD-3-Clause */
/* Two-sided p-values of Spearman's rho as scipy.stats.spearmanr defines
 * them: Student's t with dof = n - 2 degrees of freedom,
 * t = rho sqrt(dof / (1 - rho^2)).  Since 2 sf(|t|) = I_x(dof/2, 1/2) with
 * x = dof / (dof + t^2) = 1 - rho^2, the p-value is a regularised
 * incomplete beta function of x = 1 - rho^2 = (S_ii S_jj - S_ij^2) / (S_ii S_jj),
 * which the exact integers give without cancellation. */
#ifndef FD_SPEARMAN_PVALUE_H
#define FD_SPEARMAN_PVALUE_H

#include "../common/special.h" /* fd_ibeta: Boost.Math's */

/* The p-value for x = 1 - rho^2 with dof degrees of freedom. */
static inline double spearman_p_of_x(double x, int dof) { return fd_ibeta(0.5 * dof, 0.5, x); }

/* The largest x with p(x) <= alpha (p grows with x), to double precision:
 * "p <= alpha" is "1 - rho^2 <= x_crit". */
double spearman_x_crit(double alpha, int dof);
/* The smallest x with p(x) >= alpha ("p >= alpha" is "x >= x_from"); 0
 * for alpha <= 0, 2 (no x) for alpha > 1. */
double spearman_x_from(double alpha, int dof);

#endif
